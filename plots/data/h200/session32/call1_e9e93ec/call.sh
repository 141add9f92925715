#!/usr/bin/env bash
# Session 32, call 1: binaries .gpu/c.txz of e9e93ec (bin/: the GPU tests of the grouped forward
# and ch08_grouped_moe; bin_old/: ch08_grouped_moe of 908b391, the same kernels without the change).
# The change: a consumer warpgroup whose rows of a grouped tile all lie at or past the group's end
# waits for and releases the tile's stages and computes and stores nothing (kernel.cuh,
# SkipsIdleRows; DeepGEMM skips such 64-row pieces the same way).
# Predictions (written before the run):
#  1. test_chapter_08 (with the new group ends 63/64/65/191/192/193/257 for every kernel),
#     test_chapter_08_e2e and test_library_gpu pass; compute-sanitizer racecheck, synccheck and
#     (memcheck dropped after the first attempt lost its machine) find nothing on ch08_grouped_moe --no-bench --sizes=256 (groups of 1, 127, 129 and
#     33793 rows: idle warpgroups in every kernel) with the three default kernels.
#  2. Same process order old, new, new, old; the default kernel's time new / old per case:
#     skewed 8192 tokens (128 x 256: 15 of the 79 row tiles have a second warpgroup with no rows,
#     such a tile ~0.75x a full one's time): 0.95-0.97; skewed 65536 (256 x 128 in 1 x 2 clusters:
#     16 of 271 row tiles, ~0.73x): 0.98-0.99; balanced and masked (no row tile ends inside a
#     warpgroup): 0.99-1.01.
set -u
source scripts/gpu_call.sh .gpu/c.txz || exit 1
C7=${C:0:7}
mkdir -p "$OUT/ab" "$OUT/san"
python3 bench/peers_moe.py --dry-run --groups-out "$OUT/ab/groups.json" > /dev/null 2>&1
mapfile -t CASES < <(python3 -c 'import json, sys; [print("--case=%s_n%d_k%d:%s:%d:%d" % (w["name"], n, k, ",".join(map(str, w["counts"])), n, k)) for w in json.load(open(sys.argv[1]))["skewed"] for n, k in w["gemms_nk"]]' "$OUT/ab/groups.json")
echo "cases: ${#CASES[@]}" >> "$L"
# ab SIDE RUN BIN TAG [ARGS...]: one run of the executable on the peers' cases.
ab() {
  local side=$1 i=$2 bin=$3 tag=$4
  shift 4
  say "ch08 $tag $side run $i"
  timeout 90 "$bin/ch08_grouped_moe" --gpu_delay_us=50 --timing=per_launch "${CASES[@]}" "$@" \
    --json="$OUT/ab/${tag}_${side}_$i.json" > "$OUT/ab/${tag}_${side}_$i.log" 2>&1
  echo "rc=$?" >> "$L"
}
# (a) the plan's default kernel on every forward case (and its weight gradient, unchanged).
for r in "old 1 /tmp/b/bin_old" "new 1 $B" "new 2 $B" "old 2 /tmp/b/bin_old"; do ab $r dflt; done
# (b) both contiguous defaults by name on the skewed cases (128 x 256 is the default at 8192
#     tokens, 256 x 128 in 1 x 2 clusters at 65536): what the skip does to each tile. Only if
#     the call has time for it (the first attempt of this call lost its machine at ~540 s).
KK=--kernels=128x256_s4_c1x1_promoted_tma_b1,256x128_s3_c1x2_promoted_tma_b4
if [ "$(seconds_left 560)" -gt 400 ]; then
  for r in "old 1 /tmp/b/bin_old" "new 1 $B" "new 2 $B" "old 2 /tmp/b/bin_old"; do ab $r skew --only='^skew_' $KK; done
fi
python3 - "$OUT/ab" >> "$L" 2>&1 <<'PY'
import json, sys, glob, math, collections
d = sys.argv[1]
t = collections.defaultdict(lambda: collections.defaultdict(list))
for f in sorted(glob.glob(d + "/*_*_*.json")):
    side = f.rsplit("/", 1)[1].split("_")[1]
    for b in json.load(open(f))["benchmarks"]:
        impl, case = b["name"].split("/")[:2]
        if impl.startswith("ch08"): t[(impl, case)][side].append(b["real_time"])
print("implementation / case: new / old time (mean of each side's runs; us)")
for (impl, case), s in sorted(t.items()):
    if s["old"] and s["new"]:
        o = sorted(s["old"]); n = sorted(s["new"])
        print(f"  {impl:45s} {case:32s} old {' '.join(f'{x:.1f}' for x in o)}  new {' '.join(f'{x:.1f}' for x in n)}  ratio {sum(n)/len(n)/(sum(o)/len(o)):.4f}")
PY
K3=256x128_s3_c1x2_promoted_tma_b4,128x256_s4_c1x1_promoted_tma_b1,256x128_s4_c1x1_promoted_tma_b1_noew
for tool in racecheck synccheck; do
  say "$tool"
  timeout 100 compute-sanitizer --tool $tool --error-exitcode 1 "$B/ch08_grouped_moe" --no-bench --sizes=256 \
    --kernels=$K3 > "$OUT/san/$tool.log" 2>&1; echo "rc=$?" >> "$L"; tail -2 "$OUT/san/$tool.log" >> "$L"
done
LEFT=$(seconds_left 560)
say "GPU tests, $LEFT s left"
BIN=$B STEPS=tests ONLY='^(test_chapter_08|test_chapter_08_e2e|test_library_gpu)$' TIMEOUT=250 \
  timeout $((LEFT - 5)) bash scripts/gpu_loop.sh "$OUT/gl" > /dev/null 2>&1; echo "gpu_loop rc=$?" >> "$L"
grep -E "PASS|FAIL|SKIP" "$OUT/gl/summary.txt" >> "$L" 2>/dev/null
tail -1 "$OUT/gl/summary.txt" >> "$L" 2>/dev/null
cp "$OUT/gl/summary.txt" "$OUT/gpu_tests_${C7}.txt" 2>/dev/null
tar cJf "$OUT/c.txz" -C "$OUT" gl ab san 2>/dev/null; rm -rf "$OUT/gl" "$OUT/ab" "$OUT/san"
say end
cat "$L"
