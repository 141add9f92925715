#!/usr/bin/env bash
# Session 38, call 1: binaries of branch producer-uniform (.gpu/c.txz: "new"), main d38e42d's
# ch06/07/08 executables (.gpu/old.txz: "old", built at e93c92e, the same code), the PyTorch package
# of the branch (.gpu/py.txz), DeepGEMM 2.6.1 from .peer.
#
# Question: session 37's source view found our producer issuing 65 instructions per ring stage
# (DeepGEMM 30) with consumers waiting on full barriers 29 % of the samples at 64x2112x7168; the
# branch issues the loads from one warp under elect.sync with uniform addresses: 31 per stage in
# its SASS.
#  1. test_chapter_07 on the branch first (the kernels to be timed must be right).
#  2. old / new / new / old: chapter 7 (12 M <= 128 shapes, 8192^3, 4096x2112x7168,
#     4096x7168x2048), chapter 6 (its default shapes), chapter 8 (two masked and two skewed cases
#     at K = 7168; 100 s timeout, session 37's 60 s cut them off).
#     Prediction: chapter 7 at 64/128 x 2112/4096 x 7168: 0.80-0.90x the time; the other M <= 128
#     shapes 0.85-1.00x; large shapes (8192^3, M = 4096) 1.00 +- 1 %; chapter 6 and 8 (the same
#     producer) the same pattern: decode shapes faster, large ones unchanged.
#  3. ncu, one launch, source view (SourceCounters) of the new 64x2112x7168 kernel and plain
#     sections of old and new at 64x2112x7168 and 128x4096x7168. Prediction: new 10.5-11.5 us
#     at 64x2112x7168 (old 13.22 in session 37, DeepGEMM 10.46); 30-35 warp instructions executed
#     per ring stage in the producer loop.
#  4. The package's chapter 7 (new) against DeepGEMM, interleaved, 50 us delay (session 37 call 1's
#     method). Prediction: M <= 128 geomean 1.00-1.05x (0.967x on main), 8192^3 unchanged.
set -u
source scripts/gpu_call.sh .gpu/c.txz .gpu/py.txz || exit 1
C7=${C:0:7}
mkdir -p /tmp/o && tar xJf .gpu/old.txz -C /tmp/o
OLD=/tmp/o/old
echo "old: $(cat $OLD/commit.txt)" >> "$L"
mkdir -p "$OUT/ab" "$OUT/ncu" "$OUT/p"
say "test_chapter_07"
gpu_tests_step '^test_chapter_07$' 110
SM="64x2112x7168,64x24576x1536,64x32768x512,64x7168x16384,64x4096x7168,64x7168x2048"
SM="$SM,128x2112x7168,128x24576x1536,128x32768x512,128x7168x16384,128x4096x7168,128x7168x2048"
S7="8192x8192x8192,4096x2112x7168,4096x7168x2048,$SM"
mapfile -t SKEW < <(ch08_skewed_cases | grep _n4096_k7168)
CASES=(--case=masked_g1x1024_n4096_k7168:masked=1x1024:4096:7168
       --case=masked_g4x256_n4096_k7168:masked=4x256:4096:7168 "${SKEW[@]}")
printf '%s\n' "${CASES[@]}" >> "$L"
run=0
for side in old new new old; do
  run=$((run + 1))
  if [ "$side" = old ]; then X=$OLD; else X=$B; fi
  LEFT=$(seconds_left 570); say "run $run ($side), $LEFT s left"
  [ "$LEFT" -gt 240 ] || { echo "ab run $run skipped" >> "$L"; break; }
  timeout 60 "$X/ch07_block_scaling" --gpu_delay_us=50 --shapes=$S7 \
    --json="$OUT/ab/ch07_${run}_$side.json" > "$OUT/ab/ch07_${run}_$side.log" 2>&1; echo "ch07 rc=$?" >> "$L"
  timeout 40 "$X/ch06_warp_specialization" --gpu_delay_us=50 \
    --json="$OUT/ab/ch06_${run}_$side.json" > "$OUT/ab/ch06_${run}_$side.log" 2>&1; echo "ch06 rc=$?" >> "$L"
  timeout 45 "$X/ch08_grouped_moe" --gpu_delay_us=50 --forward-only "${CASES[@]}" \
    --only='^(masked_|skew_)' --json="$OUT/ab/ch08_${run}_$side.json" > "$OUT/ab/ch08_${run}_$side.log" 2>&1
  echo "ch08 rc=$?" >> "$L"
