#!/usr/bin/env bash
# Session 35, call 1: binaries .gpu/c.txz of 19dad58 (ch08_grouped_moe, test_library_threads_gpu)
# and the PyTorch package .gpu/py.txz. (Session 34's call 1 ran the same code's GPU tests and a
# first t49152 timing; its returned files were lost with that session's machine, so nothing of it
# is committed and its numbers are not used here.)
# 1. Where the counter schedule's regime should end, and what sets it. The counter kernel
#    (128 x 256, _dyn) against the contiguous default (256 x 128 in 1 x 2 clusters) on the peers'
#    seeded skewed groups (32 experts), forward only, one process, runs in alternating order.
#    Session 33 (call 6): 1024 rows per expert 0.965 (N 4096, K 7168) and 1.003 (N 7168, K 2048);
#    2048 rows 1.009 and 1.021. Two shapes cannot tell whether N or K decides, so two more shapes
#    with the same groups: N 4096, K 2048 and N 7168, K 7168, at 1024 and 1536 rows per expert,
#    and the two known shapes at 1536.
#    Predictions (before the run), taking K as what decides (a long K loop per tile makes the
#    counter's even finish worth more than the 256-row tile's cluster multicast):
#      t49152 n4096 k7168 0.97-1.00; t49152 n7168 k2048 1.00-1.03;
#      t32768 n7168 k7168 0.96-0.99, t49152 n7168 k7168 0.97-1.00;
#      t32768 n4096 k2048 0.99-1.02, t49152 n4096 k2048 1.00-1.03.
#    If instead N decides, the two new shapes swap (n4096 k2048 below 1, n7168 k7168 above).
# 2. PyTorch tests at 19dad58 (the op's capture path queries each fresh counter since 4a578cb):
#    predicted 102 passed, 2 skipped.
set -u
source scripts/gpu_call.sh .gpu/c.txz .gpu/py.txz || exit 1
mkdir -p "$OUT/ab"
mapfile -t BASE < <(python3 bench/peers_moe.py --totals 32768,49152 --ch08-case-args)
CASES=()
for c in "${BASE[@]}"; do
  case "$c" in
    *t49152_n4096_k7168:*|*t49152_n7168_k2048:*) CASES+=("$c") ;;
  esac
  case "$c" in
    *_n4096_k7168:*)  # the same groups at N 4096 K 2048 and N 7168 K 7168
      CASES+=("$(echo "$c" | sed -e 's/_n4096_k7168:/_n4096_k2048:/' -e 's/:4096:7168$/:4096:2048/')")
      CASES+=("$(echo "$c" | sed -e 's/_n4096_k7168:/_n7168_k7168:/' -e 's/:4096:7168$/:7168:7168/')") ;;
  esac
done
printf '%s\n' "${CASES[@]}" | cut -d: -f1,3,4 >> "$L"
D=256x128_s3_c1x2_promoted_tma_b4
Y=128x256_s4_c1x1_promoted_tma_b1_dyn
for i in 1 2 3; do
  o=$([ $((i % 2)) = 1 ] && echo "$D,$Y" || echo "$Y,$D")
  LEFT=$(seconds_left 420)
  [ "$LEFT" -lt 150 ] && break
  say "run $i ($o), $LEFT s left"
  timeout $((LEFT - 10)) stdbuf -oL "$B/ch08_grouped_moe" --gpu_delay_us=50 --timing=per_launch --forward-only "${CASES[@]}" \
    --only='^skew_' --kernels="$o" --json="$OUT/ab/thr_$i.json" > "$OUT/ab/thr_$i.log" 2>&1; echo "rc=$?" >> "$L"
done
python3 plots/data/h200/session35/summarise.py --files "$OUT/ab"/thr_*.json >> "$L" 2>&1
cp "$OUT"/ab/thr_*.json "$OUT/" 2>/dev/null
LEFT=$(seconds_left 470)
if [ "$LEFT" -gt 40 ]; then
  say "PyTorch tests, $LEFT s left"
  timeout $((LEFT - 5)) bash chapters/10_production/python/gpu_run.sh /tmp/py "$OUT/torch" tests \
    > "$OUT/gpu_run.log" 2>&1; echo "gpu_run rc=$?" >> "$L"
  tail -1 "$OUT/torch/tests.log" >> "$L" 2>/dev/null
fi
tar cJf "$OUT/c.txz" -C "$OUT" torch gpu_run.log ab 2>/dev/null; rm -rf "$OUT/torch" "$OUT/gpu_run.log" "$OUT/ab"
say end
cat "$L"
