#!/usr/bin/env bash
# Session 66, call 3: carry .gpu/t66b.txz .gpu/py66b.txz (session66_plan/pack.sh b at the commit
# to run). Any Hopper; steps 1 and 2 within their own caps (each test binary 120 s, chapter 9's
# executable 170 s; about 120 s in all on an H100), step 3 only if time is left of PLAN seconds
# (default 330):
#   1. test_chapter_09_hopper whole (the new FP32 TMA kernel of the MXFP8 default tile,
#      128x128_s5_c1x1_promoted_f32_tma_b2, by name at ldd = N + 4, with and without accumulate;
#      66 float D cases) and the library's MxPlan case. Prediction: pass, the TMA kernel's error
#      as the registers kernel's (~1e-4: the same sums, stored as they are). (Never run: session
#      66's device time ran out; repack at the commit to run, `session66_plan/pack.sh b`.)
#   2. Chapter 9's executable with --float-d and the TMA FP32 kernel named, 8192^3 and three
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
mkdir -p "$OUT/t"
say "test_chapter_09_hopper whole, the library's MxPlan case"
named_tests_step 120 "test_chapter_09_hopper:*" \
  "test_library_gpu:library: MxPlan runs chapter 9's Hopper kernels here*"
grep -h "float D .*tma_b2\|float D (default)" "$OUT/t/acc_test_chapter_09_hopper.log" | head -24 >> "$L"
grep -h -B2 -A12 "FAILED" "$OUT"/t/acc_*.log | head -40 >> "$L"
say "chapter 9's executable, --float-d, the TMA FP32 kernel named"
ch09_float_d_step 170 128x128_s5_c1x1_promoted_f32_tma_b2
h200_float_d_steps "$PLAN"
tar cJf "$OUT/t.txz" -C "$OUT" t && rm -rf "$OUT/t"
say end
(cd "$OUT" && ls *.txz > /dev/null 2>&1 && tar cf archives.tar *.txz && rm -f *.txz)
cat "$L"
