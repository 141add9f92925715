#!/usr/bin/env bash
# Session 50's plan, one call on any Hopper GPU (carry .gpu/t50.txz and .gpu/py10.txz from pack.sh):
# the GPU tests and the PyTorch tests that no GPU has run at this code.
#   - test_chapter_07 and test_chapter_09_hopper: session 50's new cases (an earlier pending CUDA
#     error on the run() paths that launch a helper kernel first: chapter 7's scale conversion,
#     chapter 9's dequantize_bf16 path), written without a GPU; test_reliability, whose
#     pending-error case now takes its set-up from tests/pending_error.hpp; test_library_gpu, whose
#     new case checks that a PerTensorPlan whose grid is not persistent plans for every SM;
#   - test_chapter_08, test_chapter_08_wgrad, quantize_test_gpu: not run on the H200 at the code
#     of sessions 47-50 (they passed on an H100 in session 49, at a2836d9).
# Prediction: "7 passed, 0 failed, 0 skipped" on either GPU (about 440 s on an H100), and the PyTorch tests "112 passed,
# 2 skipped" (their ops now check every argument before copying a scale, and since session 51 copy only once the library
# has accepted the call: test_refused_calls_enqueue_nothing, new, checks it with torch.profiler's CUDA activity; and
# test_pending_cuda_error_before_the_ops_own_gpu_work, new, that an earlier pending error is reported before that copy). If a new case fails, its message
# says which check: "from an earlier call" missing means the pending check did not run first.
# Run it after session 49's plan (plots/data/h200/session49_plan/h200_call.sh) while the machine
# is warm, or alone on an H100.
# Superseded by plots/data/h200/session51_plan/tests_call.sh (same archives; PyTorch first, and
# it packs each step's folder: at most 8 files come back, which this script did not respect).
set -u
source scripts/gpu_call.sh .gpu/t50.txz .gpu/py10.txz || exit 1
say "GPU tests (7)"
gpu_tests_step '^(test_chapter_07|test_chapter_09_hopper|test_chapter_08|test_chapter_08_wgrad|quantize_test_gpu|test_reliability|test_library_gpu)$' 500
# A failure's details are in its JUnit file (gpu_loop.sh's tests step): the first ones into the log.
grep -h -A8 "<failure" "$OUT"/gl/tests/*.xml 2>/dev/null | head -80 >> "$L"
say "PyTorch tests"
timeout 70 bash chapters/10_production/python/gpu_run.sh /tmp/py "$OUT/torch" tests > /dev/null 2>&1
echo "torch tests rc=$?" >> "$L"
tail -1 "$OUT/torch/tests.log" >> "$L" 2>/dev/null
say end
cat "$L"
