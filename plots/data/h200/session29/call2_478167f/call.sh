#!/usr/bin/env bash
# Session 29, call 2: binaries .gpu/c.txz and the PyTorch package .gpu/py.txz of the commit in
# bin/commit.txt (478167f: the first loop the weight gradient's default again; new comparison
# kernels: the lean loop of chapters 6 and 7 with this promotion, _pin_loop1 / _pin_loop4).
# Predictions (written before the run):
#  1. test_chapter_08_wgrad passes: every _stag and _pin_loop kernel equals the first loop's bit
#     for bit; synccheck and racecheck clean on a lean kernel.
#  2. Sweep (the six Fp8Linear shapes as one group of 4096 tokens, the two 65536-token cases, two
#     runs, the kernel order reversed): the lean loop +3-10 % over the first loop on the same tile.
#     Why: call 1's ncu counted 457 instructions per warp and K block for the first loop on
#     128 x 256 (256 FMUL/FFMA, 56 IMAD, 35 R2UR, 34 LDS, ...); the lean loop's SASS (ptxas, the
#     unrolled copies of 128 x 256) has ~410 per K block (IMAD 10-29, still 32 R2UR: the stage
#     index is a loop variable, so the descriptors are moved to uniform registers per wgmma), 10 %
#     fewer; chapter 7's lean loop gained 5-12 % over its first loop.
#  3. ncu source view of _pin_loop1 on 128 x 256 (FP32 dW, N 4096, K 7168, T 4096): 400-420
#     instructions per warp and K block.
#  4. bench_torch: the sweep on each step's dW shows the same gain; the steps as in call 1 (the
#     layer's default unchanged).
set -u
source scripts/gpu_call.sh .gpu/c.txz .gpu/py.txz || exit 1
C7=${C:0:7}
say "GPU tests"
BIN=$B STEPS=tests ONLY='^(test_chapter_08_wgrad)$' TIMEOUT=200 \
  timeout 230 bash scripts/gpu_loop.sh "$OUT/gl" > /dev/null 2>&1; echo "gpu_loop rc=$?" >> "$L"
tail -3 "$OUT/gl/summary.txt" >> "$L" 2>/dev/null
if ! grep -q "^1 passed, 0 failed" "$OUT/gl/summary.txt"; then
  grep -E "FAIL" "$OUT/gl/gpu_loop.log" | head -20 >> "$L"
  say "tests did not pass: stopping"; tar cJf "$OUT/c.txz" -C "$OUT" gl; rm -rf "$OUT/gl"; cat "$L"; exit 1
fi
K="128x192_s5_c1x1_promoted_tma_b1 128x192_s5_c1x1_promoted_tma_b1_pin_loop1 128x192_s5_c1x1_promoted_tma_b1_pin_loop4 128x256_s4_c1x1_promoted_tma_b1 128x256_s4_c1x1_promoted_tma_b1_pin_loop1 128x192_s5_c1x1_promoted_f32_tma_b1 128x192_s5_c1x1_promoted_f32_tma_b1_pin_loop1 128x192_s5_c1x1_promoted_f32_tma_b1_pin_loop4 128x256_s4_c1x1_promoted_f32_tma_b1 128x256_s4_c1x1_promoted_f32_tma_b1_pin_loop1"
LIN=""
for nk in 2112:7168 24576:1536 32768:512 7168:16384 4096:7168 7168:2048; do
  LIN="$LIN --case=skew_lin_n${nk%%:*}_k${nk##*:}:4096:$nk"
done
i=0
for order in "$(echo $K | tr ' ' ',')" "$(echo $K | tr ' ' '\n' | tac | paste -sd,)"; do
  i=$((i + 1))
  say "sweep $i"
  BIN=$B STEPS=ch08 CH08_ARGS="--kernels=$order --only=skew_lin|skew_g32_t65536$LIN" TIMEOUT=200 \
    timeout 210 bash scripts/gpu_loop.sh "$OUT/s$i" > /dev/null 2>&1; echo "rc=$?" >> "$L"
  cp "$OUT/s$i/json/ch08_grouped_moe.json" "$OUT/sweep_${C7}_$i.json" 2>/dev/null
