#!/usr/bin/env bash
# Session 24, call 2: binaries and PyTorch package with the pinned early-wave loop as the default.
# GPU tests (chapters 6, 7, 8 and its end-to-end test, the library and its threads test), the
# PyTorch tests, chapter 7's and chapter 6's tables, then DeepGEMM (built in the background
# meanwhile) and chapter 7's peers in one process, interleaved.
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
mkdir -p $OUT/p
say "DeepGEMM build (background)"
(bash .peer/build_deepgemm.sh > $OUT/p/deepgemm_build.log 2>&1; echo "build rc=$?" >> $OUT/p/deepgemm_build.log) &
DG=$!
say "GPU tests"
BIN=$B STEPS=tests ONLY='^(test_chapter_06|test_chapter_07|test_chapter_08|test_chapter_08_e2e|test_library_gpu|test_library_threads_gpu)$' TIMEOUT=240 \
  timeout 420 bash scripts/gpu_loop.sh $OUT/gl > /dev/null 2>&1; echo "gpu_loop rc=$?" >> $L
cp $OUT/gl/summary.txt $OUT/tests_summary.txt 2>/dev/null
tail -2 $OUT/gl/summary.txt >> $L
say "PyTorch tests"
(cd /tmp/py/fp8gemm_tools/tests && PYTHONPATH=/tmp/py timeout 80 python3 -m pytest -q -p no:cacheprovider) > $OUT/p/pytest.log 2>&1; echo "pytest rc=$?" >> $L
tail -2 $OUT/p/pytest.log >> $L
wait $DG; tail -3 $OUT/p/deepgemm_build.log >> $L
say "ch07 table"
S7=8192x8192x8192,4096x2112x7168,4096x24576x1536,4096x32768x512,4096x7168x16384,4096x4096x7168,4096x7168x2048,64x2112x7168,64x24576x1536,64x32768x512,64x7168x16384,64x4096x7168,64x7168x2048,128x2112x7168,128x24576x1536,128x32768x512,128x7168x16384,128x4096x7168,128x7168x2048
timeout 60 $B/ch07_block_scaling --gpu_delay_us=50 --timing=per_launch --shapes=$S7 --json=$OUT/ch07_block_scaling.json > $OUT/p/ch07_table.log 2>&1; echo "rc=$?" >> $L
say "ch06 table"
timeout 30 $B/ch06_warp_specialization --json=$OUT/ch06_warp_specialization.json > $OUT/p/ch06_table.log 2>&1; echo "rc=$?" >> $L
LEFT=$(( 570 - ($(date +%s) - T0) ))
say "peers ch07 interleaved ($LEFT s left)"
(PYTHONPATH=/tmp/deepgemm:/tmp/py timeout $LEFT python3 bench/peers.py --interleave --impls fp8gemm_block_scaled,deepgemm \
   --cupti-launches 0 --commit $C --time-limit $(( LEFT - 15 )) --out $OUT/peers_ch07_$C.json) > $OUT/p/peers_ch07.log 2>&1; echo "rc=$?" >> $L
tar cJf $OUT/logs.txz -C $OUT p gl && rm -rf $OUT/p $OUT/gl
say end
tail -30 $L
