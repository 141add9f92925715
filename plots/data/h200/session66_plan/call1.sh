#!/usr/bin/env bash
# Session 66, call 1, on an H200 only (it stops at once on any other GPU). Carry .gpu/t65b.txz
# .gpu/py65b.txz (session65_plan/pack.sh b at 5ba1ee0: HEAD's Hopper kernels are those). About
# PLAN seconds (default 200):
#   1. The FP32 decode kernels by name at M = 128, N = 7168, K = 16384 and N = 2112, K = 7168
#      (session 65's call 3: the default took 1.06x the time of 64x128_s8_c1x1_*_f32 at
#      128 x 7168 x 16384, both modes, one run). Prediction: 64x128 leads again by 3-7 % there
#      (then the FP32 decode rule gives that shape 64x128); at 2112 x 7168 the default within 1 %.
#   2. Chapter 8's executable, forward only, per launch, 50 us delay: the grouped float D (b1 TMA
#      and registers FP32 kernels) beside two bf16 kernels, never timed on an H200. Prediction
#      (session 65's H100: b1 0.91-1.00x the registers kernel's time, the float D 1.04-1.24x the
#      fastest bf16's): the same ranges within 5 %.
set -u
PLAN=${PLAN:-200}
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)
echo "GPU: $gpu"
case "$gpu" in *H200*) ;; *) mkdir -p "$OUT" && echo "not an H200 ($gpu): nothing run" > "$OUT/probe.log"; exit 0 ;; esac
source scripts/gpu_call.sh .gpu/t65b.txz .gpu/py65b.txz || exit 1
say "decode FP32 kernels by name at M = 128"
F32_TOKENS=128 f32_kernels_step m128 45 2112x7168 'xx'
say "chapter 8's executable: the grouped float D's kernels and two bf16 kernels"
mkdir -p "$OUT/t"
F32K=128x256_s4_c1x1_promoted_f32_tma_b1,128x256_s4_c1x1_promoted_f32
timeout 90 stdbuf -oL "$B/ch08_grouped_moe" --gpu_delay_us=50 --timing=per_launch \
  --forward-only --only='^(bal|masked)_' \
  --kernels=256x128_s3_c1x2_promoted_tma_b4,256x128_s4_c1x1_promoted_tma_b1,$F32K \
  --json="$OUT/t/ch08_f32.json" > "$OUT/t/ch08_f32.log" 2>&1
echo "ch08 rc=$?" >> "$L"
grep -E "FAIL|skipped|rror" "$OUT/t/ch08_f32.log" | head -20 >> "$L"
cp "$OUT/t/ch08_f32.json" "$OUT/ch08_f32_${C:0:7}.json" 2>/dev/null
tar cJf "$OUT/t.txz" -C "$OUT" t && rm -rf "$OUT/t"
say end
(cd "$OUT" && ls *.txz > /dev/null 2>&1 && tar cf archives.tar *.txz && rm -f *.txz)
cat "$L"
