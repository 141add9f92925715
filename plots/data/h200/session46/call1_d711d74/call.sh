#!/usr/bin/env bash
# Session 46, call 1: session46_plan's calls 2, 3 and 4 in one call (the device machine is released
# 30 s after a call, and call 3 needs call 2's picks): on an H200 only (no timing elsewhere).
#  1. fp8gemm_dispatch_sweep, block-scaled family, the twelve M <= 128 shapes, then picks.py (the
#     pick per shape as FP8GEMM_KERNEL_BLOCK_SCALED, and the committed table's kernel over the pick
#     in the same sweep). Predictions: session46_plan/call2.sh's header.
#  2. DeepGEMM 2.6.1's build (.peer), then the PyTorch op against DeepGEMM, interleaved, 50 us
#     delay, on the twelve shapes: run A with the committed table, run B with the picks.
#     Predictions: session46_plan/call3.sh's header (A 0.99-1.00x DeepGEMM; B over A 0.97-1.00x).
#  3. Both libraries on 112 SMs, the twelve shapes and the six M = 4096 ones (session46_plan/
#     call4.sh's predictions: M <= 128 0.96-1.00x DeepGEMM, M = 4096 0.93-1.00x).
#  4. If time is left: the block-scaled sweep on 112 SMs (--max_sms=112), the 18 shapes, and each
#     shape's 112-SM pick against the committed (132-SM) table's kernel.
# Run: carry .gpu/c23.txz (commit.txt, libbenchmark, fp8gemm_dispatch_sweep), .gpu/py10.txz, .peer.
set -u
source scripts/gpu_call.sh .gpu/c23.txz .gpu/py10.txz || exit 1
if ! nvidia-smi --query-gpu=name --format=csv,noheader | grep -q H200; then
  say "not an H200: nothing timed"; cat "$L"; exit 0
fi
H=plots/data/h200/session46_plan
SH="64x2112x7168,64x24576x1536,64x32768x512,64x7168x16384,64x4096x7168,64x7168x2048"
SH="$SH,128x2112x7168,128x24576x1536,128x32768x512,128x7168x16384,128x4096x7168,128x7168x2048"
say "dispatch sweep, block-scaled, M <= 128"
timeout 150 "$B/fp8gemm_dispatch_sweep" --families=block_scaled --shapes="$SH" \
  --json="$OUT/dispatch_sweep_small_${C:0:7}.json" > "$OUT/sweep.log" 2>&1
echo "sweep rc=$?" >> "$L"
python3 plots/data/h200/session43/call4_18a7ac7/picks.py "$OUT/dispatch_sweep_small_${C:0:7}.json" \
  $H/table_block_scaled.txt > "$OUT/picks.txt" 2>> "$L"
PICKS=$(cat "$OUT/picks.txt" 2>/dev/null)
echo "picks: $PICKS" >> "$L"
say "DeepGEMM build ($(seconds_left 570) s left)"
deepgemm_build_step 150
for run in A B; do
  [ "$run" = B ] && [ -z "$PICKS" ] && continue
  LEFT=$(seconds_left 570)
  [ "$LEFT" -lt 60 ] && { say "peers $run skipped: $LEFT s left"; continue; }
  LIM=$(( LEFT > 200 ? 90 : (LEFT - 20) / 2 ))
  say "peers $run, interleaved, delay 50 us ($LEFT s left, limit $LIM s)"
  if [ "$run" = B ]; then export FP8GEMM_KERNEL_BLOCK_SCALED=$PICKS; fi
  peers_ch07_step "$run" "$LIM" "$SH"
done
unset FP8GEMM_KERNEL_BLOCK_SCALED
LEFT=$(seconds_left 570)
SH18="$SH,4096x2112x7168,4096x24576x1536,4096x32768x512,4096x7168x16384,4096x4096x7168,4096x7168x2048"
if [ "$LEFT" -ge 70 ]; then
  say "peers on 112 SMs ($LEFT s left)"
  PEERS_MAX_SMS=112 peers_ch07_step sms112 $((LEFT - 15)) "$SH18"
else
  say "peers on 112 SMs skipped: $LEFT s left"
fi
LEFT=$(seconds_left 570)
if [ "$LEFT" -ge 60 ]; then
  # Which kernel is fastest on 112 SMs (the table was learned on 132): new in session 46,
  # --max_sms. Prediction: the 132-SM table's kernel within 3% of the 112-SM pick at most shapes;
  # where a tile count near 132 made a wave-efficient pick (M = 4096), another tile may win by
  # 3-10%.
  say "dispatch sweep on 112 SMs, block-scaled, 18 shapes ($LEFT s left)"
  timeout $((LEFT - 10)) "$B/fp8gemm_dispatch_sweep" --families=block_scaled --shapes="$SH18" \
    --max_sms=112 --json="$OUT/dispatch_sweep_sms112_${C:0:7}.json" > "$OUT/sweep112.log" 2>&1
  echo "sweep112 rc=$?" >> "$L"
  python3 plots/data/h200/session43/call4_18a7ac7/picks.py \
    "$OUT/dispatch_sweep_sms112_${C:0:7}.json" $H/table_block_scaled.txt > /dev/null 2>> "$L"
  xz -6 "$OUT/sweep112.log"
fi
xz -6 "$OUT/sweep.log"
tar cJf "$OUT/logs.txz" -C "$OUT" p gl sweep.log.xz sweep112.log.xz 2>/dev/null &&
  rm -rf "$OUT/p" "$OUT/gl" "$OUT"/sweep*.log.xz
say end
cat "$L"