done
python3 plots/data/h200/ch07/abcompare.py "$OUT/ab" >> "$L" 2>&1
tar cJf "$OUT/ab.txz" -C "$OUT" ab && rm -rf "$OUT/ab"
P='Duration|Elapsed Cycles|DRAM Throughput|Registers Per|Warp Cycles Per Issued|No Eligible|Executed Ipc A'
SECS="SpeedOfLight WarpStateStats SchedulerStats LaunchStats InstructionStats"
for s in 64x2112x7168 128x4096x7168; do
  for side in old new; do
    if [ "$side" = old ]; then X=$OLD; else X=$B; fi
    say "ncu $side $s"
    ncu_step "$OUT/ncu" ${side}_$s gemm_kernel "$SECS" "$P" "$X/ch07_block_scaling" \
      --shapes=$s --benchmark_filter=ch07_block
  done
done
NCU=$(command -v ncu || ls /usr/local/cuda*/bin/ncu 2>/dev/null | head -1)
say "ncu source view, new 64x2112x7168"
timeout 60 "$NCU" --clock-control none --launch-skip 2 --launch-count 1 --kernel-name regex:gemm_kernel \
  --section SourceCounters --section WarpStateStats --section SpeedOfLight --section InstructionStats \
  -o "$OUT/ncu/src_new" -f "$B/ch07_block_scaling" --shapes=64x2112x7168 --benchmark_filter=ch07_block \
  > "$OUT/ncu/src_new.log" 2>&1; echo "ncu src rc=$?" >> "$L"
"$NCU" -i "$OUT/ncu/src_new.ncu-rep" --page source --csv --print-source sass > "$OUT/ncu/ours_sass.csv" 2> "$OUT/ncu/ours_sass.err"
rm -f "$OUT/ncu/src_new.ncu-rep"
tar cJf "$OUT/ncu.txz" -C "$OUT" ncu && rm -rf "$OUT/ncu"
LEFT=$(seconds_left 570)
say "DeepGEMM build ($LEFT s left)"
if [ "$LEFT" -gt 150 ]; then
  timeout 120 bash .peer/build_deepgemm.sh > "$OUT/p/deepgemm_build.log" 2>&1; echo "build rc=$?" >> "$L"
  eval "$(grep '^export PYTHONPATH=' "$OUT/p/deepgemm_build.log" | tail -n 1)"
  export PYTHONPATH=${PYTHONPATH:+$PYTHONPATH:}/tmp/py
  LEFT=$(seconds_left 570)
  say "peers ch07 interleaved, delay 50 us ($LEFT s left)"
  [ "$LEFT" -gt 50 ] && timeout $((LEFT - 10)) python3 bench/peers.py --interleave --shapes "8192x8192x8192,$SM" \
    --impls fp8gemm_block_scaled,deepgemm --cupti-launches 0 --delay-us 50 --dg-jobs 8 --time-limit $((LEFT - 45)) \
    --out "$OUT/peers_ch07_$C7.json" > "$OUT/p/peers_ch07.log" 2>&1
  echo "peers rc=$?" >> "$L"; grep -E "^(fp8gemm|deepgemm)" "$OUT/p/peers_ch07.log" >> "$L"
fi
tar cJf "$OUT/p.txz" -C "$OUT" p && rm -rf "$OUT/p"
say end
cat "$L"
