#!/usr/bin/env bash
# Session 27, call 2: binaries at d1bd48b (.gpu/b.txz: quantize_128x128_dual runs lean_prefetch
# by default), the PyTorch package staged from the same build (.gpu/py.txz, a2f19e7: the same code,
# later docs).
#  1. GPU tests: quantize_test_gpu (the public dual now the prefetching kernel: every row and
#     column count, layout and leading-dimension path), test_library_gpu; then chapter 8's tests
#     (not run since session 23, whose kernels they test are unchanged since).
#  2. quantize_bench, the public quantisers only (the committed chapter-7 table, ch07/
#     quantize_bench.json, is from 29be3e8 and lacks the 128 x 128 dual). Prediction: the dual
#     91-92 % of the copy, the others as at 29be3e8 within +-1 point.
#  3. PyTorch: tests, bench_torch, the training example (gpu_run.sh). Predictions: 100 passed, 2
#     skipped; the dual of W at 7168 x 16384 ~0.125 ms (0.157 in session 26); Fp8Linear +0.5-1.5 %
#     per shape: about 1.16, 1.18, 0.96, 1.39-1.40, 1.27, 1.16x bf16 (1.15, 1.17, 0.95, 1.38,
#     1.26, 1.15x in session 26).
set -u
source scripts/gpu_call.sh .gpu/b.txz .gpu/py.txz || exit 1
C7=${C:0:7}
say "GPU tests (quantisers, library)"
BIN=$B STEPS=tests ONLY='^(quantize_test_gpu|test_library_gpu)$' TIMEOUT=150 \
  timeout 220 bash scripts/gpu_loop.sh "$OUT/gl1" > /dev/null 2>&1; echo "gpu_loop rc=$?" >> "$L"
tail -6 "$OUT/gl1/summary.txt" >> "$L" 2>/dev/null
say "quantize_bench, public quantisers"
timeout 90 "$B/quantize_bench" \
  --benchmark_filter='^(copy_d2d_as_)?quantize_(1x128|1x128_kmajor|1x128_pow2|128x128|128x128_dual|1x128_dual)/' \
  --benchmark_out="$OUT/quantize_bench_$C7.json" > "$OUT/gl1/quantize_bench.log" 2>&1
echo "rc=$?" >> "$L"; grep -A20 "^quantiser" "$OUT/gl1/quantize_bench.log" >> "$L"
say "PyTorch: tests, bench, train"
timeout 240 bash chapters/10_production/python/gpu_run.sh /tmp/py "$OUT/torch" tests bench train \
  > "$OUT/gpu_run.log" 2>&1; echo "gpu_run rc=$?" >> "$L"
tail -3 "$OUT/torch/tests.log" >> "$L" 2>/dev/null
grep -E "^linear|quantize_128x128_dual|transpose" "$OUT/torch/bench_torch.log" >> "$L" 2>/dev/null
tar cJf "$OUT/torch.txz" -C "$OUT" torch gpu_run.log && rm -rf "$OUT/torch" "$OUT/gpu_run.log"
LEFT=$(seconds_left 580)
say "GPU tests (chapter 8; $LEFT s left)"
BIN=$B STEPS=tests ONLY='^(test_chapter_08|test_chapter_08_wgrad|test_chapter_08_e2e)$' TIMEOUT=$((LEFT - 40)) \
  timeout $((LEFT - 20)) bash scripts/gpu_loop.sh "$OUT/gl2" > /dev/null 2>&1; echo "gpu_loop rc=$?" >> "$L"
tail -6 "$OUT/gl2/summary.txt" >> "$L" 2>/dev/null
cat "$OUT/gl1/summary.txt" "$OUT/gl2/summary.txt" > "$OUT/gpu_tests_$C7.txt" 2>/dev/null
tar cJf "$OUT/gl.txz" -C "$OUT" gl1 gl2 && rm -rf "$OUT/gl1" "$OUT/gl2"
say end
cat "$L"
