#!/usr/bin/env bash
# Session 35, call 6: binaries .gpu/c.txz built at 0e690b7 (ch08_grouped_moe; 8ce39cb's code).
# Call 5's masked sweep found one kernel faster than the masked default at one case:
# 256x128_s3_c1x1_promoted_tma_b4 took 0.967 / 0.980x the time of 256x128_s4_c1x1_promoted_tma_b1_noew
# at masked_g1x1024_n7168_k2048, but 1.014 / 1.013x at g2x512 and 1.065 / 1.059x at g4x256 (the
# same 224 tiles; the g4x256 call reads four experts' B, 4x the bytes per row tile). If B's reuse
# is what decides (M_max, the rows each expert's B serves), the 3-stage tile should win wherever
# M_max >= 1024. This call tests that on masked calls the sweep did not cover, the two kernels in
# one process, two runs in opposite orders.
# Predictions (before the run), s3 b4 / default: M_max >= 1024 at N 7168, K 2048 (g1x1024, g2x1024,
# g1x2048, g4x1024): 0.97-0.99; g2x512 ~1.01 and g4x256 ~1.06 (as call 5); g1x1024 at N 4096,
# K 2048 (128 tiles, one partial round): 0.98-1.02; g1x1024 at N 7168, K 1024: 0.97-1.00.
# A rule change follows only if every M_max >= 1024 case at K <= 2048 is below 0.99 in both runs.
set -u
source scripts/gpu_call.sh .gpu/c.txz || exit 1
mkdir -p "$OUT/m"
CASES=(--case=masked_g2x1024_n7168_k2048:masked=2x1024:7168:2048
       --case=masked_g1x2048_n7168_k2048:masked=1x2048:7168:2048
       --case=masked_g4x1024_n7168_k2048:masked=4x1024:7168:2048
       --case=masked_g1x1024_n4096_k2048:masked=1x1024:4096:2048
       --case=masked_g1x1024_n7168_k1024:masked=1x1024:7168:1024)
printf '%s\n' "${CASES[@]}" >> "$L"
D=256x128_s4_c1x1_promoted_tma_b1_noew
S=256x128_s3_c1x1_promoted_tma_b4
for i in 1 2; do
  o=$([ $i = 1 ] && echo "$D,$S" || echo "$S,$D")
  LEFT=$(seconds_left 300)
  [ "$LEFT" -lt 60 ] && break
  say "run $i ($o), $LEFT s left"
  timeout $((LEFT - 8)) stdbuf -oL "$B/ch08_grouped_moe" --gpu_delay_us=50 --timing=per_launch --forward-only \
    "${CASES[@]}" --only='^masked_.*_k(2048|1024)$' --kernels="$o" --json="$OUT/m/masked_$i.json" \
    > "$OUT/m/masked_$i.log" 2>&1; echo "rc=$?" >> "$L"
done
python3 plots/data/h200/session35/masked_sweep.py "$OUT"/m/masked_*.json >> "$L" 2>&1
cp "$OUT"/m/masked_*.json "$OUT/" 2>/dev/null
tar cJf "$OUT/c.txz" -C "$OUT" m 2>/dev/null; rm -rf "$OUT/m"
say end
cat "$L"
