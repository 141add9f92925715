#!/usr/bin/env bash
# Session 37, call 3: binaries and PyTorch package of db77afb (code of 0f8167c: 9cfe5c1's masked
# rule and plain-grid launches of one-CTA clusters, the k-split consumers reverted).
#  1. GPU tests: test_chapter_08 (the masked rule's new GPU case at K = 3008 with M_max 1024 and
#     every kernel), test_chapter_08_e2e, test_library_gpu, test_library_threads_gpu,
#     quantize_test_gpu. Prediction: 5 passed.
#  2. The PyTorch tests (a masked case at K = 4096 added). Prediction: 105 passed, 2 skipped.
set -u
source scripts/gpu_call.sh .gpu/c.txz .gpu/py.txz || exit 1
say "GPU tests"
gpu_tests_step '^(test_chapter_08|test_chapter_08_e2e|test_library_gpu|test_library_threads_gpu|quantize_test_gpu)$' 330
say "PyTorch tests"
timeout 150 bash chapters/10_production/python/gpu_run.sh /tmp/py "$OUT/torch" tests \
  > "$OUT/gpu_run.log" 2>&1; echo "gpu_run rc=$?" >> "$L"
tail -1 "$OUT/torch/tests.log" >> "$L" 2>/dev/null
grep -E "FAILED|Error" "$OUT/torch/tests.log" | head -5 >> "$L" 2>/dev/null
tar cJf "$OUT/logs.txz" -C "$OUT" gl torch gpu_run.log 2>/dev/null && rm -rf "$OUT/gl" "$OUT/torch" "$OUT/gpu_run.log"
say end
cat "$L"
