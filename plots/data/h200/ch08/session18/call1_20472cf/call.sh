#!/usr/bin/env bash
# Session 18, call 1 (binaries of the commit in commit.txt): stream-K over the last round of the
# grouped forward (_sk kernels). Smoke (validate both _sk kernels on the six masked cases; stop on
# failure); test_chapter_08 (every kernel, the stream-K test); compute-sanitizer memcheck of the
# stream-K test and racecheck/synccheck of one split masked call; then the chapter's executable
# on the masked and balanced cases, default tiles and their _sk twins interleaved, two runs in
# reversed order.
set -u
T0=$(date +%s)
mkdir -p /tmp/b/bin && tar xJf .gpu/bins.txz -C /tmp/b/bin
export LD_LIBRARY_PATH=/tmp/b/bin
L=$OUT/c1.log
say() { echo "== $(date +%T) +$(( $(date +%s) - T0 ))s $*" | tee -a $L; }
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,power.limit,driver_version --format=csv >> $L 2>&1
cat /tmp/b/bin/commit.txt >> $L
B=/tmp/b/bin/ch08_grouped_moe
P=_promoted_tma_
D=256x128_s4_c1x1${P}b1; C=128x256_s4_c1x1${P}b1
say smoke; timeout 90 $B --no-bench --only='masked' --kernels=${D}_sk,${C}_sk > $OUT/smoke.log 2>&1; rc=$?; echo "rc=$rc" >> $L
tail -14 $OUT/smoke.log >> $L
[ $rc -ne 0 ] && { say abort; tail -40 $OUT/smoke.log >> $L; tail -60 $L; exit 0; }
say test_chapter_08; timeout 200 /tmp/b/bin/test_chapter_08 > $OUT/test_ch08.log 2>&1; echo "rc=$?" >> $L; tail -3 $OUT/test_ch08.log >> $L
grep -c "stream-K" $OUT/test_ch08.log >> $L
say memcheck; timeout 120 compute-sanitizer --tool memcheck --error-exitcode 1 /tmp/b/bin/test_chapter_08 "ch08: stream-K kernels, tiles split over many CTAs" > $OUT/memcheck.log 2>&1; echo "rc=$?" >> $L; tail -3 $OUT/memcheck.log >> $L
for tool in racecheck synccheck; do
  say $tool; timeout 60 compute-sanitizer --tool $tool --error-exitcode 1 $B --no-bench --only='masked_g4x256_n7168' --kernels=${D}_sk > $OUT/$tool.log 2>&1; echo "rc=$?" >> $L; tail -2 $OUT/$tool.log >> $L
done
say run1; timeout 100 $B --json=$OUT/sk_run1.json --gpu_delay_us=50 --only='masked|bal' --kernels=$D,${D}_sk,$C,${C}_sk > $OUT/run1.log 2>&1; echo "rc=$?" >> $L
say run2; timeout 100 $B --json=$OUT/sk_run2.json --gpu_delay_us=50 --only='masked|bal' --kernels=${C}_sk,$C,${D}_sk,$D > $OUT/run2.log 2>&1; echo "rc=$?" >> $L
grep -h "TFLOPS\|masked\|bal" $OUT/run1.log | tail -40 >> $L
mkdir -p $OUT/pack && mv $OUT/*.log $OUT/pack/ 2>/dev/null; cp $OUT/pack/c1.log $OUT/ 2>/dev/null; tar cJf $OUT/logs.txz -C $OUT pack && rm -rf $OUT/pack
say end
tail -70 $L
