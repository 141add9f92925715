#!/usr/bin/env bash
# Session 39, call 4 (what device time was left: ~250 s): chapter 6 and 7 executables at efd5bf7
# (.gpu/c.txz, "new": two-deep the default again, the ring-cycle loop a twin _cyc; the A-scale
# row address through an identity shuffle in every block-scaled loop; chapter 6's per-tensor
# two-deep loop with the warpgroup index through warp_uniform) and at 4d9085f (.gpu/old.txz,
# "old": calls 1-2's, the producer warp).
#  1. Chapter 7 old / new / new / old, session 38's fifteen shapes. Prediction: within +-1 % at
#     every shape (the identity shuffle removes a few address instructions per K block where
#     ptxas re-derived the address, nothing else changes in the table's kernels).
#  2. Chapter 6 old / new / new / old, its default shapes. Prediction: promoted 64x2112x7168
#     ~0.91x (session 38's 0.909x with the warpgroup index shuffled in gemm_kernel), promoted
#     M <= 128 geomean ~0.97x; fast and large shapes +-1 %.
#  3. If time is left: chapter 7's ring-cycle twins against the defaults on six M <= 128 shapes,
#     the order reversed from call 3 (call 3's run 2 did not fit).
set -u
source scripts/gpu_call.sh .gpu/c.txz || exit 1
mkdir -p /tmp/o && tar xJf .gpu/old.txz -C /tmp/o
OLD=/tmp/o/old
echo "old: $(cat $OLD/commit.txt)" >> "$L"
mkdir -p "$OUT/ab"
SM="64x2112x7168,64x24576x1536,64x32768x512,64x7168x16384,64x4096x7168,64x7168x2048"
SM="$SM,128x2112x7168,128x24576x1536,128x32768x512,128x7168x16384,128x4096x7168,128x7168x2048"
S7="8192x8192x8192,4096x2112x7168,4096x7168x2048,$SM"
run=0
for side in old new new old; do
  run=$((run + 1))
  if [ "$side" = old ]; then X=$OLD; else X=$B; fi
  LEFT=$(seconds_left 235); say "run $run ($side), $LEFT s left"
  [ "$LEFT" -gt 40 ] || { echo "ab run $run skipped" >> "$L"; break; }
  timeout 30 "$X/ch07_block_scaling" --gpu_delay_us=50 --shapes=$S7 \
    --json="$OUT/ab/ch07_${run}_$side.json" > "$OUT/ab/ch07_${run}_$side.log" 2>&1; echo "ch07 rc=$?" >> "$L"
  timeout 16 "$X/ch06_warp_specialization" --gpu_delay_us=50 \
    --json="$OUT/ab/ch06_${run}_$side.json" > "$OUT/ab/ch06_${run}_$side.log" 2>&1; echo "ch06 rc=$?" >> "$L"
done
python3 plots/data/h200/ch07/abcompare.py "$OUT/ab" >> "$L" 2>&1
T=""
for t in 128x64_s8 128x32_s10 64x128_s8 64x64_s12 64x32_s14 64x16_s16; do
  T="$T,${t}_c1x1_promoted_tma_b1_cyc,${t}_c1x1_promoted_tma_b1"
done
T=${T#,}
LEFT=$(seconds_left 235)
if [ "$LEFT" -gt 40 ]; then
  say "ch07 twins, reversed ($LEFT s left)"
  timeout $((LEFT - 10)) "$B/ch07_block_scaling" --gpu_delay_us=50 \
    --shapes=128x7168x16384,128x32768x512,64x2112x7168,64x32768x512,128x2112x7168,64x7168x16384 \
    --kernels=$T --json="$OUT/ab/ch07_twins_2.json" > "$OUT/ab/ch07_twins_2.log" 2>&1; echo "rc=$?" >> "$L"
fi
tar cJf "$OUT/ab.txz" -C "$OUT" ab && rm -rf "$OUT/ab"
say end
cat "$L"
