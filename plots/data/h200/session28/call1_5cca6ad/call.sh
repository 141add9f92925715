#!/usr/bin/env bash
# Session 28, call 1 (binaries .gpu/a.txz and the PyTorch package .gpu/py.txz, both of the commit
# in bin/commit.txt: the launchers' shared prepare(), no kernel changed).
#  1. GPU tests: quantize_test_gpu, test_library_gpu; then the PyTorch tests (not run since
#     d1bd48b). Predicted: all pass (host-side change only).
#  2. quantize_bench on the 1 x 128 dual, twice. Predictions (% of the copy), written before the
#     run: v2_lean 8192 x 7168 83-85.5 as before. (a) If the partial last wave costs, v2_lean at
#     M = 7936 / 8448 / 8704 (8.77 / 9.33 / 9.62 waves) reads higher than at 8192 (9.05) by 1-3
#     points; if it does not, all four within 1 point. (b) v5_async with capped grids (2, 4,
#     9-10 tiles per CTA, next tile in flight): 1792 CTAs ~ v5 + 0-3, 896 about the same, 392
#     lower (session 27's walking 128 x 128 variant lost 7 points).
#  3. ncu --set full with source counters (SASS per instruction: executed counts, stall samples)
#     of the 1 x 128 dual v2_lean at 8192 x 7168 and the 128 x 128 dual lean_async at
#     7168 x 16384: where the ~1570 instructions per thread and tile that session 27's ncu
#     implies for the 1 x 128 dual go (counted ~1075 from the source).
set -u
source scripts/gpu_call.sh .gpu/a.txz .gpu/py.txz || exit 1
C7=${C:0:7}
mkdir -p "$OUT/q"
say "GPU tests"
BIN=$B STEPS=tests ONLY='^(quantize_test_gpu|test_library_gpu)$' TIMEOUT=150 \
  timeout 200 bash scripts/gpu_loop.sh "$OUT/gl" > /dev/null 2>&1; echo "gpu_loop rc=$?" >> "$L"
cp "$OUT/gl/summary.txt" "$OUT/gpu_tests_$C7.txt" 2>/dev/null
tail -4 "$OUT/gl/summary.txt" >> "$L" 2>/dev/null
for r in 1 2; do
  say "quantize_bench 1x128 dual run $r"
  timeout 90 "$B/quantize_bench" --benchmark_filter='quantize_1x128_dual' \
    --benchmark_out="$OUT/q/quantize_bench_dual_${C7}_$r.json" > "$OUT/q/quantize_bench_$r.log" 2>&1
  echo "rc=$?" >> "$L"; grep -A40 "^quantiser" "$OUT/q/quantize_bench_$r.log" >> "$L"
done
NCU=$(command -v ncu || ls /usr/local/cuda*/bin/ncu 2>/dev/null | head -1)
for f in "quantize_1x128_dual_v2_lean/8192x7168 quantize_1x128_lean_kernel dual1x128" \
         "quantize_128x128_dual_lean_async/7168x16384 quantize_128x128_dual_kernel dual128"; do
  set -- $f
  say "ncu $1"
  timeout 120 "$NCU" --clock-control none --launch-skip 2 --launch-count 1 \
    --kernel-name "regex:$2" --set full --import-source no -o "$OUT/q/ncu_$3" -f \
    "$B/quantize_bench" --benchmark_filter="^$1" > "$OUT/q/ncu_$3.log" 2>&1
  echo "rc=$?" >> "$L"
  "$NCU" -i "$OUT/q/ncu_$3.ncu-rep" --page details > "$OUT/q/ncu_$3_details.txt" 2>&1
  "$NCU" -i "$OUT/q/ncu_$3.ncu-rep" --page source --csv --print-source sass \
    > "$OUT/q/ncu_$3_source.csv" 2>&1
  grep -E "DRAM Throughput|Duration|L2 Cache Throughput|Compute \(SM\)|Issued Warp Per|Executed Ipc A|Warp Cycles Per Issued" \
    "$OUT/q/ncu_$3_details.txt" >> "$L"
  wc -l "$OUT/q/ncu_$3_source.csv" >> "$L"
done
say "PyTorch tests"
timeout 330 bash chapters/10_production/python/gpu_run.sh /tmp/py "$OUT/torch" tests \
  > "$OUT/gpu_run.log" 2>&1; echo "gpu_run rc=$?" >> "$L"
tail -3 "$OUT/torch/tests.log" >> "$L" 2>/dev/null
tar cJf "$OUT/q.txz" -C "$OUT" q gl torch gpu_run.log && rm -rf "$OUT/q" "$OUT/gl" "$OUT/torch" "$OUT/gpu_run.log"
say end
cat "$L"
