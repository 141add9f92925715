#!/usr/bin/env bash
# Session 37, call 4: binaries and PyTorch package of db77afb (code of 0f8167c), DeepGEMM 2.6.1
# from .peer.
#  1. The rest of the GPU tests (every engine kernel now launches one-CTA clusters as plain
#     grids): test_chapter_05, _06, _07, _08_wgrad, _09_gpu, _09_hopper, test_chapters_01_04,
#     common_test_gpu, _cublaslt, _bench_harness, test_mx_gpu, test_reliability(_threads),
#     test_chapter_07_splitk. Prediction: 13 passed, 1 skipped (test_chapter_09_gpu: no sm_100a
#     code in the default preset), as in session 36.
#  2. If the time allows: issue 10's peers, one process, interleaved (session 35's call 7 method).
#     Prediction: the ratios within +-2 % of session 36's call 6 (the masked cases and the
#     8192-token skewed ones run c1x1 kernels, now launched as plain grids: call 1 measured such
#     kernels 0.94-1.01x their time); 11 of 20 again.
set -u
source scripts/gpu_call.sh .gpu/c.txz .gpu/py.txz || exit 1
say "GPU tests"
gpu_tests_step '^(test_chapter_05|test_chapter_06|test_chapter_07|test_chapter_08_wgrad|test_chapter_09_gpu|test_chapter_09_hopper|test_chapters_01_04|common_test_gpu|common_test_cublaslt|common_test_bench_harness|test_mx_gpu|test_reliability|test_reliability_threads|test_chapter_07_splitk)$' 380
tar cJf "$OUT/gl.txz" -C "$OUT" gl 2>/dev/null && rm -rf "$OUT/gl"
LEFT=$(seconds_left 590)
if [ "$LEFT" -gt 200 ]; then
  say "peers_moe ($LEFT s left)"
  peers_moe_step $((LEFT - 5))
  tar cJf "$OUT/p.txz" -C "$OUT" p 2>/dev/null && rm -rf "$OUT/p"
else
  echo "peers_moe skipped: $LEFT s left" >> "$L"
fi
say end
cat "$L"
