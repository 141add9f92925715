#!/usr/bin/env bash
# Session 30, call 3: binaries .gpu/c.txz of the commit in bin/commit.txt (FP32 dB kernels with two
# staging units per warpgroup, with and without the early wave, as comparison kernels).
# Why: call 1's early wave gained the bf16 dB kernels 3-6 % and the FP32 ones nothing (0.984x on
# 128 x 256 at 65536 tokens, against +2-5 % predicted). An FP32 tile's epilogue writes 128 KB
# (128 x 256) through one 8 KB staging unit per warpgroup: each of a warpgroup's 8 units waits
# for the store of the one before to have read its buffer, a chain of store latencies that one
# column wave of the next tile's tensor-core work (512 cycles) cannot cover.
# Predictions (written before the run):
#  1. test_chapter_08_wgrad passes (every kernel against float64, the new ones included).
#  2. Sweep (the four 32-expert weight-gradient cases, FP32 dW, two runs in opposite orders): two
#     staging units (128 x 192 s4 b2, 128 x 256 s3 b2) 2-6 % over one at 65536 tokens, more with
#     the early wave on top (+2-4 %); at 8192 tokens (2 K blocks per tile on average) the
#     epilogue is most of a tile: b2 +5-10 %.
#  3. ncu of the default (128 x 256 s4 b1, lean) and its _pin_ew1 twin at 65536 tokens, N 4096:
#     the consumers' stall samples at the epilogue's waits (the bulk-group read wait, the named
#     barrier) 10-20 % of the total; the early wave moves some of them to the wgmma wait.
set -u
source scripts/gpu_call.sh .gpu/c.txz || exit 1
C7=${C:0:7}
say "GPU tests"
BIN=$B STEPS=tests ONLY='^(test_chapter_08_wgrad)$' TIMEOUT=200 \
  timeout 230 bash scripts/gpu_loop.sh "$OUT/gl" > /dev/null 2>&1; echo "gpu_loop rc=$?" >> "$L"
tail -2 "$OUT/gl/summary.txt" >> "$L" 2>/dev/null
grep -E "tests=" "$OUT/gl/gpu_loop.log" | head -2 >> "$L"
if ! grep -q "^1 passed, 0 failed" "$OUT/gl/summary.txt"; then
  grep -E "FAIL|differ|failed" "$OUT/gl/gpu_loop.log" | head -30 >> "$L"
  say "tests did not pass: stopping"; tar cJf "$OUT/c.txz" -C "$OUT" gl; rm -rf "$OUT/gl"; cat "$L"; exit 1
fi
K="128x256_s4_c1x1_promoted_f32_tma_b1 128x256_s4_c1x1_promoted_f32_tma_b1_pin_ew1 128x256_s3_c1x1_promoted_f32_tma_b2 128x256_s3_c1x1_promoted_f32_tma_b2_pin_ew1 128x192_s5_c1x1_promoted_f32_tma_b1 128x192_s5_c1x1_promoted_f32_tma_b1_pin_ew2 128x192_s4_c1x1_promoted_f32_tma_b2 128x192_s4_c1x1_promoted_f32_tma_b2_pin_ew2 128x192_s4_c1x1_promoted_f32_tma_b3"
i=0
for order in "$(echo $K | tr ' ' ',')" "$(echo $K | tr ' ' '\n' | tac | paste -sd,)"; do
  i=$((i + 1))
  say "sweep $i"
  BIN=$B STEPS=ch08 CH08_ARGS="--kernels=$order --only=skew_g32" TIMEOUT=200 \
    timeout 210 bash scripts/gpu_loop.sh "$OUT/s$i" > /dev/null 2>&1; echo "rc=$?" >> "$L"
  cp "$OUT/s$i/json/ch08_grouped_moe.json" "$OUT/sweep_${C7}_$i.json" 2>/dev/null
done
python3 - "$OUT"/sweep_${C7}_*.json >> "$L" 2>&1 <<'PY'
import json, sys, collections
for f in sys.argv[1:]:
    t = collections.defaultdict(dict)
    for b in json.load(open(f))["benchmarks"]:
        impl, case = b["name"].split("/")[:2]
        if impl.startswith("ch08_wgrad:"): t[case][impl[11:]] = b["TFLOPS"]
    print(f.rsplit("/", 1)[1])
    for case, row in sorted(t.items()):
        base = row.get("128x256_s4_c1x1_promoted_f32_tma_b1")
        print(" ", case, " ".join(f"{k.replace('_c1x1_promoted_f32_tma', '')}={v:.0f}({v / base:.3f})" for k, v in row.items()))
PY
NCU=$(command -v ncu || ls /usr/local/cuda*/bin/ncu 2>/dev/null | head -1)
mkdir -p "$OUT/w"
for k in 128x256_s4_c1x1_promoted_f32_tma_b1 128x256_s4_c1x1_promoted_f32_tma_b1_pin_ew1; do
  [ "$(seconds_left 500)" -gt 60 ] || { say "no time for ncu $k"; continue; }
  say "ncu $k"
  timeout 120 "$NCU" --clock-control none --kernel-name-base demangled --kernel-name regex:KGrouped \
    --launch-skip 0 --launch-count 1 --set full --import-source no -o "$OUT/w/ncu_$k" -f \
    "$B/ch08_grouped_moe" --no-bench --only=skew_g32_t65536_n4096_k7168 --kernels=$k \
    > "$OUT/w/ncu_$k.log" 2>&1; echo "rc=$?" >> "$L"
  "$NCU" -i "$OUT/w/ncu_$k.ncu-rep" --page details > "$OUT/w/ncu_${k}_details.txt" 2>&1
  "$NCU" -i "$OUT/w/ncu_$k.ncu-rep" --page source --csv --print-source sass > "$OUT/w/ncu_${k}_source.csv" 2>&1
  grep -E "Duration|Elapsed Cycles|SM Frequency|Compute \(SM\) Throughput|Issue Slots Busy|Executed Instructions  " \
    "$OUT/w/ncu_${k}_details.txt" | head -8 >> "$L"
  rm -f "$OUT/w/"*.ncu-rep
done
tar cJf "$OUT/c.txz" -C "$OUT" gl s1 s2 w && rm -rf "$OUT/gl" "$OUT/s1" "$OUT/s2" "$OUT/w"
say end
cat "$L"
