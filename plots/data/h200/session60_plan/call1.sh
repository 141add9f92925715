#!/usr/bin/env bash
# Session 60's first call (carry .gpu/t60a.txz .gpu/py60a.txz, packed at the commit to run by
# plots/data/h200/session60_plan/pack.sh), any Hopper GPU, at most about 560 s:
#  0. On an H200 only (the other steps run on any card): chapter 9's tables after session 55's
#     scale mask (session56_plan/call4.sh's two steps) -> ch09_default/requant.json and
#     ch09_hopper_mxfp8.json. Predicted: the re-quantising path 0.89-0.92x chapter 7 at 8192^3;
#     the Hopper default 0.27-0.28x chapter 7 at 8192^3, its bf16 path 0.53-0.54x.
#  1. test_library_gpu and test_strided_gpu, after f324b61's 128 x 192 FP32 tiles (26 kernels by
#     name, 8 by TMA, each TMA kernel bit for bit its registers twin): predicted "2 passed".
#  2. bench_torch.py --only per_tensor_f32_kernels at the six M = 4096 shapes and a K sweep
#     (N = 7168: K 1024, 3072, 4096, 8192, 12288; N = 2112: K 2048, 16384). Predicted, from the
#     waves (3 waves 89 % full against 82 % for 128 x 128): 128 x 192 by TMA 1.03-1.08x the time
#     of 128 x 128 by TMA at 4096 x 2112 x 7168 (0.91-0.95x torch promoted, 0.78-0.82x fast); the
#     ping-pong 128 x 128 by TMA ahead of 128 x 256 by TMA in fast mode for 1024 <= K <= 3072 and
#     behind from K = 8192; promoted, the registers 128 x 256 ahead of every TMA kernel from
#     K = 12288 (K = 8192 unknown).
#  3. The PyTorch tests: "132 passed, 2 skipped" (TORCH=0 skips).
#  4. ncu of the promoted 128 x 256 pair (registers, TMA) at 4096 x 7168 x 16384 (the TMA kernel
#     0.91x its twin in session 59's two runs; their main loops' SASS match): registers, stall
#     and issue profiles. Only with 150 s left of the plan (NCU=0 skips).
set -u
PLAN=${PLAN:-560}
# PACK (a): which pack of pack.sh; ONLY: bench_torch.py's --only (call2.sh sets both).
source scripts/gpu_call.sh ".gpu/t60${PACK:-a}.txz" ".gpu/py60${PACK:-a}.txz" || exit 1
GPU_NAME=$(nvidia-smi --query-gpu=name --format=csv,noheader)
if echo "$GPU_NAME" | grep -q H200 && [[ ${CH09:-1} == 1 ]]; then
  say "ch09_hopper_mxfp8, default kernels (an H200)"
  timeout 120 "$B/ch09_hopper_mxfp8" --gpu_delay_us=50 --json="$OUT/requant.json" > "$OUT/ch09_default.log" 2>&1
  echo "ch09 default rc=$?" >> "$L"
  grep -E "VALIDATION|FAIL" "$OUT/ch09_default.log" | head -5 >> "$L"
  say "ch09_hopper_mxfp8 --kernels=all"
  timeout 280 "$B/ch09_hopper_mxfp8" --kernels=all --gpu_delay_us=50 --json="$OUT/ch09_hopper_mxfp8.json" > "$OUT/ch09_all.log" 2>&1
  echo "ch09 all rc=$?" >> "$L"
  grep -E "VALIDATION|FAIL" "$OUT/ch09_all.log" | head -5 >> "$L"
  tar cJf "$OUT/ch09_logs.txz" -C "$OUT" ch09_default.log ch09_all.log && rm -f "$OUT"/ch09_*.log
fi
say "library GPU tests"
packed_tests_step lib 'test_library_gpu|test_strided_gpu' 150
tar xJf "$OUT/gl_lib.txz" -O 2>/dev/null | grep -a "per-tensor FP32 D 300" >> "$L"
LEFT=$(seconds_left "$PLAN")
ONLY=${ONLY:-per_tensor_f32_kernels}
say "bench_torch.py --only $ONLY, $LEFT s left"
BENCH_ARGS="--only $ONLY --time-limit 0.3 --commit $C --f32-shapes 7168x1024,7168x3072,7168x4096,7168x8192,7168x12288,2112x2048,2112x16384" \
  timeout $((LEFT > 260 ? 240 : LEFT - 20)) \
  bash chapters/10_production/python/gpu_run.sh /tmp/py "$OUT/pt" bench > /dev/null 2>&1
echo "bench rc=$?" >> "$L"
grep -E "^per_tensor|Error|error" "$OUT/pt/bench_torch.log" | head -60 >> "$L"
cp "$OUT/pt/bench_torch.json" "$OUT/${ONLY//,/+}_${C:0:7}.json" 2>/dev/null
tar cJf "$OUT/pt.txz" -C "$OUT" pt && rm -rf "$OUT/pt"
LEFT=$(seconds_left "$PLAN")
if [[ ${TORCH:-1} == 1 && $LEFT -gt 70 ]]; then
  say "PyTorch tests, $LEFT s left"
  torch_tests_step 60
fi
LEFT=$(seconds_left "$PLAN")
if [[ ${NCU:-1} == 1 && $LEFT -gt 150 ]]; then
  say "ncu: 128 x 256 promoted FP32, registers and TMA, 4096 x 7168 x 16384, $LEFT s left"
  SECTIONS="SpeedOfLight LaunchStats Occupancy WarpStateStats SchedulerStats MemoryWorkloadAnalysis"
  PAT="Duration|DRAM Throughput|Compute \(SM\) Throughput|Registers Per|Stall|Issued Warp|No Eligible|Shared Memory Configuration"
  for k in 128x256_s4_c2x1_promoted_f32 128x256_s4_c2x1_promoted_f32_tma_b2; do
    echo "-- $k" >> "$L"
    ncu_step "$OUT/n" "$k" 'gemm_kernel' "$SECTIONS" "$PAT" env PYTHONPATH=/tmp/py python3 \
      plots/data/h200/session59_plan/run_f32_kernel.py "$k" 4096 7168 16384
  done
  tar cJf "$OUT/n.txz" -C "$OUT" n && rm -rf "$OUT/n"
fi
say end
cat "$L"
