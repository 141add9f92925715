#!/usr/bin/env bash
# Session 46's plan for the next device session, call 2 (an H200 for the sweep; the tests run on
# any Hopper GPU): session 46's two new decode candidates of chapter 7, 64x32_s16 and 64x64_s13
# (DeepGEMM's stage counts on our narrow tiles; compiled, no spills, never run).
#  1. test_chapter_07 (its every-kernel cases include them). Prediction: passes.
#  2. The block-scaled dispatch sweep on the twelve M <= 128 shapes, picks.py against the committed
#     table. Predictions (time over the table's kernel in the same sweep): 64x32_s16 0.96-1.00x
#     at 64 x 4096 x 7168 and 128 x 2112 x 7168 (64x32_s14 there); 64x64_s13 0.97-1.00x at
#     128 x 4096 x 7168, 64 x 7168 x 16384 (64x64_s12) and 64 x 7168 x 2048 (against 64x128_s8_b2).
#     Adopt as in session 46 (chapter 7's README, "Session 46"): commit the JSON as
#     plots/data/h200/ch10/dispatch_sweep_block_scaled.json, regenerate the table.
# Run: carry .gpu/c10.txz and .gpu/s47.txz (pack.sh; s47 adds fp8gemm_dispatch_picks).
set -u
source scripts/gpu_call.sh .gpu/c10.txz || exit 1
tar xJf .gpu/s47.txz -C /tmp/b || echo "cannot unpack .gpu/s47.txz" >> "$L"
say "test_chapter_07"
gpu_tests_step '^test_chapter_07$' 200
if nvidia-smi --query-gpu=name --format=csv,noheader | grep -q H200; then
  M128="64x2112x7168,64x24576x1536,64x32768x512,64x7168x16384,64x4096x7168,64x7168x2048"
  M128="$M128,128x2112x7168,128x24576x1536,128x32768x512,128x7168x16384,128x4096x7168,128x7168x2048"
  say "dispatch sweep, block-scaled, M <= 128"
  dispatch_sweep_step small 150 "$M128" --families=block_scaled
  awk '$1 == "block_scaled" && $2 ~ /^(64|128)x/ {print $2, $3}' <("$B/fp8gemm_dispatch_picks") \
    > /tmp/table.txt 2>/dev/null || true
  python3 plots/data/h200/session43/call4_18a7ac7/picks.py "$OUT/dispatch_sweep_small_${C:0:7}.json" \
    /tmp/table.txt > "$OUT/picks.txt" 2>> "$L"
fi
tar cJf "$OUT/logs.txz" -C "$OUT" gl sweep_small.log.xz 2>/dev/null &&
  rm -rf "$OUT/gl" "$OUT/sweep_small.log.xz"
say end
cat "$L"
