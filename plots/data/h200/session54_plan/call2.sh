#!/usr/bin/env bash
# Session 54's second call (carry .gpu/t54.txz, session54_plan/pack.sh at the commit to run), any
# Hopper GPU: the re-quantiser's kernel variants (requant_tuning; v2-v4 new, persistent CTAs fed
# by cp.async) byte for byte against the CPU rule, under memcheck and racecheck, then timed
# against a copy of the same bytes (quantize_bench). Predicted % of the copy: v1 78-82, v2_pipe2
# 86-91, v3_pipe3 86-91, v4_pipe4 84-90. About 250 s.
set -u
source scripts/gpu_call.sh .gpu/t54.txz || exit 1
SAN=$(command -v compute-sanitizer || ls /usr/local/cuda*/bin/compute-sanitizer 2>/dev/null | head -1)
say "test_mx_gpu"
packed_tests_step a '^test_mx_gpu$' 100
say "memcheck, the re-quantiser's cases"
timeout 100 "$SAN" --tool memcheck --error-exitcode 3 "$B/test_mx_gpu" "requantize_mx*" \
  > "$OUT/san_memcheck.log" 2>&1
echo "memcheck rc=$?" >> "$L"; tail -3 "$OUT/san_memcheck.log" >> "$L"
say "racecheck, the large pair (every variant, capped grids)"
timeout 150 "$SAN" --tool racecheck --error-exitcode 3 "$B/test_mx_gpu" \
  "requantize_mx: a large operand pair, deterministic" > "$OUT/san_racecheck.log" 2>&1
echo "racecheck rc=$?" >> "$L"; tail -3 "$OUT/san_racecheck.log" >> "$L"
say "quantize_bench, the re-quantiser"
timeout 150 "$B/quantize_bench" --benchmark_filter='requantize' \
  --benchmark_out="$OUT/quantize_bench_requant.json" > "$OUT/quantize_bench_requant.log" 2>&1
echo "quantize_bench rc=$?" >> "$L"
grep -E "^requantize" "$OUT/quantize_bench_requant.log" | tail -15 >> "$L"
rm -f "$OUT"/gpu_tests_*.txt
say end
cat "$L"
