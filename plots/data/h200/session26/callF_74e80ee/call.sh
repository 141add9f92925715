#!/usr/bin/env bash
# Session 26, call F: after the last change to the quantisers (74e80ee, review: shared helpers),
# their GPU test and the library's, and the PyTorch tests (which run quantize_128x128_dual inside
# Fp8Linear), on the binaries and package of 74e80ee. Budget-limited (about 250 s left).
set -u
source scripts/gpu_call.sh .gpu/f.txz .gpu/py.txz || exit 1
say "GPU tests"
BIN=$B STEPS=tests ONLY='^(quantize_test_gpu|test_library_gpu)$' TIMEOUT=100 \
  timeout 130 bash scripts/gpu_loop.sh "$OUT/gl" > /dev/null 2>&1; echo "gpu_loop rc=$?" >> "$L"
cp "$OUT/gl/summary.txt" "$OUT/gpu_tests_${C:0:7}.txt" 2>/dev/null; rm -rf "$OUT/gl"
tail -5 "$OUT/gpu_tests_${C:0:7}.txt" >> "$L" 2>/dev/null
say "PyTorch tests"
(cd /tmp/py/fp8gemm_tools/tests && PYTHONPATH=/tmp/py timeout 80 python3 -m pytest -q -p no:cacheprovider) \
  > "$OUT/pytest_${C:0:7}.log" 2>&1; echo "pytest rc=$?" >> "$L"
tail -2 "$OUT/pytest_${C:0:7}.log" >> "$L"
say end
cat "$L"
