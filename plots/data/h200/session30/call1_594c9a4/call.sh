#!/usr/bin/env bash
# Session 30, call 1: binaries .gpu/c.txz and the PyTorch package .gpu/py.txz of the commit in
# bin/commit.txt (the weight gradient's lean loop with the early first wave as comparison twins:
# _pin_ew4 / _pin_ew2 / _pin_ew1), DeepGEMM 2.6.1 built from .peer/.
# Predictions (written before the run):
#  1. test_chapter_08_wgrad passes: every _pin_ew twin equals its _loop0 first loop bit for bit
#     (empty experts included); synccheck and racecheck clean on two _pin_ew kernels.
#  2. Sweep (two runs, kernel order reversed; the six Fp8Linear shapes as one group of 4096 tokens
#     and the two 65536-token cases): the early wave over the lean loop on the same tile and unroll
#     +2-5 % at 65536 tokens with FP32 dW (16 K blocks per tile on average, a 96-128 KB FP32
#     epilogue per tile: one column wave of the next tile's first K block, 512-768 tensor-core
#     cycles, runs under it), +0.5-2 % for the 4096-token bf16 cases (32-128 K blocks per tile,
#     half the epilogue bytes).
#  3. Issue 10's peers in one process, interleaved (bench/peers_moe.py --interleave --delay-us 150,
#     as sessions 20 and 24): the weight gradient at 65536 tokens (default: the lean loop since
#     session 29) 0.98-1.03x DeepGEMM (session 24: 0.963 / 0.989 before the lean loop's +2-4 %);
#     the early-wave twin another +2-5 %; the forward cases as session 24 within +-2 %.
set -u
source scripts/gpu_call.sh .gpu/c.txz .gpu/py.txz || exit 1
C7=${C:0:7}
say "GPU tests"
BIN=$B STEPS=tests ONLY='^(test_chapter_08_wgrad)$' TIMEOUT=200 \
  timeout 230 bash scripts/gpu_loop.sh "$OUT/gl" > /dev/null 2>&1; echo "gpu_loop rc=$?" >> "$L"
tail -3 "$OUT/gl/summary.txt" >> "$L" 2>/dev/null
grep -E "tests=" "$OUT/gl/gpu_loop.log" | head -3 >> "$L"
if ! grep -q "^1 passed, 0 failed" "$OUT/gl/summary.txt"; then
  grep -E "FAIL|differ|failed" "$OUT/gl/gpu_loop.log" | head -30 >> "$L"
  say "tests did not pass: stopping"; tar cJf "$OUT/c.txz" -C "$OUT" gl; rm -rf "$OUT/gl"; cat "$L"; exit 1
fi
K="128x192_s5_c1x1_promoted_tma_b1 128x192_s5_c1x1_promoted_tma_b1_pin_ew4 128x256_s4_c1x1_promoted_tma_b1 128x256_s4_c1x1_promoted_tma_b1_pin_ew1 128x192_s5_c1x1_promoted_f32_tma_b1 128x192_s5_c1x1_promoted_f32_tma_b1_pin_loop1 128x192_s5_c1x1_promoted_f32_tma_b1_pin_ew1 128x192_s5_c1x1_promoted_f32_tma_b1_pin_ew2 128x256_s4_c1x1_promoted_f32_tma_b1 128x256_s4_c1x1_promoted_f32_tma_b1_pin_ew1"
LIN=""
for nk in 2112:7168 24576:1536 32768:512 7168:16384 4096:7168 7168:2048; do
  LIN="$LIN --case=skew_lin_n${nk%%:*}_k${nk##*:}:4096:$nk"
