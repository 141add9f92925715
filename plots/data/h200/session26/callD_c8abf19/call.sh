#!/usr/bin/env bash
# Session 26, call D: why chapter 7's new picks (the table re-learned at 945b0eb) did not show in
# call C. The dispatch sweep and the library benchmark's part (c) time back to back (an L2 flush
# before each launch, no GPU-side delay): there `192x128_s4_c1x1` took 0.95x the time of
# `256x128_s3_c1x2` at 8192^3. Chapter 7's tables and the peers time with a 50 us GPU-side delay
# before each launch: there the two runs' ratios moved by less (call C). Hypothesis: the regime
# decides (back to back, the GPU sits at its power cap; with the delay it runs cooler and faster).
# Same binary (c8abf19's, .gpu/c.txz), the old and the new kernel of each changed M > 128 row side
# by side, interleaved by the harness, twice with the delay and twice without.
# Prediction: without the delay 192x128 0.95-0.96x the time of 256x128 at 8192^3 (as the sweep);
# with it 0.99-1.01x; the M = 4096 rows within 1-3 % either way.
set -u
source scripts/gpu_call.sh .gpu/c.txz || exit 1
mkdir -p "$OUT/ab"
S=8192x8192x8192,4096x32768x512,4096x7168x16384,4096x4096x7168,4096x7168x2048
K=192x128_s4_c1x1_promoted_tma_b2,256x128_s3_c1x2_promoted_tma_b4,128x256_s3_c1x2_promoted_tma_b4,256x128_s4_c2x1_promoted_tma_b1
for d in 50 0; do
  for i in 1 2; do
    say "delay $d us, run $i"
    timeout 100 "$B/ch07_block_scaling" --gpu_delay_us=$d --shapes=$S --kernels=$K \
      --json="$OUT/ab/ch07_d${d}_$i.json" > "$OUT/ab/ch07_d${d}_$i.log" 2>&1; echo "rc=$?" >> "$L"
  done
done
tar cJf "$OUT/ab.txz" -C "$OUT" ab && rm -rf "$OUT/ab"
say end
cat "$L"
