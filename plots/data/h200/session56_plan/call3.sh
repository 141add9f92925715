#!/usr/bin/env bash
# Session 56's third call (carry .gpu/t56c.txz, packed at the commit to run:
#   cmake --build build -j2 --target test_chapter_09_hopper test_chapter_08 test_chapter_08_wgrad
#   (cd build && tar cf - bin/commit.txt bin/gpu_tests.txt bin/libbenchmark.so.1.7.1 \
#      bin/libbenchmark.so.1debian bin/test_chapter_09_hopper bin/test_chapter_08 \
#      bin/test_chapter_08_wgrad | xz -9 -T2 > ../.gpu/t56c.txz)
# ), any Hopper GPU, at most about 480 s: compute-sanitizer on the test cases of the kernel code
# session 55 changed, which has not run under a sanitizer:
#  - chapter 9's promoting Hopper kernels with the scale codes of blocks past K masked: the test
#    "the scale padding is never read as data" (K = 160, 192, 224, 352, every kernel and path)
#    under memcheck, racecheck and synccheck;
#  - chapter 8's counter schedule that stops at a negative tile number: "a tile counter that is
#    not zero" (counters of -3, -1, -200, D in a guard buffer) under memcheck and synccheck;
#  - the weight gradient's checking-mode kernel: "the checking mode refuses bad offsets" under
#    memcheck.
# Predicted: 0 errors everywhere, every test passing under the tools.
set -u
source scripts/gpu_call.sh .gpu/t56c.txz || exit 1
CS=$(command -v compute-sanitizer || ls /usr/local/cuda*/bin/compute-sanitizer 2>/dev/null | head -1)
echo "compute-sanitizer: $CS" >> "$L"
mkdir -p "$OUT/san"
san() {  # san TAG TOOL SECONDS EXE FILTER
  say "$2 $1"
  timeout "$3" "$CS" --tool "$2" --error-exitcode 9 "$B/$4" "$5" > "$OUT/san/$1_$2.log" 2>&1
  echo "$2 $1 rc=$?" >> "$L"
  grep -E "ERROR SUMMARY|RACECHECK SUMMARY|test cases|All tests passed" "$OUT/san/$1_$2.log" | tail -3 >> "$L"
}
P09='ch09 Hopper: the scale padding is never read as data*'
P08='ch08: a tile counter that is not zero*'
PWG='ch08 wgrad: the checking mode refuses bad offsets and too small a capacity'
san ch09_padding memcheck 110 test_chapter_09_hopper "$P09"
san ch08_counter memcheck 70 test_chapter_08 "$P08"
san wgrad_check memcheck 60 test_chapter_08_wgrad "$PWG"
san ch08_counter synccheck 60 test_chapter_08 "$P08"
san ch09_padding synccheck 90 test_chapter_09_hopper "$P09"
san ch09_padding racecheck 150 test_chapter_09_hopper "$P09"
tar cJf "$OUT/san.txz" -C "$OUT" san && rm -rf "$OUT/san"
say end
cat "$L"
