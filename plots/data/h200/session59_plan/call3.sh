#!/usr/bin/env bash
# Session 59's third call (carry .gpu/t59a.txz .gpu/py59a.txz, packed at the commit to run:
#   cmake --build build -j2 --target test_library_gpu test_strided_gpu test_chapter_08_wgrad \
#     fp8gemm_torch
#   (cd build && tar cf - bin/commit.txt bin/gpu_tests.txt bin/test_library_gpu \
#     bin/test_strided_gpu bin/test_chapter_08_wgrad | xz -9 -T2 > ../.gpu/t59a.txz)
#   rm -rf /tmp/py10 && bash chapters/10_production/python/stage.sh build /tmp/py10/py
#   (cd /tmp/py10 && tar cf - py | xz -6 -T2 > "$OLDPWD/.gpu/py59a.txz")
# ), any Hopper GPU, about 260 s. After 1cc4c00 (the per-tensor FP32 D by TMA: tma_store_f32
# through D's 2-D map, six kernels, the default for M > 128 where D is TMA-storable):
#  1. test_library_gpu (every FP32 kernel by name, 22; each TMA kernel bit for bit its registers
#     twin's D; the default at 300 x 520 x 1008 by TMA at ldd = N, from registers at N + 3, the
#     same bits; a TMA plan refusing a misaligned rebind), test_strided_gpu (FP32 D at ldd = N + 4
#     by TMA, N + 1 from registers, against the packed TMA run's bits) and test_chapter_08_wgrad
#     (its FP32 dB by TMA now through the shared store_tile_tma_f32 with StoreMap::planes).
#     Predicted: pass; errors as session 58's (1.2e-4 promoted, <= 5.3e-4 fast).
#  2. The PyTorch tests: "132 passed, 2 skipped".
#  3. bench_torch.py --only per_tensor: M = 4096 float32 D now by TMA. Predicted 0.95-1.02x
#     torch's float32 D at the six shapes (call 2 of this session, registers: 0.826-0.959x), the
#     largest gains where K is short (4096 x 32768 x 512: D's 512 MB of writes alone take ~160 us
#     at 3.35 TB/s, about as long as the math, so only an overlapped store can keep up; 0.826x ->
#     0.95x or more). M <= 128 unchanged (registers: 0.91-1.03x).
#  4. bench_torch.py --only per_tensor_f32_kernels: each 128-row FP32 kernel by name. Predicted:
#     each TMA kernel 1.03-1.15x its registers twin at M = 4096 (most at K <= 2048), the ping-pong
#     TMA 128 x 128 still below the cooperative ones in promoted mode.
set -u
source scripts/gpu_call.sh .gpu/t59a.txz .gpu/py59a.txz || exit 1
say "library GPU tests (every FP32 kernel), strided, chapter 8's weight gradient"
packed_tests_step lib 'test_library_gpu|test_strided_gpu|test_chapter_08_wgrad' 200
tar xJf "$OUT/gl_lib.txz" -O 2>/dev/null | grep -a "per-tensor FP32" >> "$L"
say "PyTorch tests"
torch_tests_step 100
say "bench_torch.py --only per_tensor"
BENCH_ARGS="--only per_tensor --time-limit 0.4 --commit $C" timeout 110 \
  bash chapters/10_production/python/gpu_run.sh /tmp/py "$OUT/pt" bench > /dev/null 2>&1
echo "bench rc=$?" >> "$L"
grep -E "^per_tensor|Error|error" "$OUT/pt/bench_torch.log" | head -40 >> "$L"
cp "$OUT/pt/bench_torch.json" "$OUT/per_tensor_${C:0:7}.json" 2>/dev/null
mv "$OUT/pt" "$OUT/pt_default"
say "bench_torch.py --only per_tensor_f32_kernels"
BENCH_ARGS="--only per_tensor_f32_kernels --time-limit 0.3 --commit $C" timeout 150 \
  bash chapters/10_production/python/gpu_run.sh /tmp/py "$OUT/pt" bench > /dev/null 2>&1
echo "bench rc=$?" >> "$L"
grep -E "^per_tensor|Error|error" "$OUT/pt/bench_torch.log" | head -40 >> "$L"
cp "$OUT/pt/bench_torch.json" "$OUT/per_tensor_f32_kernels_${C:0:7}.json" 2>/dev/null
tar cJf "$OUT/pt.txz" -C "$OUT" pt pt_default && rm -rf "$OUT/pt" "$OUT/pt_default"
say end
cat "$L"
