#!/usr/bin/env bash
# RAN in session 46 on the H200, combined into one call: plots/data/h200/session46/call1_d711d74/
# (the machine is released 30 s after a call and call 3 needs call 2's picks). Keep for the record.
# Session 45's plan (session 44's, extended), call 2 (after call1.sh, the same .gpu/c10.txz):
#  1. test_reliability (session 44's refusal checks: the memory a refused call pointed at must be
#     as it was), test_chapter_07 (its every-kernel cases now include session 44's six decode
#     kernels, and every kernel now runs the SM-count tile counts: about 100 s -> 150 s),
#     test_chapter_07_splitk and test_chapter_09_hopper (session 44's second read of the tests:
#     first runs, other rows and paddings now checked; session 45's max_sms case, both paths at
#     1, 2 and 16 SMs). test_reliability's [other-device] case prints "only 1 GPU: nothing to
#     check" (CTest reports it as skipped, test_reliability_other_device). Prediction: all four
#     pass.
#  2. fp8gemm_dispatch_sweep, block-scaled family, the twelve M <= 128 shapes (the candidates now
#     include 128x192_s5_b1, 128x192_s4_b3, 64x192_s6_b3, 64x96_s10_b3, 64x128_s8_b2,
#     128x128_s5_b2), then picks.py: the pick per shape as the library's
#     FP8GEMM_KERNEL_BLOCK_SCALED override (picks.txt) and the committed table's kernel over the
#     pick in the same sweep (the log). Predictions (chapter 7's README, "Session 44"):
#     64x128_s8_b2 0.95-0.99x the time of 64x128_s8_b1 where the table has that (64 x 32768 x 512,
#     128 x 24576 x 1536, 128 x 7168 x 2048); 128x128_s5_b2 0.96-1.00x at 128 x 32768 x 512;
#     128 x 192 at 128 x 24576 x 1536 0.93-0.98x the table's pick, _s4_b3 ahead of _s5_b1; at
#     64 x 24576 x 1536 the better of 64x96_s10_b3 / 64x192_s6_b3 0.95-1.02x of 64x64_s12.
# To adopt the picks (where call 3's B run confirms them): commit the sweep's JSON as
# plots/data/h200/ch10/dispatch_sweep_block_scaled.json (gen_dispatch_table.py takes a family's own
# sweep first, per shape, over the full one) and run
# python3 chapters/10_production/tools/gen_dispatch_table.py --picks-exe build/bin/fp8gemm_dispatch_picks;
# chapter 7's own table (bs_gemm.cpp) moves only rows beyond the library's 3 % (its rule).
# Run: carry .gpu/c10.txz.
set -u
source scripts/gpu_call.sh .gpu/c10.txz || exit 1
H=plots/data/h200/session46_plan
say "GPU tests"
# These four passed on an H100 in session 45 (call2_7227672): run them again only with RUN_TESTS=1.
[ "${RUN_TESTS:-0}" = 1 ] && gpu_tests_step '^(test_reliability|test_chapter_07|test_chapter_07_splitk|test_chapter_09_hopper)$' 330
LEFT=$(seconds_left 480)
say "dispatch sweep, block-scaled, M <= 128 ($LEFT s left)"
SMALL="64x2112x7168,64x24576x1536,64x32768x512,64x7168x16384,64x4096x7168,64x7168x2048"
SMALL="$SMALL,128x2112x7168,128x24576x1536,128x32768x512,128x7168x16384,128x4096x7168,128x7168x2048"
timeout 120 "$B/fp8gemm_dispatch_sweep" --families=block_scaled --shapes="$SMALL" \
  --json="$OUT/dispatch_sweep_small_${C:0:7}.json" > "$OUT/sweep.log" 2>&1
echo "sweep rc=$?" >> "$L"
python3 plots/data/h200/session43/call4_18a7ac7/picks.py "$OUT/dispatch_sweep_small_${C:0:7}.json" \
  $H/table_block_scaled.txt > "$OUT/picks.txt" 2>> "$L"
cat "$OUT/picks.txt" >> "$L"
xz -6 "$OUT/sweep.log"
tar cJf "$OUT/logs.txz" -C "$OUT" gl sweep.log.xz 2>/dev/null && rm -rf "$OUT/gl" "$OUT/sweep.log.xz"
say end
cat "$L"
