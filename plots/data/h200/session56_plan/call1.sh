#!/usr/bin/env bash
# Session 56's first call (carry .gpu/t56.txz .gpu/py56.txz from session56_plan/pack.sh), any
# Hopper GPU; about 120 s, and about 300 s more on an H200.
#  1. Session 55's call 8, not run then: test_chapter_08_wgrad (the weight gradient's checking
#     mode: raw counts vs the padded total, precedence, a total equal to the capacity, G = 300; the
#     check kernel's int64 subtraction). Predicted: pass.
#  2. The PyTorch tests (graph capture and compile with the weight cache on,
#     test_grouped_experts_weight_cache, e7fac04's _require_out_dtype / _transposed_operand).
#     Predicted: "127 passed, 2 skipped".
#  On an H200 only:
#  3. chapter 9's bench, default kernels (-> plots/data/h200/ch09/requant.json). Predicted: the
#     re-quantising path 0.89-0.92x chapter 7 at 8192^3, 0.84-0.87x geomean at M = 4096; weights
#     once 0.94-0.96x, 0.91-0.93x.
#  4. chapter 9's Hopper table, --kernels=all (-> plots/data/h200/ch09_hopper_mxfp8.json), after
#     session 55's scale mask. Predicted: the default 0.27-0.28x chapter 7 at 8192^3 (0.287x at
#     daa4674), the bf16 path unchanged (0.53-0.54x).
set -u
source scripts/gpu_call.sh .gpu/t56.txz .gpu/py56.txz || exit 1
say "test_chapter_08_wgrad"
packed_tests_step a '^(test_chapter_08_wgrad)$' 100
rm -f "$OUT"/gpu_tests_*.txt
say "PyTorch tests"
torch_tests_step 150
if nvidia-smi --query-gpu=name --format=csv,noheader | grep -q H200; then
  say "ch09_hopper_mxfp8, default kernels"
  timeout 120 "$B/ch09_hopper_mxfp8" --gpu_delay_us=50 --json="$OUT/requant.json" > "$OUT/ch09_default.log" 2>&1
  echo "ch09 default rc=$?" >> "$L"
  grep -E "VALIDATION|FAIL" "$OUT/ch09_default.log" | head -5 >> "$L"
  say "ch09_hopper_mxfp8 --kernels=all"
  timeout 260 "$B/ch09_hopper_mxfp8" --kernels=all --gpu_delay_us=50 --json="$OUT/ch09_hopper_mxfp8.json" > "$OUT/ch09_all.log" 2>&1
  echo "ch09 all rc=$?" >> "$L"
  grep -E "VALIDATION|FAIL" "$OUT/ch09_all.log" | head -5 >> "$L"
  tar cJf "$OUT/ch09_logs.txz" -C "$OUT" ch09_default.log ch09_all.log && rm -f "$OUT"/ch09_*.log
else
  echo "not an H200: chapter 9's runs skipped" >> "$L"
fi
say end
cat "$L"
