#!/usr/bin/env bash
# Session 38, call 3: binaries and PyTorch package of branch producer-uniform at its fix of the
# schedulers (.gpu/c.txz, .gpu/py.txz), DeepGEMM 2.6.1 from .peer.
# Call 2 failed test_chapter_08 (the _dyn kernel: NaN where tiles were skipped), test_library_
# threads_gpu and 76 PyTorch tests (wrong grouped outputs, then an illegal instruction): with the
# producer loop run by all 32 lanes of a warp, each lane drew its own tile from the dynamic
# schedule's counter. Now lane 0 draws and the warp shares the draw; stream-K's shared state is
# written by lane 0 between __syncwarp()s.
#  1. compute-sanitizer memcheck / racecheck / synccheck on the _dyn and _sk kernels (chapter 8's
#     executable, --sizes=256). Prediction: 0 errors, 0 hazards each.
#  2. The GPU tests that run grouped kernels: test_chapter_08, _08_e2e, test_library_gpu,
#     test_library_threads_gpu. Prediction: "4 passed, 0 failed, 0 skipped".
#  3. PyTorch tests. Prediction: "105 passed, 2 skipped" (session 37).
#  4. If time: issue 10's peers in one process, interleaved (session 37 call 4's method).
#     Prediction: every ratio of ours within 0.97-1.00x of session 37's time (call 1 of this
#     session: chapter 8's cases 0.98-0.99x the time), 11 of 20 or better.
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
LEFT=$(seconds_left 560)
if [ "$LEFT" -gt 250 ]; then
  say "peers_moe ($LEFT s left)"
  peers_moe_step $((LEFT - 5))
  tar cJf "$OUT/p.txz" -C "$OUT" p 2>/dev/null && rm -rf "$OUT/p"
else
  echo "peers_moe skipped: $LEFT s left" >> "$L"
fi
say end
cat "$L"
