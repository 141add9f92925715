#!/usr/bin/env bash
# Session 22, call 3: chapter 6's default table with the early first wave as the per-tensor
# promoted default on 256 x 128 (interleaved with cuBLASLt, one run, JSON), then the GPU tests of
# the chapters and the library the engine change reaches (6, 7, 8, 9's Hopper path, library).
set -u
T0=$(date +%s)
mkdir -p /tmp/b && tar xJf .gpu/${ARCH:-s22c}.txz -C /tmp/b
export LD_LIBRARY_PATH=/tmp/b/bin:/usr/local/cuda/lib64
L=$OUT/call3.log
say() { echo "== $(date +%T) +$(( $(date +%s) - T0 ))s $*" | tee -a $L; }
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,power.limit,driver_version --format=csv >> $L 2>&1
echo "bin: $(cat /tmp/b/bin/commit.txt)" >> $L
B=/tmp/b/bin
say "ch06 table"
timeout 170 $B/ch06_warp_specialization --json=$OUT/ch06_warp_specialization.json > $OUT/ch06_table.log 2>&1; echo "rc=$?" >> $L
say "GPU tests"
BIN=$B STEPS=tests ONLY='test_chapter_0[6789]$|test_chapter_09_hopper|test_library_gpu' TIMEOUT=240 timeout $(( 585 - ($(date +%s) - T0) )) bash scripts/gpu_loop.sh $OUT/gl > /dev/null 2>&1; echo "gpu_loop rc=$?" >> $L
cp $OUT/gl/summary.txt $OUT/tests_summary.txt 2>/dev/null
tar cJf $OUT/gl.txz -C $OUT gl && rm -rf $OUT/gl
say end
tail -12 $L
