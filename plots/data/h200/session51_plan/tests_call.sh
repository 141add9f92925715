#!/usr/bin/env bash
# Superseded by plots/data/h200/session53_plan/tests_call.sh (session 52 ran this one on an H100:
# plots/data/h200/session52/README.md).
# Session 51's plan: session 50's tests_call.sh (same archives: plots/data/h200/session50_plan/pack.sh;
# carry .gpu/t50.txz and .gpu/py10.txz), reordered for a call that may be cut short by the little
# device time left after failed starts: what no GPU has run yet comes first.
#   1. the PyTorch tests (~70 s): session 51's ops change (a scale copy waits until the library has
#      accepted the call; an earlier pending error is reported before the op's own GPU work) and
#      its two new tests; session 50's check-everything-before-copying.
#   2. test_chapter_07, test_chapter_09_hopper, test_reliability, test_library_gpu: session 50's
#      new GPU cases (an earlier pending error on run() paths that launch a helper first; a
#      PerTensorPlan whose grid is not persistent plans for every SM).
#   3. test_chapter_08, test_chapter_08_wgrad, quantize_test_gpu (passed on an H100 at a2836d9,
#      session 49; their code unchanged since).
# Predictions: PyTorch "112 passed, 2 skipped"; step 2 "4 passed, 0 failed, 0 skipped"; step 3 "3 passed".
#   run: bash plots/data/h200/session51_plan/tests_call.sh      (any Hopper GPU)
set -u
source scripts/gpu_call.sh .gpu/t50.txz .gpu/py10.txz || exit 1
say "PyTorch tests"
timeout 90 bash chapters/10_production/python/gpu_run.sh /tmp/py "$OUT/torch" tests > /dev/null 2>&1
echo "torch tests rc=$?" >> "$L"
tail -1 "$OUT/torch/tests.log" >> "$L" 2>/dev/null
grep -E "FAIL|Error|assert" "$OUT/torch/tests.log" 2>/dev/null | head -30 >> "$L"
# At most 8 files come back, and a cut-short call stops anywhere: each step's folder is packed
# as soon as the step ends (call.log, torch.txz, gl_new.txz, gl_old.txz, the two summaries).
tar cJf "$OUT/torch.txz" -C "$OUT" torch && rm -rf "$OUT/torch"
# BUDGET (seconds this call may run; default 560): the device time left after the machine's start,
# so that a step ends (and its folder is packed) before the call is cut.
BUDGET=${BUDGET:-560}
STEP2=$(seconds_left "$BUDGET"); STEP2=$((STEP2 - 15 < 300 ? STEP2 - 15 : 300))
say "GPU tests with session 50's new cases (4), within $STEP2 s"
gpu_tests_step '^(test_chapter_07|test_chapter_09_hopper|test_reliability|test_library_gpu)$' "$STEP2"
grep -h -A8 "<failure" "$OUT"/gl/tests/*.xml 2>/dev/null | head -60 >> "$L"
mv "$OUT/gpu_tests_${C:0:7}.txt" "$OUT/gpu_tests_new_${C:0:7}.txt" 2>/dev/null
tar cJf "$OUT/gl_new.txz" -C "$OUT" gl && rm -rf "$OUT/gl"
LEFT=$(($(seconds_left "$BUDGET") - 15))
say "GPU tests unchanged since session 49 (3), $LEFT s left of $BUDGET"
if [ "$LEFT" -gt 60 ]; then
  gpu_tests_step '^(test_chapter_08|test_chapter_08_wgrad|quantize_test_gpu)$' "$LEFT"
  grep -h -A8 "<failure" "$OUT"/gl/tests/*.xml 2>/dev/null | head -40 >> "$L"
  tar cJf "$OUT/gl_old.txz" -C "$OUT" gl && rm -rf "$OUT/gl"
fi
say end
cat "$L"
