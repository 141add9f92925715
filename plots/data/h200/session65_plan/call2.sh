#!/usr/bin/env bash
# Session 65, call 2, on an H200 only (it stops at once on any other GPU: session 65's call 1 ran
# everything an H100 can). Carry .gpu/t65b.txz .gpu/py65b.txz (session65_plan/pack.sh b at the
# commit to run). About PLAN seconds (default 480):
#   1. test_chapter_08 and test_chapter_09_hopper (no GPU test has run on the H200 since session
#      60; the grouped and MXFP8 float D never on it);
#   2. the PyTorch tests;
#   3. the FP32 per-tensor kernels by name at M = 64 and 128 (predictions in
#      session63_plan/call3.sh: the default 0.95-1.05x torch's float32 D at 64/128 x 2112 x 7168,
#      within 3 % of the fastest decode tile at all twelve shapes) and at M = 4096 (does b1,
#      128x256_s4_c2x1_promoted_f32_tma_b1, lead the promoted default at N = 7168, K >= 7168, as
#      on three H100 runs? session 60's H200 run ranked the tiles the other way).
set -u
PLAN=${PLAN:-480}
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)
echo "GPU: $gpu"
case "$gpu" in *H200*) ;; *) mkdir -p "$OUT" && echo "not an H200 ($gpu): nothing run" > "$OUT/probe.log"; exit 0 ;; esac
source scripts/gpu_call.sh .gpu/t65b.txz .gpu/py65b.txz || exit 1
say "test_chapter_08, test_chapter_09_hopper"
packed_tests_step h200 'test_chapter_08$|test_chapter_09_hopper$' $((PLAN > 300 ? 260 : PLAN - 40))
left=$(seconds_left "$PLAN")
[[ $left -gt 50 ]] && { say "PyTorch tests, $left s left"; torch_tests_step 60; }
for m in 64 128; do
  [[ $(seconds_left "$PLAN") -gt 70 ]] || break
  say "decode FP32 kernels by name at M = $m"
  F32_TOKENS=$m f32_kernels_step m$m 60 2112x7168 'xx'
done
if [[ $(seconds_left "$PLAN") -gt 70 ]]; then
  say "FP32 kernels by name at M = 4096"
  f32_kernels_step nine 60 7168x1024,7168x2048,7168x7168,7168x12288,2112x7168,24576x1536,4096x7168 '.* promoted'
fi
say end
(cd "$OUT" && ls *.txz > /dev/null 2>&1 && tar cf archives.tar *.txz && rm -f *.txz)
cat "$L"
