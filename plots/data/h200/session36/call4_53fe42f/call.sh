#!/usr/bin/env bash
# Session 36, call 4: binaries .gpu/c.txz (ch06_warp_specialization of 53fe42f) and the PyTorch
# package .gpu/py.txz staged from the same build (e978922: 53fe42f plus data).
#  1. PyTorch tests at this code (79ef248's grouped_gemm.cpp refactor is in the extension).
#     Predicted: 104 passed, 2 skipped (as at b8164d1).
#  2. Chapter 6's default table twice (interleaved with cuBLASLt, the harness's method), read by
#     plots/data/h200/ch06/table_d57610a/targets.py: no chapter-6 kernel changed since session 26
#     (c8abf19: fast 1.053x / 1.054x at 8192^3, 1.001x / 1.002x at 4096^3, geomean 1.086x / 1.088x;
#     promoted geomean 1.060x / 1.062x); predicted the same within +-0.5 %.
set -u
source scripts/gpu_call.sh .gpu/c.txz .gpu/py.txz || exit 1
C7=${C:0:7}
say "PyTorch tests"
timeout 150 bash chapters/10_production/python/gpu_run.sh /tmp/py "$OUT/torch" tests \
  > "$OUT/gpu_run.log" 2>&1; echo "gpu_run rc=$?" >> "$L"
tail -1 "$OUT/torch/tests.log" >> "$L" 2>/dev/null
grep -E "FAILED|Error" "$OUT/torch/tests.log" | head -5 >> "$L" 2>/dev/null
for i in 1 2; do
  say "ch06 table ($i)"
  timeout 60 "$B/ch06_warp_specialization" --json="$OUT/ch06_warp_specialization_$i.json" \
    > "$OUT/ch06_table_$i.log" 2>&1; echo "rc=$?" >> "$L"
  python3 plots/data/h200/ch06/table_d57610a/targets.py "$OUT/ch06_warp_specialization_$i.json" >> "$L" 2>&1
done
tar cJf "$OUT/logs.txz" -C "$OUT" torch gpu_run.log ch06_table_1.log ch06_table_2.log 2>/dev/null
rm -rf "$OUT/torch" "$OUT/gpu_run.log" "$OUT"/ch06_table_*.log
say end
cat "$L"
