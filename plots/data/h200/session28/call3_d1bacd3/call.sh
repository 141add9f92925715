#!/usr/bin/env bash
# Session 28, call 3: binaries .gpu/c.txz and the PyTorch package .gpu/py.txz, both of the commit
# in bin/commit.txt, where quantize_1x128_dual runs v6_interior (call 2: +2.4 % at 8192 x 7168).
#  1. GPU tests: quantize_test_gpu (the public dual on every case: whole and partial tiles, every
#     layout and leading-dimension path, NaN, Inf, adversarial groups), test_library_gpu,
#     test_library_threads_gpu. Predicted: all pass.
#  2. quantize_bench, the public quantisers (chapter 7's table, ch07/quantize_bench.json).
#     Predicted: the 1 x 128 dual 3410-3430 GB/s at 8192 x 7168, 85-87 % of the copy; the others
#     as in session 27's call 2 within +-1 %.
#  3. PyTorch: tests, bench_torch (Fp8Linear and its parts). Predicted: 100 passed, 2 skipped;
#     the dual quantisations of X and dY 1-2.5 % shorter, the FP8 step 0-0.3 % shorter: Fp8Linear
#     within +-1 % of session 27's 1.18, 1.19, 0.96, 1.395, 1.28, 1.17x bf16.
set -u
source scripts/gpu_call.sh .gpu/c.txz .gpu/py.txz || exit 1
C7=${C:0:7}
say "GPU tests"
BIN=$B STEPS=tests ONLY='^(quantize_test_gpu|test_library_gpu|test_library_threads_gpu)$' TIMEOUT=150 \
  timeout 220 bash scripts/gpu_loop.sh "$OUT/gl" > /dev/null 2>&1; echo "gpu_loop rc=$?" >> "$L"
cp "$OUT/gl/summary.txt" "$OUT/gpu_tests_$C7.txt" 2>/dev/null
tail -6 "$OUT/gl/summary.txt" >> "$L" 2>/dev/null
say "quantize_bench, public quantisers"
timeout 90 "$B/quantize_bench" \
  --benchmark_filter='^(copy_d2d_as_)?quantize_(1x128|1x128_kmajor|1x128_pow2|128x128|128x128_dual|1x128_dual)/' \
  --benchmark_out="$OUT/quantize_bench_$C7.json" > "$OUT/gl/quantize_bench.log" 2>&1
echo "rc=$?" >> "$L"; grep -A20 "^quantiser" "$OUT/gl/quantize_bench.log" >> "$L"
say "PyTorch: tests, bench"
timeout 300 bash chapters/10_production/python/gpu_run.sh /tmp/py "$OUT/torch" tests bench \
  > "$OUT/gpu_run.log" 2>&1; echo "gpu_run rc=$?" >> "$L"
tail -3 "$OUT/torch/tests.log" >> "$L" 2>/dev/null
grep -E "^linear|quantize_1x128_dual|dual" "$OUT/torch/bench_torch.log" | head -40 >> "$L" 2>/dev/null
tar cJf "$OUT/c.txz" -C "$OUT" torch gpu_run.log gl && rm -rf "$OUT/torch" "$OUT/gpu_run.log" "$OUT/gl"
say end
cat "$L"
