#!/usr/bin/env bash
# Session 38, call 2: binaries and PyTorch package of branch producer-uniform (.gpu/c.txz,
# .gpu/py.txz). Every GPU test but test_chapter_07 (call 1 ran it), then the package's tests.
# The branch changes the producer of every engine kernel (chapters 6-10): each test binary that
# launches one must pass as on main.
# Prediction: "18 passed, 0 failed, 1 skipped" (test_chapter_09_gpu: no sm_100a code); PyTorch
# "105 passed, 2 skipped" (session 37, call 3).
set -u
source scripts/gpu_call.sh .gpu/c.txz .gpu/py.txz || exit 1
say "GPU tests"
gpu_tests_step '^(test_chapter_05|test_chapter_06|test_chapter_08|test_chapter_08_e2e|test_chapter_08_wgrad|test_chapter_09_gpu|test_chapter_09_hopper|test_chapters_01_04|common_test_gpu|common_test_cublaslt|common_test_bench_harness|test_library_gpu|test_library_threads_gpu|test_mx_gpu|quantize_test_gpu|test_reliability|test_reliability_threads|test_chapter_07_splitk)$' 500
LEFT=$(seconds_left 585)
say "PyTorch tests ($LEFT s left)"
[ "$LEFT" -gt 40 ] && timeout $((LEFT - 5)) bash chapters/10_production/python/gpu_run.sh /tmp/py "$OUT/torch" tests \
  > "$OUT/gpu_run.log" 2>&1; echo "gpu_run rc=$?" >> "$L"
tail -1 "$OUT/torch/tests.log" >> "$L" 2>/dev/null
grep -E "FAILED|Error" "$OUT/torch/tests.log" | head -5 >> "$L" 2>/dev/null
tar cJf "$OUT/logs.txz" -C "$OUT" gl torch gpu_run.log 2>/dev/null && rm -rf "$OUT/gl" "$OUT/torch" "$OUT/gpu_run.log"
say end
cat "$L"
