#!/usr/bin/env bash
# Session 30, call 5: binaries .gpu/c.txz and the PyTorch package .gpu/py.txz of the commit in
# bin/commit.txt (the early wave the default of the FP32 dB tiles with two staging units; the
# plan's grouped FP32 pick 128 x 192 s4 b2, the kernel calls 3-4 timed as _pin_ew2), DeepGEMM
# 2.6.1 built from .peer/.
# Predictions (written before the run):
#  1. GPU tests pass: test_chapter_08_wgrad (every kernel against float64; 128 x 192 s4 b2's
#     default and _pin_loop2 bit for bit against its _loop0), test_chapter_08_e2e,
#     test_library_gpu, test_library_threads_gpu; PyTorch 100 passed, 2 skipped.
#  2. Issue 10's peers, one process, interleaved (as call 1): the weight gradient at 65536 tokens
#     1.03-1.09x DeepGEMM (call 4: 1.073 and 1.088 for this kernel; call 1's default 0.987 and
#     0.993), at 8192 tokens ~2.0x; the forward cases as call 1 within +-2 %.
set -u
source scripts/gpu_call.sh .gpu/c.txz .gpu/py.txz || exit 1
C7=${C:0:7}
say "GPU tests"
BIN=$B STEPS=tests ONLY='^(test_chapter_08_wgrad|test_chapter_08_e2e|test_library_gpu|test_library_threads_gpu)$' \
  TIMEOUT=150 timeout 200 bash scripts/gpu_loop.sh "$OUT/gl" > /dev/null 2>&1; echo "gpu_loop rc=$?" >> "$L"
cp "$OUT/gl/summary.txt" "$OUT/gpu_tests_$C7.txt" 2>/dev/null
grep -E "tests=|passed" "$OUT/gl/summary.txt" | tail -6 >> "$L"
say "PyTorch tests"
timeout 120 bash chapters/10_production/python/gpu_run.sh /tmp/py "$OUT/torch" tests \
  > "$OUT/gpu_run.log" 2>&1; echo "gpu_run rc=$?" >> "$L"
tail -1 "$OUT/torch/tests.log" >> "$L" 2>/dev/null
cp "$OUT/torch/tests.log" "$OUT/torch_tests_$C7.log" 2>/dev/null
say "peers_moe (DeepGEMM built first), interleaved"
PYTHONPATH=/tmp/py BIN=$B STEPS=peers_moe PEER_TIMEOUT=250 TIMEOUT=250 \
  PEER_ARGS="--interleave --delay-us 150 --cupti-launches 0" \
  timeout 330 bash scripts/gpu_loop.sh "$OUT/p" > /dev/null 2>&1; echo "peers rc=$?" >> "$L"
tail -3 "$OUT/p/summary.txt" >> "$L" 2>/dev/null
cp "$OUT/p/json/peers_ch08.json" "$OUT/peers_ch08_$C.json" 2>/dev/null
cp "$OUT/p/json/moe_groups.json" "$OUT/moe_groups_$C.json" 2>/dev/null
grep -E "wgrad_g32" "$OUT/p/peers_moe.log" | grep -E "^(deepgemm|fp8gemm)" >> "$L" 2>/dev/null
tar cJf "$OUT/c.txz" -C "$OUT" gl torch gpu_run.log p 2>/dev/null; rm -rf "$OUT/gl" "$OUT/torch" "$OUT/gpu_run.log" "$OUT/p"
say end
cat "$L"
