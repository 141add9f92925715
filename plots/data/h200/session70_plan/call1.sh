#!/usr/bin/env bash
# Session 70, call 1: carry .gpu/t70a.txz .gpu/py70a.txz, built at main's HEAD by
#   BINS="test_chapter_08 ch08_grouped_moe test_chapter_09_hopper test_chapter_07 ch07_block_scaling
#         ch09_hopper_mxfp8 test_library_gpu" SESSION=70 bash plots/data/h200/session66_plan/pack.sh a
# Any Hopper (the H200 preferred: it has not run session 69's defaults), about PLAN seconds
# (default 560). Session 69 ran main's float D defaults on an H100 only, and left
# test_chapter_08 whole unrun at its last code.
#   1. test_library_gpu twice, directly and in scripts/gpu_loop.sh, each timed: session 69 saw
#      11.8 s directly and more than 117 s in the loop, whose JUnit reporter expanded every passed
#      CHECK(a == b) over large device results into text; the loop now runs Catch2's console
#      reporter. Prediction: both within a few seconds of 12 s.
#   2. test_chapter_08 whole (~145 s), test_chapter_09_hopper whole (~63 s). Prediction: pass.
#   3. chapter 7's and chapter 9's --float-d with the FP32 kernels named as in session 69's
#      call 1. Predictions (from the H100): chapter 7's TMA accumulate / its D = A.B 1.00-1.03x
#      where K >= 7168, ~1.6x at 4096 x 24576 x 1536; its D = A.B 0.97-1.00x the registers
#      kernel's (if <= 0.98x at every M > 128 shape on the H200 too, move D = A.B to TMA);
#      the dequantize_bf16 path's float D by TMA 1.01-1.02x its bf16 D where K >= 7168.
#   4. PyTorch tests (135 passed, 2 skipped); on an H200 the decode FP32 step.
set -u
PLAN=${PLAN:-560}
# TAR, PY: another session's packs of the same binaries (session 71: .gpu/t71a.txz, .gpu/py71a.txz).
source scripts/gpu_call.sh "${TAR:-.gpu/t70a.txz}" "${PY:-.gpu/py70a.txz}" || exit 1
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,power.limit,driver_version --format=csv >> "$L"
say "test_library_gpu directly"
s=$(date +%s); timeout 150 "$B/test_library_gpu" > "$OUT/lib_direct.log" 2>&1
echo "direct rc=$? $(( $(date +%s) - s )) s: $(tail -2 "$OUT/lib_direct.log" | head -1)" >> "$L"
say "test_library_gpu in the loop"
packed_tests_step lib 'test_library_gpu' 170
say "test_chapter_08, test_chapter_09_hopper"
packed_tests_step ch0809 'test_chapter_08$|test_chapter_09_hopper$' 240
[[ $(seconds_left "$PLAN") -gt 150 ]] && { say "chapter 7's --float-d"
  ch07_float_d_step 140 128x256_s4_c2x1_promoted_f32_tma_b1,128x256_s4_c2x1_promoted_f32,128x128_s6_c1x1_promoted_f32 \
    8192x8192x8192,4096x7168x16384,4096x2112x7168,4096x24576x1536,128x7168x16384; }
[[ $(seconds_left "$PLAN") -gt 120 ]] && { say "chapter 9's --float-d"
  ch09_float_d_step 110 128x256_s4_c2x1_fast_f32_tma_b2_bf16,128x192_s4_c1x1_fast_f32_tma_b2_bf16,128x256_s4_c1x1_fast_f32_bf16; }
left=$(seconds_left "$PLAN")
[[ $left -gt 80 ]] && { say "PyTorch tests, $left s left"; torch_tests_step 70; }
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)
if [[ "$gpu" == *H200* && $(seconds_left "$PLAN") -gt 60 ]]; then
  say "decode FP32 kernels by name at M = 128"
  F32_TOKENS=128 f32_kernels_step m128 45 2112x7168 'xx'
fi
(cd "$OUT" && ls lib_direct.log > /dev/null 2>&1 && mkdir -p t && mv lib_direct.log t/)
finish_call
