#!/usr/bin/env bash
# Session 64, call 4 (carry .gpu/t64b.txz .gpu/py64b.txz: session64_plan/pack4.sh at the commit to
# run): MXFP8's float D on Hopper, its first GPU run, any Hopper (correctness only), about 330 s:
#   1. test_chapter_09_hopper (every path's FP32 kernel with and without accumulate against
#      float64 within 5e-4, D's padding columns untouched, the scale padding read as nothing; the
#      bf16 tests unchanged) and test_library_gpu (MxPlan's float D = the chapter's, bit for bit);
#   2. the PyTorch tests (gemm_mx's float32 D, out= and accumulate on the three paths).
# Prediction: all pass; the float D's error ~1e-5 to 1e-4 (no bf16 rounding).
set -u
PLAN=${PLAN:-330}
source scripts/gpu_call.sh .gpu/t64b.txz .gpu/py64b.txz || exit 1
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,power.limit,driver_version --format=csv >> "$L"
say "test_chapter_09_hopper, test_library_gpu"
packed_tests_step mx 'test_chapter_09_hopper$|test_library_gpu' 200
left=$(seconds_left "$PLAN")
say "PyTorch tests, $left s left"
torch_tests_step $((left - 10))
say end
cat "$L"
