#!/usr/bin/env bash
# Session 49, call C (carry .gpu/c10.txz): which ranking of the dispatch sweep holds at 8192^3
# under sustained load. Call 1 (H100) found table_sms' picks on 112 SMs 6.5% (block-scaled
# 256x128_s3_c1x2 for the row's 192x128_s4_c1x1) and 8.0% (fast 192x128_s4_c2x1 for the row's
# 128x192_s4_c2x1_pp) behind the fastest by the sweep's interleaved confirmation, while by the
# sweep's block medians the same picks were the fastest (256x128_s3_c1x2 864 us against 970 us).
# The two rankings disagree by 10-18% here; the rule ranks by block medians, check_table by the
# confirmation. Here each contender runs alone for ~2 s (--reps=100000 --budget_ms=2000
# --confirm=0: back-to-back launches, L2 flushed before each, the median), in the order
# A B B A (per SM count), with the SM clock and power sampled every 100 ms.
# Prediction (before the call): the sustained ranking follows the confirmation, 192x128_s4_c1x1
# ahead of 256x128_s3_c1x2 by 3-10% on 112 SMs and on all SMs, 128x192_s4_c2x1_pp and
# 128x128_s6_c1x1_pp ahead of 192x128_s4_c2x1 by 3-8%; all four runs of a kernel within 2%.
# Low confidence: the block phase (30 launches, ~27 ms each kernel) ranked them the other way.
# Then block-scaled 4096 x 24576 x 1536's pair the same way (session 46's 112-SM sweep put the
# rescaled pick 256x128_s3_c1x2 6.5-9% ahead of the row 192x128_s4_c1x1 there, where the waves
# alone favour it by 1.8%): prediction, 256x128_s3_c1x2 ahead by 3-9% on 112 SMs.
# SUS_SMS (default "112 0"; set but empty: none) names the SM counts of the sustained runs. Until
# session 49's call 6 an empty SUS_SMS meant the default (":-"), so call 6 ran both. On an H200 it first runs
# the three GPU test binaries the H200 has not run at this code, then MODE=a's sweeps (mxfp8 on 19 shapes, the others at 8192^3, 112 SMs
# and all).
set -u
source scripts/gpu_call.sh .gpu/c10.txz || exit 1
H200=0; nvidia-smi --query-gpu=name --format=csv,noheader | grep -q H200 && H200=1
if [ $H200 = 1 ]; then
  say "GPU tests (3)"
  gpu_tests_step '^(test_chapter_08|test_chapter_08_wgrad|quantize_test_gpu)$' 300
  for sms in 112 0; do
    say "dispatch sweep, max_sms=$sms: mxfp8 on 19 shapes, the others at 8192^3"
    dispatch_sweep_step mx_sms$sms 45 "$DS_SH18,8192x8192x8192" --families=mxfp8 --max_sms=$sms
    dispatch_sweep_step sq_sms$sms 60 8192x8192x8192 --families=block_scaled,per_tensor --max_sms=$sms
  done
  fi
mkdir -p "$OUT/sus"
nvidia-smi --query-gpu=timestamp,clocks.sm,power.draw,clocks_event_reasons.active \
  --format=csv,noheader -lms 100 > "$OUT/sus/smi.csv" 2>&1 &
SMI=$!
run_one() {  # run_one TAG FAMILIES KERNEL SMS [SHAPE, default 8192x8192x8192]
  echo "$(date +%T.%N) start $1" >> "$OUT/sus/marks.txt"
  timeout 40 "$B/fp8gemm_dispatch_sweep" --shapes=${5:-8192x8192x8192} --families=$2 --filter=$3 \
    --max_sms=$4 --reps=100000 --budget_ms=2000 --confirm=0 --json="$OUT/sus/$1.json" \
    > "$OUT/sus/$1.log" 2>&1
  echo "$1 rc=$?" >> "$L"
  echo "$(date +%T.%N) end $1" >> "$OUT/sus/marks.txt"
}
BS_A=256x128_s3_c1x2_promoted_tma_b4; BS_B=192x128_s4_c1x1_promoted_tma_b2
F_A=192x128_s4_c2x1_fast_tma_b2; F_B=128x192_s4_c2x1_fast_tma_b2_pp; F_C=128x128_s6_c1x1_fast_tma_b2_pp
for sms in ${SUS_SMS-112 0}; do
  say "sustained 8192^3, max_sms=$sms, block-scaled A B B A"
  i=0; for k in $BS_A $BS_B $BS_B $BS_A; do i=$((i+1)); run_one bs_sms${sms}_${i}_$k block_scaled $k $sms; done
  say "sustained 8192^3, max_sms=$sms, fast A B C C B A"
  i=0; for k in $F_A $F_B $F_C $F_C $F_B $F_A; do i=$((i+1)); run_one f_sms${sms}_${i}_$k per_tensor $k $sms; done
  say "sustained 4096x24576x1536, max_sms=$sms, block-scaled A B B A"
  i=0; for k in $BS_A $BS_B $BS_B $BS_A; do i=$((i+1)); run_one w_sms${sms}_${i}_$k block_scaled $k $sms 4096x24576x1536; done
done
kill $SMI 2>/dev/null
python3 - "$OUT/sus" >> "$L" 2>&1 <<'PY'
import json, glob, os, sys
d = sys.argv[1]
for f in sorted(glob.glob(os.path.join(d, "*.json"))):
    for r in json.load(open(f))["results"]:
        if not r.get("peer") and r.get("ok"):
            print(f"{os.path.basename(f)[:-5]:60s} {r['median_us']:8.1f} us  reps {r['reps']}")
PY
tar cJf "$OUT/logs.txz" -C "$OUT" sus $(cd "$OUT" && ls -d gl sweep_*.log.xz 2>/dev/null) && rm -rf "$OUT/sus" "$OUT/gl" "$OUT"/sweep_*.log.xz
say end
cat "$L"
