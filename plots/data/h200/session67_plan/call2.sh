#!/usr/bin/env bash
# Session 67, call 2: carry .gpu/t66_67a.txz .gpu/py66_67a.txz (`session66_plan/pack.sh _67a` at
# the commit to run). Any Hopper, about PLAN seconds (default 540):
#   1. test_chapter_09_hopper and test_library_gpu whole: the default for an accumulating MXFP8
#      float D is now the TMA FP32 kernel where ldd % 4 == 0 (1e003e7); both check the choice,
#      the library runs it bit for bit with the chapter's plan. Prediction: pass.
#   2. the PyTorch tests (gemm_mx's float32 out= with accumulate takes the TMA kernel now).
#      Prediction: 135 passed, 2 skipped, as before.
#   3. chapter 9's --float-d with the defaults only: ch09_hopper_mx_f32d_acc is the TMA kernel
#      now. Prediction: its accumulate / D = A.B within 1.00-1.02x at the four shapes (call 1:
#      1.001-1.004x by name), where the registers default took 1.04-1.61x.
#   4. On an H200 only: session 66's H200 steps (h200_float_d_steps) and test_chapter_08 whole.
set -u
PLAN=${PLAN:-540}
source scripts/gpu_call.sh .gpu/t66_67a.txz .gpu/py66_67a.txz || exit 1
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,power.limit,driver_version --format=csv >> "$L"
say "test_chapter_09_hopper, test_library_gpu"
packed_tests_step mx 'test_chapter_09_hopper$|test_library_gpu' 220
left=$(seconds_left "$PLAN")
[[ $left -gt 80 ]] && { say "PyTorch tests, $left s left"; torch_tests_step 70; }
[[ $(seconds_left "$PLAN") -gt 190 ]] && { say "chapter 9's --float-d, the defaults"; ch09_float_d_step 170; }
h200_float_d_steps "$PLAN"
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)
if [[ "$gpu" == *H200* && $(seconds_left "$PLAN") -gt 120 ]]; then
  say "test_chapter_08 whole"
  packed_tests_step ch08 'test_chapter_08$' $(($(seconds_left "$PLAN") - 10))
fi
say end
(cd "$OUT" && ls *.txz > /dev/null 2>&1 && tar cf archives.tar *.txz && rm -f *.txz)
cat "$L"
