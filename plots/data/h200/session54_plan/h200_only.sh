#!/usr/bin/env bash
# Session 54: on an H200 only (any other card: stop at once, ~30 s of device time). Carry
# .gpu/t54.txz (session54_plan/pack.sh, 6bb8131). Chapter 9's bench, the file plots/plot.py renders
# into chapter 9's README (plots/data/h200/ch09/requant.json), then the re-quantiser's variants
# against a copy (quantize_bench), then the GPU tests of the pack. Predictions (H200, from the
# H100's same-run ratios and the H200's 4.8 TB/s against 3.35): the re-quantising path 0.89-0.92x
# chapter 7 at 8192^3, 0.84-0.87x geomean at M = 4096; weights once 0.94-0.96x, 0.91-0.93x; v1
# again the fastest variant; the tests pass. About 330 s.
set -u
if ! nvidia-smi --query-gpu=name --format=csv,noheader | grep -q H200; then
  echo "not an H200: $(nvidia-smi --query-gpu=name --format=csv,noheader)"; exit 0
fi
source scripts/gpu_call.sh .gpu/t54.txz || exit 1
say "ch09_hopper_mxfp8"
timeout 200 "$B/ch09_hopper_mxfp8" --gpu_delay_us=50 --json="$OUT/requant.json" > "$OUT/ch09_bench.log" 2>&1
echo "ch09 bench rc=$?" >> "$L"
grep -E "VALIDATION|FAIL" "$OUT/ch09_bench.log" | head -5 >> "$L"
tail -45 "$OUT/ch09_bench.log" >> "$L"
xz -6 -f "$OUT/ch09_bench.log"
say "quantize_bench, the re-quantiser"
timeout 60 "$B/quantize_bench" --benchmark_filter='requantize' \
  --benchmark_out="$OUT/quantize_bench_requant.json" > "$OUT/qb.log" 2>&1
echo "quantize_bench rc=$?" >> "$L"; grep -E "^requantize" "$OUT/qb.log" | tail -15 >> "$L"; rm -f "$OUT/qb.log"
say "test_mx_gpu, test_chapter_09_hopper, test_library_gpu"
packed_tests_step a '^(test_mx_gpu|test_chapter_09_hopper|test_library_gpu)$' 200
rm -f "$OUT"/gpu_tests_*.txt
say end
cat "$L"
