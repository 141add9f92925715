#!/usr/bin/env bash
# Session 23, call 5: call 4's first pair again (its --only pattern was cut at a '|'): chapter 8's
# contiguous default for >= 1024 rows per group (256 x 128, 1 x 2) beside its _loop8 twin on the
# balanced and 65536-token skewed cases, twice; and the masked pair once more.
set -u
T0=$(date +%s)
mkdir -p /tmp/b && tar xJf .gpu/${ARCH:-s23e}.txz -C /tmp/b
export LD_LIBRARY_PATH=/tmp/b/bin:/usr/local/cuda/lib64
L=$OUT/call.log
say() { echo "== $(date +%T) +$(( $(date +%s) - T0 ))s $*" | tee -a $L; }
echo "bin: $(cat /tmp/b/bin/commit.txt)" >> $L
B=/tmp/b/bin
mkdir -p $OUT/ab
python3 bench/peers_moe.py --dry-run --groups-out $OUT/ab/moe_groups.json > $OUT/ab/dry.log 2>&1
mapfile -t CASES < <(python3 -c 'import json, sys; [print("--case=%s_n%d_k%d:%s:%d:%d" % (w["name"], n, k, ",".join(map(str, w["counts"])), n, k)) for w in json.load(open(sys.argv[1]))["skewed"] for n, k in w["gemms_nk"]]' $OUT/ab/moe_groups.json)
K=256x128_s3_c1x2_promoted_tma_b4
for i in 1 2; do
  say "ch08 pair 1 run $i"
  timeout 80 $B/ch08_grouped_moe --gpu_delay_us=50 --kernels=$K,${K}_loop8 --only='^(bal_|skew_g32_t65536)' "${CASES[@]}" \
    --json=$OUT/ab/ch08_p1_$i.json > $OUT/ab/ch08_p1_$i.log 2>&1; echo "rc=$?" >> $L
done
K=256x128_s4_c1x1_promoted_tma_b1
say "ch08 pair 3 run 3"
timeout 60 $B/ch08_grouped_moe --gpu_delay_us=50 --kernels=$K,${K}_loop8 --only='^masked_' \
  --json=$OUT/ab/ch08_p3_3.json > $OUT/ab/ch08_p3_3.log 2>&1; echo "rc=$?" >> $L
tar cJf $OUT/ab.txz -C $OUT ab && rm -rf $OUT/ab
say end
cat $L
