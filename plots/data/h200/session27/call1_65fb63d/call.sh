#!/usr/bin/env bash
# Session 27, call 1: binaries at 65fb63d (.gpu/a.txz), PyTorch package at 74e80ee (.gpu/py.txz:
# chapter 8's grouped kernels and the library's are the same source at both commits).
#  1. GPU tests: quantize_test_gpu (the dual's six variants byte for byte against the CPU, random
#     and adversarial data, both scale rules), test_library_threads_gpu (not run since the dispatch
#     table changed in session 26).
#  2. quantize_bench's 128 x 128 entries, twice: every dual variant against the copy.
#     Predictions (% of the copy): occ3 73-75 (as before), occ4 71-73, lean 80-84, lean_occ4 <= lean,
#     lean_prefetch 85-88, lean_prefetch_occ4 <= lean_prefetch (44 bytes spilled).
#  3. ncu of occ3, lean and lean_prefetch at 7168 x 16384 (DRAM throughput, warp stalls).
#  4. DeepGEMM built once (.peer); chapter 8 against it: bench/peers_moe.py --interleave
#     --delay-us 150 (session 13's method; its last run, 09129a3: 0.945-0.990x DeepGEMM contiguous,
#     1.04-1.40x masked, wgrad 1.98-2.04x at 8192 tokens, 0.94-0.98x at 65536). Prediction: within
#     +-3% of session 13 (the grouped kernels gained the pinned lean loop in session 24: maybe +1%).
#  5. Session 26's call E: chapter 7 against DeepGEMM interleaved, 50 and 150 us delay, 8192^3 and
#     the six M = 4096 shapes. Prediction: nothing flagged at 150 us; 8192^3 at 0.98-1.00x; the
#     M = 4096 shapes within +-0.5% of session 26's call C (0.974x geomean).
set -u
source scripts/gpu_call.sh .gpu/a.txz .gpu/py.txz || exit 1
C7=${C:0:7}
mkdir -p "$OUT/q" "$OUT/p"
say "GPU tests"
BIN=$B STEPS=tests ONLY='^(quantize_test_gpu|test_library_threads_gpu)$' TIMEOUT=150 \
  timeout 200 bash scripts/gpu_loop.sh "$OUT/gl" > /dev/null 2>&1; echo "gpu_loop rc=$?" >> "$L"
cp "$OUT/gl/summary.txt" "$OUT/gpu_tests_$C7.txt" 2>/dev/null
tail -6 "$OUT/gl/summary.txt" >> "$L" 2>/dev/null
for r in 1 2; do
  say "quantize_bench 128x128 run $r"
  timeout 60 "$B/quantize_bench" --benchmark_filter='128x128' \
    --benchmark_out="$OUT/q/quantize_bench_128x128_${C7}_$r.json" > "$OUT/q/quantize_bench_$r.log" 2>&1
  echo "rc=$?" >> "$L"; grep -A20 "^quantiser" "$OUT/q/quantize_bench_$r.log" >> "$L"
done
NCU=$(command -v ncu || ls /usr/local/cuda*/bin/ncu 2>/dev/null | head -1)
if [ -n "$NCU" ]; then
  for v in occ3 lean lean_prefetch; do
    say "ncu dual $v"
    timeout 60 "$NCU" --clock-control none --launch-skip 2 --launch-count 1 \
      --kernel-name regex:quantize_128x128_dual_kernel --section SpeedOfLight \
      --section MemoryWorkloadAnalysis --section WarpStateStats --section Occupancy \
      --section SchedulerStats --section LaunchStats --log-file "$OUT/q/ncu_dual_$v.txt" \
      "$B/quantize_bench" --benchmark_filter="quantize_128x128_dual_$v/7168x16384" > /dev/null 2>&1
    echo "rc=$?" >> "$L"
    grep -E "DRAM Throughput|Memory Throughput|Duration|Registers Per|Achieved Occupancy|Warp Cycles Per Issued|No Eligible" "$OUT/q/ncu_dual_$v.txt" >> "$L"
  done
else
  echo "no ncu" >> "$L"
fi
tar cJf "$OUT/q.txz" -C "$OUT" q gl && rm -rf "$OUT/q" "$OUT/gl"
LEFT=$(seconds_left 560)
say "DeepGEMM build ($LEFT s left)"
timeout 200 bash .peer/build_deepgemm.sh > "$OUT/p/deepgemm_build.log" 2>&1; echo "build rc=$?" >> "$L"
eval "$(grep '^export PYTHONPATH=' "$OUT/p/deepgemm_build.log" | tail -n 1)"
export PYTHONPATH=${PYTHONPATH:+$PYTHONPATH:}/tmp/py
grep '^deep_gemm ' "$OUT/p/deepgemm_build.log" | tail -1 >> "$L"
LEFT=$(seconds_left 560)
if [ "$LEFT" -gt 150 ]; then
  say "peers_moe interleaved, delay 150 us ($LEFT s left)"
  timeout $((LEFT - 70)) python3 bench/peers_moe.py --interleave --delay-us 150 \
    --out "$OUT/peers_ch08_interleaved_74e80ee.json" --groups-out "$OUT/p/moe_groups.json" --dg-jobs 8 \
    --time-limit $((LEFT - 140)) --commit 74e80eee45f601a63e274dfd271d8671a05f372f > "$OUT/p/peers_moe.log" 2>&1
  echo "rc=$?" >> "$L"; tail -5 "$OUT/p/peers_moe.log" >> "$L"
fi
S=8192x8192x8192,4096x2112x7168,4096x24576x1536,4096x32768x512,4096x7168x16384,4096x4096x7168,4096x7168x2048
for d in 150 50; do
  LEFT=$(seconds_left 575)
  [ "$LEFT" -gt 45 ] || { echo "skipped ch07 peers d=$d ($LEFT s left)" >> "$L"; continue; }
  say "peers ch07 interleaved, delay $d us ($LEFT s left)"
  timeout $((LEFT - 5)) python3 bench/peers.py --interleave --shapes "$S" \
     --impls fp8gemm_block_scaled,deepgemm --cupti-launches 0 --delay-us $d --commit 74e80eee45f601a63e274dfd271d8671a05f372f \
     --time-limit $((LEFT - 35)) --out "$OUT/p/peers_ch07_d${d}.json" > "$OUT/p/peers_ch07_d$d.log" 2>&1
  echo "rc=$?" >> "$L"; grep -E "^(fp8gemm|deepgemm)" "$OUT/p/peers_ch07_d$d.log" >> "$L"
done
tar cJf "$OUT/p.txz" -C "$OUT" p && rm -rf "$OUT/p"
say end
cat "$L"
