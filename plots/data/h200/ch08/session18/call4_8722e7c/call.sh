#!/usr/bin/env bash
# Session 18, call 4 (binaries of the commit in commit.txt): the owner's reads staged through the
# operand ring with cp.async (_sk) beside the first register reads (_skr). test_chapter_08,
# memcheck of the stream-K test, racecheck and synccheck of one split masked call with _sk;
# test_library_gpu; the chapter's executable on the balanced and masked cases: the default
# 256 x 128, its _sk and _skr twins, 128 x 256 and its _sk twin, interleaved, two runs in reversed
# order.
set -u
T0=$(date +%s)
mkdir -p /tmp/b/bin && tar xJf .gpu/bins.txz -C /tmp/b/bin
export LD_LIBRARY_PATH=/tmp/b/bin
L=$OUT/c4.log
say() { echo "== $(date +%T) +$(( $(date +%s) - T0 ))s $*" | tee -a $L; }
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,power.limit,driver_version --format=csv >> $L 2>&1
cat /tmp/b/bin/commit.txt >> $L
B=/tmp/b/bin/ch08_grouped_moe
P=_promoted_tma_
D=256x128_s4_c1x1${P}b1; C=128x256_s4_c1x1${P}b1
say test_chapter_08; timeout 200 /tmp/b/bin/test_chapter_08 > $OUT/test_ch08.log 2>&1; rc=$?; echo "rc=$rc" >> $L; tail -3 $OUT/test_ch08.log >> $L
[ $rc -ne 0 ] && { say abort; grep -B2 -A12 "FAILED" $OUT/test_ch08.log | head -60 >> $L; tail -80 $L; exit 0; }
say memcheck; timeout 150 compute-sanitizer --tool memcheck --error-exitcode 1 /tmp/b/bin/test_chapter_08 "*stream-K*" > $OUT/memcheck.log 2>&1; echo "rc=$?" >> $L; grep -E "passed|failed|ERROR SUMMARY|No tests" $OUT/memcheck.log | tail -3 >> $L
for tool in racecheck synccheck; do
  say $tool; timeout 90 compute-sanitizer --tool $tool --error-exitcode 1 $B --no-bench --only='masked_g4x256_n7168' --kernels=${D}_sk,${C}_sk > $OUT/$tool.log 2>&1; echo "rc=$?" >> $L; tail -2 $OUT/$tool.log >> $L
done
say test_library_gpu; timeout 120 /tmp/b/bin/test_library_gpu > $OUT/test_library_gpu.log 2>&1; echo "rc=$?" >> $L; tail -2 $OUT/test_library_gpu.log >> $L
say run1; timeout 120 $B --json=$OUT/sk3_run1.json --gpu_delay_us=50 --kernels=$D,${D}_sk,${D}_skr,$C,${C}_sk > $OUT/run1.log 2>&1; echo "rc=$?" >> $L
say run2; timeout 120 $B --json=$OUT/sk3_run2.json --gpu_delay_us=50 --kernels=${C}_sk,$C,${D}_skr,${D}_sk,$D > $OUT/run2.log 2>&1; echo "rc=$?" >> $L
grep -h "ch08:" $OUT/run1.log | grep -v manual_time | grep n7168_k2048 >> $L
mkdir -p $OUT/pack && mv $OUT/*.log $OUT/pack/ 2>/dev/null; cp $OUT/pack/c4.log $OUT/ 2>/dev/null; tar cJf $OUT/logs.txz -C $OUT pack && rm -rf $OUT/pack
say end
tail -40 $L
