#!/usr/bin/env bash
# Session 46's plan for the next device session, call 1 (an H200 only: the guard below).
# Session 46 wrote the rule table_sms (the dispatch table's sweep times rescaled by each kernel's
# waves on the plan's SMs) and measured it on an H100 only (the H200 was refused three times):
# 0.995x DeepGEMM at M <= 128 on 112 SMs. Its "before" (0.863x) was the H200's, in another call.
#  1. The same GPU, before and after, one call: the op against DeepGEMM on 112 SMs, 18 shapes, run
#     "old" with FP8GEMM_KERNEL_BLOCK_SCALED set to the 132-SM table's picks (the environment wins
#     over the rule, so this is the dispatch before session 46) and run "new" (the rule), in the
#     order old, new, new, old. Predictions: old about 0.86x at M <= 128 (session 46 call 1:
#     0.863x), new 0.97-1.03x; M = 4096 both 0.99-1.02x; new over old time 0.80-0.90x geomean at
#     M <= 128, 0.62-0.70x at 64 / 128 x 2112 x 7168.
#  2. The rule's first check on the per-tensor families: fp8gemm_dispatch_sweep
#     --families=per_tensor --max_sms=112 on the 18 shapes, then tools/check_table.py
#     --picks-exe ... --sms 112 for per_tensor_promoted and per_tensor_fast (the block-scaled
#     check is CTest library_dispatch_rescaled_112). Prediction: within 3% at 17-18 of 18 per
#     family. Commit the JSON as plots/data/h200/ch10/dispatch_sweep_per_tensor_sms112.json and add
#     the two checks beside library_dispatch_rescaled_112 (tests/library.cmake) if they pass.
# Not an H200 (session 47's addition): call 2's first step instead, test_chapter_07 on session 46's
# two new kernels (any Hopper GPU; carry .gpu/t07.txz: build/bin/test_chapter_07 and gpu_tests.txt).
# Run: carry .gpu/s47.txz, .gpu/py10.txz, .peer, .gpu/t07.txz (packed by pack.sh at the commit to run).
set -u
source scripts/gpu_call.sh .gpu/s47.txz .gpu/py10.txz || exit 1
if ! nvidia-smi --query-gpu=name --format=csv,noheader | grep -q H200; then
  say "not an H200: nothing timed; test_chapter_07 instead"
  tar xJf .gpu/t07.txz -C /tmp/b || echo "cannot unpack .gpu/t07.txz" >> "$L"
  gpu_tests_step '^test_chapter_07$' 300
  tar cJf "$OUT/logs.txz" -C "$OUT" gl 2>/dev/null && rm -rf "$OUT/gl"
  say end; cat "$L"; exit 0
fi
M128="64x2112x7168,64x24576x1536,64x32768x512,64x7168x16384,64x4096x7168,64x7168x2048"
M128="$M128,128x2112x7168,128x24576x1536,128x32768x512,128x7168x16384,128x4096x7168,128x7168x2048"
SH18="$M128,4096x2112x7168,4096x24576x1536,4096x32768x512,4096x7168x16384,4096x4096x7168,4096x7168x2048"
# The 132-SM table's block-scaled picks as the environment override (the dispatch before the rule).
OLD=$("$B/fp8gemm_dispatch_picks" | awk '$1 == "block_scaled" {printf "%s%s=%s", n++ ? "," : "", $2, $3}')
echo "old picks: $OLD" >> "$L"
say "DeepGEMM build"
deepgemm_build_step 150
for run in old1 new1 new2 old2; do
  say "peers $run on 112 SMs ($(seconds_left 570) s left)"
  case $run in old*) export FP8GEMM_KERNEL_BLOCK_SCALED=$OLD ;; *) unset FP8GEMM_KERNEL_BLOCK_SCALED ;; esac
  PEERS_MAX_SMS=112 peers_ch07_step "sms112_$run" 60 "$SH18"
done
unset FP8GEMM_KERNEL_BLOCK_SCALED
LEFT=$(seconds_left 570)
say "dispatch sweep on 112 SMs, per-tensor, 18 shapes ($LEFT s left)"
dispatch_sweep_step per_tensor_sms112 $((LEFT - 15)) "$SH18" --families=per_tensor --max_sms=112
for f in per_tensor_promoted per_tensor_fast; do
  python3 tools/check_table.py --picks-exe "$B/fp8gemm_dispatch_picks" --sms 112 --family $f \
    --dispatch-sweep "$OUT/dispatch_sweep_per_tensor_sms112_${C:0:7}.json" 2>&1 | tail -4 >> "$L"
done
tar cJf "$OUT/logs.txz" -C "$OUT" p gl sweep_per_tensor_sms112.log.xz 2>/dev/null &&
  rm -rf "$OUT/p" "$OUT/gl" "$OUT/sweep_per_tensor_sms112.log.xz"
say end
cat "$L"
