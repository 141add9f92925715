#!/usr/bin/env bash
# Session 59's fourth call (carry .gpu/t59c.txz .gpu/py59c.txz, packed at the commit to run with
# the commands of call3.sh's header, t59c / py59c), any Hopper GPU, about 240 s. After the FP32
# rule by call 3's by-name timings (promoted by TMA: 128 x 128 unless 128 x 256's waves are
# fuller by more than 5 %):
# And after the review's fixes (the registers_f32 epilogue's accumulate add is __fadd_rn, never
# contracted into an FMA: the same bits as the TMA reduce-add by construction; the D-type check
# before the TMA check):
#  1. test_library_gpu, test_strided_gpu, test_chapter_08_wgrad (its registers_f32 kernels):
#     predicted pass (as call 3).
#  2. The PyTorch tests: "132 passed, 2 skipped".
#  3. bench_torch.py --only per_tensor_f32_kernels: the default now 128 x 128 by TMA in promoted
#     mode at all six M = 4096 shapes: predicted within 2 % of call 3's 128 x 128 TMA by name
#     (0.89, 0.99, 0.91, 0.94, 0.99, 1.02x torch's float32 D); fast unchanged (0.76-1.05x).
#  4. ncu of 128 x 256 promoted, registers against TMA, at 4096 x 7168 x 16384 (call 3: the TMA
#     kernel 0.909x its registers twin there, where the epilogue is 1/128 of a tile's time; both
#     use 4 stages and the first promoted loop). What to look for: registers per thread (a
#     spill-free but tighter allocation), issued-warp and stall profiles of the consumers.
set -u
source scripts/gpu_call.sh .gpu/t59c.txz .gpu/py59c.txz || exit 1
say "library GPU tests"
packed_tests_step lib 'test_library_gpu|test_strided_gpu|test_chapter_08_wgrad' 180
tar xJf "$OUT/gl_lib.txz" -O 2>/dev/null | grep -a "per-tensor FP32 D 300" >> "$L"
# TORCH=0 skips step 2 (a call with little device time left).
if [[ ${TORCH:-1} == 1 ]]; then
  say "PyTorch tests"
  torch_tests_step 100
fi
say "bench_torch.py --only per_tensor_f32_kernels"
BENCH_ARGS="--only per_tensor_f32_kernels --time-limit 0.3 --commit $C" timeout 150 \
  bash chapters/10_production/python/gpu_run.sh /tmp/py "$OUT/pt" bench > /dev/null 2>&1
echo "bench rc=$?" >> "$L"
grep -E "^per_tensor|Error|error" "$OUT/pt/bench_torch.log" | head -40 >> "$L"
cp "$OUT/pt/bench_torch.json" "$OUT/per_tensor_f32_kernels_${C:0:7}.json" 2>/dev/null
tar cJf "$OUT/pt.txz" -C "$OUT" pt && rm -rf "$OUT/pt"
# NCU=0 skips step 4 (a call with little device time left).
if [[ ${NCU:-1} == 1 ]]; then
say "ncu: 128 x 256 promoted FP32, registers and TMA, 4096 x 7168 x 16384"
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
