#!/usr/bin/env bash
# Session 36, call 2: binaries .gpu/c.txz of the commit in bin/commit.txt.
# Call 1 refuted the L2 prefetch (v7: -2 %, -13 %, -22 % at half, one and two waves ahead; ncu:
# the kernel moved 14 % more DRAM bytes, the prefetched rows left L2 before their CTAs read them)
# and showed L2 at 84 % of its throughput against DRAM at 70 % for v6 (L1 hit rate 18.6 %: the
# second 64-byte half of each 128-byte line loaded through L1). Three cache-hint variants of v6's
# whole tiles, each checked byte for byte by quantize_test_gpu (all 12 variants, own grid and 3
# CTAs):
#   v8_ldhint  loads ld.global.nc.L1::no_allocate.L2::256B (each miss fills the row's 256 bytes;
#              nothing kept in L1), v9_hints  v8 + q and q_t stored by st.global.cs (evict-first),
#   v10_l2hint loads ld.global.nc.L2::256B alone.
# Predictions, written before the run (against v6 in the same run, 8192 x 7168):
#   v10: +0-3 % (one DRAM request per 256-byte row piece instead of two; L1 use as before);
#   v8: -2 to +2 % (L1::no_allocate turns the 18.6 % L1 hits into L2 reads, where L2 is the busier
#       unit, against v10's gain);
#   v9: v8 +-1 % (evict-first marks only change which lines leave L2 first; every output byte
#       is written to DRAM either way).
# ncu (SpeedOfLight + MemoryWorkloadAnalysis, one launch each at 8192 x 7168): L2 throughput and
# the L1 hit rate of the four kernels.
set -u
source scripts/gpu_call.sh .gpu/c.txz || exit 1
C7=${C:0:7}
mkdir -p "$OUT/q"
say "GPU tests"
BIN=$B STEPS=tests ONLY='^(quantize_test_gpu)$' TIMEOUT=150 \
  timeout 170 bash scripts/gpu_loop.sh "$OUT/gl" > /dev/null 2>&1; echo "gpu_loop rc=$?" >> "$L"
cp "$OUT/gl/summary.txt" "$OUT/gpu_tests_$C7.txt" 2>/dev/null
grep -E "PASS|FAIL|SKIP" "$OUT/gl/summary.txt" >> "$L" 2>/dev/null
tail -1 "$OUT/gl/summary.txt" >> "$L" 2>/dev/null
for r in 1 2 3; do
  say "quantize_bench 1x128 dual run $r"
  timeout 100 "$B/quantize_bench" --benchmark_filter='quantize_1x128_dual(/|_v6|_v8|_v9|_v10|_v2_lean/)' \
    --benchmark_out="$OUT/q/quantize_bench_dual_${C7}_$r.json" > "$OUT/q/quantize_bench_$r.log" 2>&1
  echo "rc=$?" >> "$L"; grep -A40 "^quantiser" "$OUT/q/quantize_bench_$r.log" >> "$L"
done
NCU=$(command -v ncu || ls /usr/local/cuda*/bin/ncu 2>/dev/null | head -1)
for v in v6_interior v8_ldhint v9_hints v10_l2hint; do
  say "ncu dual $v"
  timeout 60 "$NCU" --clock-control none --launch-skip 2 --launch-count 1 \
    --kernel-name "regex:quantize_1x128_lean_kernel" --section SpeedOfLight --section MemoryWorkloadAnalysis \
    --section MemoryWorkloadAnalysis_Tables -o "$OUT/q/ncu_$v" -f "$B/quantize_bench" \
    --benchmark_filter="^quantize_1x128_dual_$v/8192x7168" > "$OUT/q/ncu_$v.log" 2>&1
  echo "rc=$?" >> "$L"
  "$NCU" -i "$OUT/q/ncu_$v.ncu-rep" --page details > "$OUT/q/ncu_${v}_details.txt" 2>&1
  grep -E "DRAM Throughput|Duration|L2 Hit Rate|L1/TEX Hit Rate|L2 Cache Throughput|Memory Throughput" "$OUT/q/ncu_${v}_details.txt" >> "$L"
done
rm -f "$OUT/q/"*.ncu-rep
tar cJf "$OUT/q.txz" -C "$OUT" q gl && rm -rf "$OUT/q" "$OUT/gl"
say end
cat "$L"
