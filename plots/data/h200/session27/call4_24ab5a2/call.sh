#!/usr/bin/env bash
# Session 27, call 4: the last code (24ab5a2: the quantisers' launcher and kernels refactored for
# the variants; the public kernels' choice unchanged since d1bd48b) through the library and
# PyTorch: test_library_gpu and the PyTorch package's tests (staged from the same build, d8f9d4a:
# later docs only). Cut to the tests after three refused starts left ~350 s of device time
# (bench_torch and quantize_bench, planned here too, were dropped: call 2 has them at d1bd48b).
# Prediction: all pass.
set -u
source scripts/gpu_call.sh .gpu/d.txz .gpu/py.txz || exit 1
C7=${C:0:7}
say "GPU tests (library)"
BIN=$B STEPS=tests ONLY='^(test_library_gpu)$' TIMEOUT=150 \
  timeout 200 bash scripts/gpu_loop.sh "$OUT/gl" > /dev/null 2>&1; echo "gpu_loop rc=$?" >> "$L"
cp "$OUT/gl/summary.txt" "$OUT/gpu_tests_$C7.txt" 2>/dev/null
tail -4 "$OUT/gl/summary.txt" >> "$L" 2>/dev/null
say "PyTorch: tests"
timeout 240 bash chapters/10_production/python/gpu_run.sh /tmp/py "$OUT/torch" tests \
  > "$OUT/gpu_run.log" 2>&1; echo "gpu_run rc=$?" >> "$L"
tail -3 "$OUT/torch/tests.log" >> "$L" 2>/dev/null
grep -E "^linear" "$OUT/torch/bench_torch.log" >> "$L" 2>/dev/null
tar cJf "$OUT/torch.txz" -C "$OUT" torch gpu_run.log gl && rm -rf "$OUT/torch" "$OUT/gpu_run.log" "$OUT/gl"
say end
cat "$L"
