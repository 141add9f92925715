#!/usr/bin/env bash
# NOT RUN: the device refused to start three times late in session 26, and the budget left
# (257 s) could not hold the DeepGEMM build and both runs. Ready to run as it is (about 200 s
# plus the start), carrying .gpu (c.txz and py.txz of c8abf19, or a later build) and .peer.
#
# Session 26, call E: chapter 7 against DeepGEMM in one process, interleaved, on 8192^3 and the six
# M = 4096 shapes, with the usual 50 us GPU-side delay and with 150 us. Call C's run flagged both
# sides' host work at 8192^3 as not covered by the 50 us delay (this session's host is slower) and
# put ours at 1.027x DeepGEMM there, with DeepGEMM 4.5% slower than in session 24's run.
# Prediction: with 150 us nothing flagged, 8192^3 at 0.98-1.00x; the M = 4096 shapes within
# +-0.5% of call C's at either delay. Package of c8abf19 (.gpu/py.txz), DeepGEMM from .peer.
set -u
source scripts/gpu_call.sh .gpu/c.txz .gpu/py.txz || exit 1
mkdir -p "$OUT/e"
say "DeepGEMM build"
bash .peer/build_deepgemm.sh > "$OUT/e/deepgemm_build.log" 2>&1; echo "build rc=$?" >> "$L"
S=8192x8192x8192,4096x2112x7168,4096x24576x1536,4096x32768x512,4096x7168x16384,4096x4096x7168,4096x7168x2048
for d in 50 150; do
  say "peers ch07 interleaved, delay $d us"
  (PYTHONPATH=/tmp/deepgemm:/tmp/py timeout 150 python3 bench/peers.py --interleave --shapes "$S" \
     --impls fp8gemm_block_scaled,deepgemm --cupti-launches 0 --delay-us $d --commit "$C" \
     --time-limit 120 --out "$OUT/e/peers_ch07_d${d}_${C:0:7}.json") > "$OUT/e/peers_d$d.log" 2>&1
  echo "rc=$?" >> "$L"; grep -E "^(fp8gemm|deepgemm)" "$OUT/e/peers_d$d.log" >> "$L"
done
tar cJf "$OUT/e.txz" -C "$OUT" e && rm -rf "$OUT/e"
say end
cat "$L"
