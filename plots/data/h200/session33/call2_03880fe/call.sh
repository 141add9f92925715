#!/usr/bin/env bash
# Session 33, call 2: the same binaries and package as call 1 (03880fe). Call 1's four timing runs
# each ran past their 70 s (the six cases' operands, made on the host, and the chapter-7 loop's
# validation: the 65536-token cases dominate) and printed nothing (stdout is a pipe: buffered).
# The comparison only matters where the plan picks the static 128 x 256 kernel, the skewed
# 8192-token cases (the 65536-token ones take 256 x 128 in 1 x 2 clusters), so this call times those
# two cases only, line-buffered, in both orders twice; then the PyTorch tests.
# Predictions (unchanged from call 1, written before it): _dyn / static 0.97-0.99 at
# skew_g32_t8192_n4096_k7168 (model 0.978), 0.98-1.00 at skew_g32_t8192_n7168_k2048; PyTorch tests
# 100 passed, 2 skipped.
set -u
source scripts/gpu_call.sh .gpu/c.txz .gpu/py.txz || exit 1
mkdir -p "$OUT/ab"
python3 bench/peers_moe.py --dry-run --groups-out "$OUT/ab/groups.json" > /dev/null 2>&1
mapfile -t CASES < <(python3 -c 'import json, sys; [print("--case=%s_n%d_k%d:%s:%d:%d" % (w["name"], n, k, ",".join(map(str, w["counts"])), n, k)) for w in json.load(open(sys.argv[1]))["skewed"] for n, k in w["gemms_nk"]]' "$OUT/ab/groups.json")
echo "cases: ${#CASES[@]}" >> "$L"
S=128x256_s4_c1x1_promoted_tma_b1
for i in 1 2 3 4; do
  o=$([ $((i % 2)) = 1 ] && echo "$S,${S}_dyn" || echo "${S}_dyn,$S")
  say "ch08 static vs _dyn, run $i ($o)"
  timeout 110 stdbuf -oL "$B/ch08_grouped_moe" --gpu_delay_us=50 --timing=per_launch --forward-only "${CASES[@]}" \
    --only='^skew_g32_t8192_' --kernels="$o" --json="$OUT/ab/dyn_$i.json" > "$OUT/ab/dyn_$i.log" 2>&1; echo "rc=$?" >> "$L"
  [ $i = 2 ] && [ "$(seconds_left 420)" -lt 200 ] && break
done
python3 - "$OUT/ab" >> "$L" 2>&1 <<'PY'
import json, sys, glob, collections
t = collections.defaultdict(lambda: collections.defaultdict(list))
for f in sorted(glob.glob(sys.argv[1] + "/dyn_*.json")):
    for b in json.load(open(f))["benchmarks"]:
        impl, case = b["name"].split("/")[:2]
        if impl.startswith("ch08:"): t[case]["dyn" if impl.endswith("_dyn") else "static"].append(b["real_time"])
print("case: _dyn / static time (mean over runs; us)")
for case, s in sorted(t.items()):
    if s["dyn"] and s["static"]:
        print(f"  {case:32s} static {' '.join(f'{x:.1f}' for x in s['static'])}  dyn {' '.join(f'{x:.1f}' for x in s['dyn'])}  ratio {sum(s['dyn'])/len(s['dyn'])/(sum(s['static'])/len(s['static'])):.4f}")
PY
LEFT=$(seconds_left 420)
if [ "$LEFT" -gt 45 ]; then
  say "PyTorch tests, $LEFT s left"
  timeout $((LEFT - 5)) bash chapters/10_production/python/gpu_run.sh /tmp/py "$OUT/torch" tests \
    > "$OUT/gpu_run.log" 2>&1; echo "gpu_run rc=$?" >> "$L"
  tail -1 "$OUT/torch/tests.log" >> "$L" 2>/dev/null
fi
cp "$OUT"/ab/dyn_*.json "$OUT/" 2>/dev/null
tar cJf "$OUT/c.txz" -C "$OUT" ab torch gpu_run.log 2>/dev/null; rm -rf "$OUT/ab" "$OUT/torch" "$OUT/gpu_run.log"
say end
cat "$L"
