#!/usr/bin/env bash
# Session 29, call 1: binaries .gpu/c.txz and the PyTorch package .gpu/py.txz of the commit in
# bin/commit.txt (951cd2a: the weight gradient's staggered loop, the default of two-warpgroup
# tiles; the first loop without turns kept as _loop0 twins). Its first run, at b308a5d, stopped after
# the tests: 16 failures, every one on the tiles promoted in two waves of columns (128 x 256,
# 128 x 224), whose second wave the staggered branch issued on the first wave's columns; fixed in
# 951cd2a (issue_partial_sum), the log of that run in ../call0_b308a5d/.
# Predictions (written before the run):
#  1. test_chapter_08_wgrad passes, including the new case: every staggered default equals its
#     _loop0 twin bit for bit (same FMAs in the same order). compute-sanitizer synccheck and
#     racecheck: 0 errors / hazards on the staggered kernels.
#  2. ch08 sweep (the six Fp8Linear shapes as one group of 4096 tokens, the two 65536-token MoE
#     cases): staggered over _loop0 on the same tile +15-30 % (the tensor pipe from ~43 % busy to
#     >= 60 %: one warpgroup's promotion, ~300 issue cycles per 64 x 256 piece, now under the
#     other's 512-cycle wgmma instead of both promoting at once); the 128 x 128 tile gains least
#     (its promotion is half as long, its wgmma too).
#  3. bench_torch: the layer's wgrad (bf16 dW) 1000-1150 TFLOPS from 791-913, the FP8 step
#     0.03-0.2 ms shorter, Fp8Linear from 0.96-1.40x bf16 to 1.0-1.5x; 7168 x 16384 >= 1.4x.
#  4. ncu (N 4096, K 7168, T 4096, FP32 dW): the staggered default's tensor pipe >= 60 % and
#     fewer elapsed cycles than cuBLASLt's kernel (session 8: ours 1.17x cuBLASLt's cycles).
set -u
source scripts/gpu_call.sh .gpu/c.txz .gpu/py.txz || exit 1
C7=${C:0:7}
say "GPU tests"
BIN=$B STEPS=tests ONLY='^(test_chapter_08_wgrad)$' TIMEOUT=200 \
  timeout 230 bash scripts/gpu_loop.sh "$OUT/gl" > /dev/null 2>&1; echo "gpu_loop rc=$?" >> "$L"
tail -4 "$OUT/gl/summary.txt" >> "$L" 2>/dev/null
grep -E "staggered|elements differ|FAILED|passed|failed" "$OUT/gl/gpu_loop.log" | tail -12 >> "$L"
if ! grep -q "^1 passed, 0 failed" "$OUT/gl/summary.txt"; then
  say "tests did not pass: stopping"; tar cJf "$OUT/c.txz" -C "$OUT" gl; rm -rf "$OUT/gl"; cat "$L"; exit 1
fi
KB="128x192_s5_c1x1_promoted_tma_b1 128x192_s5_c1x1_promoted_tma_b1_loop0 128x256_s4_c1x1_promoted_tma_b1 128x256_s4_c1x1_promoted_tma_b1_loop0"
KF="128x192_s5_c1x1_promoted_f32_tma_b1 128x192_s5_c1x1_promoted_f32_tma_b1_loop0 128x256_s4_c1x1_promoted_f32_tma_b1 128x256_s4_c1x1_promoted_f32_tma_b1_loop0 128x128_s6_c1x1_promoted_f32_tma_b1 128x128_s6_c1x1_promoted_f32_tma_b1_loop0"
# The six Fp8Linear shapes as one group of 4096 tokens (dW [N, K]), as sessions 8 and 9 ran them.
LIN=""
for nk in 2112:7168 24576:1536 32768:512 7168:16384 4096:7168 7168:2048; do
  LIN="$LIN --case=skew_lin_n${nk%%:*}_k${nk##*:}:4096:$nk"
done
ALL=$(echo $KB $KF | tr ' ' ',')
REV=$(echo $KB $KF | tr ' ' '\n' | tac | paste -sd,)
say "sweep 1"
BIN=$B STEPS=ch08 CH08_ARGS="--kernels=$ALL --only=skew_lin|skew_g32_t65536$LIN" TIMEOUT=200 \
  timeout 210 bash scripts/gpu_loop.sh "$OUT/s1" > /dev/null 2>&1; echo "rc=$?" >> "$L"
