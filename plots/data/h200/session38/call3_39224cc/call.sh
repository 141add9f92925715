#!/usr/bin/env bash
# Session 38, call 3: binaries and PyTorch package of branch producer-uniform at its fix of the
# schedulers (.gpu/c.txz, .gpu/py.txz), DeepGEMM 2.6.1 from .peer.
# Call 2 failed test_chapter_08 (the _dyn kernel: NaN where tiles were skipped), test_library_
# threads_gpu and 76 PyTorch tests (wrong grouped outputs, then an illegal instruction): with the
# producer loop run by all 32 lanes of a warp, each lane drew its own tile from the dynamic
# schedule's counter. Now lane 0 draws and the warp shares the draw; stream-K's shared state is
# touched by lane 0 alone (as the one producer thread did), the tile given to the warp through
# __shfl_sync (from_lane0).
#  1. compute-sanitizer memcheck / racecheck / synccheck on the _dyn and _sk kernels (chapter 8's
#     executable, --sizes=256). Prediction: 0 errors, 0 hazards each.
#  2. The GPU tests that run grouped kernels: test_chapter_08, _08_e2e, test_library_gpu,
#     test_library_threads_gpu. Prediction: "4 passed, 0 failed, 0 skipped".
#  3. PyTorch tests. Prediction: "105 passed, 2 skipped" (session 37).
#  4. Chapter 7's nine M <= 128 tiles on the 12 M <= 128 shapes, in one process, twice (the order
#     reversed), cuBLASLt block-scaled beside them: does the table still pick the fastest tile now
#     that the producer issues half the instructions? Prediction: the narrow tiles (64 x 16,
#     64 x 32), whose producer issued the most instructions per byte, gain most; picks change at
#     0-3 shapes, by <= 3 %.
set -u
source scripts/gpu_call.sh .gpu/c.txz .gpu/py.txz || exit 1
mkdir -p "$OUT/san"
for k in 128x256_s4_c1x1_promoted_tma_b1_dyn 256x128_s4_c1x1_promoted_tma_b1_sk; do
  for tool in memcheck racecheck synccheck; do
    say "$tool, $k"
    timeout 60 compute-sanitizer --tool $tool --error-exitcode 1 "$B/ch08_grouped_moe" --no-bench --sizes=256 \
      --forward-only --kernels=$k > "$OUT/san/${tool}_$k.log" 2>&1; echo "rc=$?" >> "$L"
    grep -E "SUMMARY|FAIL|ok|rel" "$OUT/san/${tool}_$k.log" | tail -3 >> "$L"
  done
done
say "GPU tests"
gpu_tests_step '^(test_chapter_08|test_chapter_08_e2e|test_library_gpu|test_library_threads_gpu)$' 260
LEFT=$(seconds_left 560)
say "PyTorch tests ($LEFT s left)"
timeout 90 bash chapters/10_production/python/gpu_run.sh /tmp/py "$OUT/torch" tests \
  > "$OUT/gpu_run.log" 2>&1; echo "gpu_run rc=$?" >> "$L"
tail -1 "$OUT/torch/tests.log" >> "$L" 2>/dev/null
grep -E "^FAILED" "$OUT/torch/tests.log" | head -5 >> "$L" 2>/dev/null
tar cJf "$OUT/logs.txz" -C "$OUT" san gl torch gpu_run.log 2>/dev/null && rm -rf "$OUT/san" "$OUT/gl" "$OUT/torch" "$OUT/gpu_run.log"
SM="64x2112x7168,64x24576x1536,64x32768x512,64x7168x16384,64x4096x7168,64x7168x2048"
SM="$SM,128x2112x7168,128x24576x1536,128x32768x512,128x7168x16384,128x4096x7168,128x7168x2048"
T=64x16_s16,64x32_s14,64x64_s12,64x112_s9,64x128_s8,128x32_s10,128x56_s8,128x64_s8,128x128_s6
T=$(echo "$T" | sed 's/\([0-9]*x[0-9]*_s[0-9]*\)/\1_c1x1_promoted_tma_b1/g')
TR=$(echo "$T" | tr ',' '\n' | tac | paste -sd,)
mkdir -p "$OUT/sw"
for r in 1 2; do
  LEFT=$(seconds_left 560)
  [ "$LEFT" -gt 100 ] || { echo "sweep run $r skipped ($LEFT s left)" >> "$L"; break; }
  if [ $r = 1 ]; then K="$T"; else K="$TR"; fi
  say "ch07 small M, run $r ($LEFT s left)"
  timeout $((LEFT - 15)) "$B/ch07_block_scaling" --gpu_delay_us=50 --shapes=$SM --kernels=$K \
    --json="$OUT/sw/ch07_sweep_$r.json" > "$OUT/sw/ch07_sweep_$r.log" 2>&1; echo "rc=$?" >> "$L"
  grep -E "FAIL|error" "$OUT/sw/ch07_sweep_$r.log" | head -5 >> "$L"
done
tar cJf "$OUT/sw.txz" -C "$OUT" sw 2>/dev/null && rm -rf "$OUT/sw"
say end
cat "$L"
