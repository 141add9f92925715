#!/usr/bin/env bash
# Session 30, call 2: binaries .gpu/c.txz and the PyTorch package .gpu/py.txz of the commit in
# bin/commit.txt (the early first wave the default of the weight gradient's bf16 TMA tiles, the
# same template instances call 1 timed as _pin_ew4 / _pin_ew1; bf16 dB counts 128 x 192 4 %
# cheaper in the plan's rule, so 24576 x 1536 moves from 128 x 256 to 128 x 192). Then the
# PyTorch tests, benchmark and training example from one commit (chapter 10's README tables).
# Predictions (written before the run):
#  1. GPU tests pass: test_chapter_08_wgrad (every kernel against float64; the new defaults and
#     _pin_loop4 / _pin_loop1 / _pin_ew2 / _pin_ew1 bit for bit against _loop0),
#     test_chapter_08_e2e, test_library_gpu, test_library_threads_gpu; PyTorch 100 passed, 2
#     skipped.
#  2. bench_torch: the layer's wgrad part 5-6 % shorter at the 128 x 192 shapes (2112 x 7168,
#     7168 x 16384, 7168 x 2048; 24576 x 1536 with its change of tile), 3-4 % at 32768 x 512 and
#     4096 x 7168 (128 x 256); Fp8Linear about 1.22, 1.23-1.24, 0.98, 1.44-1.45, 1.31-1.32,
#     1.19-1.20x bf16 (session 29, call 5: 1.20, 1.21, 0.97, 1.42, 1.30, 1.18x).
#  3. The training example's held-out loss ratio FP8 / bf16 as before (1.021): the same sums.
set -u
source scripts/gpu_call.sh .gpu/c.txz .gpu/py.txz || exit 1
C7=${C:0:7}
say "GPU tests"
BIN=$B STEPS=tests ONLY='^(test_chapter_08_wgrad|test_chapter_08_e2e|test_library_gpu|test_library_threads_gpu)$' \
  TIMEOUT=150 timeout 260 bash scripts/gpu_loop.sh "$OUT/gl" > /dev/null 2>&1; echo "gpu_loop rc=$?" >> "$L"
cp "$OUT/gl/summary.txt" "$OUT/gpu_tests_$C7.txt" 2>/dev/null
tail -10 "$OUT/gl/summary.txt" >> "$L" 2>/dev/null
grep -E "tests=" "$OUT/gl/gpu_loop.log" | head -6 >> "$L"
say "PyTorch: tests, bench, train"
timeout 330 bash chapters/10_production/python/gpu_run.sh /tmp/py "$OUT/torch" tests bench train \
  > "$OUT/gpu_run.log" 2>&1; echo "gpu_run rc=$?" >> "$L"
tail -1 "$OUT/torch/tests.log" >> "$L" 2>/dev/null
grep -E "^linear|^  parts" "$OUT/torch/bench_torch.log" | head -20 >> "$L" 2>/dev/null
tail -3 "$OUT/torch/train.log" >> "$L" 2>/dev/null
tar cJf "$OUT/c.txz" -C "$OUT" torch gpu_run.log gl && rm -rf "$OUT/torch" "$OUT/gpu_run.log" "$OUT/gl"
say end
cat "$L"
