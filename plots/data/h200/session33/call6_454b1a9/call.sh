#!/usr/bin/env bash
# Session 33, call 6: binary .gpu/c.txz (ch08_grouped_moe of 454b1a9; kernels as in calls 2-5).
# Where should the counter schedule's regime end? It takes the counter kernel (128 x 256) where
# the rule picks 128 x 256: contiguous calls with fewer than 1024 rows per expert on average; at
# 1024 and more the rule picks 256 x 128 in 1 x 2 clusters (session 12: 1.02-1.10x 128 x 256 then,
# static against static). This call times the counter kernel against that default at the
# boundary (skewed 32768 tokens over 32 experts: 1024 on average) and above it (65536: 2048),
# both GEMMs of the layer, forward only, same process, the two orders.
# Predictions (written before the run): _dyn / default time 1.00-1.05 at 32768 tokens and
# 1.02-1.08 at 65536 (the counter gains ~1 % there by schedule_model.py, less than the
# cluster's lead), so the regime stays where it is.
set -u
source scripts/gpu_call.sh .gpu/c.txz || exit 1
mkdir -p "$OUT/ab"
mapfile -t CASES < <(python3 bench/peers_moe.py --totals 32768,65536 --ch08-case-args)
echo "cases: ${#CASES[@]}" >> "$L"
D=256x128_s3_c1x2_promoted_tma_b4
Y=128x256_s4_c1x1_promoted_tma_b1_dyn
for i in 1 2; do
  o=$([ $i = 1 ] && echo "$D,$Y" || echo "$Y,$D")
  LEFT=$(seconds_left 290)
  [ "$LEFT" -lt 100 ] && break
  say "run $i ($o), $LEFT s left"
  timeout $((LEFT - 10)) stdbuf -oL "$B/ch08_grouped_moe" --gpu_delay_us=50 --timing=per_launch --forward-only "${CASES[@]}" \
    --only='^skew_' --kernels="$o" --json="$OUT/ab/thr_$i.json" > "$OUT/ab/thr_$i.log" 2>&1; echo "rc=$?" >> "$L"
done
python3 - "$OUT/ab" >> "$L" 2>&1 <<'PY'
import json, sys, glob, collections
t = collections.defaultdict(lambda: collections.defaultdict(list))
for f in sorted(glob.glob(sys.argv[1] + "/thr_*.json")):
    try:
        bs = json.load(open(f))["benchmarks"]
    except Exception as e:
        print(f, "unreadable:", e); continue
    for b in bs:
        impl, case = b["name"].split("/")[:2]
        if impl.startswith("ch08:"): t[case]["dyn" if impl.endswith("_dyn") else "default"].append(b["real_time"])
print("case: _dyn (128 x 256) / default (256 x 128, 1 x 2) time (us)")
for case, s in sorted(t.items()):
    if s["dyn"] and s["default"]:
        print(f"  {case:32s} default {' '.join(f'{x:.1f}' for x in s['default'])}  dyn {' '.join(f'{x:.1f}' for x in s['dyn'])}  ratio {sum(s['dyn'])/len(s['dyn'])/(sum(s['default'])/len(s['default'])):.4f}")
PY
cp "$OUT"/ab/thr_*.json "$OUT/" 2>/dev/null
tar cJf "$OUT/c.txz" -C "$OUT" ab 2>/dev/null; rm -rf "$OUT/ab"
say end
cat "$L"
