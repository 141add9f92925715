#!/usr/bin/env bash
# Session 29, call 3: binaries .gpu/c.txz and the PyTorch package .gpu/py.txz of the commit in
# bin/commit.txt (d875aa1: the weight gradient's lean loop the default of its two-warpgroup TMA
# tiles, 128 x 192 unrolled 4 times and 128 x 256 once; the same template instances call 2 timed
# as _pin_loop4 / _pin_loop1).
# Predictions (written before the run):
#  1. GPU tests pass: test_chapter_08_wgrad (every kernel against float64; the lean defaults, the
#     _pin_loop1 and _stag kernels bit for bit against their _loop0 twins), test_chapter_08_e2e,
#     test_library_gpu, test_library_threads_gpu; the PyTorch tests 100 passed, 2 skipped.
#  2. bench_torch: the layer's wgrad part 3-6 % shorter than call 2's (0.147, 0.355, 0.166, 1.043,
#     0.272, 0.150 ms there), the FP8 step 1-2 % shorter: Fp8Linear about 1.19, 1.21, 0.96,
#     1.41-1.42, 1.30, 1.18x bf16 (call 2: 1.17, 1.19, 0.95, 1.40, 1.28, 1.16x).
set -u
source scripts/gpu_call.sh .gpu/c.txz .gpu/py.txz || exit 1
C7=${C:0:7}
say "GPU tests"
BIN=$B STEPS=tests ONLY='^(test_chapter_08_wgrad|test_chapter_08_e2e|test_library_gpu|test_library_threads_gpu)$' \
  TIMEOUT=150 timeout 260 bash scripts/gpu_loop.sh "$OUT/gl" > /dev/null 2>&1; echo "gpu_loop rc=$?" >> "$L"
cp "$OUT/gl/summary.txt" "$OUT/gpu_tests_$C7.txt" 2>/dev/null
tail -10 "$OUT/gl/summary.txt" >> "$L" 2>/dev/null
say "PyTorch: tests, bench"
timeout 300 bash chapters/10_production/python/gpu_run.sh /tmp/py "$OUT/torch" tests bench \
  > "$OUT/gpu_run.log" 2>&1; echo "gpu_run rc=$?" >> "$L"
tail -3 "$OUT/torch/tests.log" >> "$L" 2>/dev/null
grep -E "^linear|^  parts" "$OUT/torch/bench_torch.log" | head -20 >> "$L" 2>/dev/null
tar cJf "$OUT/c.txz" -C "$OUT" torch gpu_run.log gl && rm -rf "$OUT/torch" "$OUT/gpu_run.log" "$OUT/gl"
say end
cat "$L"
