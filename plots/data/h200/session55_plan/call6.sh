#!/usr/bin/env bash
# Session 55's sixth call (carry .gpu/t55e.txz, packed at the commit to run as below), any Hopper
# GPU: chapter 8's weight-gradient checking mode (WeightGradOptions::check_offsets, new) and the
# grouped plan's checking mode after its capture rule moved into a shared helper. Predicted:
# test_chapter_08_wgrad (good offsets run; first != 0, decreasing and a padded total past
# token_capacity refused with dB untouched; a capturing stream refused, the capture valid) and
# test_chapter_08 pass. About 200 s.
#   cmake --build build -j2 --target test_chapter_08 test_chapter_08_wgrad
#   (cd build && tar cf - bin/commit.txt bin/gpu_tests.txt bin/libbenchmark.so.1.7.1 \
#      bin/libbenchmark.so.1debian bin/test_chapter_08 bin/test_chapter_08_wgrad \
#      | xz -9 -T2 > ../.gpu/t55e.txz)
set -u
source scripts/gpu_call.sh .gpu/t55e.txz || exit 1
say "test_chapter_08_wgrad, test_chapter_08"
packed_tests_step a '^(test_chapter_08_wgrad|test_chapter_08)$' 280
rm -f "$OUT"/gpu_tests_*.txt
say end
cat "$L"
