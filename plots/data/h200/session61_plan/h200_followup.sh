#!/usr/bin/env bash
# Session 61: the H200's follow-up, run warm after session49_plan/h200_call.sh (carry
# .gpu/t60c.txz .gpu/py60c.txz from session60_plan/pack.sh c at the commit to run), H200 only:
#  1. bench_torch.py --only per_tensor_f32_kernels at the nine M = 4096 shapes of this session's
#     H100 run (call 1b), so that the promoted 128 x 256 c2x1 with one staging unit (b1) is timed
#     on the library's own GPU. Predicted (from the H100): b1 ahead of b2 by 5-12 % at K >= 7168,
#     ahead of the default by 0-5 % at K = 7168, 12288, 16384, behind elsewhere.
#  2. chapter 9's default bench and its --kernels=all bench, as session 60's call 2 ran them
#     (default kernel 317.0 then 369.5 TFLOPS at 8192^3). Predicted: if the gap is the machine's
#     state (clocks under the power cap after a warm start), the first run is again the slower
#     by 10-15 %; if it was a one-off, both within 3 % of each other.
set -u
PLAN=${PLAN:-560}
source scripts/gpu_call.sh .gpu/t60c.txz .gpu/py60c.txz || exit 1
nvidia-smi --query-gpu=name --format=csv,noheader | grep -q H200 || { say "not an H200: stop"; cat "$L"; exit 3; }
nvidia-smi --query-gpu=timestamp,clocks.sm,power.draw,clocks_event_reasons.active \
  --format=csv,noheader -lms 100 > "$OUT/smi.csv" 2>&1 &
SMI=$!
say "bench_torch.py --only per_tensor_f32_kernels"
BENCH_ARGS="--only per_tensor_f32_kernels --time-limit 0.3 --commit $C --f32-shapes 7168x1024,7168x2048,7168x7168,7168x12288,2112x7168,24576x1536,4096x7168" \
  timeout 120 bash chapters/10_production/python/gpu_run.sh /tmp/py "$OUT/pt" bench > /dev/null 2>&1
echo "bench rc=$?" >> "$L"
grep -E "^per_tensor_f32_kernels|Error|error" "$OUT/pt/bench_torch.log" | head -40 >> "$L"
cp "$OUT/pt/bench_torch.json" "$OUT/per_tensor_f32_kernels_h200_${C:0:7}.json" 2>/dev/null
tar cJf "$OUT/pt.txz" -C "$OUT" pt && rm -rf "$OUT/pt"
say "ch09_hopper_mxfp8, default kernels"
timeout 120 "$B/ch09_hopper_mxfp8" --gpu_delay_us=50 --json="$OUT/requant.json" > "$OUT/ch09_default.log" 2>&1
echo "ch09 default rc=$?" >> "$L"
grep -E "VALIDATION|FAIL|8192 *8192 *8192" "$OUT/ch09_default.log" | head -8 >> "$L"
LEFT=$(seconds_left "$PLAN")
say "ch09_hopper_mxfp8 --kernels=all, $LEFT s left"
timeout $((LEFT > 300 ? 280 : LEFT - 20)) "$B/ch09_hopper_mxfp8" --kernels=all --gpu_delay_us=50 --json="$OUT/ch09_hopper_mxfp8.json" > "$OUT/ch09_all.log" 2>&1
echo "ch09 all rc=$?" >> "$L"
grep -E "VALIDATION|FAIL" "$OUT/ch09_all.log" | head -5 >> "$L"
kill $SMI 2>/dev/null
tar cJf "$OUT/ch09_logs.txz" -C "$OUT" ch09_default.log ch09_all.log smi.csv && rm -f "$OUT"/ch09_*.log "$OUT/smi.csv"
say end
cat "$L"
