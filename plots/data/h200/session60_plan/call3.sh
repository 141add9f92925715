#!/usr/bin/env bash
# Session 60's third call (carry .gpu/t60c.txz .gpu/py60c.txz from `pack.sh c` at the commit to
# run), any Hopper GPU, about 250 s (what session 60 had left: 347 s with the start):
#  1. test_library_gpu (28 FP32 kernels by name; the two comparison kernels bit for bit the
#     registers 128 x 256 c2x1): predicted pass.
#  2. bench_torch.py --only per_tensor_f32_kernels at 4096 x 7168 x 16384, 4096 x 7168 x 4096 and
#     the six (every 128-row kernel by name, both modes). Predicted: if the 2 x 1 pairing causes
#     the promoted 128 x 256 TMA kernel's re-reads, its c1x1 form runs at least 5 % ahead of it
#     at K = 16384 (level with the registers c2x1 kernel); if the staging units' timing does, the
#     b1 form does. Neither: both within 2 % of the c2x1 b2 kernel.
#  3. ncu memory sections for the two comparison kernels at 4096 x 7168 x 16384: L2 hit rate
#     (c2x1 b2: 65 %, registers: 79 % in session 60's call 1b).
#  4. On an H200 only, with 130 s left: chapter 9's default bench again (session 60's call 2 timed
#     its default kernel at 317.0 TFLOPS at 8192^3 in this run and 369.5 in the --kernels=all
#     run): predicted within 3 % of one of the two.
set -u
PLAN=${PLAN:-290}
source scripts/gpu_call.sh .gpu/t60c.txz .gpu/py60c.txz || exit 1
say "test_library_gpu"
packed_tests_step lib 'test_library_gpu' 110
LEFT=$(seconds_left "$PLAN")
say "bench_torch.py --only per_tensor_f32_kernels, $LEFT s left"
BENCH_ARGS="--only per_tensor_f32_kernels --time-limit 0.3 --commit $C --f32-shapes 7168x4096" \
  timeout $((LEFT > 100 ? 80 : LEFT - 20)) \
  bash chapters/10_production/python/gpu_run.sh /tmp/py "$OUT/pt" bench > /dev/null 2>&1
echo "bench rc=$?" >> "$L"
grep -E "^per_tensor_f32_kernels 4096x7168x(16384|4096) promoted|Error|error" "$OUT/pt/bench_torch.log" | head -20 >> "$L"
cp "$OUT/pt/bench_torch.json" "$OUT/per_tensor_f32_kernels_${C:0:7}.json" 2>/dev/null
tar cJf "$OUT/pt.txz" -C "$OUT" pt && rm -rf "$OUT/pt"
LEFT=$(seconds_left "$PLAN")
if [[ $LEFT -gt 40 ]]; then
  say "ncu: the comparison kernels, $LEFT s left"
  for k in 128x256_s4_c1x1_promoted_f32_tma_b2 128x256_s4_c2x1_promoted_f32_tma_b1; do
    ncu_step "$OUT/n" "$k" 'gemm_kernel' "MemoryWorkloadAnalysis SpeedOfLight" \
      "Hit Rate|Duration|DRAM Throughput" env PYTHONPATH=/tmp/py python3 \
      plots/data/h200/session59_plan/run_f32_kernel.py "$k" 4096 7168 16384
  done
  tar cJf "$OUT/n3.txz" -C "$OUT" n && rm -rf "$OUT/n"
fi
LEFT=$(seconds_left "$PLAN")
if nvidia-smi --query-gpu=name --format=csv,noheader | grep -q H200 && [[ $LEFT -gt 60 ]]; then
  say "ch09_hopper_mxfp8, default kernels, again, $LEFT s left"
  timeout $((LEFT - 10)) "$B/ch09_hopper_mxfp8" --gpu_delay_us=50 --json="$OUT/requant_again.json" > "$OUT/ch09_again.log" 2>&1
  echo "ch09 rc=$?" >> "$L"
  xz "$OUT/ch09_again.log"
fi
say end
cat "$L"
