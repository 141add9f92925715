#!/usr/bin/env bash
# Session 43's plan for the next device session, call 1: main's binaries and package at the commit
# in .gpu/c9.txz's bin/commit.txt (session 43's last; .gpu is not in git: rebuild and pack them
# from main if it is gone: see the end of this header). Since the binaries that ran in session 43
# (0d59ffe: every test binary; 18a7ac7: six), main changed host code and tests only (every sm_90a
# kernel's SASS equals 0d59ffe's and 18a7ac7's: tools/sass_diff.py, 0 differ):
#  - the library's dispatch table (29 of 80 rows) and chapter 6's 128 x 4096 x 7168 row;
#  - the test races mended in d7d31a0 (quantize_test_gpu's graph replay, chapter 8's wgrad replay);
#  - test_library_gpu's PerTensorPlan / MxPlan cases at a shape of partial tiles (bb9a977).
#  1. GPU tests not run at main's head: quantize_test_gpu (its graph-replay case failed once in
#     session 43 on the test's own stream race), test_chapter_08_wgrad, test_library_gpu (the new
#     table), test_chapter_06 (the changed row), test_chapter_08, test_library_threads_gpu.
#     Prediction: all pass.
#     The six took about 420 s in session 43's calls (quantize 50-60, wgrad 35, library 73,
#     chapter 6 83, chapter 8 147, threads 21). Call 2 (call2.sh): PyTorch and the peers.
# Packing (on the CPU machine, after cmake --build build):
#   (cd build && tar cf - bin/commit.txt bin/gpu_tests.txt bin/libbenchmark.so.1.7.1 \
#      bin/libbenchmark.so.1debian bin/quantize_test_gpu bin/test_chapter_08_wgrad \
#      bin/test_library_gpu bin/test_chapter_06 bin/test_chapter_08 bin/test_library_threads_gpu \
#      | xz -9e -T2 > ../.gpu/c9.txz)
#   bash chapters/10_production/python/stage.sh build /tmp/py9/py && (cd /tmp/py9 && tar cf - py \
#      | xz -6 -T2 > /work/main/.gpu/py9.txz)
# Run: carry .gpu/c9.txz.
set -u
source scripts/gpu_call.sh .gpu/c9.txz || exit 1
say "GPU tests"
gpu_tests_step '^(quantize_test_gpu|test_chapter_08_wgrad|test_library_gpu|test_chapter_06|test_chapter_08|test_library_threads_gpu)$' 570
tar cJf "$OUT/logs.txz" -C "$OUT" gl 2>/dev/null && rm -rf "$OUT/gl"
say end
cat "$L"
