#!/usr/bin/env bash
# Session 24, call 1 (binaries of dce8ae6): the pinned lean-loop addresses (_pin twins) against the
# defaults in one process, twice (chapter 7's large tiles at the table's seven M=4096 shapes, the
# 2 x 1 cluster tile at its three, chapter 6's 8192^3 tile), the timeline of both; then the GPU
# tests c9b063e never ran (chapter 8, its end-to-end test, the library) and chapter 7's (the twins).
set -u
T0=$(date +%s)
mkdir -p /tmp/b && tar xJf .gpu/s24a.txz -C /tmp/b
export LD_LIBRARY_PATH=/tmp/b/bin:/usr/local/cuda/lib64
L=$OUT/call.log
say() { echo "== $(date +%T) +$(( $(date +%s) - T0 ))s $*" | tee -a $L; }
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,power.limit,driver_version --format=csv >> $L 2>&1
echo "bin: $(cat /tmp/b/bin/commit.txt)" >> $L
B=/tmp/b/bin
mkdir -p $OUT/ab
S7=8192x8192x8192,4096x2112x7168,4096x24576x1536,4096x32768x512,4096x7168x16384,4096x4096x7168,4096x7168x2048
K7=256x128_s3_c1x2_promoted_tma_b4,256x128_s3_c1x2_promoted_tma_b4_pin,128x256_s3_c1x2_promoted_tma_b4,128x256_s3_c1x2_promoted_tma_b4_pin
S8=4096x7168x16384,4096x4096x7168,4096x2112x7168
K8=256x128_s4_c2x1_promoted_tma_b1,256x128_s4_c2x1_promoted_tma_b1_pin
K6=256x128_s3_c1x2_promoted_tma_b4,256x128_s3_c1x2_promoted_tma_b4_pin
for i in 1 2; do
  say "ch07 pin twins ($i)"
  timeout 120 $B/ch07_block_scaling --gpu_delay_us=50 --shapes=$S7 --kernels=$K7 --json=$OUT/ab/ch07_pin_$i.json > $OUT/ab/ch07_pin_$i.log 2>&1; echo "rc=$?" >> $L
  say "ch07 c2x1 pin twins ($i)"
  timeout 90 $B/ch07_block_scaling --gpu_delay_us=50 --shapes=$S8 --kernels=$K8 --json=$OUT/ab/ch07_c2_$i.json > $OUT/ab/ch07_c2_$i.log 2>&1; echo "rc=$?" >> $L
  say "ch06 pin twins ($i)"
  timeout 90 $B/ch06_warp_specialization --gpu_delay_us=50 --shapes=8192x8192x8192,4096x7168x16384,4096x4096x7168 --kernels=$K6 --json=$OUT/ab/ch06_pin_$i.json > $OUT/ab/ch06_pin_$i.log 2>&1; echo "rc=$?" >> $L
done
TL_SHAPES=8192x8192x8192,4096x7168x2048,4096x32768x512,4096x24576x1536
TL_KERNELS=256x128_s3_c1x2_promoted_tma_b4_timeline,256x128_s3_c1x2_promoted_tma_b4_pin_timeline,128x256_s3_c1x2_promoted_tma_b4_timeline,128x256_s3_c1x2_promoted_tma_b4_pin_timeline
say "timeline"
timeout 90 $B/ch07_timeline --shapes=$TL_SHAPES --kernels=$TL_KERNELS --json=$OUT/timeline_pin.json > $OUT/ab/timeline_pin.log 2>&1; echo "rc=$?" >> $L
xz -6 $OUT/timeline_pin.json
tar cJf $OUT/ab.txz -C $OUT ab && rm -rf $OUT/ab
LEFT=$(( 585 - ($(date +%s) - T0) ))
say "GPU tests ($LEFT s left)"
BIN=$B STEPS=tests ONLY='^(test_chapter_08|test_chapter_08_e2e|test_library_gpu|test_chapter_07)$' TIMEOUT=240 \
  timeout $LEFT bash scripts/gpu_loop.sh $OUT/gl > /dev/null 2>&1; echo "gpu_loop rc=$?" >> $L
cp $OUT/gl/summary.txt $OUT/tests_summary.txt 2>/dev/null
tail -6 $OUT/gl/summary.txt >> $L
tar cJf $OUT/gl.txz -C $OUT gl && rm -rf $OUT/gl
say end
tail -40 $L
