#!/usr/bin/env bash
# Session 24, call 4 (binaries of the working tree after b39fad8, chapter 7's executables only):
# each K block's head hoisted before its last promotion (_hoist twins) beside the defaults, one
# process, twice, at the table's seven large shapes; then the timeline of both.
set -u
T0=$(date +%s)
mkdir -p /tmp/b && tar xJf .gpu/s24c.txz -C /tmp/b
export LD_LIBRARY_PATH=/tmp/b/bin:/usr/local/cuda/lib64
L=$OUT/call.log
say() { echo "== $(date +%T) +$(( $(date +%s) - T0 ))s $*" | tee -a $L; }
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,power.limit,driver_version --format=csv >> $L 2>&1
echo "bin: $(cat /tmp/b/bin/commit.txt)" >> $L
B=/tmp/b/bin
mkdir -p $OUT/ab
S7=8192x8192x8192,4096x2112x7168,4096x24576x1536,4096x32768x512,4096x7168x16384,4096x4096x7168,4096x7168x2048
K7=256x128_s3_c1x2_promoted_tma_b4,256x128_s3_c1x2_promoted_tma_b4_hoist,128x256_s3_c1x2_promoted_tma_b4,128x256_s3_c1x2_promoted_tma_b4_hoist
for i in 1 2; do
  say "ch07 hoist twins ($i)"
  timeout 80 $B/ch07_block_scaling --gpu_delay_us=50 --shapes=$S7 --kernels=$K7 --json=$OUT/ab/ch07_hoist_$i.json > $OUT/ab/ch07_hoist_$i.log 2>&1; echo "rc=$?" >> $L
done
TL_SHAPES=8192x8192x8192,4096x7168x2048,4096x24576x1536
TL_KERNELS=256x128_s3_c1x2_promoted_tma_b4_timeline,256x128_s3_c1x2_promoted_tma_b4_hoist_timeline,128x256_s3_c1x2_promoted_tma_b4_timeline,128x256_s3_c1x2_promoted_tma_b4_hoist_timeline
say "timeline"
timeout 50 $B/ch07_timeline --shapes=$TL_SHAPES --kernels=$TL_KERNELS --json=$OUT/timeline_hoist.json > $OUT/ab/timeline_hoist.log 2>&1; echo "rc=$?" >> $L
xz -6 $OUT/timeline_hoist.json
tar cJf $OUT/ab.txz -C $OUT ab && rm -rf $OUT/ab
say end
tail -20 $L
