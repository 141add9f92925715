#!/usr/bin/env bash
# Session 23, call 3 (binaries and package of 442e347, as call 2): chapter 7's early wave against
# the plain loop on the two table tiles call 1 did not time (256 x 128 with a 2 x 1 cluster,
# 192 x 128) at their table shapes, twice; the two-process peers step and chapter 7's table
# (scripts/gpu_loop.sh STEPS="peers ch07"); Fp8Linear re-timed (bench_torch.py --only linear).
set -u
T0=$(date +%s)
mkdir -p /tmp/b && tar xJf .gpu/${ARCH:-s23c}.txz -C /tmp/b && tar xJf .gpu/py.txz -C /tmp
export LD_LIBRARY_PATH=/tmp/b/bin:/usr/local/cuda/lib64
L=$OUT/call.log
say() { echo "== $(date +%T) +$(( $(date +%s) - T0 ))s $*" | tee -a $L; }
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,power.limit,driver_version --format=csv >> $L 2>&1
C=$(cat /tmp/b/bin/commit.txt)
echo "bin: $C  package: $(cat /tmp/py/fp8gemm/commit.txt)" >> $L
B=/tmp/b/bin
mkdir -p $OUT/ab
S=4096x7168x16384,4096x4096x7168,4096x2112x7168
K=256x128_s4_c2x1_promoted_tma_b1,256x128_s4_c2x1_promoted_tma_b1_loop8,192x128_s4_c2x1_promoted_tma_b2,192x128_s4_c2x1_promoted_tma_b2_loop4
for i in 1 2; do
  say "ch07 twins ($i)"
  timeout 90 $B/ch07_block_scaling --gpu_delay_us=50 --shapes=$S --kernels=$K --json=$OUT/ab/ch07_tw_$i.json > $OUT/ab/ch07_tw_$i.log 2>&1; echo "rc=$?" >> $L
done
tar cJf $OUT/ab.txz -C $OUT ab && rm -rf $OUT/ab
say "peers + ch07 (gpu_loop)"
BIN=$B STEPS="peers ch07" PEER_ARGS="--delay-us 50" PEER_TIMEOUT=300 TIMEOUT=300 \
  timeout 420 bash scripts/gpu_loop.sh $OUT/gl > /dev/null 2>&1; echo "gpu_loop rc=$?" >> $L
cp $OUT/gl/summary.txt $OUT/summary.txt 2>/dev/null
cp $OUT/gl/json/peers_ch07.json $OUT/gl/json/ch07_block_scaling.json $OUT/gl/json/ch07_accuracy.json $OUT/ 2>/dev/null
LEFT=$(( 580 - ($(date +%s) - T0) ))
if [ $LEFT -gt 90 ]; then
  say "Fp8Linear ($LEFT s left)"
  (cd /tmp/py/fp8gemm_tools && PYTHONPATH=/tmp/py timeout $(( LEFT - 10 )) python3 bench_torch.py --only linear --no-graphs \
     --commit $C --out $OUT/bench_torch_linear.json) > $OUT/gl/bench_torch_linear.log 2>&1; echo "bench_torch rc=$?" >> $L
  grep "^linear" $OUT/gl/bench_torch_linear.log >> $L
fi
tar cJf $OUT/logs.txz -C $OUT gl && rm -rf $OUT/gl
say end
tail -30 $L
