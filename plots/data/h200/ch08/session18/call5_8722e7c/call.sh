#!/usr/bin/env bash
# Session 18, call 5 (binaries and PyTorch package of 8722e7c; later commits change comments,
# docs and a CPU test only): every GPU test binary but test_chapter_08 (run in call 4 on these
# binaries), then the PyTorch tests.
set -u
mkdir -p /tmp/b/bin && tar xJf .gpu/bins.txz -C /tmp/b/bin && tar xJf .gpu/py.txz -C /tmp
export LD_LIBRARY_PATH=/tmp/b/bin PYTHONPATH=/tmp/py
L=$OUT/c5.log
say() { echo "== $(date +%T) $*" | tee -a $L; }
cat /tmp/b/bin/commit.txt >> $L
say suite
BIN=/tmp/b/bin STEPS=tests ONLY='^(test_chapter_0[5679].*|test_chapter_08_.+|test_chapters_01_04|common_.*|test_library.*|test_mx_gpu|quantize_test_gpu|test_reliability.*)$' \
  timeout 470 bash scripts/gpu_loop.sh $OUT/g > $OUT/loop.log 2>&1
echo "rc=$?" >> $L
cp $OUT/g/summary.txt $OUT/gpu_tests_summary.txt 2>/dev/null || ls $OUT/g >> $L
say torch
timeout 90 bash chapters/10_production/python/gpu_run.sh /tmp/py $OUT/g/torch tests > $OUT/torch.log 2>&1
echo "rc=$?" >> $L; tail -3 $OUT/torch.log >> $L
mkdir -p $OUT/pack && mv $OUT/*.log $OUT/g $OUT/pack/ 2>/dev/null; cp $OUT/pack/c5.log $OUT/ 2>/dev/null; tar cJf $OUT/logs.txz -C $OUT pack && rm -rf $OUT/pack
say end
cat $OUT/gpu_tests_summary.txt 2>/dev/null | grep -E "PASS|FAIL|SKIP|passed" | cut -c1-110
tail -8 $L
