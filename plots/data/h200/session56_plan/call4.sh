#!/usr/bin/env bash
# Session 56's H200 attempt (carry .gpu/t56.txz from pack.sh: chapter 9's executable of 99de62d,
# whose kernel code is HEAD's): on an H200 only, else it stops at once (a few seconds besides the
# machine's start). Plan items 1-2 of session56_plan/README.md:
#  1. chapter 9's bench, default kernels -> plots/data/h200/ch09/requant.json. Predicted: the
#     re-quantising path 0.89-0.92x chapter 7 at 8192^3, 0.84-0.87x geomean at M = 4096; weights
#     once 0.94-0.96x, 0.91-0.93x.
#  2. chapter 9's Hopper table, --kernels=all -> plots/data/h200/ch09_hopper_mxfp8.json, after
#     session 55's scale mask. Predicted: the default 0.27-0.28x chapter 7 at 8192^3 (0.287x at
#     daa4674), the bf16 path unchanged (0.53-0.54x).
# About 300 s on an H200.
set -u
if ! nvidia-smi --query-gpu=name --format=csv,noheader | grep -q H200; then
  echo "not an H200: $(nvidia-smi --query-gpu=name --format=csv,noheader)"; exit 0
fi
source scripts/gpu_call.sh .gpu/t56.txz || exit 1
say "ch09_hopper_mxfp8, default kernels"
timeout 120 "$B/ch09_hopper_mxfp8" --gpu_delay_us=50 --json="$OUT/requant.json" > "$OUT/ch09_default.log" 2>&1
echo "ch09 default rc=$?" >> "$L"
grep -E "VALIDATION|FAIL" "$OUT/ch09_default.log" | head -5 >> "$L"
say "ch09_hopper_mxfp8 --kernels=all"
timeout 300 "$B/ch09_hopper_mxfp8" --kernels=all --gpu_delay_us=50 --json="$OUT/ch09_hopper_mxfp8.json" > "$OUT/ch09_all.log" 2>&1
echo "ch09 all rc=$?" >> "$L"
grep -E "VALIDATION|FAIL" "$OUT/ch09_all.log" | head -5 >> "$L"
tar cJf "$OUT/ch09_logs.txz" -C "$OUT" ch09_default.log ch09_all.log && rm -f "$OUT"/ch09_*.log
say end
cat "$L"
