#!/usr/bin/env bash
# Session 47, on an H100 (the H200 was refused three times in the first 25 minutes). What of the
# plan (session47_plan/call1.sh, call2.sh) holds on any Hopper GPU, as same-run ratios only:
#  1. test_chapter_07: session 46's two new decode kernels (64x32_s16, 64x64_s13) have never run.
#     Prediction: passes.
#  2. The block-scaled dispatch sweep on the twelve M <= 128 shapes and picks.py against the
#     committed (H200) table: not for adoption (the table is the H200's), to see whether the new
#     kernels are where session 46 predicted on this GPU: 64x32_s16 0.96-1.00x the time of the
#     table's 64x32_s14 at 64 x 4096 x 7168 and 128 x 2112 x 7168; 64x64_s13 0.97-1.00x of
#     64x64_s12 at 128 x 4096 x 7168 and 64 x 7168 x 16384.
#  3. The op against DeepGEMM on 112 SMs, 18 shapes, runs old1/new1/new2/old2 (old: the 132-SM
#     table's picks by the environment override, the dispatch before the rule table_sms; new: the
#     rule), so the rule's before and after come from one GPU and one call (session 46 had the
#     before on the H200, the after on an H100). Predictions: new over old time 0.80-0.90x geomean
#     at M <= 128, 0.62-0.70x at 64 / 128 x 2112 x 7168; new 0.97-1.03x DeepGEMM at M <= 128
#     (session 46 call 4 on an H100: 0.995x); old about 0.86x; M = 4096 old and new 0.99-1.02x.
# Run: carry .gpu/s47.txz, .gpu/py10.txz, .peer, .gpu/t07.txz.
set -u
source scripts/gpu_call.sh .gpu/s47.txz .gpu/py10.txz || exit 1
tar xJf .gpu/t07.txz -C /tmp/b || echo "cannot unpack .gpu/t07.txz" >> "$L"
nvidia-smi --query-gpu=name,clocks.max.sm,power.limit,driver_version --format=csv >> "$L"
say "test_chapter_07"
gpu_tests_step '^test_chapter_07$' 150
M128="64x2112x7168,64x24576x1536,64x32768x512,64x7168x16384,64x4096x7168,64x7168x2048"
M128="$M128,128x2112x7168,128x24576x1536,128x32768x512,128x7168x16384,128x4096x7168,128x7168x2048"
SH18="$M128,4096x2112x7168,4096x24576x1536,4096x32768x512,4096x7168x16384,4096x4096x7168,4096x7168x2048"
say "dispatch sweep, block-scaled, M <= 128"
dispatch_sweep_step small 100 "$M128" --families=block_scaled
awk '$1 == "block_scaled" && $2 ~ /^(64|128)x/ {print $2, $3}' <("$B/fp8gemm_dispatch_picks") \
  > /tmp/table.txt 2>/dev/null || true
python3 plots/data/h200/session43/call4_18a7ac7/picks.py "$OUT/dispatch_sweep_small_${C:0:7}.json" \
  /tmp/table.txt > "$OUT/picks.txt" 2>> "$L"
OLD=$("$B/fp8gemm_dispatch_picks" | awk '$1 == "block_scaled" {printf "%s%s=%s", n++ ? "," : "", $2, $3}')
echo "old picks: $OLD" >> "$L"
say "DeepGEMM build"
deepgemm_build_step 150
for run in old1 new1 new2 old2; do
  say "peers $run on 112 SMs ($(seconds_left 570) s left)"
  case $run in old*) export FP8GEMM_KERNEL_BLOCK_SCALED=$OLD ;; *) unset FP8GEMM_KERNEL_BLOCK_SCALED ;; esac
  PEERS_MAX_SMS=112 peers_ch07_step "sms112_$run" 50 "$SH18"
done
unset FP8GEMM_KERNEL_BLOCK_SCALED
tar cJf "$OUT/logs.txz" -C "$OUT" p gl sweep_small.log.xz 2>/dev/null &&
  rm -rf "$OUT/p" "$OUT/gl" "$OUT/sweep_small.log.xz" "$OUT"/gpu_tests_*.txt  # at most 8 files back
say end
cat "$L"
