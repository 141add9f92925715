#!/usr/bin/env bash
# Session 35, call 7: binaries .gpu/c.txz of b8164d1 (test_chapter_08, test_chapter_08_e2e,
# test_library_gpu, test_library_threads_gpu, ch08_grouped_moe), the PyTorch package .gpu/py.txz,
# DeepGEMM 2.6.1 built from .peer/.
# What changed since call 2's tests: the masked rule (K <= 2048 and M_max >= 1024 ->
# 256x128_s3_c1x1_promoted_tma_b4; host code only, the kernel is compiled since session 17).
# Predictions (written before the run):
#  1. GPU tests "4 passed, 0 failed, 0 skipped" (test_chapter_08 with the new masked default test);
#     PyTorch 104 passed, 2 skipped (test_gemm_grouped_masked gains its M_max = 1024 case).
#  2. Issue 10's peers, interleaved with DeepGEMM and torch as in session 33's call 4:
#     masked_g1x1024_n7168_k2048 1.046 -> 1.06-1.08x DeepGEMM (0.978x our time in calls 5-6), so
#     11 of 20 targets; masked_g2x512 and g4x256 and every K = 7168 masked case unchanged (their
#     kernel did not change), the contiguous and wgrad cases within +-2 % of session 33's.
set -u
source scripts/gpu_call.sh .gpu/c.txz .gpu/py.txz || exit 1
C7=${C:0:7}
say "GPU tests"
BIN=$B STEPS=tests ONLY='^(test_library_threads_gpu|test_chapter_08|test_chapter_08_e2e|test_library_gpu)$' TIMEOUT=250 \
  timeout 300 bash scripts/gpu_loop.sh "$OUT/gl" > /dev/null 2>&1; echo "gpu_loop rc=$?" >> "$L"
grep -E "PASS|FAIL|SKIP" "$OUT/gl/summary.txt" >> "$L" 2>/dev/null
tail -1 "$OUT/gl/summary.txt" >> "$L" 2>/dev/null
cp "$OUT/gl/summary.txt" "$OUT/gpu_tests_${C7}.txt" 2>/dev/null
grep -rh "256x128_s3_c1x1_promoted_tma_b4" "$OUT/gl" 2>/dev/null | grep "masked G=4 rows=4096" | head -1 | cut -c1-300 >> "$L"
say "PyTorch tests"
timeout 120 bash chapters/10_production/python/gpu_run.sh /tmp/py "$OUT/torch" tests \
  > "$OUT/gpu_run.log" 2>&1; echo "gpu_run rc=$?" >> "$L"
tail -1 "$OUT/torch/tests.log" >> "$L" 2>/dev/null
grep -E "FAILED|Error" "$OUT/torch/tests.log" | head -5 >> "$L" 2>/dev/null
LEFT=$(seconds_left 540)
say "peers_moe (DeepGEMM built first), interleaved, $LEFT s left"
peers_moe_step "$LEFT"
tar cJf "$OUT/c.txz" -C "$OUT" gl torch gpu_run.log p 2>/dev/null; rm -rf "$OUT/gl" "$OUT/torch" "$OUT/gpu_run.log" "$OUT/p"
say end
cat "$L"
