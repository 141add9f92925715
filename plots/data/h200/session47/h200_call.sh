#!/usr/bin/env bash
# Session 47, call 2 (an H200 only: the guard below). The plan's calls (session47_plan/call1.sh,
# call2.sh) in one, after call 1 on an H100 (call1_h100_54d4153/) ran test_chapter_07 (passed) and
# the H100's halves of both:
#  1. The block-scaled dispatch sweep at M <= 128 and picks.py against the committed table. On the
#     H100 the new kernels were 1.002-1.015x the time of those they were predicted to beat
#     (64x32_s16 against 64x32_s14, 64x64_s13 against 64x64_s12), 0.987-0.990x at 64 x 7168 x 2048
#     (64x64_s13 against 64x128_s8_b2). Prediction on the H200 (more bandwidth, so the deeper rings
#     matter less, not more): the same within 1%, i.e. no row to 64x32_s16; 64x64_s13 picked at
#     64 x 7168 x 2048 at most (0.98-1.00x), and then only the library's table takes it.
#  2. The rule table_sms on the per-tensor families: fp8gemm_dispatch_sweep --families=per_tensor
#     --max_sms=112 on the 18 shapes, then tools/check_table.py --sms 112 for per_tensor_promoted
#     and per_tensor_fast. Prediction (the plan's): within 3% at 17-18 of 18 per family.
#  3. The op against DeepGEMM on 112 SMs, runs old1 / new1 / new2 / old2 as on the H100 (there: new
#     0.988-0.989x DeepGEMM at M <= 128, old 0.869-0.870x, new over old time 0.884x). Prediction on
#     the H200: old 0.85-0.88x (session 46 call 1: 0.863x), new 0.97-1.01x, new over old 0.86-0.90x.
#  0. (Added in session 47, for the rule of c1290c2; its call 2 ran it on an H100: 0.67-0.84x.) The chapters' rules now plan for the grid's SMs
#     (engine::decode_tile_width, wave efficiency on the usable SMs): block-scaled sweeps of shapes
#     outside the table where the new rule's pick differs from the old one, the old pick's time
#     measured in the same sweep. Predictions, new pick's time over the old's: on 112 SMs
#     64 x 2048 x 7168 (64x32 for 64x16) 0.65-0.80x, 64 x 4096 x 4096 (64x64 for 64x32) 0.70-0.85x,
#     128 x 4096 x 4096 (128x64 for 128x32) 0.70-0.90x, 4096 x 8192 x 4096 (192x128 for 256x128)
#     0.95-1.00x; on all 132 SMs, where the thin-second-wave clause changes the rule's default,
#     64 x 2560 x 7168 (64x32, 80 tiles, for 64x16, 160) 0.65-0.85x, 64 x 2304 x 7168 (72 for 144)
#     0.60-0.80x, 128 x 4608 x 7168 (128x64, 72 tiles, for 128x32, 144) 0.70-0.90x.
# Run: carry .gpu/s47.txz, .gpu/py10.txz, .peer (packed at the commit to run by
# `bash plots/data/h200/session47_plan/pack.sh [DEEPGEMM CUTLASS FMT git dirs]`; PLAN_BINS names
# another archive holding the same binaries, e.g. session 48's .gpu/d48.txz). BUDGET=seconds
# (default 570) bounds the steps.
set -u
source scripts/gpu_call.sh "${PLAN_BINS:-.gpu/s47.txz}" .gpu/py10.txz || exit 1
if ! nvidia-smi --query-gpu=name --format=csv,noheader | grep -q H200; then
  say "not an H200: nothing run"; cat "$L"; exit 0
fi
nvidia-smi --query-gpu=name,clocks.max.sm,power.limit,driver_version --format=csv >> "$L"
SH18=$DS_SH18  # scripts/gpu_call.sh
say "dispatch sweep, block-scaled, M <= 128"
small_picks_step 100
say "chapter rule check: block-scaled sweeps outside the table, 112 SMs then all"
dispatch_sweep_step rule_sms112 60 "64x2048x7168,64x4096x4096,128x4096x4096,4096x8192x4096" \
  --families=block_scaled --max_sms=112
dispatch_sweep_step rule_sms132 60 "64x2560x7168,64x2304x7168,128x4608x7168" --families=block_scaled
say "dispatch sweep on 112 SMs, per-tensor, 18 shapes ($(seconds_left ${BUDGET:-570}) s left)"
dispatch_sweep_step per_tensor_sms112 240 "$SH18" --families=per_tensor --max_sms=112
for f in per_tensor_promoted per_tensor_fast; do
  python3 tools/check_table.py --picks-exe "$B/fp8gemm_dispatch_picks" --sms 112 --family $f \
    --dispatch-sweep "$OUT/dispatch_sweep_per_tensor_sms112_${C:0:7}.json" > "$OUT/check_$f.txt" 2>&1
  echo "check_table $f rc=$?" >> "$L"; tail -3 "$OUT/check_$f.txt" >> "$L"
done
OLD=$("$B/fp8gemm_dispatch_picks" | awk '$1 == "block_scaled" {printf "%s%s=%s", n++ ? "," : "", $2, $3}')
echo "old picks: $OLD" >> "$L"
if [ "$(seconds_left ${BUDGET:-570})" -gt 200 ]; then
  say "DeepGEMM build"
  deepgemm_build_step 150
  for run in old1 new1 new2 old2; do
    LEFT=$(seconds_left ${BUDGET:-570})
    [ "$LEFT" -gt 45 ] || break
    say "peers $run on 112 SMs ($LEFT s left)"
    case $run in old*) export FP8GEMM_KERNEL_BLOCK_SCALED=$OLD ;; *) unset FP8GEMM_KERNEL_BLOCK_SCALED ;; esac
    PEERS_MAX_SMS=112 peers_ch07_step "sms112_$run" 40 "$SH18"
  done
  unset FP8GEMM_KERNEL_BLOCK_SCALED
fi
# At most 8 files come back: call.log, the two plan sweeps, four peers runs, logs.txz (the rest:
# the rule-check sweeps' JSON too).
echo "picks: $(cat "$OUT/picks.txt" 2>/dev/null)" >> "$L"
tar cJf "$OUT/logs.txz" -C "$OUT" p picks.txt check_per_tensor_promoted.txt check_per_tensor_fast.txt \
  sweep_small.log.xz sweep_per_tensor_sms112.log.xz sweep_rule_sms112.log.xz sweep_rule_sms132.log.xz \
  "dispatch_sweep_rule_sms112_${C:0:7}.json" "dispatch_sweep_rule_sms132_${C:0:7}.json" 2>/dev/null &&
  rm -rf "$OUT/p" "$OUT/picks.txt" "$OUT"/check_*.txt "$OUT"/sweep_*.log.xz "$OUT"/dispatch_sweep_rule_*.json
say end
cat "$L"
