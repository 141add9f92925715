#!/usr/bin/env bash
# Session 58's second call (carry .gpu/t58a.txz .gpu/py58a.txz [.gpu/t56.txz], packed at 0f05a5e:
#   cmake --build build -j2 --target test_library_gpu test_strided_gpu test_library_threads_gpu \
#     test_chapter_08 fp8gemm_torch
#   (cd build && tar cf - bin/commit.txt bin/gpu_tests.txt bin/test_library_gpu \
#     bin/test_strided_gpu bin/test_library_threads_gpu bin/test_chapter_08 | xz -9 -T2 > ../.gpu/t58a.txz)
#   rm -rf /tmp/py10 && bash chapters/10_production/python/stage.sh build /tmp/py10/py
#   (cd /tmp/py10 && tar cf - py | xz -6 -T2 > "$OLDPWD/.gpu/py58a.txz")
# ), any Hopper GPU:
#  1. The per-tensor GEMM's FP32 D (new): test_library_gpu's float64 case (3 shapes x 2 modes x
#     accumulate x ldd), test_strided_gpu's FP32 section, and the rest of both binaries and of
#     test_library_threads_gpu (PerTensorPlan now holds either plan). Predicted: pass; promoted
#     FP32 error 4e-5 .. 2e-4 (chapter 7's FP32 output measured 4e-5 .. 1.3e-4).
#  2. Session 57's call 3 (never run): test_chapter_08's counter case after the review's refactor.
#     Predicted: pass.
#  3. The PyTorch tests: predicted "132 passed, 2 skipped" (new:
#     test_gemm_per_tensor_float32_out_and_accumulate; opcheck gains two cases).
#  4. bench_torch.py --only per_tensor (new): gemm_per_tensor bf16 / float32 D against
#     torch._scaled_mm with the same out_dtype, M in {64, 128, 4096} x the six DeepSeek-V3 (N, K).
#     Predicted: our float32 D 0.80-0.95x our bf16 speed at M = 4096 (the untuned 128 x 256
#     registers_f32 kernel against the table's tuned TMA-store ones), ~0.6x at 4096 x 32768 x 512
#     (the epilogue's doubled bytes dominate there); against torch's float32 0.85-1.0x.
#  5. On an H200 with 330 s left: session56_plan/call4.sh's chapter 9 tables.
# About 330 s on an H100.
set -u
source scripts/gpu_call.sh .gpu/t58a.txz .gpu/py58a.txz || exit 1
say "library GPU tests (FP32 per-tensor D)"
packed_tests_step lib 'test_library_gpu|test_strided_gpu|test_library_threads_gpu' 220
for t in test_library_gpu; do
  timeout 60 "$B/$t" "library: PerTensorPlan with FP32 D, with and without accumulate, against float64" -s \
    2>&1 | grep -E "rel |passed|failed" | tail -30 >> "$L"
done
say "test_chapter_08: the counter schedule case"
timeout 90 "$B/test_chapter_08" "ch08: the counter schedule with the caller's counters on two streams at once" \
  > "$OUT/ch08_counter.log" 2>&1; echo "test_chapter_08 (counter case) rc=$?" >> "$L"
tail -2 "$OUT/ch08_counter.log" >> "$L"
say "PyTorch tests"
torch_tests_step 150
say "per-tensor bf16 and float32 D against torch._scaled_mm (bench_torch.py --only per_tensor)"
BENCH_ARGS="--only per_tensor --time-limit 0.4 --commit $C" timeout 110 \
  bash chapters/10_production/python/gpu_run.sh /tmp/py "$OUT/pt" bench > /dev/null 2>&1
echo "bench rc=$?" >> "$L"
grep -E "^per_tensor|Error|error" "$OUT/pt/bench_torch.log" | head -40 >> "$L"
cp "$OUT/pt/bench_torch.json" "$OUT/per_tensor_f32_${C:0:7}.json" 2>/dev/null
tar cJf "$OUT/pt.txz" -C "$OUT" pt && rm -rf "$OUT/pt"
if nvidia-smi --query-gpu=name --format=csv,noheader | grep -q H200 && [ -f .gpu/t56.txz ] &&
   [ "$(seconds_left 585)" -gt 330 ]; then
  bash plots/data/h200/session56_plan/call4.sh > "$OUT/call4_stdout.txt" 2>&1
else
  say "chapter 9's tables not run (not an H200, no t56 pack, or too little time)"
fi
say end
cat "$L"
