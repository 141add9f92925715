#!/usr/bin/env bash
# Session 55's third call (carry .gpu/t55b.txz .gpu/t54.txz; t55b packed at the commit to run: the
# GPU tests of chapter 9's Hopper path and the library, chapter 9's executable), any Hopper GPU.
# Call 2 measured the scale-padding mask applied in every stage at 1.9-2.6 % of the default
# promoting kernel's time; now only the peeled last stage masks. Predictions:
#  - test_chapter_09_hopper (the padding of 0xFF / 0xFE changes nothing, every kernel and path)
#    and test_library_gpu: pass;
#  - chapter 9's default promoting kernel, old (63f1a9d) against new in the order old, new, new,
#    old at 8192^3 and 4096 x 7168 x 2048: within +-0.5 % (the loop's SASS is the old one; the
#    last stage is one of 64 at 8192, of 16 at 2048).
# About 260 s. The pack (at 45c2851):
#   cmake --build build -j2 --target test_chapter_09_hopper test_library_gpu ch09_hopper_mxfp8
#   (cd build && tar cf - bin/commit.txt bin/gpu_tests.txt bin/libbenchmark.so.1.7.1 \
#      bin/libbenchmark.so.1debian bin/test_chapter_09_hopper bin/test_library_gpu \
#      bin/ch09_hopper_mxfp8 | xz -9 -T2 > ../.gpu/t55b.txz)
set -u
source scripts/gpu_call.sh .gpu/t55b.txz || exit 1
mkdir -p /tmp/old && tar xJf .gpu/t54.txz -C /tmp/old
say "ch09 default kernel, old / new"
old_new_runs "$OUT/ab" 200 40 80 /tmp/old/bin ch09_hopper_mxfp8 ch09 \
  --shapes=8192x8192x8192,4096x7168x2048
for f in "$OUT"/ab/ch09_*.log; do
  echo "$(basename "$f"): $(grep -E "^ch09_hopper_mx |^ch07_block_scaled |VALIDATION|FAIL" "$f" | head -6 | tr '\n' ' ')" >> "$L"
done
(cd "$OUT" && tar cJf ab.txz ab && rm -rf ab)
say "test_chapter_09_hopper, test_library_gpu"
packed_tests_step a '^(test_chapter_09_hopper|test_library_gpu)$' 200
rm -f "$OUT"/gpu_tests_*.txt
say end
cat "$L"
