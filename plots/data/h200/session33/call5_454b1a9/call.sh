#!/usr/bin/env bash
# Session 33, call 5: the session's last commit with code (454b1a9): binaries .gpu/c.txz
# (test_chapter_08, test_chapter_08_e2e, test_library_gpu, test_library_threads_gpu) and the
# PyTorch package .gpu/py.txz. No kernel changed since call 4 (15e58a2); new since: the threads
# test of a GroupedPlan on the counter schedule (4 threads, one plan, a counter per stream).
# Predictions: every listed test binary passes ("4 passed, 0 failed, 0 skipped"), test_chapter_08
# whole for the first time with the counter schedule's tests; PyTorch 102 passed, 2 skipped.
set -u
source scripts/gpu_call.sh .gpu/c.txz .gpu/py.txz || exit 1
C7=${C:0:7}
say "GPU tests"
BIN=$B STEPS=tests ONLY='^(test_library_threads_gpu|test_chapter_08|test_chapter_08_e2e|test_library_gpu)$' TIMEOUT=250 \
  timeout 420 bash scripts/gpu_loop.sh "$OUT/gl" > /dev/null 2>&1; echo "gpu_loop rc=$?" >> "$L"
grep -E "PASS|FAIL|SKIP" "$OUT/gl/summary.txt" >> "$L" 2>/dev/null
tail -1 "$OUT/gl/summary.txt" >> "$L" 2>/dev/null
cp "$OUT/gl/summary.txt" "$OUT/gpu_tests_${C7}.txt" 2>/dev/null
LEFT=$(seconds_left 520)
if [ "$LEFT" -gt 40 ]; then
  say "PyTorch tests, $LEFT s left"
  timeout $((LEFT - 5)) bash chapters/10_production/python/gpu_run.sh /tmp/py "$OUT/torch" tests \
    > "$OUT/gpu_run.log" 2>&1; echo "gpu_run rc=$?" >> "$L"
  tail -1 "$OUT/torch/tests.log" >> "$L" 2>/dev/null
fi
tar cJf "$OUT/c.txz" -C "$OUT" gl torch gpu_run.log 2>/dev/null; rm -rf "$OUT/gl" "$OUT/torch" "$OUT/gpu_run.log"
say end
cat "$L"
