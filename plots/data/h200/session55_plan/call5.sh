#!/usr/bin/env bash
# Session 55's fifth call (carry .gpu/t55d.txz, packed at the commit to run as below), any Hopper
# GPU: the GPU tests that read chapter 8's counter kernel or chapter 9's promoting kernels and did
# not run at the final code in calls 2-4 (test_chapter_08_e2e, test_library_threads_gpu,
# test_reliability, test_reliability_threads). Predicted: pass. On an H200, then, chapter 9's
# bench (the README's requant block, session 55's plan item 1). About 300 s on an H100.
#   cmake --build build -j2 --target test_chapter_08_e2e test_library_threads_gpu \
#     test_reliability test_reliability_threads ch09_hopper_mxfp8
#   (cd build && tar cf - bin/commit.txt bin/gpu_tests.txt bin/libbenchmark.so.1.7.1 \
#      bin/libbenchmark.so.1debian bin/test_chapter_08_e2e bin/test_library_threads_gpu \
#      bin/test_reliability bin/test_reliability_threads bin/ch09_hopper_mxfp8 \
#      | xz -9 -T2 > ../.gpu/t55d.txz)
set -u
source scripts/gpu_call.sh .gpu/t55d.txz || exit 1
say "test_chapter_08_e2e, test_library_threads_gpu, test_reliability, test_reliability_threads"
packed_tests_step a '^(test_chapter_08_e2e|test_library_threads_gpu|test_reliability|test_reliability_threads)$' 330
rm -f "$OUT"/gpu_tests_*.txt
if nvidia-smi --query-gpu=name --format=csv,noheader | grep -q H200; then
  say "ch09_hopper_mxfp8 (H200)"
  timeout 200 "$B/ch09_hopper_mxfp8" --gpu_delay_us=50 --json="$OUT/requant.json" > "$OUT/ch09_bench.log" 2>&1
  echo "ch09 bench rc=$?" >> "$L"
  grep -E "^(ch09_hopper_mx_requant|ch09_requant_weights_once|ch07_block_scaled) " "$OUT/ch09_bench.log" >> "$L"
  xz -6 -f "$OUT/ch09_bench.log"
else
  say "not an H200: $(nvidia-smi --query-gpu=name --format=csv,noheader)"
fi
say end
cat "$L"
