#!/usr/bin/env bash
# Session 33, call 1: binaries .gpu/c.txz (ch08_grouped_moe, test_chapter_08) and the PyTorch
# package .gpu/py.txz of 03880fe. Session 32 built a grouped kernel that draws its tiles from a
# self-resetting counter (128x256_s4_c1x1_promoted_tma_b1_dyn) and lost its machine before timing
# it or running its three-launch test; test_chapter_08 as a whole has not run since e9e93ec.
# Predictions (written before the run):
#  1. test_chapter_08's three-launch test of the _dyn kernel passes; the whole test_chapter_08
#     passes (275 tests: session 32's 274 plus the three-launch test).
#  2. _dyn / static time, forward only, same process, both orders: skew_g32_t8192_n4096_k7168
#     0.97-0.99 (schedule_model.py: 0.978); skew_g32_t8192_n7168_k2048 0.98-1.00 (the static kernel
#     already gained 4% from the skip there); both 65536-token cases 0.99-1.00; balanced
#     1.00 +- 0.01.
#  3. PyTorch tests: 100 passed, 2 skipped.
set -u
source scripts/gpu_call.sh .gpu/c.txz .gpu/py.txz || exit 1
mkdir -p "$OUT/ab"
say "test_chapter_08: the counter's three launches"
timeout 100 "$B/test_chapter_08" "ch08: a kernel that draws its tiles from a counter*" \
  > "$OUT/ab/test08_dyn.log" 2>&1; echo "rc=$?" >> "$L"; tail -3 "$OUT/ab/test08_dyn.log" >> "$L"
python3 bench/peers_moe.py --dry-run --groups-out "$OUT/ab/groups.json" > /dev/null 2>&1
mapfile -t CASES < <(python3 -c 'import json, sys; [print("--case=%s_n%d_k%d:%s:%d:%d" % (w["name"], n, k, ",".join(map(str, w["counts"])), n, k)) for w in json.load(open(sys.argv[1]))["skewed"] for n, k in w["gemms_nk"]]' "$OUT/ab/groups.json")
echo "cases: ${#CASES[@]}" >> "$L"
S=128x256_s4_c1x1_promoted_tma_b1
for i in 1 2 3 4; do
  o=$([ $((i % 2)) = 1 ] && echo "$S,${S}_dyn" || echo "${S}_dyn,$S")
  say "ch08 static vs _dyn, run $i ($o)"
  timeout 70 "$B/ch08_grouped_moe" --gpu_delay_us=50 --timing=per_launch --forward-only "${CASES[@]}" --only='^(skew|bal)_' \
    --kernels="$o" --json="$OUT/ab/dyn_$i.json" > "$OUT/ab/dyn_$i.log" 2>&1; echo "rc=$?" >> "$L"
  [ $i = 2 ] && [ "$(seconds_left 440)" -lt 260 ] && break
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
say "test_chapter_08, all"
timeout 200 "$B/test_chapter_08" > "$OUT/ab/test08.log" 2>&1; echo "rc=$?" >> "$L"; tail -3 "$OUT/ab/test08.log" >> "$L"
LEFT=$(seconds_left 440)
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
