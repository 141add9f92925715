#!/usr/bin/env bash
# Session 55's fourth call (carry .gpu/t55c.txz .gpu/t54.txz .gpu/varA.txz), any Hopper GPU.
# Chapter 9's default promoting kernel and the scale padding, three ways, in one process each,
# interleaved old, C, A, A, C, old at 8192^3 and 4096 x 7168 x 2048:
#   old  63f1a9d (t54): reads the padding;
#   A    f658ebe (varA.txz, bin/ch09_hopper_mxfp8): the codes masked in a peeled last stage
#        (call 3: 1.2 % and 2.5 % slower than old);
#   C    the commit packed in t55c: no mask; a block past K is not promoted (a warp-uniform branch).
# Prediction: C within +-0.5 % of old at both shapes (the loop's data path is the old one; one
# uniform compare and branch per promotion). Then test_chapter_09_hopper (the padding of 0xFF /
# 0xFE changes nothing, every kernel and path) and test_library_gpu on C: pass. About 230 s.
# The packs (at the commit to run; varA from f658ebe's build):
#   cmake --build build -j2 --target test_chapter_09_hopper test_library_gpu ch09_hopper_mxfp8
#   (cd build && tar cf - bin/commit.txt bin/gpu_tests.txt bin/libbenchmark.so.1.7.1 \
#      bin/libbenchmark.so.1debian bin/test_chapter_09_hopper bin/test_library_gpu \
#      bin/ch09_hopper_mxfp8 | xz -9 -T2 > ../.gpu/t55c.txz)
set -u
source scripts/gpu_call.sh .gpu/t55c.txz || exit 1
mkdir -p /tmp/old /tmp/varA && tar xJf .gpu/t54.txz -C /tmp/old && tar xJf .gpu/varA.txz -C /tmp/varA
mkdir -p "$OUT/ab"
run=0
for v in old C A A C old; do
  run=$((run + 1))
  case $v in old) x=/tmp/old/bin ;; A) x=/tmp/varA/bin ;; C) x=$B ;; esac
  say "ch09 run $run ($v)"
  timeout 80 "$x/ch09_hopper_mxfp8" --gpu_delay_us=50 --shapes=8192x8192x8192,4096x7168x2048 \
    --json="$OUT/ab/ch09_${run}_$v.json" > "$OUT/ab/ch09_${run}_$v.log" 2>&1
  echo "rc=$? $(grep -E "^ch09_hopper_mx |^ch07_block_scaled |VALIDATION|FAIL" "$OUT/ab/ch09_${run}_$v.log" | head -6 | tr '\n' ' ')" >> "$L"
done
(cd "$OUT" && tar cJf ab.txz ab && rm -rf ab)
say "test_chapter_09_hopper, test_library_gpu"
packed_tests_step a '^(test_chapter_09_hopper|test_library_gpu)$' 200
rm -f "$OUT"/gpu_tests_*.txt
say end
cat "$L"
