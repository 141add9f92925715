#!/usr/bin/env bash
# Session 31, call 4: binaries .gpu/c.txz and the PyTorch package .gpu/py.txz of 4a5e5b4 (945a6e2's
# kernels and rules; comments and documents since). The last GPU check of the session's code and
# a second run of the PyTorch benchmark.
# Predictions (written before the run):
#  1. GPU tests pass: test_chapter_08_wgrad (243), test_chapter_08_e2e (32),
#     test_library_threads_gpu (156, not run with 945a6e2's bf16 pick).
#  2. bench_torch, second run: Fp8Linear within +-1 % of call 3's 1.22, 1.23, 0.97, 1.46, 1.32,
#     1.20x bf16 (1.4x at 7168 x 16384 only).
set -u
source scripts/gpu_call.sh .gpu/c.txz .gpu/py.txz || exit 1
C7=${C:0:7}
say "GPU tests"
BIN=$B STEPS=tests ONLY='^(test_chapter_08_wgrad|test_chapter_08_e2e|test_library_threads_gpu)$' \
  TIMEOUT=100 timeout 150 bash scripts/gpu_loop.sh "$OUT/gl" > /dev/null 2>&1; echo "gpu_loop rc=$?" >> "$L"
cp "$OUT/gl/summary.txt" "$OUT/gpu_tests_$C7.txt" 2>/dev/null
grep -E "PASS|FAIL|SKIP|passed" "$OUT/gl/summary.txt" >> "$L" 2>/dev/null
grep -E "tests=" "$OUT/gl/gpu_loop.log" | head -6 >> "$L"
say "PyTorch: bench"
timeout 150 bash chapters/10_production/python/gpu_run.sh /tmp/py "$OUT/torch" bench \
  > "$OUT/gpu_run.log" 2>&1; echo "gpu_run rc=$?" >> "$L"
grep -E "^linear" "$OUT/torch/bench_torch.log" >> "$L" 2>/dev/null
grep -E "overhead" "$OUT/torch/bench_torch.log" | head -3 >> "$L" 2>/dev/null
cp "$OUT/torch/bench_torch.log" "$OUT/bench_torch_$C7.log" 2>/dev/null
cp "$OUT/torch/bench_torch.json" "$OUT/bench_torch_$C7.json" 2>/dev/null
tar cJf "$OUT/c.txz" -C "$OUT" gl torch gpu_run.log 2>/dev/null; rm -rf "$OUT/gl" "$OUT/torch" "$OUT/gpu_run.log"
say end
cat "$L"
