#!/usr/bin/env bash
# Session 64's H200 probe (carry .gpu/t64.txz .gpu/py64.txz: session64_plan/pack.sh at a53f932).
# On any GPU but an H200 it stops at once (a few seconds): the H100 has run all of this. On an
# H200, about 400 s (PLAN):
#   1. the FP32 decode tiles by name at M = 64 and 128 (session 63's plan item 1; predictions in
#      session63_plan/call3.sh: at 64 and 128 x 2112 x 7168 the default 0.95-1.05x torch's float32
#      D, the default within 3 % of the fastest decode tile at all twelve shapes);
#   2. the FP32 kernels by name at M = 4096, nine shapes (does b1, 128x256_s4_c2x1_promoted_f32_tma_b1,
#      lead the promoted default at N = 7168, K >= 7168 as on three H100 runs?);
#   3. chapter 8's float D timed as in call 2 (prediction: the FP32 128 x 256 1.05-1.3x the
#      time of the bf16 TMA kernels, as on the H100);
#   4. test_chapter_08 and the PyTorch tests.
set -u
PLAN=${PLAN:-400}
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)
echo "GPU: $gpu"
case "$gpu" in *H200*) ;; *) mkdir -p "$OUT" && echo "not an H200 ($gpu): nothing run" > "$OUT/probe.log"; exit 0 ;; esac
source scripts/gpu_call.sh .gpu/t64.txz .gpu/py64.txz || exit 1
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,power.limit,driver_version --format=csv >> "$L"
for m in 64 128; do
  say "decode FP32 kernels by name at M = $m"
  F32_TOKENS=$m f32_kernels_step m$m 60 2112x7168 'xx'
done
say "FP32 kernels by name at M = 4096, nine shapes"
f32_kernels_step nine 60 7168x1024,7168x2048,7168x7168,7168x12288,2112x7168,24576x1536,4096x7168 '.* promoted'
say "chapter 8: the float D's kernels by name"
mkdir -p "$OUT/t"
timeout 60 stdbuf -oL "$B/ch08_grouped_moe" --gpu_delay_us=50 --timing=per_launch \
  --forward-only --only='^(bal|masked)_' \
  --kernels=256x128_s3_c1x2_promoted_tma_b4,256x128_s4_c1x1_promoted_tma_b1,256x128_s3_c1x1_promoted_tma_b4,128x256_s4_c1x1_promoted_reg,128x256_s4_c1x1_promoted_f32,128x128_s6_c1x1_promoted_f32 \
  --json="$OUT/t/ch08_f32.json" > "$OUT/t/ch08_f32.log" 2>&1
echo "ch08 rc=$?" >> "$L"
cp "$OUT/t/ch08_f32.json" "$OUT/ch08_f32_h200_${C:0:7}.json" 2>/dev/null
tar cJf "$OUT/t.txz" -C "$OUT" t && rm -rf "$OUT/t"
left=$(seconds_left "$PLAN")
[[ $left -gt 200 ]] && { say "test_chapter_08"; packed_tests_step ch08 'test_chapter_08$' 190; }
left=$(seconds_left "$PLAN")
[[ $left -gt 60 ]] && { say "PyTorch tests"; torch_tests_step $((left - 10)); }
say end
(cd "$OUT" && ls *.txz > /dev/null 2>&1 && tar cf archives.tar *.txz && rm -f *.txz)
cat "$L"
