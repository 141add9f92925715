#!/usr/bin/env bash
# Session 54's third call (carry .gpu/t54.txz, packed at 20a486b), any Hopper GPU:
#  - racecheck on the large pair (call 2's filter held a comma, which Catch2 reads as "or": no
#    test ran), every requant_tuning variant on capped grids. Prediction: 0 hazards;
#  - test_chapter_09_hopper and test_library_gpu at 20a486b (v1 refactored into finish_tile,
#    64 registers as before). Prediction: pass;
#  - ncu of v1_tiles and v2_pipe2 at 8192 x 8192 (call 2: 86.0 % and 83.7 % of the copy), to see
#    why the pipeline lost: DRAM throughput, achieved occupancy, stall reasons;
#  - on an H200 only: chapter 9's bench ($OUT/requant.json, session 53's plan, call3.sh).
set -u
source scripts/gpu_call.sh .gpu/t54.txz || exit 1
SAN=$(command -v compute-sanitizer || ls /usr/local/cuda*/bin/compute-sanitizer 2>/dev/null | head -1)
say "racecheck, the large pair"
timeout 150 "$SAN" --tool racecheck --error-exitcode 3 "$B/test_mx_gpu" \
  "requantize_mx: a large operand pair*" > "$OUT/san_racecheck.log" 2>&1
echo "racecheck rc=$?" >> "$L"; tail -3 "$OUT/san_racecheck.log" >> "$L"
say "test_chapter_09_hopper, test_library_gpu"
packed_tests_step b '^(test_chapter_09_hopper|test_library_gpu)$' 200
say "ncu, v1_tiles and v2_pipe2 at 8192 x 8192"
SECTIONS="SpeedOfLight MemoryWorkloadAnalysis Occupancy LaunchStats WarpStateStats SchedulerStats"
PAT="Duration|DRAM Throughput|Memory Throughput|Achieved Occupancy|Registers Per|Stall|Issued Warp|No Eligible|Waves Per SM"
ncu_step "$OUT/n" v1 'requantize_mx_kernel' "$SECTIONS" "$PAT" "$B/quantize_bench" \
  --benchmark_filter='requantize_mx_v1_tiles/8192'
ncu_step "$OUT/n" v2 'requantize_mx_pipe_kernel' "$SECTIONS" "$PAT" "$B/quantize_bench" \
  --benchmark_filter='requantize_mx_v2_pipe2/8192'
tar cJf "$OUT/n.txz" -C "$OUT" n && rm -rf "$OUT/n"
rm -f "$OUT"/gpu_tests_*.txt
if ! nvidia-smi --query-gpu=name --format=csv,noheader | grep -q H200; then
  say "not an H200: stopping"; cat "$L"; exit 0
fi
say "ch09_hopper_mxfp8"
timeout 150 "$B/ch09_hopper_mxfp8" --gpu_delay_us=50 --json="$OUT/requant.json" > "$OUT/ch09_bench.log" 2>&1
echo "ch09 bench rc=$?" >> "$L"
grep -E "^ch09_hopper_mx_requant|^ch09_requant_gemm|^ch07_block|VALIDATION|FAIL" "$OUT/ch09_bench.log" | tail -24 >> "$L"
xz -6 -f "$OUT/ch09_bench.log"
say end
cat "$L"
