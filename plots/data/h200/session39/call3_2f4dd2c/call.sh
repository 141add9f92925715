#!/usr/bin/env bash
# Session 39, call 3: binaries at 2f4dd2c (.gpu/c.txz: the two-deep loop unrolled over the ring
# cycle, block scaling's default where two-deep fits, the tile has one consumer warpgroup
# (64-row tiles) and the ring an even number of stages;
# the A-scale row address kept in a register; chapter 6's per-tensor two-deep loop with the
# warpgroup index through warp_uniform) and 4d9085f's chapter 6 executable (.gpu/old.txz: "old").
#  1. The GPU tests of every binary whose kernels changed (block scaling's loops: chapters 7, 7's
#     split-K, 8, the library; chapter 6's two-deep tiles). Prediction: all pass.
#  2. Chapter 7, in one process: the four 64-row M <= 128 tiles whose default changed (64x16_s16,
#     64x32_s14, 64x64_s12, 64x128_s8) against their _2deep twins (the loop before, with the same
#     A-scale address change), and 128x32_s10 / 128x64_s8 (default two-deep) against their _cyc
#     twins, on the twelve M <= 128 shapes, two runs, the order reversed. Prediction (SASS:
#     64x16_s16's consumer loop ~51 instructions per K block on its hot path, 69 executed
#     before): cycle / two-deep 0.95-0.97x the time at the K = 7168, N <= 4096 shapes on 64x16 /
#     64x32; <= 1 % either way where K is short (K = 512, 1536); on the 128-row tiles (two
#     consumer warpgroups share each scheduler) 0.98-1.00x.
#  3. Chapter 6 old / new / new / old (its default shapes). Prediction: promoted 64x2112x7168
#     ~0.91x (session 38's 0.909x with the warpgroup index shuffled in gemm_kernel), promoted
#     M <= 128 geomean ~0.97x; fast and large shapes +-1 %.
#  4. ncu, one launch: the new default at 64x2112x7168, plain sections and the source view.
#     Prediction: 10.5-11.0 us (11.33 at 4d9085f).
set -u
source scripts/gpu_call.sh .gpu/c.txz || exit 1
mkdir -p /tmp/o && tar xJf .gpu/old.txz -C /tmp/o
OLD=/tmp/o/old
echo "old: $(cat $OLD/commit.txt)" >> "$L"
mkdir -p "$OUT/ab" "$OUT/ncu"
say "GPU tests"
gpu_tests_step '^(test_chapter_07|test_chapter_07_splitk|test_chapter_08|test_chapter_08_e2e|test_chapter_06|test_library_gpu|test_library_threads_gpu|test_reliability)$' 420
SM="64x2112x7168,64x24576x1536,64x32768x512,64x7168x16384,64x4096x7168,64x7168x2048"
SM="$SM,128x2112x7168,128x24576x1536,128x32768x512,128x7168x16384,128x4096x7168,128x7168x2048"
T=""
for t in 64x16_s16 64x32_s14 64x64_s12 64x128_s8; do
  T="$T,${t}_c1x1_promoted_tma_b1,${t}_c1x1_promoted_tma_b1_2deep"
done
for t in 128x32_s10 128x64_s8; do
  T="$T,${t}_c1x1_promoted_tma_b1,${t}_c1x1_promoted_tma_b1_cyc"
done
T=${T#,}
TR=$(echo "$T" | tr ',' '\n' | tac | paste -sd,)
for r in 1 2; do
  LEFT=$(seconds_left 570)
  [ "$LEFT" -gt 70 ] || { echo "twins run $r skipped ($LEFT s left)" >> "$L"; break; }
  if [ $r = 1 ]; then K="$T"; else K="$TR"; fi
  say "ch07 twins, run $r ($LEFT s left)"
  timeout $((LEFT - 30)) "$B/ch07_block_scaling" --gpu_delay_us=50 --shapes=$SM --kernels=$K \
    --json="$OUT/ab/ch07_twins_$r.json" > "$OUT/ab/ch07_twins_$r.log" 2>&1; echo "rc=$?" >> "$L"
  grep -E "FAIL|error" "$OUT/ab/ch07_twins_$r.log" | head -5 >> "$L"
done
run=0
for side in old new new old; do
  run=$((run + 1))
  if [ "$side" = old ]; then X=$OLD; else X=$B; fi
  LEFT=$(seconds_left 570); say "ch06 run $run ($side), $LEFT s left"
  [ "$LEFT" -gt 40 ] || { echo "ch06 run $run skipped" >> "$L"; break; }
  timeout 30 "$X/ch06_warp_specialization" --gpu_delay_us=50 \
    --json="$OUT/ab/ch06_${run}_$side.json" > "$OUT/ab/ch06_${run}_$side.log" 2>&1; echo "ch06 rc=$?" >> "$L"
done
python3 plots/data/h200/ch07/abcompare.py "$OUT/ab" >> "$L" 2>&1
P='Duration|Elapsed Cycles|DRAM Throughput|Registers Per|Warp Cycles Per Issued|No Eligible|Executed Ipc A'
NCU=$(command -v ncu || ls /usr/local/cuda*/bin/ncu 2>/dev/null | head -1)
LEFT=$(seconds_left 570)
if [ "$LEFT" -gt 25 ]; then
  say "ncu source view, new 64x2112x7168"
  timeout 40 "$NCU" --clock-control none --launch-skip 2 --launch-count 1 --kernel-name regex:gemm_kernel \
    --section SourceCounters --section WarpStateStats --section SpeedOfLight --section InstructionStats \
    --section LaunchStats --section SchedulerStats \
    -o "$OUT/ncu/src_new" -f "$B/ch07_block_scaling" --shapes=64x2112x7168 --benchmark_filter=ch07_block \
    > "$OUT/ncu/src_new.log" 2>&1; echo "ncu src rc=$?" >> "$L"
  "$NCU" -i "$OUT/ncu/src_new.ncu-rep" --page details > "$OUT/ncu/ncu_new_64x2112x7168_details.txt" 2>&1
  grep -E "$P" "$OUT/ncu/ncu_new_64x2112x7168_details.txt" >> "$L"
  "$NCU" -i "$OUT/ncu/src_new.ncu-rep" --page source --csv --print-source sass > "$OUT/ncu/ours_sass.csv" 2> "$OUT/ncu/ours_sass.err"
  rm -f "$OUT/ncu/src_new.ncu-rep"
fi
tar cJf "$OUT/ab.txz" -C "$OUT" ab && rm -rf "$OUT/ab"
tar cJf "$OUT/ncu.txz" -C "$OUT" ncu && rm -rf "$OUT/ncu"
tar cJf "$OUT/logs.txz" -C "$OUT" gl 2>/dev/null && rm -rf "$OUT/gl"
say end
cat "$L"
