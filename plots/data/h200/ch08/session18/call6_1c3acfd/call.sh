#!/usr/bin/env bash
# Session 18, call 6 (binaries of the review commit in commit.txt: the ch08 plan's stream-K
# refusal moved before the engine plan; kernels' SASS unchanged): test_chapter_08 and the
# library's GPU tests.
set -u
mkdir -p /tmp/b/bin && tar xJf .gpu/bins_small.txz -C /tmp/b/bin
export LD_LIBRARY_PATH=/tmp/b/bin
L=$OUT/c6.log
cat /tmp/b/bin/commit.txt >> $L
for t in test_chapter_08 test_library_gpu test_library_threads_gpu; do
  echo "== $(date +%T) $t" >> $L; timeout 170 /tmp/b/bin/$t > $OUT/$t.log 2>&1; echo "rc=$?" >> $L; tail -2 $OUT/$t.log >> $L
done
cat $L
