#!/usr/bin/env bash
# Session 35, call 5: binaries .gpu/c.txz built at 0e690b7 (ch08_grouped_moe; its code is
# 8ce39cb's: later commits changed only the library benchmark, data and docs).
# 1. The counter schedule's K edge, between K = 2048 (0.996-1.026, call 1) and 4096 (0.966-0.999,
#    call 2): the counter kernel against the 256 x 128 1 x 2 default at K = 3072, N 4096 and 7168,
#    1024 and 1536 rows per expert, two runs in opposite orders. Prediction (before the run):
#    0.98-1.01 at all four. The rule (K >= 4096) is not changed by this call; data for the next.
# 2. The masked calls at N = 7168, K = 2048 (issue 10's masked_g1x1024_n7168_k2048 sits at
#    1.046x DeepGEMM against 1.05x): every plausible compiled forward kernel (13: the tiles
#    256 x 128, 128 x 256, 256 x 112, 128 x 224, 128 x 192, with and without clusters, the early
#    wave and the staged loop, and the counter kernel) on the three masked N 7168 K 2048 cases,
#    two runs in opposite kernel orders. Prediction: none takes less than 0.98x the default's
#    (256x128_s4_c1x1_promoted_tma_b1_noew) time at all three cases in both runs (session 23's
#    choice holds).
set -u
source scripts/gpu_call.sh .gpu/c.txz || exit 1
mkdir -p "$OUT/ab" "$OUT/m"
mapfile -t BASE < <(python3 bench/peers_moe.py --totals 32768,49152 --ch08-case-args)
CASES=()
for c in "${BASE[@]}"; do
  case "$c" in
    *_n4096_k7168:*)
      CASES+=("$(echo "$c" | sed -e 's/_n4096_k7168:/_n4096_k3072:/' -e 's/:4096:7168$/:4096:3072/')")
      CASES+=("$(echo "$c" | sed -e 's/_n4096_k7168:/_n7168_k3072:/' -e 's/:4096:7168$/:7168:3072/')") ;;
  esac
done
printf '%s\n' "${CASES[@]}" | cut -d: -f1,3,4 >> "$L"
D=256x128_s3_c1x2_promoted_tma_b4
Y=128x256_s4_c1x1_promoted_tma_b1_dyn
for i in 1 2; do
  o=$([ $i = 1 ] && echo "$D,$Y" || echo "$Y,$D")
  say "K 3072 run $i ($o)"
  timeout 150 stdbuf -oL "$B/ch08_grouped_moe" --gpu_delay_us=50 --timing=per_launch --forward-only "${CASES[@]}" \
    --only='^skew_' --kernels="$o" --json="$OUT/ab/thr_$i.json" > "$OUT/ab/thr_$i.log" 2>&1; echo "rc=$?" >> "$L"
done
python3 plots/data/h200/session35/summarise.py --files "$OUT/ab"/thr_*.json >> "$L" 2>&1
cp "$OUT"/ab/thr_*.json "$OUT/" 2>/dev/null
K1=256x128_s4_c1x1_promoted_tma_b1_noew,256x128_s4_c1x1_promoted_tma_b1,256x128_s4_c1x2_promoted_tma_b1,256x128_s3_c1x2_promoted_tma_b4,256x128_s3_c1x1_promoted_tma_b4,128x256_s4_c1x1_promoted_tma_b1,128x256_s4_c1x2_promoted_tma_b1,128x256_s4_c1x1_promoted_tma_b1_dyn,256x128_s4_c1x1_promoted_tma_b1_stag,256x128_s4_c1x2_promoted_tma_b1_stag,256x112_s4_c1x1_promoted_tma_b7,128x224_s4_c1x1_promoted_tma_b3,128x192_s4_c1x1_promoted_tma_b3
K2=$(echo "$K1" | tr ',' '\n' | tac | paste -sd,)
for i in 1 2; do
  o=$([ $i = 1 ] && echo "$K1" || echo "$K2")
  LEFT=$(seconds_left 420)
  [ "$LEFT" -lt 60 ] && break
  say "masked sweep run $i, $LEFT s left"
  timeout $((LEFT - 8)) stdbuf -oL "$B/ch08_grouped_moe" --gpu_delay_us=50 --timing=per_launch --forward-only \
    --only='^masked_g.*_n7168_k2048$' --kernels="$o" --json="$OUT/m/masked_$i.json" > "$OUT/m/masked_$i.log" 2>&1; echo "rc=$?" >> "$L"
done
python3 plots/data/h200/session35/masked_sweep.py "$OUT"/m/masked_*.json >> "$L" 2>&1
cp "$OUT"/m/masked_*.json "$OUT/" 2>/dev/null
tar cJf "$OUT/c.txz" -C "$OUT" ab m 2>/dev/null; rm -rf "$OUT/ab" "$OUT/m"
say end
cat "$L"
