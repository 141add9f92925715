#!/usr/bin/env bash
# Session 69, call 1: carry .gpu/t69a.txz .gpu/py69a.txz (session69_plan/pack.sh a). Any Hopper,
# about PLAN seconds (default 560; 330 does steps 1-4). Session 68's call1.sh (its predictions
# hold, steps 1-4 unchanged) with chapter 8's new kernel on any Hopper:
#   1-4. as session68_plan/call1.sh: test_chapter_09_hopper and test_library_gpu whole; chapter
#      7's FP32 test cases; chapter 7's and chapter 9's --float-d with the FP32 kernels named;
#      the PyTorch tests.
#   5. test_chapter_08's float D case (every FP32 kernel by name, now 128x256_s4_c1x2_promoted_f32
#      _tma_b1 too, with and without accumulate, contiguous and masked) and its every-kernel case.
#      Prediction: pass (26 runs, 4 refusals at N = 137), relative error ~1.2-1.4e-4 as the
#      1 x 1 kernel's.
#   6. chapter 8's executable, balanced and masked cases, forward only: the FP32 TMA kernel in 1 x 2
#      clusters beside its 1 x 1 twin (the float D's default) and the bf16 default for large groups.
#      Prediction: c1x2 / c1x1 0.94-0.99x at the balanced cases (A read once per pair of column
#      tiles, as the bf16 default's 1 x 2 gains over no cluster); 0.98-1.02x at the masked ones
#      (one or two row tiles per group, little A to share); float D / bf16 1.04-1.24x as session 65.
#   7. On an H200 only: the FP32 decode tile at M = 128 (session 66's step).
set -u
PLAN=${PLAN:-560}
source scripts/gpu_call.sh .gpu/t69a.txz .gpu/py69a.txz || exit 1
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,power.limit,driver_version --format=csv >> "$L"
say "test_chapter_09_hopper, test_library_gpu"
packed_tests_step mx 'test_chapter_09_hopper$|test_library_gpu' 200
say "test_chapter_07's FP32 cases, test_chapter_08's float D and every-kernel cases"
named_tests_step 60 "test_chapter_07:ch07: every FP32 kernel by name*" "test_chapter_07:ch07: FP32 output*"
named_tests_step 90 "test_chapter_08:ch08: a float D*" "test_chapter_08:ch08: contiguous groups of 0*"
grep -h "f32 \|float D" "$OUT/t/acc_test_chapter_07.log" "$OUT/t/acc_test_chapter_08.log" | head -60 >> "$L"
grep -h -B2 -A12 "FAILED" "$OUT"/t/acc_*.log 2>/dev/null | head -40 >> "$L"
[[ $(seconds_left "$PLAN") -gt 150 ]] && { say "chapter 7's --float-d, FP32 kernels named"
  ch07_float_d_step 140 128x256_s4_c2x1_promoted_f32_tma_b1,128x256_s4_c2x1_promoted_f32,128x128_s6_c1x1_promoted_f32 \
    8192x8192x8192,4096x7168x16384,4096x2112x7168,4096x24576x1536,128x7168x16384; }
[[ $(seconds_left "$PLAN") -gt 120 ]] && { say "chapter 9's --float-d, the bf16 path's TMA FP32 kernels named"
  ch09_float_d_step 110 128x256_s4_c2x1_fast_f32_tma_b2_bf16,128x192_s4_c1x1_fast_f32_tma_b2_bf16,128x256_s4_c1x1_fast_f32_bf16; }
left=$(seconds_left "$PLAN")
[[ $left -gt 80 ]] && { say "PyTorch tests, $left s left"; torch_tests_step 70; }
[[ $(seconds_left "$PLAN") -gt 70 ]] && { say "chapter 8's executable: FP32 TMA in 1 x 2 clusters, its 1 x 1 twin, the bf16 default"
  ch08_kernels_step f32 $(( $(seconds_left "$PLAN") > 100 ? 90 : $(seconds_left "$PLAN") - 10 )) \
    128x256_s4_c1x2_promoted_f32_tma_b1,128x256_s4_c1x1_promoted_f32_tma_b1,256x128_s3_c1x2_promoted_tma_b4; }
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)
if [[ "$gpu" == *H200* && $(seconds_left "$PLAN") -gt 60 ]]; then
  say "decode FP32 kernels by name at M = 128"
  F32_TOKENS=128 f32_kernels_step m128 45 2112x7168 'xx'
fi
finish_call
