#!/usr/bin/env bash
# Session 28, call 2 (binaries .gpu/b.txz of the commit in bin/commit.txt): tuning_1x128
# v6_interior, measured beside v2_lean (the public functions' kernel, unchanged).
#  1. GPU tests: quantize_test_gpu (every 1 x 128 variant, v6 included, byte for byte against
#     the CPU on every case, with its own grid and with 3 CTAs), test_library_gpu.
#  2. quantize_bench on every 1 x 128 entry, twice. Predictions, written before the run: call 1's
#     ncu source view put v2_lean's dual at 1584 SASS instructions per warp and tile on the common
#     path (all executed once: the code is straight-line), issue slots 69% busy, 72% of the warps'
#     stall samples on issued instructions and 22% on the loads; v6_interior's common path is
#     1435 (a walk of its SASS: the bound tests, the 64-bit row addressing and the padding tests of
#     whole tiles gone). If the dual is bound by its instruction stream, v6's dual at 8192 x 7168
#     is 3420-3500 GB/s against v2's 3346-3361 (+2-4%), 4096 x 16384 likewise; the single
#     kernel (93% of the copy, memory-bound) within 1% of v2; k-major and pow2 as their v2.
#     v6 with 1792 CTAs (two tiles each, the ~170-instruction set-up paid once for two): +0-2%
#     over v6.
#  3. ncu (source view) of the v6 dual at 8192 x 7168: 1435 instructions per warp, issue ~0.63.
set -u
source scripts/gpu_call.sh .gpu/b.txz || exit 1
C7=${C:0:7}
mkdir -p "$OUT/q"
say "GPU tests"
BIN=$B STEPS=tests ONLY='^(quantize_test_gpu|test_library_gpu)$' TIMEOUT=150 \
  timeout 200 bash scripts/gpu_loop.sh "$OUT/gl" > /dev/null 2>&1; echo "gpu_loop rc=$?" >> "$L"
cp "$OUT/gl/summary.txt" "$OUT/gpu_tests_$C7.txt" 2>/dev/null
tail -4 "$OUT/gl/summary.txt" >> "$L" 2>/dev/null
for r in 1 2; do
  say "quantize_bench 1x128 run $r"
  timeout 120 "$B/quantize_bench" --benchmark_filter='quantize_1x128' \
    --benchmark_out="$OUT/q/quantize_bench_1x128_${C7}_$r.json" > "$OUT/q/quantize_bench_$r.log" 2>&1
  echo "rc=$?" >> "$L"; grep -A60 "^quantiser" "$OUT/q/quantize_bench_$r.log" | grep -v "tokens" >> "$L"
done
NCU=$(command -v ncu || ls /usr/local/cuda*/bin/ncu 2>/dev/null | head -1)
say "ncu v6 dual"
timeout 120 "$NCU" --clock-control none --launch-skip 2 --launch-count 1 \
  --kernel-name "regex:quantize_1x128_lean_kernel" --set full --import-source no \
  -o "$OUT/q/ncu_dual1x128_v6" -f "$B/quantize_bench" \
  --benchmark_filter="^quantize_1x128_dual_v6_interior/8192x7168" > "$OUT/q/ncu_v6.log" 2>&1
echo "rc=$?" >> "$L"
"$NCU" -i "$OUT/q/ncu_dual1x128_v6.ncu-rep" --page details > "$OUT/q/ncu_dual1x128_v6_details.txt" 2>&1
"$NCU" -i "$OUT/q/ncu_dual1x128_v6.ncu-rep" --page source --csv --print-source sass \
  > "$OUT/q/ncu_dual1x128_v6_source.csv" 2>&1
grep -E "DRAM Throughput|Duration|L2 Cache Throughput|Compute \(SM\)|Issued Warp Per|Warp Cycles Per Issued" \
  "$OUT/q/ncu_dual1x128_v6_details.txt" >> "$L"
rm -f "$OUT/q/"*.ncu-rep
tar cJf "$OUT/q.txz" -C "$OUT" q gl && rm -rf "$OUT/q" "$OUT/gl"
say end
cat "$L"
