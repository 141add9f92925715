#!/usr/bin/env bash
# Session 64, call 6, never run (device time ran out; session 65: apply
# plots/data/h200/session65_plan/s64-f32-s3-tma.patch first). Carry .gpu/t64d.txz: test_chapter_08,
# ch08_grouped_moe and Google
# Benchmark's library at the commit to run, packed by the command in session64_plan/pack6.sh), any
# Hopper, about 200 s (PLAN): the grouped float D's two 3-stage TMA kernels with four staging
# units per warpgroup (128 x 256 and 256 x 128), added after call 5's 1.07x at the large balanced
# case.
#   1. test_chapter_08's cases that run every kernel (contiguous and masked: the new kernels with a
#      float D) and the float D's own cases, by Catch2 filter (no comma in a filter);
#   2. chapter 8's executable as in call 5 with the new kernels. Predictions: at
#      bal_g4x8192_n4096_k7168 the new kernels at most the registers FP32 kernel's time (the b1
#      kernel took 1.07x it); elsewhere within 3 % of the b1 kernel either way.
set -u
PLAN=${PLAN:-200}
source scripts/gpu_call.sh .gpu/t64d.txz || exit 1
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,power.limit,driver_version --format=csv >> "$L"
say "test_chapter_08, filtered"
mkdir -p "$OUT/t"
timeout 100 "$B/test_chapter_08" "ch08: contiguous groups of 0*" "ch08: masked groups*" \
  "ch08: a float D*" > "$OUT/t/test_chapter_08_filtered.log" 2>&1
echo "test rc=$?" >> "$L"
grep -E "test cases|assertions|FAIL" "$OUT/t/test_chapter_08_filtered.log" | tail -5 >> "$L"
left=$(seconds_left "$PLAN")
say "chapter 8's executable, $left s left"
timeout $((left - 10)) stdbuf -oL "$B/ch08_grouped_moe" --gpu_delay_us=50 --timing=per_launch \
  --forward-only --only='^(bal|masked)_' \
  --kernels=256x128_s3_c1x2_promoted_tma_b4,256x128_s4_c1x1_promoted_tma_b1,128x256_s4_c1x1_promoted_f32_tma_b1,128x256_s3_c1x1_promoted_f32_tma_b4,256x128_s3_c1x1_promoted_f32_tma_b4,128x256_s4_c1x1_promoted_f32 \
  --json="$OUT/t/ch08_f32.json" > "$OUT/t/ch08_f32.log" 2>&1
echo "ch08 rc=$?" >> "$L"
grep -E "FAIL|skipped|error" "$OUT/t/ch08_f32.log" | head -20 >> "$L"
cp "$OUT/t/ch08_f32.json" "$OUT/ch08_f32_${C:0:7}.json" 2>/dev/null
tar cJf "$OUT/t.txz" -C "$OUT" t && rm -rf "$OUT/t"
say end
cat "$L"
