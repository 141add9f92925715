#!/usr/bin/env bash
# Session 29, call 5: the PyTorch package .gpu/py.txz of 61a96f7 (call 4's): its tests, benchmark
# and training example in one run, the complete set chapter 10's README tables are generated from
# (chapters/10_production/tools/readme_tables.py reads plots/data/h200/ch10/torch/).
# Predicted: 100 passed, 2 skipped; Fp8Linear within +-1 % of calls 3 and 4 (1.18-1.19, 1.20,
# 0.96-0.97, 1.415-1.419, 1.29-1.30, 1.17x bf16); the training example's FP8 and bf16 loss curves
# as in session 27 (a2f19e7).
set -u
source scripts/gpu_call.sh .gpu/c.txz .gpu/py.txz || exit 1
say "PyTorch: tests, bench, train"
timeout 330 bash chapters/10_production/python/gpu_run.sh /tmp/py "$OUT/torch" tests bench train \
  > "$OUT/gpu_run.log" 2>&1; echo "gpu_run rc=$?" >> "$L"
tail -1 "$OUT/torch/tests.log" >> "$L" 2>/dev/null
grep -E "^linear" "$OUT/torch/bench_torch.log" | head -10 >> "$L" 2>/dev/null
tail -3 "$OUT/torch/train.log" >> "$L" 2>/dev/null
tar cJf "$OUT/c.txz" -C "$OUT" torch gpu_run.log && rm -rf "$OUT/torch" "$OUT/gpu_run.log"
say end
cat "$L"
