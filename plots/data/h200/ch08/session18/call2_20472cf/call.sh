#!/usr/bin/env bash
# Session 18, call 2 (binaries of 20472cf): why the _sk kernels are slower even where nothing is
# split. ncu (SpeedOfLight, WarpStateStats, InstructionStats, LaunchStats) of the default
# 256 x 128 kernel and its _sk twin on masked_g1x1024_n4096_k7168 (128 tiles: nothing split) and
# masked_g1x1024_n7168_k2048 (224 tiles: split); compute-sanitizer memcheck of the stream-K test.
set -u
T0=$(date +%s)
mkdir -p /tmp/b/bin && tar xJf .gpu/bins.txz -C /tmp/b/bin
export LD_LIBRARY_PATH=/tmp/b/bin
L=$OUT/c2.log
say() { echo "== $(date +%T) +$(( $(date +%s) - T0 ))s $*" | tee -a $L; }
cat /tmp/b/bin/commit.txt >> $L
B=/tmp/b/bin/ch08_grouped_moe
D=256x128_s4_c1x1_promoted_tma_b1
NCU=$(command -v ncu || echo /usr/local/cuda/bin/ncu)
say ncu
timeout 240 $NCU --clock-control none --kernel-name regex:gemm_kernel --section SpeedOfLight --section WarpStateStats \
  --section InstructionStats --section LaunchStats --section SchedulerStats --csv --page details \
  $B --no-bench --only='masked_g1x1024_n(4096|7168)' --kernels=$D,${D}_sk > $OUT/ncu.csv 2> $OUT/ncu.err; echo "rc=$?" >> $L
tail -3 $OUT/ncu.err >> $L
grep -E '"(Duration|Elapsed Cycles|Executed Instructions|Registers Per Thread|Static Shared Memory Per Block|Dynamic Shared Memory Per Block|Warp Cycles Per Issued Instruction|Issued Warp Per Scheduler|No Eligible|Grid Size)"' $OUT/ncu.csv | cut -c1-400 >> $L
say memcheck; timeout 200 compute-sanitizer --tool memcheck --error-exitcode 1 /tmp/b/bin/test_chapter_08 "*stream-K*" > $OUT/memcheck.log 2>&1; echo "rc=$?" >> $L; grep -E "passed|failed|ERROR SUMMARY|No tests" $OUT/memcheck.log | tail -3 >> $L
say end
tail -60 $L
