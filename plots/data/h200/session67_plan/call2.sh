#!/usr/bin/env bash
# Session 67, call 2: carry .gpu/t67a.txz .gpu/py67a.txz (`session67_plan/pack.sh a` at the
# commit to run). Any Hopper, about PLAN seconds (default 540):
#   1. test_chapter_09_hopper and test_library_gpu whole: the default for an accumulating MXFP8
#      float D is now the TMA FP32 kernel where ldd % 4 == 0 (1e003e7); both check the choice,
#      the library runs it bit for bit with the chapter's plan. Prediction: pass.
#   1b. test_chapter_07's FP32 cases (its two FP32 kernels by TMA, 128x128_s5_c1x1_promoted_f32_tma_b2
#      and 128x256_s4_c2x1_promoted_f32_tma_b1, by name, never run). Prediction: pass, error as
#      the registers kernels' (4e-5 .. 1.3e-4).
#   2. the PyTorch tests (gemm_mx's float32 out= with accumulate takes the TMA kernel now).
#      Prediction: 135 passed, 2 skipped, as before.
#   3. chapter 9's --float-d with the dequantize_bf16 path's two new FP32 TMA kernels named
#      (128x256_s4_c2x1_fast_f32_tma_b2_bf16, 128x192_s4_c1x1_fast_f32_tma_b2_bf16; never run):
#      ch09_hopper_mx_f32d_acc is the default path's TMA kernel now. Predictions: that
#      accumulate / D = A.B within 1.00-1.02x at the four shapes (call 1: 1.001-1.004x by name),
#      where the registers default took 1.04-1.61x; the bf16 path's float D by TMA within
#      1.00-1.05x of its bf16 D's time with the tile the bf16 rule picks (128 x 192 at
#      4096 x 2112 x 7168 and 4096 x 24576 x 1536, 128 x 256 at the other two), where the
#      registers kernel took 1.29x and 1.17x; accumulate <= 1.02x its D = A.B.
#   3b. chapter 7's --float-d (new), its two FP32 TMA kernels named (never run): predictions,
#      the registers default's float D / bf16 D 1.05-1.30x (chapter 7 runs ~3x chapter 9's MXFP8
#      speed, so D's bytes weigh more), its accumulate / D = A.B 1.1-1.8x; the TMA kernels'
#      accumulate / D = A.B <= 1.03x and their D = A.B 0.95-1.03x the registers kernel's.
#   4. On an H200 only: session 66's H200 steps (h200_float_d_steps) and test_chapter_08 whole.
set -u
PLAN=${PLAN:-540}
source scripts/gpu_call.sh .gpu/t67a.txz .gpu/py67a.txz || exit 1
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,power.limit,driver_version --format=csv >> "$L"
say "test_chapter_09_hopper, test_library_gpu"
packed_tests_step mx 'test_chapter_09_hopper$|test_library_gpu' 220
say "test_chapter_07's FP32 cases"
named_tests_step 60 "test_chapter_07:ch07: every FP32 kernel by name*" "test_chapter_07:ch07: FP32 output*"
grep -h "f32 named" "$OUT/t/acc_test_chapter_07.log" | head -24 >> "$L"
grep -h -B2 -A12 "FAILED" "$OUT"/t/acc_*.log 2>/dev/null | head -40 >> "$L"
if [[ $(seconds_left "$PLAN") -gt 130 ]]; then
  say "chapter 7's --float-d, its TMA FP32 kernels named"
  timeout 120 stdbuf -oL "$B/ch07_block_scaling" --float-d \
    --kernels=128x128_s5_c1x1_promoted_f32_tma_b2,128x256_s4_c2x1_promoted_f32_tma_b1 \
    --shapes=8192x8192x8192,4096x7168x16384,4096x2112x7168,4096x24576x1536 \
    --json="$OUT/ch07_float_d_${C:0:7}.json" > "$OUT/t/ch07_float_d.log" 2>&1
  echo "ch07 rc=$?" >> "$L"
  grep -E "FAIL|rror|skipped" "$OUT/t/ch07_float_d.log" | head -20 >> "$L"
  python3 plots/data/h200/session66/float_d_ratios.py "$OUT/ch07_float_d_${C:0:7}.json" >> "$L" 2>&1
fi
[[ $(seconds_left "$PLAN") -gt 120 ]] && { say "chapter 9's --float-d, the bf16 path's TMA FP32 kernels named"
  ch09_float_d_step 110 128x256_s4_c2x1_fast_f32_tma_b2_bf16,128x192_s4_c1x1_fast_f32_tma_b2_bf16; }
left=$(seconds_left "$PLAN")
[[ $left -gt 80 ]] && { say "PyTorch tests, $left s left"; torch_tests_step 70; }
h200_float_d_steps "$PLAN"
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)
if [[ "$gpu" == *H200* && $(seconds_left "$PLAN") -gt 120 ]]; then
  say "test_chapter_08 whole"
  packed_tests_step ch08 'test_chapter_08$' $(($(seconds_left "$PLAN") - 10))
fi
say end
[ -d "$OUT/t" ] && tar cJf "$OUT/t.txz" -C "$OUT" t && rm -rf "$OUT/t"
(cd "$OUT" && ls *.txz > /dev/null 2>&1 && tar cf archives.tar *.txz && rm -f *.txz)
cat "$L"
