#!/usr/bin/env bash
# Session 23, call 4: the early first wave in chapter 8's grouped kernels. Each default beside its
# _loop twin (the plain loop) on the cases it serves, twice; test_chapter_08; racecheck and
# memcheck of the three defaults on the validation cases (every CTA several tiles); the PyTorch
# tests; then test_library_gpu and test_chapter_08_e2e as time allows.
set -u
T0=$(date +%s)
mkdir -p /tmp/b && tar xJf .gpu/${ARCH:-s23d}.txz -C /tmp/b && tar xJf .gpu/py.txz -C /tmp
export LD_LIBRARY_PATH=/tmp/b/bin:/usr/local/cuda/lib64
L=$OUT/call.log
say() { echo "== $(date +%T) +$(( $(date +%s) - T0 ))s $*" | tee -a $L; }
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,power.limit,driver_version --format=csv >> $L 2>&1
C=$(cat /tmp/b/bin/commit.txt)
echo "bin: $C  package: $(cat /tmp/py/fp8gemm/commit.txt)" >> $L
B=/tmp/b/bin
mkdir -p $OUT/ab $OUT/p
python3 bench/peers_moe.py --dry-run --groups-out $OUT/ab/moe_groups.json > $OUT/ab/dry.log 2>&1
mapfile -t CASES < <(python3 -c 'import json, sys; [print("--case=%s_n%d_k%d:%s:%d:%d" % (w["name"], n, k, ",".join(map(str, w["counts"])), n, k)) for w in json.load(open(sys.argv[1]))["skewed"] for n, k in w["gemms_nk"]]' $OUT/ab/moe_groups.json)
P1="256x128_s3_c1x2_promoted_tma_b4|^(bal_|skew_g32_t65536)"
P2="128x256_s4_c1x1_promoted_tma_b1|^skew_g32_t8192"
P3="256x128_s4_c1x1_promoted_tma_b1|^masked_"
for i in 1 2; do
  g=0
  for P in "$P1" "$P2" "$P3"; do
    g=$((g+1)); k=${P%%|*}; loop=_loop8; [ $g = 2 ] && loop=_loop4
    say "ch08 pair $g run $i"
    timeout 80 $B/ch08_grouped_moe --gpu_delay_us=50 --kernels=$k,$k$loop --only="${P##*|}" "${CASES[@]}" \
      --json=$OUT/ab/ch08_p${g}_$i.json > $OUT/ab/ch08_p${g}_$i.log 2>&1; echo "rc=$?" >> $L
  done
done
tar cJf $OUT/ab.txz -C $OUT ab && rm -rf $OUT/ab
K3=256x128_s3_c1x2_promoted_tma_b4,128x256_s4_c1x1_promoted_tma_b1,256x128_s4_c1x1_promoted_tma_b1
for tool in racecheck memcheck; do
  say "$tool"
  timeout 100 compute-sanitizer --tool $tool --error-exitcode 1 $B/ch08_grouped_moe --no-bench --sizes=256 --kernels=$K3 \
    > $OUT/p/$tool.log 2>&1; echo "rc=$?" >> $L; tail -2 $OUT/p/$tool.log >> $L
done
say "test_chapter_08"
BIN=$B STEPS=tests ONLY='^test_chapter_08$' TIMEOUT=200 timeout 210 bash scripts/gpu_loop.sh $OUT/gl1 > /dev/null 2>&1; echo "rc=$?" >> $L
tail -3 $OUT/gl1/summary.txt >> $L
say "PyTorch tests"
(cd /tmp/py/fp8gemm_tools/tests && PYTHONPATH=/tmp/py timeout 100 python3 -m pytest -q -p no:cacheprovider) > $OUT/p/pytest.log 2>&1; echo "pytest rc=$?" >> $L
tail -1 $OUT/p/pytest.log >> $L
LEFT=$(( 590 - ($(date +%s) - T0) ))
say "test_library_gpu, test_chapter_08_e2e ($LEFT s left)"
BIN=$B STEPS=tests ONLY='^(test_library_gpu|test_chapter_08_e2e)$' TIMEOUT=$LEFT timeout $LEFT bash scripts/gpu_loop.sh $OUT/gl2 > /dev/null 2>&1; echo "rc=$?" >> $L
tail -4 $OUT/gl2/summary.txt >> $L
tar cJf $OUT/logs.txz -C $OUT p gl1 gl2 && rm -rf $OUT/p $OUT/gl1 $OUT/gl2
say end
tail -40 $L
