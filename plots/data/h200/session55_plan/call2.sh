#!/usr/bin/env bash
# Session 55's second call (carry .gpu/t55.txz .gpu/py55b.txz .gpu/t54.txz; t55 and py55b packed
# at the commit to run by session55_plan/pack.sh, t54 the binaries of 63f1a9d for the A/B), any
# Hopper GPU. What it checks (the reviews of session 55; chapter 8's and 9's READMEs, CHANGELOG):
#  - chapter 9's promoting MXFP8 kernels mask the scale padding (codes of blocks past K read as 0):
#    test_chapter_09_hopper's new case fills the padding with 0xFF / 0xFE and expects D bit for
#    bit as with zero padding, every kernel and path. Predicted: pass (before the fix the
#    promoting kernels would give NaN there);
#  - chapter 8's counter kernel stops drawing at a negative tile number, and the checking mode
#    refuses a counter that is not {0, 0}: test_chapter_08's new case. Predicted: pass;
#  - the rest of test_chapter_08, test_chapter_08_wgrad and test_library_gpu (the library runs
#    both kernels): predicted pass;
#  - the PyTorch tests with the layer changes (weight cache opt-in and keyed on the tensor
#    itself and pow2_scales, bypassed under inference_mode; once_differentiable; out_dtype with
#    out= refused; from_linear's keywords): predicted "125 passed, 2 skipped" (124 + the double
#    backward test);
#  - the mask's cost: chapter 9's default promoting kernel, old (63f1a9d) against new, in the
#    order old, new, new, old, at 8192^3 and 4096 x 7168 x 2048. Predicted: within +-1 % (three
#    to four more instructions per thread and 128-K stage, against ~1800 there).
# About 500 s.
set -u
source scripts/gpu_call.sh .gpu/t55.txz .gpu/py55b.txz || exit 1
mkdir -p /tmp/old && tar xJf .gpu/t54.txz -C /tmp/old
say "test_chapter_09_hopper, test_chapter_08"
packed_tests_step a '^(test_chapter_09_hopper|test_chapter_08)$' 200
say "PyTorch tests"
torch_tests_step 150
say "ch09 default kernel, old / new"
old_new_runs "$OUT/ab" 420 60 80 /tmp/old/bin ch09_hopper_mxfp8 ch09 \
  --shapes=8192x8192x8192,4096x7168x2048
for f in "$OUT"/ab/ch09_*.log; do
  echo "$(basename "$f"): $(grep -E "^ch09_hopper_mx |^ch07_block_scaled |VALIDATION|FAIL" "$f" | head -6 | tr '\n' ' ')" >> "$L"
done
(cd "$OUT" && tar cJf ab.txz ab && rm -rf ab)
say "test_chapter_08_wgrad, test_library_gpu"
packed_tests_step b '^(test_chapter_08_wgrad|test_library_gpu)$' $(( $(seconds_left 560) - 10 ))
rm -f "$OUT"/gpu_tests_*.txt
say end
cat "$L"
