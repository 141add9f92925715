#!/usr/bin/env bash
# Session 22, call 2 (and 1): the early first wave (_ew kernels) against their default twins in the same
# process: chapter 7's four large table tiles at the seven large shapes (twice), chapter 6's two
# promoted 256 x 128 tiles at six shapes (twice); chapter 7's timeline of default and _ew twins;
# then chapters 6 and 7's GPU tests (every kernel, the _ew ones included).
set -u
T0=$(date +%s)
mkdir -p /tmp/b && tar xJf .gpu/${ARCH:-s22}.txz -C /tmp/b
export LD_LIBRARY_PATH=/tmp/b/bin:/usr/local/cuda/lib64
L=$OUT/call.log
say() { echo "== $(date +%T) +$(( $(date +%s) - T0 ))s $*" | tee -a $L; }
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,power.limit,driver_version --format=csv >> $L 2>&1
echo "bin: $(cat /tmp/b/bin/commit.txt)" >> $L
B=/tmp/b/bin
mkdir -p $OUT/ab
S7=8192x8192x8192,4096x2112x7168,4096x24576x1536,4096x32768x512,4096x7168x16384,4096x4096x7168,4096x7168x2048
K7=256x128_s3_c1x2_promoted_tma_b4,256x128_s3_c1x2_promoted_tma_b4_ew8,256x128_s4_c2x1_promoted_tma_b1,256x128_s4_c2x1_promoted_tma_b1_ew8,128x256_s3_c1x2_promoted_tma_b4,128x256_s3_c1x2_promoted_tma_b4_ew4,192x128_s4_c2x1_promoted_tma_b2,192x128_s4_c2x1_promoted_tma_b2_ew4
S6=8192x8192x8192,4096x24576x1536,4096x32768x512,4096x7168x16384,4096x4096x7168,4096x7168x2048
K6=256x128_s3_c1x2_promoted_tma_b4,256x128_s3_c1x2_promoted_tma_b4_ew8,256x128_s4_c2x1_promoted_tma_b2,256x128_s4_c2x1_promoted_tma_b2_ew8
for i in 1 2; do
  say "ch07 kernels ($i)"; timeout 150 $B/ch07_block_scaling --gpu_delay_us=50 --shapes=$S7 --kernels=$K7 --json=$OUT/ab/ch07_ew_$i.json > $OUT/ab/ch07_ew_$i.log 2>&1; echo "rc=$?" >> $L
  say "ch06 kernels ($i)"; timeout 100 $B/ch06_warp_specialization --gpu_delay_us=50 --shapes=$S6 --kernels=$K6 --json=$OUT/ab/ch06_ew_$i.json > $OUT/ab/ch06_ew_$i.log 2>&1; echo "rc=$?" >> $L
done
TL_SHAPES=8192x8192x8192,4096x7168x2048,4096x32768x512,4096x24576x1536
TL_KERNELS=256x128_s3_c1x2_promoted_tma_b4_timeline,256x128_s3_c1x2_promoted_tma_b4_ew8_timeline,128x256_s3_c1x2_promoted_tma_b4_timeline,128x256_s3_c1x2_promoted_tma_b4_ew4_timeline
say "timeline"
timeout 90 $B/ch07_timeline --shapes=$TL_SHAPES --kernels=$TL_KERNELS --json=$OUT/timeline_ew.json > $OUT/ab/timeline_ew.log 2>&1; echo "rc=$?" >> $L
tar cJf $OUT/ab.txz -C $OUT ab && rm -rf $OUT/ab
say "GPU tests"
BIN=$B STEPS=tests ONLY='test_chapter_0[67]$' TIMEOUT=240 timeout $(( 570 - ($(date +%s) - T0) )) bash scripts/gpu_loop.sh $OUT/gl > /dev/null 2>&1; echo "gpu_loop rc=$?" >> $L
cp $OUT/gl/summary.txt $OUT/tests_summary.txt 2>/dev/null
tar cJf $OUT/gl.txz -C $OUT gl && rm -rf $OUT/gl
say end
tail -30 $L
