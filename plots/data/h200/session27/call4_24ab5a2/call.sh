#!/usr/bin/env bash
# Session 27, call 4: the last code (24ab5a2: the quantisers' launcher and kernels refactored for
# the variants; the public kernels' choice unchanged since d1bd48b) through the library and
# PyTorch: test_library_gpu, the PyTorch package (staged from the same build, d8f9d4a: later docs
# only) tests, bench_torch and the training example, and quantize_bench's public quantisers.
# Prediction: all pass; Fp8Linear within +-1 % of call 2 (1.18, 1.19, 0.96, 1.395, 1.28, 1.17x).
set -u
source scripts/gpu_call.sh .gpu/d.txz .gpu/py.txz || exit 1
C7=${C:0:7}
say "GPU tests (library)"
BIN=$B STEPS=tests ONLY='^(test_library_gpu)$' TIMEOUT=150 \
  timeout 200 bash scripts/gpu_loop.sh "$OUT/gl" > /dev/null 2>&1; echo "gpu_loop rc=$?" >> "$L"
cp "$OUT/gl/summary.txt" "$OUT/gpu_tests_$C7.txt" 2>/dev/null
tail -4 "$OUT/gl/summary.txt" >> "$L" 2>/dev/null
say "PyTorch: tests, bench, train"
timeout 240 bash chapters/10_production/python/gpu_run.sh /tmp/py "$OUT/torch" tests bench train \
  > "$OUT/gpu_run.log" 2>&1; echo "gpu_run rc=$?" >> "$L"
tail -3 "$OUT/torch/tests.log" >> "$L" 2>/dev/null
grep -E "^linear" "$OUT/torch/bench_torch.log" >> "$L" 2>/dev/null
say "quantize_bench, public quantisers"
timeout 60 "$B/quantize_bench" \
  --benchmark_filter='^(copy_d2d_as_)?quantize_(1x128|1x128_kmajor|1x128_pow2|128x128|128x128_dual|1x128_dual)/' \
  --benchmark_out="$OUT/quantize_bench_$C7.json" > "$OUT/gl/quantize_bench.log" 2>&1
echo "rc=$?" >> "$L"; grep -A12 "^quantiser" "$OUT/gl/quantize_bench.log" >> "$L"
tar cJf "$OUT/torch.txz" -C "$OUT" torch gpu_run.log gl && rm -rf "$OUT/torch" "$OUT/gpu_run.log" "$OUT/gl"
say end
cat "$L"
