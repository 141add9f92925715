#!/usr/bin/env bash
# Session 53's first call (any Hopper GPU; the bench's ratios are same-run, its absolute numbers
# the card's): pack first with plots/data/h200/session53_plan/pack.sh, carry .gpu/t53.txz and
# .gpu/py10.txz.
#   1. the PyTorch tests: session 52 fixed test_pending_cuda_error_before_the_ops_own_gpu_work
#      (never re-run). Prediction: "112 passed, 2 skipped".
#   2. test_mx_gpu (requantize_mx against the CPU rule, byte for byte) and test_chapter_09_hopper
#      (the requantize_block_scaled path against float64; the other paths' tests as before).
#      Prediction: "2 passed". Most at risk: the sign of a flushed negative element (the CPU rule
#      gives -0, 0x80; cvt.rn.satfinite.e4m3x2.f32 should too) and the padding of the scales.
#   3. chapter 9's executable (--gpu_delay_us=50, as the README's table), its default variants (the three paths, the two GEMMs alone,
#      chapter 7, cuBLASLt block-scaled and bf16) at 8192^3 and the M = 4096 DeepSeek shapes.
#      Prediction (README, "A third Hopper path"): requantize_block_scaled at 0.83-0.92x chapter 7
#      (the re-quantisation ~66 us at 8192^3 if it reaches 85% of the copy; the kernel has 78
#      registers, 3 CTAs of 256 threads per SM, 48 KB in flight per SM: 75-85% of the copy).
#   4. test_chapter_08_wgrad and quantize_test_gpu (unchanged since they passed at a2836d9).
#      Prediction: "2 passed".
#   5. with time left, test_chapter_07, test_library_gpu, test_reliability, test_chapter_08.
# BUDGET: the seconds this call may run (default 560).
set -u
source scripts/gpu_call.sh .gpu/t53.txz .gpu/py10.txz || exit 1
BUDGET=${BUDGET:-560}
say "PyTorch tests"
torch_tests_step 110
say "test_mx_gpu, test_chapter_09_hopper"
packed_tests_step a '^(test_mx_gpu|test_chapter_09_hopper)$' 150
LEFT=$(($(seconds_left "$BUDGET") - 20)); LEFT=$((LEFT < 200 ? LEFT : 200))
say "ch09_hopper_mxfp8 within $LEFT s"
timeout "$LEFT" "$B/ch09_hopper_mxfp8" --gpu_delay_us=50 --json="$OUT/ch09_hopper_requant_${C:0:7}.json" \
  > "$OUT/ch09_bench.log" 2>&1
echo "ch09 bench rc=$?" >> "$L"
grep -E "requant|ch07_block_scaled|VALIDATION|FAIL" "$OUT/ch09_bench.log" | tail -40 >> "$L"
xz -6 -f "$OUT/ch09_bench.log"
LEFT=$(($(seconds_left "$BUDGET") - 15))
say "test_chapter_08_wgrad, quantize_test_gpu, $LEFT s left"
if [ "$LEFT" -gt 60 ]; then
  packed_tests_step b '^(test_chapter_08_wgrad|quantize_test_gpu)$' "$LEFT"
fi
LEFT=$(($(seconds_left "$BUDGET") - 15))
say "the four others, $LEFT s left"
if [ "$LEFT" -gt 120 ]; then
  packed_tests_step c '^(test_reliability|test_library_gpu|test_chapter_07|test_chapter_08)$' "$LEFT"
fi
rm -f "$OUT"/gpu_tests_*.txt  # each is in its gl_NAME.txz too (summary.txt): at most 8 files
say end
cat "$L"
