#!/usr/bin/env bash
# Session 23, call 1: ping-pong's early hand-over (the fast table's _pp kernels) against their
# _lho twins (the order before), in one process, two runs per group; chapter 7's early-wave twins
# (promotion made before the epilogue now) against their defaults, twice, and their timeline;
# chapter 6's default table; then GPU tests (chapters 6 and 7; the PyTorch tests if staged).
set -u
T0=$(date +%s)
mkdir -p /tmp/b && tar xJf .gpu/${ARCH:-s23}.txz -C /tmp/b
[ -f .gpu/py.txz ] && tar xJf .gpu/py.txz -C /tmp
export LD_LIBRARY_PATH=/tmp/b/bin:/usr/local/cuda/lib64
L=$OUT/call.log
say() { echo "== $(date +%T) +$(( $(date +%s) - T0 ))s $*" | tee -a $L; }
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,power.limit,driver_version --format=csv >> $L 2>&1
echo "bin: $(cat /tmp/b/bin/commit.txt)  package: $(cat /tmp/py/fp8gemm/commit.txt 2>/dev/null)" >> $L
B=/tmp/b/bin
mkdir -p $OUT/ab
F=fast_tma
G1="8192x8192x8192,4096x24576x1536,4096x4096x4096|128x192_s4_c2x1_${F}_b2_pp,128x192_s4_c2x1_${F}_b2_pp_lho"
G2="4096x2112x7168,4096x7168x16384,4096x7168x2048|128x176_s4_c2x1_${F}_b11_pp,128x176_s4_c2x1_${F}_b11_pp_lho"
G3="4096x32768x512|128x192_s4_c1x1_${F}_b2_pp,128x192_s4_c1x1_${F}_b2_pp_lho"
G4="4096x4096x7168,4096x4096x4096|128x128_s6_c2x1_${F}_b2_pp,128x128_s6_c2x1_${F}_b2_pp_lho,128x256_s4_c2x1_${F}_b2"
G5="2048x2048x2048|128x128_s6_c1x1_${F}_b2_pp,128x128_s6_c1x1_${F}_b2_pp_lho"
for i in 1 2; do
  g=0
  for G in "$G1" "$G2" "$G3" "$G4" "$G5"; do
    g=$((g+1))
    say "group $g run $i"
    timeout 100 $B/ch06_warp_specialization --gpu_delay_us=50 --shapes=${G%%|*} --kernels=${G##*|} \
      --json=$OUT/ab/ch06_g${g}_$i.json > $OUT/ab/ch06_g${g}_$i.log 2>&1; echo "rc=$?" >> $L
  done
done
S7=8192x8192x8192,4096x2112x7168,4096x24576x1536,4096x32768x512,4096x7168x16384,4096x4096x7168,4096x7168x2048
K7=256x128_s3_c1x2_promoted_tma_b4,256x128_s3_c1x2_promoted_tma_b4_ew8,128x256_s3_c1x2_promoted_tma_b4,128x256_s3_c1x2_promoted_tma_b4_ew4
for i in 1 2; do
  say "ch07 ew twins ($i)"
  timeout 120 $B/ch07_block_scaling --gpu_delay_us=50 --shapes=$S7 --kernels=$K7 --json=$OUT/ab/ch07_ew_$i.json > $OUT/ab/ch07_ew_$i.log 2>&1; echo "rc=$?" >> $L
done
TL_SHAPES=8192x8192x8192,4096x7168x2048,4096x32768x512,4096x24576x1536
TL_KERNELS=256x128_s3_c1x2_promoted_tma_b4_timeline,256x128_s3_c1x2_promoted_tma_b4_ew8_timeline,128x256_s3_c1x2_promoted_tma_b4_timeline,128x256_s3_c1x2_promoted_tma_b4_ew4_timeline
say "timeline"
timeout 90 $B/ch07_timeline --shapes=$TL_SHAPES --kernels=$TL_KERNELS --json=$OUT/timeline_ew.json > $OUT/ab/timeline_ew.log 2>&1; echo "rc=$?" >> $L
xz -6 $OUT/timeline_ew.json
say "ch06 table"
timeout 100 $B/ch06_warp_specialization --json=$OUT/ab/ch06_table_1.json > $OUT/ab/ch06_table_1.log 2>&1; echo "rc=$?" >> $L
tar cJf $OUT/ab.txz -C $OUT ab && rm -rf $OUT/ab
say "GPU tests"
BIN=$B STEPS=tests ONLY='^(test_chapter_06|test_chapter_07)$' TIMEOUT=240 \
  timeout $(( 500 - ($(date +%s) - T0) )) bash scripts/gpu_loop.sh $OUT/gl > /dev/null 2>&1; echo "gpu_loop rc=$?" >> $L
cp $OUT/gl/summary.txt $OUT/tests_summary.txt 2>/dev/null
if [ -d /tmp/py/fp8gemm ]; then
  say "PyTorch tests"
  (cd /tmp/py/fp8gemm_tools/tests && PYTHONPATH=/tmp/py timeout $(( 585 - ($(date +%s) - T0) )) python3 -m pytest -q -p no:cacheprovider) > $OUT/pytest.log 2>&1; echo "pytest rc=$?" >> $L
  tail -3 $OUT/pytest.log >> $L
fi
tar cJf $OUT/gl.txz -C $OUT gl && rm -rf $OUT/gl
say end
tail -40 $L
