#!/usr/bin/env bash
# Session 37, call 1: binaries 9cfe5c1 (.gpu/c.txz: "new"), dcb2141's ch06/07/08 executables
# (.gpu/old.txz: "old"), PyTorch package 9cfe5c1 (.gpu/py.txz), DeepGEMM 2.6.1 from .peer.
#
# Question: chapter 7 at M <= 128 is 0.958x DeepGEMM (session 26, interleaved); at 64x2112x7168 it
# runs DeepGEMM's own configuration (64 x 16 tile, 16 stages, 132 CTAs, one math warpgroup) and
# takes 15.5 us against 12.5. One launch-side difference: the engine launches every kernel with a
# cluster-dimension attribute, also c1x1 ones (clusters of one CTA); DeepGEMM (and CUTLASS) launch
# those as plain grids. 692e486 drops the attribute for c1x1 kernels.
#  1. old / new / new / old (abcompare.py's format): chapter 7 (the 12 M <= 128 shapes, all c1x1
#     tiles, and 8192^3, c1x1 192 x 128; 4096x7168x2048 and 4096x2112x7168, c1x2 / c2x1, as
#     controls), chapter 6 (its default shapes) and chapter 8 (the skewed and masked cases, c1x1).
#     Prediction: c1x1 kernels 0.90-1.00x the time at M <= 128 (if the cluster launch is the
#     gap, a fixed 1-3 us per launch), 0.99-1.00x at 8192^3, cluster-2 kernels 1.000 +- 0.5 %.
#  2. ncu, one launch each, of ours (new) and DeepGEMM's kernel at 64x2112x7168 and 128x4096x7168
#     (where it is 0.83-0.88x DeepGEMM). Prediction: if the launch is the gap, ncu's durations
#     within 5 % of each other; otherwise the sections show where our extra time goes.
#  3. The PyTorch package's chapter 7 (new) against DeepGEMM, interleaved, 50 us delay, the 19
#     shapes (session 26 call C's method). Prediction: M <= 128 geomean 0.96-1.05x (0.958x).
# (The GPU tests of 9cfe5c1, both changes, run in call 2 with the whole suite.)
set -u
source scripts/gpu_call.sh .gpu/c.txz .gpu/py.txz || exit 1
C7=${C:0:7}
mkdir -p /tmp/o && tar xJf .gpu/old.txz -C /tmp/o
OLD=/tmp/o/old
mkdir -p "$OUT/ab" "$OUT/ncu" "$OUT/p"
SM="64x2112x7168,64x24576x1536,64x32768x512,64x7168x16384,64x4096x7168,64x7168x2048"
SM="$SM,128x2112x7168,128x24576x1536,128x32768x512,128x7168x16384,128x4096x7168,128x7168x2048"
S7="8192x8192x8192,4096x2112x7168,4096x7168x2048,$SM"
CASES=(--case=masked_g1x1024_n4096_k7168:masked=1x1024:4096:7168
       --case=masked_g1x1024_n7168_k2048:masked=1x1024:7168:2048
       --case=masked_g4x256_n4096_k7168:masked=4x256:4096:7168
       --case=masked_g4x256_n7168_k2048:masked=4x256:7168:2048)
mapfile -t SKEW < <(ch08_skewed_cases)
printf '%s\n' "${SKEW[@]}" >> "$L"
run=0
for side in old new new old; do
  run=$((run + 1))
  if [ "$side" = old ]; then X=$OLD; else X=$B; fi
  LEFT=$(seconds_left 560); say "run $run ($side), $LEFT s left"
  [ "$LEFT" -gt 300 ] || { echo "ab run $run skipped" >> "$L"; break; }
  timeout 90 "$X/ch07_block_scaling" --gpu_delay_us=50 --shapes=$S7 \
    --json="$OUT/ab/ch07_${run}_$side.json" > "$OUT/ab/ch07_${run}_$side.log" 2>&1; echo "ch07 rc=$?" >> "$L"
  timeout 60 "$X/ch06_warp_specialization" --gpu_delay_us=50 \
    --json="$OUT/ab/ch06_${run}_$side.json" > "$OUT/ab/ch06_${run}_$side.log" 2>&1; echo "ch06 rc=$?" >> "$L"
  timeout 60 "$X/ch08_grouped_moe" --gpu_delay_us=50 --forward-only "${CASES[@]}" "${SKEW[@]}" \
    --only='^(masked_|skew_)' --json="$OUT/ab/ch08_${run}_$side.json" > "$OUT/ab/ch08_${run}_$side.log" 2>&1
  echo "ch08 rc=$?" >> "$L"
done
python3 plots/data/h200/ch07/abcompare.py "$OUT/ab" >> "$L" 2>&1
tar cJf "$OUT/ab.txz" -C "$OUT" ab && rm -rf "$OUT/ab"
P='Duration|Elapsed Cycles|DRAM Throughput|L2 Cache Throughput|Registers Per|Warp Cycles Per Issued|No Eligible|Executed Ipc A|Block Limit|Cluster'
SECS="SpeedOfLight MemoryWorkloadAnalysis WarpStateStats SchedulerStats LaunchStats Occupancy InstructionStats"
say "ncu ours"
ncu_step "$OUT/ncu" ours_64x2112x7168 gemm_kernel "$SECS" "$P" "$B/ch07_block_scaling" \
  --shapes=64x2112x7168 --benchmark_filter=ch07_block
ncu_step "$OUT/ncu" ours_128x4096x7168 gemm_kernel "$SECS" "$P" "$B/ch07_block_scaling" \
  --shapes=128x4096x7168 --benchmark_filter=ch07_block
say "DeepGEMM build"
timeout 200 bash .peer/build_deepgemm.sh > "$OUT/p/deepgemm_build.log" 2>&1; echo "build rc=$?" >> "$L"
eval "$(grep '^export PYTHONPATH=' "$OUT/p/deepgemm_build.log" | tail -n 1)"
export PYTHONPATH=${PYTHONPATH:+$PYTHONPATH:}/tmp/py
for s in 64x2112x7168 128x4096x7168; do
  say "ncu DeepGEMM $s"
  ncu_step "$OUT/ncu" dg_$s sm90_fp8_gemm_1d2d "$SECS" "$P" python3 bench/peers.py --impls deepgemm \
    --shapes $s --cupti-launches 0 --dg-jobs 0 --out /tmp/dg_ncu.json
done
tar cJf "$OUT/ncu.txz" -C "$OUT" ncu && rm -rf "$OUT/ncu"
LEFT=$(seconds_left 570)
say "peers ch07 interleaved, delay 50 us ($LEFT s left)"
[ "$LEFT" -gt 60 ] && timeout $((LEFT - 15)) python3 bench/peers.py --interleave --shapes "8192x8192x8192,$SM" \
  --impls fp8gemm_block_scaled,deepgemm --cupti-launches 0 --delay-us 50 --dg-jobs 8 --time-limit $((LEFT - 60)) \
  --out "$OUT/peers_ch07_$C7.json" > "$OUT/p/peers_ch07.log" 2>&1
echo "peers rc=$?" >> "$L"; grep -E "^(fp8gemm|deepgemm)" "$OUT/p/peers_ch07.log" >> "$L"
tar cJf "$OUT/p.txz" -C "$OUT" p && rm -rf "$OUT/p"
say end
cat "$L"
