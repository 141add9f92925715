#!/usr/bin/env bash
# Session 53's second plan (pack with session53_plan/pack.sh at 0e3075f; carry .gpu/t53.txz):
# requantize_mx_kernel bounded to four CTAs per SM (64 registers; it had 78 and three CTAs, 65.8 %
# of DRAM peak at 8192^3 on the H100).
#   1. test_mx_gpu and test_chapter_09_hopper (the kernel's bytes must not change). Prediction:
#      "2 passed".
#   2. ncu of the re-quantisation at 8192^3. Prediction: 75-80 % of DRAM peak (from 65.8 %),
#      achieved occupancy ~47 %.
#   3. chapter 9's executable as in call1.sh. Prediction (on an H100): the re-quantisation
#      ~97 us at 8192^3 (was 115), the path 0.88-0.90x chapter 7 there (was 0.877x), 0.74-0.76x at
#      4096 x 2112 x 7168 (was 0.721x).
set -u
source scripts/gpu_call.sh .gpu/t53.txz || exit 1
say "test_mx_gpu, test_chapter_09_hopper"
packed_tests_step e '^(test_mx_gpu|test_chapter_09_hopper)$' 150
say "ncu requantize_mx_kernel 8192^3"
ncu_step "$OUT/n" rq 'requantize_mx_kernel' 'SpeedOfLight MemoryWorkloadAnalysis Occupancy LaunchStats' \
  'DRAM Throughput|Memory Throughput|Duration|Achieved Occupancy|Theoretical Occupancy|Registers|Block Limit' \
  "$B/ch09_hopper_mxfp8" --shapes=8192x8192x8192 --benchmark_filter=requant
tar cJf "$OUT/n.txz" -C "$OUT" n && rm -rf "$OUT/n"
say "ch09_hopper_mxfp8"
timeout 150 "$B/ch09_hopper_mxfp8" --gpu_delay_us=50 --json="$OUT/ch09_hopper_requant_${C:0:7}.json" \
  > "$OUT/ch09_bench.log" 2>&1
echo "ch09 bench rc=$?" >> "$L"
grep -E "^ch09_hopper_mx_requant|^ch09_requant_gemm|^ch07_block|VALIDATION|FAIL" "$OUT/ch09_bench.log" | tail -24 >> "$L"
xz -6 -f "$OUT/ch09_bench.log"
rm -f "$OUT"/gpu_tests_*.txt
say end
cat "$L"