done
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
            for tag in ("_pin_loop1", "_pin_loop4"):
                if k.endswith(tag) and k[:-len(tag)] in row:
                    rat[(k[:-len(tag)], tag)].append(v / row[k[:-len(tag)]])
for (b, tag), xs in sorted(rat.items()):
    print(f"{b:40s} {tag:11s} geomean {math.exp(sum(map(math.log, xs)) / len(xs)):.3f} min {min(xs):.3f} max {max(xs):.3f} n {len(xs)}")
PY
say "PyTorch bench"
timeout 200 bash chapters/10_production/python/gpu_run.sh /tmp/py "$OUT/torch" bench \
  > "$OUT/gpu_run.log" 2>&1; echo "gpu_run rc=$?" >> "$L"
grep -E "^linear" "$OUT/torch/bench_torch.log" | head -10 >> "$L" 2>/dev/null
export PYTHONPATH=/tmp/py
mkdir -p "$OUT/w"
LEAN=128x256_s4_c1x1_promoted_f32_tma_b1_pin_loop1
W="python3 bench/wgrad_vs_cublaslt.py --n 4096 --k 7168 --t 4096 --kernels $LEAN"
say "wgrad vs cuBLASLt: time, then ncu of the lean loop"
timeout 90 $W > "$OUT/w/time_wgrad_vs_cublaslt.txt" 2>&1; echo "rc=$?" >> "$L"
cat "$OUT/w/time_wgrad_vs_cublaslt.txt" >> "$L"
NCU=$(command -v ncu || ls /usr/local/cuda*/bin/ncu 2>/dev/null | head -1)
if [ "$(seconds_left 560)" -gt 40 ]; then
  tag=ours_$LEAN
  timeout 100 "$NCU" --clock-control none --kernel-name-base demangled --kernel-name regex:KGrouped \
    --launch-skip 1 --launch-count 1 --set full --import-source no -o "$OUT/w/ncu_$tag" -f \
    $W --only "ours:$LEAN" --reps 2 > "$OUT/w/ncu_$tag.log" 2>&1; echo "rc=$?" >> "$L"
  "$NCU" -i "$OUT/w/ncu_$tag.ncu-rep" --page details > "$OUT/w/ncu_${tag}_details.txt" 2>&1
  "$NCU" -i "$OUT/w/ncu_$tag.ncu-rep" --page source --csv --print-source sass > "$OUT/w/ncu_${tag}_source.csv" 2>&1
  grep -E "Duration|Elapsed Cycles|SM Frequency|Compute \(SM\) Throughput|Issue Slots Busy|No Eligible|Executed Instructions  " \
    "$OUT/w/ncu_${tag}_details.txt" | head -8 >> "$L"
  head -1 "$OUT/w/ncu_${tag}_source.csv" | grep -o "KGroupedMath<.*" | tail -c 40 >> "$L"
  rm -f "$OUT/w/"*.ncu-rep
fi
if [ "$(seconds_left 560)" -gt 40 ] && command -v compute-sanitizer > /dev/null; then
  for tool in synccheck racecheck; do
    say "compute-sanitizer $tool"
    timeout 40 compute-sanitizer --tool $tool --error-exitcode 1 "$B/ch08_grouped_moe" --no-bench --sizes=208 \
      --kernels=128x256_s4_c1x1_promoted_f32_tma_b1_pin_loop1,128x192_s5_c1x1_promoted_tma_b1_pin_loop4 \
      > "$OUT/w/san_$tool.log" 2>&1; echo "$tool rc=$?" >> "$L"
    tail -1 "$OUT/w/san_$tool.log" >> "$L"
  done
fi
tar cJf "$OUT/c.txz" -C "$OUT" torch gpu_run.log gl s1 s2 w && rm -rf "$OUT/torch" "$OUT/gpu_run.log" "$OUT/gl" "$OUT/s1" "$OUT/s2" "$OUT/w"
say end
cat "$L"
