#!/usr/bin/env bash
# Session 35, call 4: binaries .gpu/c.txz of 0e690b7 (fp8gemm_library_bench).
# The counter schedule's cost in the library, isolated: fp8gemm_library_bench's new pair
# grouped_counter (GroupedPlan and chapter 8's plan both on the counter kernel, 8 groups of 512
# rows, N = K = 2048, each run given its side's counter) beside the existing grouped pairs (the
# static defaults, run(stream)), only those and the empty launch timed (--benchmark_filter).
# Predictions (before the run): (a) library / chapter on grouped_counter within 1.00 +- 0.01 (the
# same kernel; outputs bit for bit); (b) host time per run(stream, tile_counter) 0.1-0.5 us above
# run(stream) on the masked grouped pair (the ~1 KB parameter block copied per run, the counter
# written into the copy), both within the 5 us per run() unless the empty launch itself
# is near 5 us.
set -u
source scripts/gpu_call.sh .gpu/c.txz || exit 1
say "library bench, grouped entries"
timeout 400 stdbuf -oL "$B/fp8gemm_library_bench" --shapes=64x7168x2048 --no-rule \
  --benchmark_filter='grouped|empty' --json="$OUT/library_bench_grouped.json" \
  > "$OUT/library_bench_grouped.log" 2>&1; echo "rc=$?" >> "$L"
grep -E "grouped|empty|identical|DIFFERS" "$OUT/library_bench_grouped.log" | grep -v "^host_\|^pair:" | tail -30 >> "$L"
say end
cat "$L"