cp "$OUT/s1/json/ch08_grouped_moe.json" "$OUT/sweep_${C7}_1.json" 2>/dev/null
python3 - "$OUT/sweep_${C7}_1.json" >> "$L" 2>&1 <<'PY'
import json, sys, collections
d = json.load(open(sys.argv[1]))
t = collections.defaultdict(dict)
for b in d["benchmarks"]:
    impl, case = b["name"].split("/")[:2]
    if impl.startswith("ch08_wgrad:"): t[case][impl[11:]] = b["TFLOPS"]
for case, row in t.items():
    for k, v in row.items():
        if k.endswith("_loop0"): continue
        base = row.get(k + "_loop0")
        print(f"{case:34s} {k:40s} {v:7.1f}  loop0 {base if base is None else round(base, 1)}  "
              f"ratio {v / base if base else float('nan'):.3f}")
PY
say "PyTorch bench"
timeout 200 bash chapters/10_production/python/gpu_run.sh /tmp/py "$OUT/torch" bench \
  > "$OUT/gpu_run.log" 2>&1; echo "gpu_run rc=$?" >> "$L"
grep -E "^linear|wgrad" "$OUT/torch/bench_torch.log" | head -40 >> "$L" 2>/dev/null
export PYTHONPATH=/tmp/py
mkdir -p "$OUT/w"
say "wgrad vs cuBLASLt: time, then ncu"
W="python3 bench/wgrad_vs_cublaslt.py --n 4096 --k 7168 --t 4096 --kernels 128x256_s4_c1x1_promoted_f32_tma_b1_loop0"
timeout 90 $W --list-kernels > "$OUT/w/time_wgrad_vs_cublaslt.txt" 2>&1; echo "rc=$?" >> "$L"
grep -v "launches" "$OUT/w/time_wgrad_vs_cublaslt.txt" >> "$L"
NCU=$(command -v ncu || ls /usr/local/cuda*/bin/ncu 2>/dev/null | head -1)
for side in "ours regex:KGrouped" "ours:128x256_s4_c1x1_promoted_f32_tma_b1_loop0 regex:KGrouped" "cublaslt regex:nvjet|xmma|cutlass|sm90_"; do
  set -- $side
  tag=${1//[:]/_}
  [ "$(seconds_left 560)" -gt 40 ] || { say "no time for ncu $1"; continue; }
  say "ncu $1"
  timeout 100 "$NCU" --clock-control none --kernel-name-base demangled --kernel-name "$2" \
    --launch-skip 1 --launch-count 1 --set full --import-source no -o "$OUT/w/ncu_$tag" -f \
    $W --only "$1" --reps 2 > "$OUT/w/ncu_$tag.log" 2>&1; echo "rc=$?" >> "$L"
  "$NCU" -i "$OUT/w/ncu_$tag.ncu-rep" --page details > "$OUT/w/ncu_${tag}_details.txt" 2>&1
  "$NCU" -i "$OUT/w/ncu_$tag.ncu-rep" --page source --csv --print-source sass \
    > "$OUT/w/ncu_${tag}_source.csv" 2>&1
  grep -E "Duration|Elapsed Cycles|SM Frequency|Compute \(SM\) Throughput|Issued Warp Per|Issue Slots Busy|No Eligible|Executed Instructions  " \
    "$OUT/w/ncu_${tag}_details.txt" | head -12 >> "$L"
done
rm -f "$OUT/w/"*.ncu-rep
if [ "$(seconds_left 560)" -gt 60 ] && command -v compute-sanitizer > /dev/null; then
  for tool in synccheck racecheck; do
    say "compute-sanitizer $tool"
    timeout 60 compute-sanitizer --tool $tool --error-exitcode 1 "$B/ch08_grouped_moe" --no-bench --sizes=208 \
      --kernels=128x256_s4_c1x1_promoted_f32_tma_b1,128x192_s5_c1x1_promoted_tma_b1 \
      > "$OUT/w/san_$tool.log" 2>&1; echo "$tool rc=$?" >> "$L"
    tail -2 "$OUT/w/san_$tool.log" >> "$L"
  done
fi
tar cJf "$OUT/c.txz" -C "$OUT" torch gpu_run.log gl s1 w && rm -rf "$OUT/torch" "$OUT/gpu_run.log" "$OUT/gl" "$OUT/s1" "$OUT/w"
say end
cat "$L"
