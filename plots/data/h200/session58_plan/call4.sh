#!/usr/bin/env bash
# Session 58's fourth call (carry .gpu/t58c.txz .gpu/py58c.txz, packed at the commit to run with
# the commands of call3.sh's header, t58c / py58c), any Hopper GPU, about 170 s:
#  1. test_library_gpu (every per-tensor FP32 kernel by name, now 16 with the ping-pong ones) and
#     test_strided_gpu. Predicted: pass, errors as call 3's (1.23e-4 promoted, 3.9e-4 fast).
#  2. The PyTorch tests (the ops gained _gemm_per_tensor_kernel): "132 passed, 2 skipped".
#  3. bench_torch.py --only per_tensor_f32_kernels: each large-M FP32 kernel at the six M = 4096
#     shapes against torch's float32 D. Predicted: the ping-pong 128 x 128 (its stores overlap the
#     other warpgroup's main loop) 1.05-1.25x the default 128 x 256 in fast mode where K <= 2048
#     (4096 x 24576 x 1536, 32768 x 512, 7168 x 2048), 0.95-1.05x at K >= 7168; in promoted mode
#     0.9-1.1x (chapter 6's promoted ping-pong never won: a warpgroup's promotion cannot overlap
#     its own tensor-core work).
set -u
source scripts/gpu_call.sh .gpu/t58c.txz .gpu/py58c.txz || exit 1
say "library GPU tests (every FP32 kernel)"
packed_tests_step lib 'test_library_gpu|test_strided_gpu' 150
tar xJf "$OUT/gl_lib.txz" -O 2>/dev/null | grep -a "per-tensor FP32 kernel" >> "$L"
say "PyTorch tests"
torch_tests_step 100
say "bench_torch.py --only per_tensor_f32_kernels"
BENCH_ARGS="--only per_tensor_f32_kernels --time-limit 0.3 --commit $C" timeout 120 \
  bash chapters/10_production/python/gpu_run.sh /tmp/py "$OUT/pt" bench > /dev/null 2>&1
echo "bench rc=$?" >> "$L"
grep -E "^per_tensor|Error|error" "$OUT/pt/bench_torch.log" | head -40 >> "$L"
cp "$OUT/pt/bench_torch.json" "$OUT/per_tensor_f32_kernels_${C:0:7}.json" 2>/dev/null
tar cJf "$OUT/pt.txz" -C "$OUT" pt && rm -rf "$OUT/pt"
say end
cat "$L"
