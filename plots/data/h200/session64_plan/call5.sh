#!/usr/bin/env bash
# Session 64, call 5 (carry .gpu/t64c.txz .gpu/py64c.txz: session64_plan/pack.sh c at the commit to
# run): the grouped float D by TMA (128x256_s4_c1x1_promoted_f32_tma_b1: a store, or with
# accumulate a reduce-add, of 64 x 32-float units through D's ragged-rows view), first GPU run,
# any Hopper, about 380 s (PLAN):
#   1. test_chapter_08 (every kernel, the float D's default now by TMA where ldd % 4 == 0, with
#      and without accumulate, graph replays, masked padding rows untouched, an odd ldd, rebind
#      refusing another output or accumulate) and test_chapter_09_hopper (rebind of a float-D
#      plan on every path refusing another accumulate, review of session 64);
#   2. chapter 8's executable at issue 10's balanced and masked cases as in call 2, with the TMA
#      FP32 kernel. Prediction: the TMA FP32 kernel 0.85-0.95x the registers FP32 128 x 256's time
#      at K = 2048 (the store overlaps the next tile's loop; on the per-tensor FP32 D the TMA
#      128 x 128 was 1.25x faster at K = 1024, session 64 call 1) and 0.95-1.0x at K = 7168;
#   3. the PyTorch tests (the grouped ops' float32 D now takes the TMA kernel).
set -u
PLAN=${PLAN:-380}
source scripts/gpu_call.sh .gpu/t64c.txz .gpu/py64c.txz || exit 1
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,power.limit,driver_version --format=csv >> "$L"
say "test_chapter_08, test_chapter_09_hopper"
packed_tests_step ch08 'test_chapter_08$|test_chapter_09_hopper$' 270
left=$(seconds_left "$PLAN")
if [[ $left -gt 90 ]]; then
  say "chapter 8's executable: bf16 and FP32 kernels by name, $left s left"
  mkdir -p "$OUT/t"
  timeout 55 stdbuf -oL "$B/ch08_grouped_moe" --gpu_delay_us=50 --timing=per_launch \
    --forward-only --only='^(bal|masked)_' \
    --kernels=256x128_s3_c1x2_promoted_tma_b4,256x128_s4_c1x1_promoted_tma_b1,256x128_s3_c1x1_promoted_tma_b4,128x256_s4_c1x1_promoted_f32_tma_b1,128x256_s4_c1x1_promoted_f32 \
    --json="$OUT/t/ch08_f32.json" > "$OUT/t/ch08_f32.log" 2>&1
  echo "ch08 rc=$?" >> "$L"
  grep -E "FAIL|skipped|error" "$OUT/t/ch08_f32.log" | head -20 >> "$L"
  cp "$OUT/t/ch08_f32.json" "$OUT/ch08_f32_${C:0:7}.json" 2>/dev/null
  tar cJf "$OUT/t.txz" -C "$OUT" t && rm -rf "$OUT/t"
fi
left=$(seconds_left "$PLAN")
[[ $left -gt 40 ]] && { say "PyTorch tests, $left s left"; torch_tests_step $((left - 5)); }
say end
cat "$L"
