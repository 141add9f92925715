#!/usr/bin/env bash
# Session 18, call 3 (binaries of the commit in commit.txt): stream-K with the second rule (split
# a last round of half to 7/8 of the grid) and batched tile counting. test_chapter_08 (every
# kernel, the stream-K test), memcheck of the stream-K test; the chapter's executable on every
# case (balanced, skewed, masked), the two default tiles and their _sk twins interleaved, two
# runs in reversed order.
set -u
T0=$(date +%s)
mkdir -p /tmp/b/bin && tar xJf .gpu/bins.txz -C /tmp/b/bin
export LD_LIBRARY_PATH=/tmp/b/bin
L=$OUT/c3.log
say() { echo "== $(date +%T) +$(( $(date +%s) - T0 ))s $*" | tee -a $L; }
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,power.limit,driver_version --format=csv >> $L 2>&1
cat /tmp/b/bin/commit.txt >> $L
B=/tmp/b/bin/ch08_grouped_moe
P=_promoted_tma_
D=256x128_s4_c1x1${P}b1; C=128x256_s4_c1x1${P}b1
say test_chapter_08; timeout 200 /tmp/b/bin/test_chapter_08 > $OUT/test_ch08.log 2>&1; rc=$?; echo "rc=$rc" >> $L; tail -3 $OUT/test_ch08.log >> $L
[ $rc -ne 0 ] && { say abort; grep -B2 -A12 "FAILED" $OUT/test_ch08.log | head -60 >> $L; tail -80 $L; exit 0; }
say memcheck; timeout 150 compute-sanitizer --tool memcheck --error-exitcode 1 /tmp/b/bin/test_chapter_08 "*stream-K*" > $OUT/memcheck.log 2>&1; echo "rc=$?" >> $L; grep -E "passed|failed|ERROR SUMMARY|No tests" $OUT/memcheck.log | tail -3 >> $L
say run1; timeout 150 $B --json=$OUT/sk2_run1.json --gpu_delay_us=50 --kernels=$D,${D}_sk,$C,${C}_sk > $OUT/run1.log 2>&1; echo "rc=$?" >> $L
say run2; timeout 150 $B --json=$OUT/sk2_run2.json --gpu_delay_us=50 --kernels=${C}_sk,$C,${D}_sk,$D > $OUT/run2.log 2>&1; echo "rc=$?" >> $L
grep -h "ch08:" $OUT/run1.log | grep -v manual_time | tail -60 >> $L
mkdir -p $OUT/pack && mv $OUT/*.log $OUT/pack/ 2>/dev/null; cp $OUT/pack/c3.log $OUT/ 2>/dev/null; tar cJf $OUT/logs.txz -C $OUT pack && rm -rf $OUT/pack
say end
tail -20 $L
