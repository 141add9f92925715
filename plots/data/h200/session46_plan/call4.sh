#!/usr/bin/env bash
# RAN in session 46 on the H200, combined into one call: plots/data/h200/session46/call1_d711d74/
# (the machine is released 30 s after a call and call 3 needs call 2's picks). Keep for the record.
# Session 45's plan, call 4 (optional: run it if at least 400 s of device time are left after
# calls 1-3; new in session 45). Training code overlaps the GEMMs with communication kernels that
# hold SMs of their own (DeepSeek-V3's DeepEP: 20 of the H800's 132), so what a user of the
# library meets there is the GEMM on fewer SMs. Both libraries on 112 SMs (bench/peers.py
# --max-sms 112: fp8gemm.ops.set_max_sms, deep_gemm.set_num_sms), the block-scaled op against
# DeepGEMM 2.6.1, interleaved, 50 us delay, on the twelve M <= 128 shapes and the six M = 4096
# ones. DeepGEMM re-picks its configuration for 112 SMs (its heuristics read get_num_sms()); our
# dispatch table was learned on 132 SMs and does not. Predictions: against DeepGEMM, M <= 128
# geomean 0.96-1.00x (0.993x on 132 SMs in session 43), M = 4096 0.93-1.00x (0.973-0.978x on 132);
# each library's 112-SM time 1.00-1.20x its 132-SM time where the shape fills the GPU (M = 4096;
# not measured here: compare with call 3's run A for M <= 128 only).
# Run: carry .gpu/c10s.txz, .gpu/py10.txz, .peer.
set -u
source scripts/gpu_call.sh .gpu/c10s.txz .gpu/py10.txz || exit 1
say "DeepGEMM build"
deepgemm_build_step 150
SH="64x2112x7168,64x24576x1536,64x32768x512,64x7168x16384,64x4096x7168,64x7168x2048"
SH="$SH,128x2112x7168,128x24576x1536,128x32768x512,128x7168x16384,128x4096x7168,128x7168x2048"
SH="$SH,4096x2112x7168,4096x24576x1536,4096x32768x512,4096x7168x16384,4096x4096x7168,4096x7168x2048"
LEFT=$(seconds_left 480)
say "peers on 112 SMs ($LEFT s left)"
PEERS_MAX_SMS=112 peers_ch07_step sms112 $((LEFT - 20)) "$SH"
tar cJf "$OUT/logs.txz" -C "$OUT" p gl 2>/dev/null && rm -rf "$OUT/p" "$OUT/gl"
say end
cat "$L"