done
sweep() {
  local i=$1 order=$2
  say "sweep $i"
  BIN=$B STEPS=ch08 CH08_ARGS="--kernels=$order --only=skew_lin|skew_g32_t65536$LIN" TIMEOUT=200 \
    timeout 210 bash scripts/gpu_loop.sh "$OUT/s$i" > /dev/null 2>&1; echo "rc=$?" >> "$L"
  cp "$OUT/s$i/json/ch08_grouped_moe.json" "$OUT/sweep_${C7}_$i.json" 2>/dev/null
}
sweep 1 "$(echo $K | tr ' ' ',')"
say "peers_moe (DeepGEMM built first), interleaved"
EW=128x256_s4_c1x1_promoted_f32_tma_b1_pin_ew1,128x192_s5_c1x1_promoted_f32_tma_b1_pin_ew2
PYTHONPATH=/tmp/py BIN=$B STEPS=peers_moe PEER_TIMEOUT=260 TIMEOUT=260 \
  PEER_ARGS="--interleave --delay-us 150 --cupti-launches 0 --wgrad-kernels=$EW" \
  timeout 420 bash scripts/gpu_loop.sh "$OUT/p" > /dev/null 2>&1; echo "peers rc=$?" >> "$L"
tail -4 "$OUT/p/summary.txt" >> "$L" 2>/dev/null
cp "$OUT/p/json/peers_ch08.json" "$OUT/peers_ch08_$C.json" 2>/dev/null
cp "$OUT/p/json/moe_groups.json" "$OUT/moe_groups_$C.json" 2>/dev/null
if [ "$(seconds_left 540)" -gt 100 ]; then
  sweep 2 "$(echo $K | tr ' ' '\n' | tac | paste -sd,)"
fi
python3 - "$OUT"/sweep_${C7}_*.json >> "$L" 2>&1 <<'PY'
import json, sys, collections, math
rat = collections.defaultdict(list)
for f in sys.argv[1:]:
    t = collections.defaultdict(dict)
    for b in json.load(open(f))["benchmarks"]:
        impl, case = b["name"].split("/")[:2]
        if impl.startswith("ch08_wgrad:"): t[case][impl[11:]] = b["TFLOPS"]
    for case, row in t.items():
        for k, v in row.items():
            for tag, base in (("_pin_ew4", ""), ("_pin_ew1", ""), ("_pin_ew2", ""), ("_pin_ew1", "_pin_loop1")):
                if k.endswith(tag) and k[:-len(tag)] + base in row:
                    r = v / row[k[:-len(tag)] + base]
                    rat[(k[:-len(tag)], tag + " / " + (base or "default"))].append(r)
                    if "t65536" in case: rat[(k[:-len(tag)], tag + " / " + (base or "default") + " t65536")].append(r)
for (b, tag), xs in sorted(rat.items()):
    print(f"{b:38s} {tag:32s} geomean {math.exp(sum(map(math.log, xs)) / len(xs)):.3f} min {min(xs):.3f} max {max(xs):.3f} n {len(xs)}")
PY
if [ "$(seconds_left 540)" -gt 40 ] && command -v compute-sanitizer > /dev/null; then
  mkdir -p "$OUT/w"
  for tool in synccheck racecheck; do
    say "compute-sanitizer $tool"
    timeout 40 compute-sanitizer --tool $tool --error-exitcode 1 "$B/ch08_grouped_moe" --no-bench --sizes=208 \
      --kernels=128x256_s4_c1x1_promoted_f32_tma_b1_pin_ew1,128x192_s5_c1x1_promoted_tma_b1_pin_ew4 \
      > "$OUT/w/san_$tool.log" 2>&1; echo "$tool rc=$?" >> "$L"
    tail -1 "$OUT/w/san_$tool.log" >> "$L"
  done
fi
grep -E "wgrad|^bal|^skew|^masked" "$OUT/p/peers_moe.log" | tail -40 > "$OUT/peers_tail.txt" 2>/dev/null
tar cJf "$OUT/c.txz" -C "$OUT" gl s1 s2 p w 2>/dev/null; rm -rf "$OUT/gl" "$OUT/s1" "$OUT/s2" "$OUT/p" "$OUT/w"
say end
cat "$L"
