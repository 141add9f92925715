#!/usr/bin/env bash
# Session 17, call 8 (binaries and PyTorch package of be15bad): the masked calls with
# 256x128_s3_c1x1_promoted_tma_b4 beside the default 256x128_s4_c1x1_promoted_tma_b1. Smoke test
# (validate it on the masked cases; stop on failure), test_chapter_08 (every kernel), the PyTorch
# test of every grouped kernel; (a) the chapter's executable on the six masked cases, both kernels
# interleaved, two runs in reversed order; (b) bench/peers_moe.py on the masked cases with
# DeepGEMM, both kernels by name.
set -u
mkdir -p /tmp/b/bin && tar xJf .gpu/bins.txz -C /tmp/b/bin && tar xJf .gpu/py.txz -C /tmp
export LD_LIBRARY_PATH=/tmp/b/bin PYTHONPATH=/tmp/py
L=$OUT/c8.log
say() { echo "== $(date +%T) $*" | tee -a $L; }
cat /tmp/b/bin/commit.txt >> $L
B=/tmp/b/bin/ch08_grouped_moe
P=_promoted_tma_
N=256x128_s3_c1x1${P}b4; D=256x128_s4_c1x1${P}b1
say smoke; timeout 60 $B --no-bench --only='masked' --kernels=$N > $OUT/smoke.log 2>&1; rc=$?; echo "rc=$rc" >> $L
[ $rc -ne 0 ] && { say abort; tail -30 $OUT/smoke.log >> $L; tail -30 $L; exit 0; }
say test_chapter_08; timeout 60 /tmp/b/bin/test_chapter_08 > $OUT/test_ch08.log 2>&1; echo "rc=$?" >> $L; tail -2 $OUT/test_ch08.log >> $L
say torch every kernel; (cd /tmp/py/fp8gemm_tools/tests && timeout 60 python3 -m pytest -q -p no:cacheprovider test_ops_gpu.py -k every_kernel) > $OUT/torch_every.log 2>&1; echo "rc=$?" >> $L; tail -2 $OUT/torch_every.log >> $L
say run1; timeout 60 $B --json=$OUT/masked_default_first.json --gpu_delay_us=50 --only='masked' --kernels=$D,$N > $OUT/run1.log 2>&1; echo "rc=$?" >> $L
say run2; timeout 60 $B --json=$OUT/masked_s3b4_first.json --gpu_delay_us=50 --only='masked' --kernels=$N,$D > $OUT/run2.log 2>&1; echo "rc=$?" >> $L
say peers
BIN=/tmp/b/bin STEPS="peers_moe" PEER_TIMEOUT=170 \
  PEER_ARGS="--interleave --delay-us 150 --cupti-launches 0 --only deepgemm_masked,fp8gemm_grouped_masked,masked --grouped-kernels $D,$N" \
  timeout 200 bash scripts/gpu_loop.sh $OUT/g > $OUT/loop.log 2>&1
echo "rc=$?" >> $L
cp $OUT/g/json/peers_ch08.json $OUT/peers_masked_be15bad.json 2>/dev/null
grep -h "masked" $OUT/g/peers_moe.log | tail -30 >> $L
mkdir -p $OUT/pack && mv $OUT/*.log $OUT/g $OUT/pack/ 2>/dev/null; cp $OUT/pack/c8.log $OUT/ 2>/dev/null; tar cJf $OUT/logs.txz -C $OUT pack && rm -rf $OUT/pack
say end
tail -45 $L
