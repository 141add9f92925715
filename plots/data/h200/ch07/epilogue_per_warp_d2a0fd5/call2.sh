#!/usr/bin/env bash
# Session 21, call 2: the dense kernels storing D per warp (new: bin/commit.txt, d2a0fd5) against
# 41ad782's kernels (old: old/commit.txt): chapters 6 (six shapes), 7 and 8's executables old,
# new, new, old; chapter 7's timeline with both; then the GPU tests of the dense kernels and of
# chapter 9 with the new build (scripts/gpu_loop.sh STEPS=tests ONLY=...).
set -u
T0=$(date +%s)
mkdir -p /tmp/b && tar xJf .gpu/s21b.txz -C /tmp/b
export LD_LIBRARY_PATH=/tmp/b/bin:/usr/local/cuda/lib64
L=$OUT/call2.log
say() { echo "== $(date +%T) +$(( $(date +%s) - T0 ))s $*" | tee -a $L; }
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,power.limit,driver_version --format=csv >> $L 2>&1
echo "new: $(cat /tmp/b/bin/commit.txt)  old: $(cat /tmp/b/old/commit.txt)" >> $L
mkdir -p $OUT/ab
CH06_SHAPES=8192x8192x8192,4096x2112x7168,4096x24576x1536,4096x32768x512,4096x7168x2048,4096x7168x16384
i=0
for v in old new new old; do
  i=$((i + 1)); d=/tmp/b/bin; [ $v = old ] && d=/tmp/b/old
  say "ch07 $v ($i)"; timeout 60 $d/ch07_block_scaling --gpu_delay_us=50 --json=$OUT/ab/ch07_${i}_${v}.json > $OUT/ab/ch07_${i}_${v}.log 2>&1; echo "rc=$?" >> $L
  say "ch08 $v ($i)"; timeout 60 $d/ch08_grouped_moe --gpu_delay_us=50 --json=$OUT/ab/ch08_${i}_${v}.json > $OUT/ab/ch08_${i}_${v}.log 2>&1; echo "rc=$?" >> $L
  say "ch06 $v ($i)"; timeout 60 $d/ch06_warp_specialization --gpu_delay_us=50 --shapes=$CH06_SHAPES --json=$OUT/ab/ch06_${i}_${v}.json > $OUT/ab/ch06_${i}_${v}.log 2>&1; echo "rc=$?" >> $L
done
TL_SHAPES=8192x8192x8192,4096x7168x2048,4096x32768x512,4096x24576x1536
TL_KERNELS=256x128_s3_c1x2_promoted_tma_b4_timeline,128x256_s3_c1x2_promoted_tma_b4_timeline,256x128_s4_c2x1_promoted_tma_b1_timeline
for v in new old; do
  d=/tmp/b/bin; [ $v = old ] && d=/tmp/b/old
  say "timeline $v"
  timeout 60 $d/ch07_timeline --shapes=$TL_SHAPES --kernels=$TL_KERNELS --json=$OUT/timeline_$v.json > $OUT/ab/timeline_$v.log 2>&1; echo "rc=$?" >> $L
done
tar cJf $OUT/ab.txz -C $OUT ab && rm -rf $OUT/ab
say "GPU tests"
BIN=/tmp/b/bin STEPS=tests ONLY='test_chapter_0[67]|test_chapter_08_wgrad|test_chapter_09_hopper|test_reliability|common_test_gpu' TIMEOUT=240 timeout $(( 560 - ($(date +%s) - T0) )) bash scripts/gpu_loop.sh $OUT/gl > /dev/null 2>&1; echo "gpu_loop rc=$?" >> $L
cp $OUT/gl/summary.txt $OUT/tests_summary.txt 2>/dev/null
tar cJf $OUT/gl.txz -C $OUT gl && rm -rf $OUT/gl
say end
tail -40 $L
