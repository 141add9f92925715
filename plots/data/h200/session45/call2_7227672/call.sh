#!/usr/bin/env bash
# Session 45, call 2. The H200 was not lent (two refused starts); call 1 ran on an H100 (80 GB
# HBM3, 132 SMs), and so does this one: tests only (a dispatch sweep or peer timing on an H100
# would not speak for the H200's table or targets). Call 1 (plan call1.sh at e8bc698): both
# examples rc 0 (3.68e-2, experts 3.76e-2 / 3.72e-2), test_chapter_06, _08, _08_wgrad,
# test_library_gpu, test_library_threads_gpu passed; quantize_test_gpu failed 2 checks of session
# 44's mended refusal case (the call refused "scales overlaps x": x had been allocated after the
# scales, inside the range the too-small layout claims; the refusal was right, the case wrong),
# mended in 7227672.
# Binaries .gpu/c2.txz: quantize_test_gpu at 7227672, the other four built at e8bc698 (their
# sources unchanged since; commit.txt says 7227672); the package .gpu/py10.txz staged at e8bc698
# (the Python files unchanged since).
# 1. quantize_test_gpu, test_reliability, test_chapter_07, test_chapter_07_splitk,
#    test_chapter_09_hopper (the plan's call 2 gave the last four 330 s). Prediction: all pass
#    (test_chapter_07's every-kernel cases include session 44's six decode kernels; chapter 9's
#    max_sms case is new).
# 2. The PyTorch tests. Prediction: 110 passed, 2 skipped.
# Run: carry .gpu/c2.txz, .gpu/py10.txz.
set -u
source scripts/gpu_call.sh .gpu/c2.txz .gpu/py10.txz || exit 1
say "GPU tests"
gpu_tests_step '^(quantize_test_gpu|test_reliability|test_chapter_07|test_chapter_07_splitk|test_chapter_09_hopper)$' 420
say "PyTorch tests"
mkdir -p "$OUT/p"
timeout 90 bash chapters/10_production/python/gpu_run.sh /tmp/py "$OUT/torch" tests \
  > "$OUT/p/gpu_run.log" 2>&1; echo "gpu_run rc=$?" >> "$L"
tail -1 "$OUT/torch/tests.log" >> "$L" 2>/dev/null
grep -E "FAIL|Error" "$OUT/torch/tests.log" | head -12 >> "$L" 2>/dev/null
tar cJf "$OUT/logs.txz" -C "$OUT" gl p torch 2>/dev/null && rm -rf "$OUT/gl" "$OUT/p" "$OUT/torch"
say end
cat "$L"
