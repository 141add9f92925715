#!/usr/bin/env bash
# Session 56's second call (carry .gpu/t56b.txz .gpu/py56b.txz from session56_plan/pack2.sh), any
# Hopper GPU, about 330 s:
#  1. The plans' device check (run() and rebind() refuse another current device; every engine
#     plan records its device): the GPU tests of every plan's run() path, with the new case
#     "library devices: every kind of plan runs with the device it was built on current"
#     (converting, split-K, checking modes, counter schedule, chapter 9's three paths). The
#     [other-device] refusal itself needs two GPUs (no such machine is lent this session):
#     test_library_threads_gpu prints "only 1 GPU: nothing to check" there. Predicted: pass.
#  2. The PyTorch tests with the weight cache's snapshot entry (nn.py) and the new CPU test
#     test_weight_cache_threads. Predicted: "128 passed, 2 skipped".
#  3. run()'s host time, before and after the device check (one cudaGetDevice more per run()):
#     fp8gemm_library_bench's host part, old / new / new / old. Predicted: +0.00 to +0.05 us per
#     run() (a thread-local read), inside the runs' own spread (~0.1-0.3 us).
set -u
source scripts/gpu_call.sh .gpu/t56b.txz .gpu/py56b.txz || exit 1
say "GPU tests"
packed_tests_step a '^(test_library_gpu|test_library_threads_gpu|test_reliability|test_reliability_threads|test_chapter_09_hopper|test_chapter_08_wgrad|test_chapter_08_e2e)$' 330
rm -f "$OUT"/gpu_tests_*.txt
say "PyTorch tests"
torch_tests_step 150
mkdir -p "$OUT/host"
run=0
for side in old new new old; do
  run=$((run + 1))
  x=$B/fp8gemm_library_bench; [ "$side" = old ] && x=$B/fp8gemm_library_bench_old
  say "library bench host part, run $run ($side)"
  timeout 60 "$x" --shapes=4096x7168x2048 --no-rule --benchmark_filter='host_' \
    --json="$OUT/host/host_${run}_$side.json" > "$OUT/host/host_${run}_$side.log" 2>&1
  echo "bench rc=$?" >> "$L"
  grep -E "host" "$OUT/host/host_${run}_$side.log" | grep -E "us|µs" | tail -12 >> "$L"
done
tar cJf "$OUT/host.txz" -C "$OUT" host && rm -rf "$OUT/host"
say end
cat "$L"
