#!/usr/bin/env bash
# Session 36, call 1: binaries .gpu/c.txz of the commit in bin/commit.txt.
#  1. GPU tests at this commit: test_chapter_08, test_chapter_08_e2e, test_library_gpu,
#     test_library_threads_gpu (79ef248's host-only review refactor of grouped_gemm.cpp and
#     library_bench was not run on a GPU in session 35) and quantize_test_gpu (every 1 x 128
#     variant, the new v7_pf050/pf100/pf200 included, byte for byte against the CPU, own grid and
#     3 CTAs). Predicted: "5 passed, 0 failed, 0 skipped".
#  2. quantize_bench on the 1 x 128 dual, twice. v7 = v6_interior (the dual's default) where each
#     CTA first asks L2 (one cp.async.bulk.prefetch) for a slice of the x rows that CTAs half, one
#     or two resident grids (396 CTAs) later will read. Session 28: with v6's 12 % fewer
#     instructions, 30 % of the warps' stall samples wait for the loads (21 % before) and DRAM
#     runs at ~66 % of peak: a CTA's lifetime (~7.6 us at 8192 x 7168) includes a DRAM load
#     latency that a prefetch a wave ahead turns into an L2 hit. Predictions, written before the
#     run: v7_pf100 +2 to +5 % over v6 in the same run at 8192 x 7168 (3420 -> 3490-3590 GB/s,
#     86-89 % of the copy), 4096 x 16384 +2-4 %; pf050 close to pf100; pf200 at most pf100
#     (26 MB of prefetched rows in L2 beside the outputs' stream). Single kernel, tokens,
#     k-major and pow2 untouched (v7 is not their default).
#  3. ncu (SpeedOfLight + MemoryWorkloadAnalysis) of v6 and v7_pf100 at 8192 x 7168: L2 hit rate
#     of the loads ~0 % -> > 50 %, DRAM throughput up by the time's ratio.
#  4. fp8gemm_library_bench --benchmark_filter=grouped (79ef248's refactored pairs run).
set -u
source scripts/gpu_call.sh .gpu/c.txz || exit 1
C7=${C:0:7}
mkdir -p "$OUT/q"
say "GPU tests"
BIN=$B STEPS=tests ONLY='^(test_chapter_08|test_chapter_08_e2e|test_library_gpu|test_library_threads_gpu|quantize_test_gpu)$' TIMEOUT=300 \
  timeout 330 bash scripts/gpu_loop.sh "$OUT/gl" > /dev/null 2>&1; echo "gpu_loop rc=$?" >> "$L"
cp "$OUT/gl/summary.txt" "$OUT/gpu_tests_$C7.txt" 2>/dev/null
grep -E "PASS|FAIL|SKIP" "$OUT/gl/summary.txt" >> "$L" 2>/dev/null
tail -1 "$OUT/gl/summary.txt" >> "$L" 2>/dev/null
for r in 1 2; do
  say "quantize_bench 1x128 dual run $r"
  timeout 100 "$B/quantize_bench" --benchmark_filter='quantize_1x128_dual' \
    --benchmark_out="$OUT/q/quantize_bench_dual_${C7}_$r.json" > "$OUT/q/quantize_bench_$r.log" 2>&1
  echo "rc=$?" >> "$L"; grep -A40 "^quantiser" "$OUT/q/quantize_bench_$r.log" >> "$L"
done
NCU=$(command -v ncu || ls /usr/local/cuda*/bin/ncu 2>/dev/null | head -1)
for v in v6_interior v7_pf100; do
  say "ncu dual $v"
  timeout 60 "$NCU" --clock-control none --launch-skip 2 --launch-count 1 \
    --kernel-name "regex:quantize_1x128_lean_kernel" --section SpeedOfLight --section MemoryWorkloadAnalysis \
    --section MemoryWorkloadAnalysis_Tables -o "$OUT/q/ncu_$v" -f "$B/quantize_bench" \
    --benchmark_filter="^quantize_1x128_dual_$v/8192x7168" > "$OUT/q/ncu_$v.log" 2>&1
  echo "rc=$?" >> "$L"
  "$NCU" -i "$OUT/q/ncu_$v.ncu-rep" --page details > "$OUT/q/ncu_${v}_details.txt" 2>&1
  grep -E "DRAM Throughput|Duration|L2 Hit Rate|L1/TEX Hit Rate|Memory Throughput" "$OUT/q/ncu_${v}_details.txt" >> "$L"
done
rm -f "$OUT/q/"*.ncu-rep
say "library_bench grouped"
timeout 90 stdbuf -oL "$B/fp8gemm_library_bench" --shapes=64x7168x2048 --no-rule \
  --benchmark_filter='grouped|empty' --json="$OUT/q/library_bench_grouped.json" \
  > "$OUT/q/library_bench_grouped.log" 2>&1; echo "rc=$?" >> "$L"
grep -E "grouped|empty|identical|DIFFERS" "$OUT/q/library_bench_grouped.log" | grep -v "^host_\|^pair:" | tail -30 >> "$L"
tar cJf "$OUT/q.txz" -C "$OUT" q gl && rm -rf "$OUT/q" "$OUT/gl"
say end
cat "$L"
