#!/usr/bin/env bash
# Session 57's first call (carry .gpu/t57a.txz and .gpu/py57a.txz, packed at the commit to run by
# plots/data/h200/session57_plan/pack1.sh; on an H200 also .gpu/t56.txz for plan item 1), any
# Hopper GPU, about 330 s (+ about 300 s on an H200):
#  1. the new test_strided_gpu (every library plan with row strides larger than the row: the same
#     kernel's D on packed copies bit for bit, the padding of A, B and D untouched), and the tests
#     of what the per-tensor strides touch: test_chapter_06 (chapter 6's entry point now takes
#     lda, ldb, ldd), test_library_gpu, test_reliability (chapters 1-6), test_chapter_05.
#     Predicted: pass (the engine's TMA maps and epilogues take the leading dimensions from the
#     call; chapter 7 and 8's strided D had run, strided A and B never on the GPU).
#  2. the PyTorch tests, test_strided_operands_every_gemm among them (gemm_per_tensor now takes
#     row-strided a and b). Predicted: pass.
#  3. only on an H200 and with .gpu/t56.txz carried: session 56's call4.sh (plan item 1).
set -u
source scripts/gpu_call.sh .gpu/t57a.txz .gpu/py57a.txz || exit 1
say "test_strided_gpu, test_chapter_06, test_library_gpu, test_reliability, test_chapter_05"
packed_tests_step a '^(test_strided_gpu|test_chapter_06|test_library_gpu|test_reliability|test_chapter_05)$' 200
rm -f "$OUT"/gpu_tests_*.txt
say "PyTorch tests"
torch_tests_step 200
if nvidia-smi --query-gpu=name --format=csv,noheader | grep -q H200 && [ -f .gpu/t56.txz ]; then
  say "an H200: session 56's call4.sh (chapter 9's tables)"
  mkdir -p "$OUT/c4"
  OUT="$OUT/c4" timeout 330 bash plots/data/h200/session56_plan/call4.sh > /dev/null 2>&1
  echo "call4 rc=$?" >> "$L"
  cat "$OUT/c4/call.log" >> "$L" 2>/dev/null
  tar cJf "$OUT/c4.txz" -C "$OUT" c4 && rm -rf "$OUT/c4"
fi
say end
cat "$L"
