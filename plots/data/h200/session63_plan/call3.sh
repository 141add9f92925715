#!/usr/bin/env bash
# Session 63, call 3 (carry .gpu/t60e.txz .gpu/py60e.txz: session60_plan/pack.sh e at 8407709,
# main with the branch s63-f32-decode merged), meant for an H200, about 240 s (PLAN caps it):
#   1. test_library_gpu: the 32 FP32 kernels by name (passed on an H100 in call 1);
#   2. the FP32 decode tiles by name at M = 64 and 128 beside the default and torch's float32 D
#      (call 1's timing on the H100). Predictions for the H200: at 64 and 128 x 2112 x 7168 the
#      default 0.95-1.05x torch (session 60 on the H200: 0.901x, 0.880x with the old picks), at
#      least 5 % faster than the old picks (64 x 32 promoted, 128 x 32) by name; the default
#      within 3 % of the fastest decode tile by name at each of the twelve shapes, both modes;
#   3. session 62's plan item 1 for the H200: the FP32 kernels by name at M = 4096 at nine
#      shapes, to see whether 128x256_s4_c2x1_promoted_f32_tma_b1 leads the promoted default at
#      N = 7168, K >= 7168 as on the H100 (+0.4-7.1 %, session 61).
set -u
PLAN=${PLAN:-240}
source scripts/gpu_call.sh .gpu/t60e.txz .gpu/py60e.txz || exit 1
say "test_library_gpu (32 FP32 kernels by name)"
packed_tests_step lib 'test_library_gpu' 120
for m in 64 128; do
  left=$(seconds_left "$PLAN")
  [[ $left -lt 40 ]] && { say "M = $m: skipped, $left s left"; continue; }
  say "decode FP32 kernels by name at M = $m"
  F32_TOKENS=$m f32_kernels_step m$m $((left < 70 ? left - 10 : 60)) 2112x7168 'xx'
done
left=$(seconds_left "$PLAN")
if [[ $left -gt 60 ]]; then
  say "FP32 kernels by name at M = 4096, nine shapes"
  f32_kernels_step nine $((left - 10)) \
    7168x1024,7168x2048,7168x7168,7168x12288,2112x7168,24576x1536,4096x7168 '.* promoted'
fi
say end
(cd "$OUT" && ls *.txz > /dev/null 2>&1 && tar cf archives.tar *.txz && rm -f *.txz)
cat "$L"
