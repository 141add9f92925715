#!/usr/bin/env bash
# Session 24, call 3 (binaries and PyTorch package of 6e6f2fc, as call 2): chapter 7's committed
# two-process tables (scripts/gpu_loop.sh STEPS="peers ch07", DeepGEMM built there), chapter 8
# against its peers in one process, interleaved (bench/peers_moe.py --interleave --delay-us 150, as
# in session 20), and chapter 6's fast 4096 x 4096 x 7168: the table's ping-pong 128 x 128 beside
# the cooperative 128 x 256, twice.
set -u
T0=$(date +%s)
mkdir -p /tmp/b && tar xJf .gpu/s24b.txz -C /tmp/b && tar xJf .gpu/py.txz -C /tmp
export LD_LIBRARY_PATH=/tmp/b/bin:/usr/local/cuda/lib64
L=$OUT/call.log
say() { echo "== $(date +%T) +$(( $(date +%s) - T0 ))s $*" | tee -a $L; }
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,power.limit,driver_version --format=csv >> $L 2>&1
C=$(cat /tmp/b/bin/commit.txt)
echo "bin: $C  package: $(cat /tmp/py/fp8gemm/commit.txt)" >> $L
B=/tmp/b/bin
say "peers + ch07 (gpu_loop)"
PYTHONPATH=/tmp/py BIN=$B STEPS="peers ch07" PEER_ARGS="--delay-us 50" PEER_TIMEOUT=240 TIMEOUT=240 \
  timeout 330 bash scripts/gpu_loop.sh $OUT/gl > /dev/null 2>&1; echo "gpu_loop rc=$?" >> $L
cp $OUT/gl/summary.txt $OUT/summary.txt 2>/dev/null
cp $OUT/gl/json/peers_ch07.json $OUT/gl/json/ch07_block_scaling.json $OUT/gl/json/ch07_accuracy.json $OUT/ 2>/dev/null
LEFT=$(( 540 - ($(date +%s) - T0) ))
say "peers_moe interleaved ($LEFT s left)"
(PYTHONPATH=/tmp/deepgemm:/tmp/py timeout $LEFT python3 bench/peers_moe.py --interleave --delay-us 150 --cupti-launches 0 \
   --dg-jobs 8 --commit $C --time-limit $(( LEFT - 40 )) --groups-out $OUT/gl/moe_groups_$C.json \
   --out $OUT/peers_ch08_$C.json) > $OUT/gl/peers_moe.log 2>&1; echo "rc=$?" >> $L
tail -3 $OUT/gl/peers_moe.log >> $L
mkdir -p $OUT/gl/ab
for i in 1 2; do
  say "ch06 4096x4096x7168 fast ($i)"
  timeout 30 $B/ch06_warp_specialization --gpu_delay_us=50 --shapes=4096x4096x7168 \
    --kernels=128x128_s6_c2x1_fast_tma_b2_pp,128x256_s4_c2x1_fast_tma_b2 --json=$OUT/gl/ab/ch06_4k_$i.json > $OUT/gl/ab/ch06_4k_$i.log 2>&1; echo "rc=$?" >> $L
done
tar cJf $OUT/logs.txz -C $OUT gl && rm -rf $OUT/gl
say end
tail -30 $L
