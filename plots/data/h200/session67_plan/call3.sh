#!/usr/bin/env bash
# Session 67, call 3: call 2's correctness part alone, for the last ~300 s of device time (carry
# .gpu/t67a.txz .gpu/py67a.txz). Any Hopper, about PLAN seconds (default 200): the float D test
# cases by name (chapter 9's every path and kernel, the new TMA kernels of the dequantize_bf16
# path and the default's choice included; the library's MxPlan case with the accumulate default;
# the library's BlockScaledPlan with chapter 7's FP32 TMA kernels by name; chapter 7's every
# FP32 kernel by name), then chapter 7's --float-d if 110 s are left.
set -u
PLAN=${PLAN:-200}
source scripts/gpu_call.sh .gpu/t67a.txz .gpu/py67a.txz || exit 1
say "float D tests by name"
named_tests_step 90 "test_chapter_09_hopper:ch09 Hopper: a float D on every path*" \
  "test_library_gpu:library: MxPlan runs chapter 9's Hopper kernels here*" \
  "test_library_gpu:library: BlockScaledPlan takes chapter 7's FP32 TMA kernels*" \
  "test_chapter_07:ch07: every FP32 kernel by name*"
grep -h "float D .*tma\|f32 named" "$OUT"/t/acc_*.log | head -40 >> "$L"
grep -h -B2 -A12 "FAILED" "$OUT"/t/acc_*.log 2>/dev/null | head -40 >> "$L"
if [[ $(seconds_left "$PLAN") -gt 110 ]]; then
  say "chapter 7's --float-d, its TMA FP32 kernels named"
  timeout $(($(seconds_left "$PLAN") - 10)) stdbuf -oL "$B/ch07_block_scaling" --float-d \
    --kernels=128x128_s5_c1x1_promoted_f32_tma_b2,128x256_s4_c2x1_promoted_f32_tma_b1 \
    --shapes=4096x24576x1536,4096x2112x7168,8192x8192x8192 \
    --json="$OUT/ch07_float_d_${C:0:7}.json" > "$OUT/t/ch07_float_d.log" 2>&1
  echo "ch07 rc=$?" >> "$L"
  grep -E "FAIL|rror|skipped" "$OUT/t/ch07_float_d.log" | head -20 >> "$L"
  python3 plots/data/h200/session66/float_d_ratios.py "$OUT/ch07_float_d_${C:0:7}.json" >> "$L" 2>&1
fi
say end
tar cJf "$OUT/t.txz" -C "$OUT" t && rm -rf "$OUT/t"
cat "$L"
