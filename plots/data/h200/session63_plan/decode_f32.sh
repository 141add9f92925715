#!/usr/bin/env bash
# Session 63, branch s63-f32-decode (written in session 62, not yet run on any GPU): the FP32 D's
# decode tiles at M <= 128 follow chapter 6's pick (its hand table, else its decode rule, with 16
# columns), through two new registers_f32 kernels per mode (64 x 16 s16, 128 x 16 s10; 32 in
# per_tensor_f32_kernels()). Any Hopper, about 330 s. Pack on the branch, at the commit to run:
#   git checkout s63-f32-decode (rebased on main) && cmake --build build -j2
#   bash plots/data/h200/session60_plan/pack.sh d          (.gpu/t60d.txz, .gpu/py60d.txz)
#   run: bash plots/data/h200/session63_plan/decode_f32.sh (carry .gpu/t60d.txz .gpu/py60d.txz)
# What changes (promoted / fast; CPU test "library: the per-tensor FP32-output choice"):
#   64 x 2112 x 7168     64x32 -> 64x16 promoted (66 -> 132 tiles); fast 64x32 as before
#   128 x 2112 x 7168    128x32 -> 64x32 (66 -> 132 tiles)
#   128 x 4096 x 7168    128x32 -> 64x64 (128 tiles either way; chapter 6's sweep)
#   128 x 24576 x 1536   128x128 -> 128x64 (192 -> 384 tiles)
#   64 x 24576 x 1536    64x128 -> 64x64 (192 -> 384 tiles)
#   the other seven of the twelve M <= 128 shapes: unchanged.
# Predictions (against torch._scaled_mm's float32 D, promoted, same run; the old kernels are
# timed by name beside the new default):
#   1. test_library_gpu passes: 32 kernels by name against float64, each TMA kernel bit for bit
#      its registers twin.
#   2. 64 and 128 x 2112 x 7168: the new default 0.95-1.02x torch (session 60 on the H200, the old
#      picks: 0.901x and 0.880x), at least 5 % faster than the old pick by name in the same run.
#   3. The three other changed shapes: the new default within 3 % of the old pick (either way).
#   4. At each of the twelve, the default within 3 % of the fastest decode kernel by name; where
#      it is not, the rule takes that tile (or say why not) before the branch merges.
# If 1 fails, the branch does not merge. If 2 misses, look at the tiles' count first (ncu: SM
# activity), then at the FP32 stores (a 64 x 16 tile stores 4 KB of D per 1 MB of B it reads).
set -u
PLAN=${PLAN:-330}
grep -q F32_TOKENS scripts/gpu_call.sh ||
  { echo "decode_f32.sh: run it from the branch s63-f32-decode (this tree's gpu_call.sh has no F32_TOKENS)"; exit 1; }
source scripts/gpu_call.sh .gpu/t60d.txz .gpu/py60d.txz || exit 1
say "test_library_gpu (32 FP32 kernels by name)"
packed_tests_step lib 'test_library_gpu' 150
for m in 64 128; do
  left=$(seconds_left "$PLAN")
  [[ $left -lt 40 ]] && { say "M = $m: skipped, $left s left"; continue; }
  say "decode FP32 kernels by name at M = $m"
  F32_TOKENS=$m f32_kernels_step m$m $((left < 90 ? left - 10 : 80)) 2112x7168
done
say end
cat "$L"
