#!/usr/bin/env bash
# Session 26, call B (two parts, run back to back on one warm machine): the binaries and the
# PyTorch package at 7404262 (quantize_128x128_dual; the dispatch table re-learned from call A).
#   part 1: GPU tests (quantize_test_gpu: the new kernel against the CPU byte for byte;
#           test_library_gpu, test_library_threads_gpu), quantize_bench's 128 x 128 entries,
#           fp8gemm_library_bench (parts a, b, c against the new table)
#   part 2: the PyTorch package: tests, bench_torch (Fp8Linear re-timed), the training example
# On the CPU machine (after the build, at a clean commit):
#   bash chapters/10_production/python/stage.sh build /tmp/pystage/py
#   tar cf - -C /tmp/pystage py | xz -6 -T2 > .gpu/py.txz
#   (cd build && tar cf - bin/quantize_test_gpu bin/quantize_bench bin/fp8gemm_library_bench \
#      bin/test_library_gpu bin/test_library_threads_gpu bin/gpu_tests.txt bin/commit.txt \
#      bin/chapters.txt bin/libbenchmark.so.1.7.1 bin/libbenchmark.so.1debian | xz -6 -T2 > ../.gpu/b.txz)
# then `bash <this> 1` and `bash <this> 2` with the device tool, carrying .gpu.
# Predictions (written before the run): quantize_128x128_dual at 80-87 % of the copy
# (quantize_128x128: 87 %), ~0.14 ms at 7168 x 16384; in bench_torch's parts 0.6-0.7x the time of
# quantize_128x128(W) + transpose W blocks; the Fp8Linear step 2-4 % faster than at 9e1e065
# (1.10, 1.13, 0.91, 1.34, 1.21, 1.10x bf16 -> about 1.13, 1.15, 0.93, 1.37, 1.25, 1.13x), below
# 1.4x at every shape; part (c): the table's kernel faster or the same at every row.
set -u
source scripts/gpu_call.sh .gpu/b.txz .gpu/py.txz || exit 1
C7=${C:0:7}
if [ "${1:-1}" = 1 ]; then
  say "GPU tests"
  BIN=$B STEPS=tests ONLY='^(quantize_test_gpu|test_library_gpu|test_library_threads_gpu)$' TIMEOUT=200 \
    timeout 300 bash scripts/gpu_loop.sh "$OUT/gl" > /dev/null 2>&1; echo "gpu_loop rc=$?" >> "$L"
  cp "$OUT/gl/summary.txt" "$OUT/gpu_tests_$C7.txt" 2>/dev/null
  tail -4 "$OUT/gl/summary.txt" >> "$L" 2>/dev/null
  say "quantize_bench 128x128"
  timeout 60 "$B/quantize_bench" --benchmark_filter='128x128' \
    --benchmark_out="$OUT/quantize_bench_128x128_$C7.json" > "$OUT/gl/quantize_bench.log" 2>&1
  echo "rc=$?" >> "$L"; tail -8 "$OUT/gl/quantize_bench.log" >> "$L"
  LEFT=$(seconds_left 560)
  say "library bench ($LEFT s left)"
  timeout "$LEFT" "$B/fp8gemm_library_bench" --json="$OUT/library_bench.json" \
    > "$OUT/library_bench_$C7.log" 2>&1; echo "rc=$?" >> "$L"
  tail -3 "$OUT/library_bench_$C7.log" >> "$L"
  tar cJf "$OUT/gl.txz" -C "$OUT" gl && rm -rf "$OUT/gl"
else
  say "PyTorch: tests, bench, train"
  timeout 560 bash chapters/10_production/python/gpu_run.sh /tmp/py "$OUT/torch" tests bench train \
    > "$OUT/gpu_run.log" 2>&1; echo "gpu_run rc=$?" >> "$L"
  tail -3 "$OUT/torch/tests.log" >> "$L" 2>/dev/null
  grep "^linear" "$OUT/torch/bench_torch.log" >> "$L" 2>/dev/null
  tar cJf "$OUT/torch.txz" -C "$OUT" torch
fi
say end
cat "$L"
