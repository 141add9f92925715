#!/usr/bin/env bash
# Session 56's ninth call (carry .gpu/t56f.txz, packed at the commit to run:
#   cmake --build build -j2 --target test_chapter_07 test_chapter_08
#   (cd build && tar cf - bin/commit.txt bin/gpu_tests.txt bin/libbenchmark.so.1.7.1 \
#      bin/libbenchmark.so.1debian bin/test_chapter_07 bin/test_chapter_08 \
#      | xz -9 -T2 > ../.gpu/t56f.txz)
# ), any Hopper GPU, about 330 s: chapters 7 and 8's own GPU tests at the final code of the
# session (their plans' run() and rebind() now check the device first; call 5 ran the library's
# and the split-K, weight-gradient and chapter 9 tests, not these two). Predicted: pass.
set -u
source scripts/gpu_call.sh .gpu/t56f.txz || exit 1
say "test_chapter_07, test_chapter_08"
packed_tests_step a '^(test_chapter_07|test_chapter_08)$' 420
rm -f "$OUT"/gpu_tests_*.txt
say end
cat "$L"
