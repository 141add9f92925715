#!/usr/bin/env bash
# Session 40, call 1: main's test binaries at a334058 (.gpu/c.txz: session 39's final code, whose
# kernels were GPU-tested only through SASS identity with 4d9085f's / 2f4dd2c's binaries) and
# chapter 7's executable at f81c188 (.gpu/n.txz, "new": main plus _cycj twins of the six _cyc
# tiles, kTwoDeepCycleJumpLoop: the ring-cycle loop entered through a switch on the ring's stage
# and left at the first stage with no K block left).
#  1. The GPU tests of the binaries whose code changed after 4d9085f's run (engine: chapters 6,
#     7, 7's split-K, the library, the reliability tests). Prediction: all pass.
#  2. Chapter 7's twins in one process, the five tiles chapter 7's table picks at M <= 128
#     (64x16_s16, 64x32_s14, 64x64_s12, 64x128_s8, 128x64_s8), each as two-deep (default), _cyc
#     and _cycj, on the twelve M <= 128 shapes; a second run in reverse order if time is left.
#     Prediction (session 39's README): _cycj / two-deep <= 1.03x at K = 512 and 1536 on 64x16
#     and 64x32 (_cyc 1.06-1.26x there), and _cycj within +-1 % of _cyc at K >= 7168 (64x16:
#     0.94-0.98x two-deep); on 64x64 / 64x128 / 128x64, where _cyc lost at most 3-7 %, _cycj
#     <= 1.01x two-deep everywhere.
set -u
source scripts/gpu_call.sh .gpu/c.txz || exit 1
mkdir -p /tmp/n && tar xJf .gpu/n.txz -C /tmp/n
NEW=/tmp/n/new
echo "new: $(cat $NEW/commit.txt)" >> "$L"
mkdir -p "$OUT/ab"
say "GPU tests"
gpu_tests_step '^(test_chapter_06|test_chapter_07|test_chapter_07_splitk|test_library_gpu|test_library_threads_gpu|test_reliability|test_reliability_threads)$' 330
SM="64x2112x7168,64x24576x1536,64x32768x512,64x7168x16384,64x4096x7168,64x7168x2048"
SM="$SM,128x2112x7168,128x24576x1536,128x32768x512,128x7168x16384,128x4096x7168,128x7168x2048"
T=""
for t in 64x16_s16 64x32_s14 64x64_s12 64x128_s8 128x64_s8; do
  T="$T,${t}_c1x1_promoted_tma_b1,${t}_c1x1_promoted_tma_b1_cyc,${t}_c1x1_promoted_tma_b1_cycj"
done
T=${T#,}
TR=$(echo "$T" | tr ',' '\n' | tac | paste -sd,)
for r in 1 2; do
  LEFT=$(seconds_left 570)
  [ "$LEFT" -gt 100 ] || { echo "twins run $r skipped ($LEFT s left)" >> "$L"; break; }
  if [ $r = 1 ]; then K="$T"; else K="$TR"; fi
  say "ch07 twins, run $r ($LEFT s left)"
  timeout $((LEFT - 15)) "$NEW/ch07_block_scaling" --gpu_delay_us=50 --shapes=$SM --kernels=$K \
    --json="$OUT/ab/ch07_twins_$r.json" > "$OUT/ab/ch07_twins_$r.log" 2>&1; echo "rc=$?" >> "$L"
  grep -E "FAIL|error" "$OUT/ab/ch07_twins_$r.log" | head -5 >> "$L"
done
tar cJf "$OUT/ab.txz" -C "$OUT" ab && rm -rf "$OUT/ab"
tar cJf "$OUT/logs.txz" -C "$OUT" gl 2>/dev/null && rm -rf "$OUT/gl"
say end
cat "$L"
