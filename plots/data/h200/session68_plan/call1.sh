#!/usr/bin/env bash
# Session 68, call 1 (never ran: no machine in session 68): carry .gpu/t68a.txz .gpu/py68a.txz
# (session68_plan/pack.sh a, on a commit with both patches of this folder applied: chapter 7's
# choose_kernel taking accumulate, chapter 9's dequantize_bf16 path's float D by TMA). Any Hopper,
# about PLAN seconds (default 560; 330 does steps 1-4). Session 67's call 2 with three changes:
# the binaries' chapter 7 default for an accumulating FP32 D whose rows TMA can store is the FP32
# TMA kernel, and the dequantize_bf16 path's default for any float D whose rows TMA can store is
# its bf16 rule's tile by TMA (both to be kept only if this call's timing says so); chapter 7's
# and chapter 9's --float-d name the registers kernels too, so that both sides are timed in the
# same run.
#   1. test_chapter_09_hopper and test_library_gpu whole. Prediction: pass (the MXFP8 accumulate
#      default by TMA, 1e003e7; the library's BlockScaledPlan at N = 388 naming chapter 7's FP32
#      TMA kernels; the requantize path's accumulating float D now by chapter 7's TMA kernel).
#   1b. test_chapter_07's FP32 cases: every FP32 kernel by name (never run) and the default's
#      choice. Prediction: pass, rel 4e-5 .. 1.3e-4 as the registers kernels'.
#   2. chapter 7's --float-d with 128x256_s4_c2x1_promoted_f32_tma_b1, 128x256_s4_c2x1_promoted_f32
#      and 128x128_s6_c1x1_promoted_f32 named, at the four shapes and 128 x 7168 x 16384.
#      Predictions: the registers kernel's float D / bf16 D 1.05-1.30x; its accumulate / its
#      D = A.B 1.1-1.8x; the TMA kernel's accumulate / its D = A.B <= 1.03x; its D = A.B
#      0.95-1.03x the registers kernel's.
#   3. chapter 9's --float-d with the dequantize_bf16 path's FP32 kernels named (the TMA ones never
#      run; ch09_hopper_mx_bf16_f32d is now the rule's TMA tile). Predictions: float D by TMA
#      within 1.00-1.05x of the path's bf16 D; accumulate <= 1.02x; the registers kernel as in
#      session 67 (1.29x and 1.17x the bf16 D at 4096 x 2112 x 7168 and 4096 x 24576 x 1536).
#   4. PyTorch tests. Prediction: 135 passed, 2 skipped.
#   5. On an H200 only: session 66's H200 steps and test_chapter_08 whole.
set -u
PLAN=${PLAN:-560}
source scripts/gpu_call.sh .gpu/t68a.txz .gpu/py68a.txz || exit 1
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,power.limit,driver_version --format=csv >> "$L"
say "test_chapter_09_hopper, test_library_gpu"
packed_tests_step mx 'test_chapter_09_hopper$|test_library_gpu' 200
say "test_chapter_07's FP32 cases"
named_tests_step 60 "test_chapter_07:ch07: every FP32 kernel by name*" "test_chapter_07:ch07: FP32 output*"
grep -h "f32 " "$OUT/t/acc_test_chapter_07.log" | head -40 >> "$L"
grep -h -B2 -A12 "FAILED" "$OUT"/t/acc_*.log 2>/dev/null | head -40 >> "$L"
[[ $(seconds_left "$PLAN") -gt 150 ]] && { say "chapter 7's --float-d, FP32 kernels named"
  ch07_float_d_step 140 128x256_s4_c2x1_promoted_f32_tma_b1,128x256_s4_c2x1_promoted_f32,128x128_s6_c1x1_promoted_f32 \
    8192x8192x8192,4096x7168x16384,4096x2112x7168,4096x24576x1536,128x7168x16384; }
[[ $(seconds_left "$PLAN") -gt 120 ]] && { say "chapter 9's --float-d, the bf16 path's TMA FP32 kernels named"
  ch09_float_d_step 110 128x256_s4_c2x1_fast_f32_tma_b2_bf16,128x192_s4_c1x1_fast_f32_tma_b2_bf16,128x256_s4_c1x1_fast_f32_bf16; }
left=$(seconds_left "$PLAN")
[[ $left -gt 80 ]] && { say "PyTorch tests, $left s left"; torch_tests_step 70; }
h200_float_d_steps "$PLAN"
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)
if [[ "$gpu" == *H200* && $(seconds_left "$PLAN") -gt 120 ]]; then
  say "test_chapter_08 whole"
  packed_tests_step ch08 'test_chapter_08$' $(($(seconds_left "$PLAN") - 10))
fi
finish_call
