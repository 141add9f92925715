#!/usr/bin/env bash
# Session 29, call 4: binaries .gpu/c.txz and the PyTorch package .gpu/py.txz of the commit in
# bin/commit.txt (61a96f7: d875aa1's kernels; test_chapter_08_wgrad's bit-for-bit pairs fixed).
# Predictions (written before the run):
#  1. test_chapter_08_wgrad passes (call 3 threw at a pair naming a kernel that is not built; the
#     four pairs before it had passed).
#  2. bench_torch, a second run of call 3's kernels: Fp8Linear within +-1 % of call 3's 1.19,
#     1.20, 0.97, 1.42, 1.30, 1.17x bf16 (7168 x 16384 at 1.405-1.43x).
set -u
source scripts/gpu_call.sh .gpu/c.txz .gpu/py.txz || exit 1
C7=${C:0:7}
say "GPU tests"
BIN=$B STEPS=tests ONLY='^(test_chapter_08_wgrad)$' TIMEOUT=150 \
  timeout 200 bash scripts/gpu_loop.sh "$OUT/gl" > /dev/null 2>&1; echo "gpu_loop rc=$?" >> "$L"
cp "$OUT/gl/summary.txt" "$OUT/gpu_tests_$C7.txt" 2>/dev/null
tail -4 "$OUT/gl/summary.txt" >> "$L" 2>/dev/null
say "PyTorch: bench"
timeout 200 bash chapters/10_production/python/gpu_run.sh /tmp/py "$OUT/torch" bench \
  > "$OUT/gpu_run.log" 2>&1; echo "gpu_run rc=$?" >> "$L"
grep -E "^linear" "$OUT/torch/bench_torch.log" | head -10 >> "$L" 2>/dev/null
tar cJf "$OUT/c.txz" -C "$OUT" torch gpu_run.log gl && rm -rf "$OUT/torch" "$OUT/gpu_run.log" "$OUT/gl"
say end
cat "$L"
