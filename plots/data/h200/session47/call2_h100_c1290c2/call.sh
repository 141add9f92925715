#!/usr/bin/env bash
# Session 47, call 2, on an H100 (the H200 refused five times): step 0 of h200_call.sh alone, as
# same-run ratios (the H100 SXM has the H200's 132 SMs; its memory is slower, 3.35 TB/s against
# 4.8). The chapters' rules now plan for the grid's SMs (c1290c2: engine::decode_tile_width, wave
# efficiency on the usable SMs): sweeps of shapes outside the tables where the new rule's pick
# differs from the old one, both picks measured in the same sweep, block-scaled (chapter 7) and
# per-tensor (chapter 6, whose decode rule is the same). Predictions, new pick's time over the
# old's: on 112 SMs 64 x 2048 x 7168 (64x32 for 64x16) 0.65-0.80x, 64 x 4096 x 4096 (64x64 for
# 64x32) 0.70-0.85x, 128 x 4096 x 4096 (128x64 for 128x32) 0.70-0.90x, 4096 x 8192 x 4096
# (block-scaled 192x128 for 256x128) 0.95-1.00x; on all 132 SMs, where the thin-second-wave
# clause changes the rule's default, 64 x 2560 x 7168 (64x32, 80 tiles, for 64x16, 160)
# 0.65-0.85x, 64 x 2304 x 7168 (72 for 144) 0.60-0.80x, 128 x 4608 x 7168 (128x64, 72 tiles, for
# 128x32, 144) 0.70-0.90x. Per-tensor the same within 0.05.
# Run: carry .gpu/s47.txz.
set -u
source scripts/gpu_call.sh .gpu/s47.txz || exit 1
nvidia-smi --query-gpu=name,clocks.max.sm,power.limit,driver_version --format=csv >> "$L"
say "chapter rule check on 112 SMs"
dispatch_sweep_step rule_sms112 200 "64x2048x7168,64x4096x4096,128x4096x4096,4096x8192x4096" \
  --families=block_scaled,per_tensor --max_sms=112
say "chapter rule check on all SMs"
dispatch_sweep_step rule_sms132 150 "64x2560x7168,64x2304x7168,128x4608x7168" \
  --families=block_scaled,per_tensor
tar cJf "$OUT/logs.txz" -C "$OUT" sweep_rule_sms112.log.xz sweep_rule_sms132.log.xz 2>/dev/null &&
  rm -f "$OUT"/sweep_*.log.xz
say end
cat "$L"
