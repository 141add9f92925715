#!/usr/bin/env bash
# Session 27, call 3: binaries of the quantiser variants commit (.gpu/c.txz; bin/commit.txt names it).
#  1. quantize_test_gpu: every variant of both duals byte for byte against the CPU, each with its
#     own grid and with at most 3 CTAs (every CTA walks several tiles: the cp.async kernels'
#     next-tile copies, never run by call 1's tests).
#  2. quantize_bench on the duals' variants, twice. Predictions (% of the copy):
#     128 x 128: lean_async 91.5-92 (as call 1's lean_prefetch); lean_async_persistent 90-94
#     (real next-block copies in flight, but 3 CTAs per SM of a ~4 GB/s walk instead of a
#     stream of fresh CTAs; no data on which wins);
#     1 x 128 dual: v2_lean 83-85.5 (three earlier runs), v5_async 88-92 (the 128 x 128 dual's
#     lean -> lean_async step was +12 points; this kernel starts higher and does twice the
#     arithmetic, so less).
#  3. ncu of the 1 x 128 dual v2_lean and v5_async at 8192 x 7168, and of lean_async_persistent.
set -u
source scripts/gpu_call.sh .gpu/c.txz || exit 1
C7=${C:0:7}
mkdir -p "$OUT/q"
say "GPU tests"
BIN=$B STEPS=tests ONLY='^(quantize_test_gpu)$' TIMEOUT=150 \
  timeout 200 bash scripts/gpu_loop.sh "$OUT/gl" > /dev/null 2>&1; echo "gpu_loop rc=$?" >> "$L"
cp "$OUT/gl/summary.txt" "$OUT/gpu_tests_$C7.txt" 2>/dev/null
tail -4 "$OUT/gl/summary.txt" >> "$L" 2>/dev/null
for r in 1 2; do
  say "quantize_bench duals run $r"
  timeout 90 "$B/quantize_bench" --benchmark_filter='quantize_(128x128|1x128)_dual' \
    --benchmark_out="$OUT/q/quantize_bench_duals_${C7}_$r.json" > "$OUT/q/quantize_bench_$r.log" 2>&1
  echo "rc=$?" >> "$L"; grep -A40 "^quantiser" "$OUT/q/quantize_bench_$r.log" >> "$L"
done
NCU=$(command -v ncu || ls /usr/local/cuda*/bin/ncu 2>/dev/null | head -1)
for f in "quantize_1x128_dual_v2_lean/8192x7168 quantize_1x128_lean_kernel" \
         "quantize_1x128_dual_v5_async/8192x7168 quantize_1x128_lean_kernel" \
         "quantize_128x128_dual_lean_async_persistent/7168x16384 quantize_128x128_dual_kernel"; do
  set -- $f
  tag=$(echo "$1" | tr '/' '_')
  say "ncu $1"
  timeout 60 "$NCU" --clock-control none --launch-skip 2 --launch-count 1 \
    --kernel-name "regex:$2" --section SpeedOfLight --section MemoryWorkloadAnalysis \
    --section WarpStateStats --section Occupancy --section LaunchStats \
    --log-file "$OUT/q/ncu_$tag.txt" "$B/quantize_bench" --benchmark_filter="^$1" > /dev/null 2>&1
  echo "rc=$?" >> "$L"
  grep -E "DRAM Throughput|Duration|Registers Per|Achieved Occupancy|Grid Size|Dynamic Shared" "$OUT/q/ncu_$tag.txt" >> "$L"
done
tar cJf "$OUT/q.txz" -C "$OUT" q gl && rm -rf "$OUT/q/"*.log "$OUT/gl"
say end
cat "$L"
