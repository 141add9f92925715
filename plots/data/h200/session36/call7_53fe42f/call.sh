#!/usr/bin/env bash
# Session 36, call 7: binaries .gpu/c.txz (ch08_grouped_moe of 53fe42f).
# Session 35 moved the masked calls with K <= 2048 and M_max >= 1024 to 3 stages with a staging
# buffer per store unit (256x128_s3_c1x1_promoted_tma_b4: 0.952-0.979x the time at N 7168, K 1024
# and 2048), and left K > 2048 unmeasured (the default there: 256x128_s4_c1x1_promoted_tma_b1).
# This call measures it: masked calls with M_max >= 1024 at K 4096 and 7168, N 4096 and 7168,
# G 1-4, forward only, the two kernels in alternating order, four runs in one process each.
# Predicted (before the run): level, 0.99-1.02x, at K = 7168 (56 K blocks per tile: the epilogue's
# share, which the staging buffers shorten, is a quarter of K = 2048's, and a fourth stage hides
# more of the loads' latency over the longer loop); at K = 4096 0.98-1.01x. If so the rule's
# K <= 2048 bound stays.
set -u
source scripts/gpu_call.sh .gpu/c.txz || exit 1
CASES=()
for nk in 4096:7168 7168:7168 4096:4096 7168:4096; do
  for gm in 1x1024 2x1024 4x1024 1x2048; do
    CASES+=("--case=mk_g${gm}_n${nk%%:*}_k${nk##*:}:masked=${gm}:${nk}")
  done
done
printf '%s\n' "${CASES[@]}" >> "$L"
ch08_ab_runs "$OUT/ab" 4 200 40 '^mk_' 256x128_s4_c1x1_promoted_tma_b1 256x128_s3_c1x1_promoted_tma_b4 "${CASES[@]}"
cp "$OUT"/ab/ab_*.json "$OUT/" 2>/dev/null
tar cJf "$OUT/logs.txz" -C "$OUT" ab 2>/dev/null; rm -rf "$OUT/ab"
say end
cat "$L"
