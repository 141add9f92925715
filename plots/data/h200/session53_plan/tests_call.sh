#!/usr/bin/env bash
# Session 53's plan (written in session 52): what no GPU has run since session 52's H100 call
# (plots/data/h200/session52/README.md). Pack first, at the commit to run:
#   bash plots/data/h200/session50_plan/pack.sh      (.gpu/t50.txz, .gpu/sw49.txz, .gpu/py10.txz)
#   run: bash plots/data/h200/session53_plan/tests_call.sh   (carry .gpu/t50.txz .gpu/py10.txz;
#        any Hopper GPU; on an H200, follow with session49_plan/h200_call.sh, carry .gpu/sw49.txz)
#   1. the PyTorch tests (~50 s on the H100 in session 52): session 52 fixed
#      test_pending_cuda_error_before_the_ops_own_gpu_work's expected message and made it check the
#      state (error still pending, out untouched) before the message.
#      Prediction: "112 passed, 2 skipped".
#   2. test_chapter_08_wgrad and quantize_test_gpu (code unchanged since they passed on an H100 at
#      a2836d9, session 49; not reached in session 52's call). Prediction: "2 passed".
#   3. if time is left: test_chapter_07, test_chapter_09_hopper, test_library_gpu,
#      test_reliability, test_chapter_08 (passed in session 52 on an H100; on an H200 this is
#      their first run with sessions 50-51's cases). Times on the H100 in session 52: 147, 64,
#      76, 30 and 197 s (session 51's plan gave its four-binary step 300 s, too little there).
#      Prediction: "5 passed".
# BUDGET: the seconds this call may run (default 560).
set -u
source scripts/gpu_call.sh .gpu/t50.txz .gpu/py10.txz || exit 1
BUDGET=${BUDGET:-560}
say "PyTorch tests"
torch_tests_step 100
STEP=$(($(seconds_left "$BUDGET") - 15)); STEP=$((STEP < 200 ? STEP : 200))
say "test_chapter_08_wgrad, quantize_test_gpu within $STEP s"
packed_tests_step a '^(test_chapter_08_wgrad|quantize_test_gpu)$' "$STEP"
LEFT=$(($(seconds_left "$BUDGET") - 15))
say "the five run in session 52, $LEFT s left of $BUDGET"
if [ "$LEFT" -gt 120 ]; then
  packed_tests_step b \
    '^(test_reliability|test_chapter_09_hopper|test_library_gpu|test_chapter_07|test_chapter_08)$' "$LEFT"
fi
say end
cat "$L"
