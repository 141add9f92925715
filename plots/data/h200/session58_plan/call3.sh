#!/usr/bin/env bash
# Session 58's third call (carry .gpu/t58b.txz .gpu/py58b.txz, packed at the commit to run:
#   cmake --build build -j2 --target test_library_gpu test_strided_gpu fp8gemm_torch
#   (cd build && tar cf - bin/commit.txt bin/gpu_tests.txt bin/test_library_gpu \
#     bin/test_strided_gpu | xz -9 -T2 > ../.gpu/t58b.txz)
#   rm -rf /tmp/py10 && bash chapters/10_production/python/stage.sh build /tmp/py10/py
#   (cd /tmp/py10 && tar cf - py | xz -6 -T2 > "$OLDPWD/.gpu/py58b.txz")
# ), any Hopper GPU, about 150 s:
#  1. test_library_gpu (new case: every per-tensor FP32 kernel by name, D += A.B against float64)
#     and test_strided_gpu. Predicted: pass; promoted errors <= 2e-4, fast <= 6e-4 (call 2:
#     1.2e-4 and 4-5e-4).
#  2. The PyTorch tests: predicted "132 passed, 2 skipped" (as call 2).
#  3. bench_torch.py --only per_tensor after the decode widths for FP32 D at M <= 128. Predicted:
#     at M <= 128 our float32 D within 0.85-1.0x torch's float32 (call 2: 0.59-1.0x; 64 x 2112 x
#     7168 from 84 to 120-145 TFLOPS, 128 x 2112 x 7168 from 166 to 230-275, 64 x 4096 x 7168 from
#     138 to 170-195); M = 4096 unchanged (0.73-0.96x torch's float32: the 128 x 256 registers
#     epilogue is not overlapped with the next tile's main loop).
set -u
source scripts/gpu_call.sh .gpu/t58b.txz .gpu/py58b.txz || exit 1
say "library GPU tests (every FP32 kernel)"
packed_tests_step lib 'test_library_gpu|test_strided_gpu' 150
tar xJf "$OUT/gl_lib.txz" -O 2>/dev/null | grep -a "per-tensor FP32 kernel" >> "$L"
say "PyTorch tests"
torch_tests_step 100
say "per-tensor bf16 and float32 D against torch._scaled_mm (bench_torch.py --only per_tensor)"
BENCH_ARGS="--only per_tensor --time-limit 0.4 --commit $C" timeout 110 \
  bash chapters/10_production/python/gpu_run.sh /tmp/py "$OUT/pt" bench > /dev/null 2>&1
echo "bench rc=$?" >> "$L"
grep -E "^per_tensor|Error|error" "$OUT/pt/bench_torch.log" | head -40 >> "$L"
cp "$OUT/pt/bench_torch.json" "$OUT/per_tensor_f32_${C:0:7}.json" 2>/dev/null
tar cJf "$OUT/pt.txz" -C "$OUT" pt && rm -rf "$OUT/pt"
say end
cat "$L"
