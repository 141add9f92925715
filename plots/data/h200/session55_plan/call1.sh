#!/usr/bin/env bash
# Session 55's first call (carry .gpu/t54.txz .gpu/py55.txz: session54_plan/pack.sh and
# chapters/10_production/python/stage.sh, both at 63f1a9d), asked of kind nvidia-h200:
#  - any Hopper: the host refactor of 63f1a9d (chapter 9's HopperPlan builds chapter 7's call in
#    one helper, requant_gemm_call; the PyTorch MX ops share one K check, require_mx_k) has not
#    run on a GPU. test_mx_gpu, test_chapter_09_hopper, test_library_gpu: predicted pass; the
#    PyTorch tests: predicted "124 passed, 2 skipped" (as call 8 of session 54);
#  - on an H200 only, then: session 54's h200_only.sh steps: chapter 9's bench (its requant.json
#    is the README's requant block) and the re-quantiser against a copy. Predictions: the path
#    0.89-0.92x chapter 7 at 8192^3, 0.84-0.87x geomean at M = 4096; weights once 0.94-0.96x and
#    0.91-0.93x; v1 the fastest variant at 85-96 % of a copy.
# About 250 s on an H100, 480 s on an H200.
set -u
source scripts/gpu_call.sh .gpu/t54.txz .gpu/py55.txz || exit 1
say "test_mx_gpu, test_chapter_09_hopper, test_library_gpu"
packed_tests_step a '^(test_mx_gpu|test_chapter_09_hopper|test_library_gpu)$' 200
rm -f "$OUT"/gpu_tests_*.txt
say "PyTorch tests"
torch_tests_step 150
if nvidia-smi --query-gpu=name --format=csv,noheader | grep -q H200; then
  say "ch09_hopper_mxfp8 (H200)"
  timeout 200 "$B/ch09_hopper_mxfp8" --gpu_delay_us=50 --json="$OUT/requant.json" > "$OUT/ch09_bench.log" 2>&1
  echo "ch09 bench rc=$?" >> "$L"
  grep -E "weights_once|VALIDATION|FAIL" "$OUT/ch09_bench.log" | head -9 >> "$L"
  grep -E "^(ch09_hopper_mx_requant|ch09_requant_weights_once|ch07_block_scaled) " "$OUT/ch09_bench.log" >> "$L"
  xz -6 -f "$OUT/ch09_bench.log"
  say "quantize_bench, the re-quantiser (H200)"
  timeout 60 "$B/quantize_bench" --benchmark_filter='requantize' \
    --benchmark_out="$OUT/quantize_bench_requant.json" > "$OUT/qb.log" 2>&1
  echo "quantize_bench rc=$?" >> "$L"; grep -E "^requantize" "$OUT/qb.log" | tail -15 >> "$L"; rm -f "$OUT/qb.log"
else
  say "not an H200: $(nvidia-smi --query-gpu=name --format=csv,noheader); chapter 9's bench not run"
fi
say end
cat "$L"
