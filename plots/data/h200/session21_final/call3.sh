#!/usr/bin/env bash
# Session 21, call 3: the final build (bin/commit.txt; kernels as 41ad782's, host changes of this
# session: make_dense_schedule, the executables' argument checks): chapters 1 and 6 validated, the
# GPU tests of everything this session's host changes reach (scripts/gpu_loop.sh STEPS=tests
# ONLY=...), then the PyTorch package's tests.
set -u
T0=$(date +%s)
mkdir -p /tmp/b && tar xJf .gpu/s21c.txz -C /tmp/b && tar xJf .gpu/py.txz -C /tmp
export LD_LIBRARY_PATH=/tmp/b/bin:/usr/local/cuda/lib64
L=$OUT/call3.log
say() { echo "== $(date +%T) +$(( $(date +%s) - T0 ))s $*" | tee -a $L; }
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,power.limit,driver_version --format=csv >> $L 2>&1
echo "binaries: $(cat /tmp/b/bin/commit.txt)  package: $(cat /tmp/py/fp8gemm/commit.txt)" >> $L
say "ch01 bad argument"; /tmp/b/bin/ch01_naive --sizes=12abc >> $L 2>&1; echo "rc=$?" >> $L
say "ch01 --sizes=256 --no-bench"; timeout 60 /tmp/b/bin/ch01_naive --sizes=256 --no-bench > $OUT/ch01.log 2>&1; echo "rc=$?" >> $L; tail -4 $OUT/ch01.log >> $L
say "ch06 --sizes=256 --no-bench"; timeout 90 /tmp/b/bin/ch06_warp_specialization --sizes=256 --no-bench > $OUT/ch06.log 2>&1; echo "rc=$?" >> $L; tail -4 $OUT/ch06.log >> $L
say "GPU tests"
BIN=/tmp/b/bin STEPS=tests TIMEOUT=240 \
  ONLY='^(test_chapter_0[567]|test_chapter_07_splitk|test_chapter_09_hopper|test_chapters_01_04|test_library_gpu|test_library_threads_gpu|test_reliability|test_reliability_threads|common_test_gpu|common_test_cublaslt|common_test_bench_harness)$' \
  timeout $(( 420 - ($(date +%s) - T0) )) bash scripts/gpu_loop.sh $OUT/gl > /dev/null 2>&1; echo "gpu_loop rc=$?" >> $L
cp $OUT/gl/summary.txt $OUT/tests_summary.txt 2>/dev/null
say "PyTorch tests"
(cd /tmp/py/fp8gemm_tools/tests && PYTHONPATH=/tmp/py timeout $(( 570 - ($(date +%s) - T0) )) python3 -m pytest -q -p no:cacheprovider) > $OUT/pytest.log 2>&1; echo "pytest rc=$?" >> $L
tail -5 $OUT/pytest.log >> $L
tar cJf $OUT/logs.txz -C $OUT gl ch01.log ch06.log pytest.log && rm -rf $OUT/gl
say end
tail -40 $L
