#!/usr/bin/env bash
# Session 66, call 3: carry .gpu/t66b.txz .gpu/py66b.txz (session66_plan/pack.sh b at the commit
# to run). Any Hopper, at most PLAN seconds (default 330); each step only if time is left:
#   1. test_chapter_09_hopper whole (the new FP32 TMA kernel of the MXFP8 default path,
#      128x128_s5_c1x1_promoted_f32_tma_b2, by name and as the default at ldd % 4 == 0, with and
#      without accumulate; 66 float D cases) and the library's MxPlan case (its float D now takes
#      that kernel). Prediction: pass, the TMA kernel's error as the registers kernel's (~1e-4:
#      the same sums, stored as they are).
#   2. Chapter 9's executable with --float-d and the registers FP32 kernel named, 8192^3 and three
#      M = 4096 DeepSeek shapes (call 1, H100: the registers kernel's accumulate took 1.60x its
#      D = A.B time at 4096 x 24576 x 1536, 1.04-1.13x elsewhere). Predictions: the TMA kernel's
#      D = A.B 0.95-1.00x the registers kernel's; its accumulate (a TMA reduce-add, done by the TMA
#      unit while the next tile's main loop runs) <= 1.25x its D = A.B at 4096 x 24576 x 1536 and
#      <= 1.05x elsewhere.
#   3. On an H200 only: the FP32 decode kernels by name at M = 128 (session 65's 1.06x at
#      128 x 7168 x 16384 for 64x128_s8_c1x1_*_f32 over the default) and chapter 8's grouped float
#      D beside two bf16 kernels (never timed on an H200).
set -u
PLAN=${PLAN:-330}
source scripts/gpu_call.sh .gpu/t66b.txz .gpu/py66b.txz || exit 1
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)
mkdir -p "$OUT/t"
say "test_chapter_09_hopper whole, the library's MxPlan case"
named_tests_step 150 "test_chapter_09_hopper:*" \
  "test_library_gpu:library: MxPlan runs chapter 9's Hopper kernels here*"
grep -h "float D .*tma_b2\|float D (default)" "$OUT/t/acc_test_chapter_09_hopper.log" | head -24 >> "$L"
grep -h -B2 -A12 "FAILED" "$OUT"/t/acc_*.log | head -40 >> "$L"
say "chapter 9's executable, --float-d, the registers FP32 kernel named"
timeout 170 stdbuf -oL "$B/ch09_hopper_mxfp8" --float-d --kernels=128x128_s5_c1x1_promoted_f32 \
  --shapes=8192x8192x8192,4096x7168x16384,4096x2112x7168,4096x24576x1536 \
  --json="$OUT/ch09_float_d_${C:0:7}.json" > "$OUT/t/ch09_float_d.log" 2>&1
echo "ch09 rc=$?" >> "$L"
grep -E "FAIL|rror|^GPU" "$OUT/t/ch09_float_d.log" | head -20 >> "$L"
python3 plots/data/h200/session66/float_d_ratios.py "$OUT/ch09_float_d_${C:0:7}.json" >> "$L" 2>&1
if [[ "$gpu" != *H200* ]]; then
  say "not an H200 ($gpu): step 3 skipped"
else
  [[ $(seconds_left "$PLAN") -gt 60 ]] && { say "decode FP32 kernels by name at M = 128"
    F32_TOKENS=128 f32_kernels_step m128 45 2112x7168 'xx'; }
  if [[ $(seconds_left "$PLAN") -gt 100 ]]; then
    say "chapter 8's executable: the grouped float D's kernels and two bf16 kernels"
    ch08_kernels_step f32 90 256x128_s3_c1x2_promoted_tma_b4,256x128_s4_c1x1_promoted_tma_b1,128x256_s4_c1x1_promoted_f32_tma_b1,128x256_s4_c1x1_promoted_f32
  fi
fi
tar cJf "$OUT/t.txz" -C "$OUT" t && rm -rf "$OUT/t"
say end
(cd "$OUT" && ls *.txz > /dev/null 2>&1 && tar cf archives.tar *.txz && rm -f *.txz)
cat "$L"
