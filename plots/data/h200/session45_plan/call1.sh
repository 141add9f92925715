#!/usr/bin/env bash
# Session 44's plan for the next device session, call 1 (no GPU was lent in session 44; its
# plan, session43's "session44_plan", never ran and is folded in here). Binaries of main at
# 57c3b96, .gpu/c10.txz (packed in session 44; not in git; how to pack it again: the end of this
# header); the package .gpu/py10.txz staged at the same commit.
# Since the last binaries that ran on the H200 (18a7ac7; 0d59ffe for every test binary), every
# sm_90a kernel's SASS is unchanged (tools/sass_diff.py, 0 differ in all 19 GPU test binaries:
# b300660's engine refactor, cf01942 and earlier's table and test changes), except session 44's
# new decode kernels of chapter 7 (7ec3d9b and after). What has not run on a GPU:
#  - the library's re-learned dispatch table (session 43) and chapter 6's 128 x 4096 x 7168 row;
#  - the test races mended in d7d31a0 (quantize_test_gpu's graph replay, chapter 8's wgrad);
#  - session 44's mended tests (54093f1, bceed82, 430f628): the library threads test requires every
#    D entry written, the library GPU test checks its D against float64; chapter 8's wgrad checks
#    a strided dB's padding column and reruns plans after refused rebinds; the counter-schedule
#    graph requires the counter kernel; quantiser refusals check messages and untouched outputs;
#    test_reliability's refusals check the memory pointed at; chapter 6's streams test waits for
#    its uploads; chapters 7 (SM-count shapes for every kernel, quantiser -> GEMM in float64),
#    7's split-K and 9's Hopper tests check first runs, other rows and paddings (call 2).
# 1. This call: quantize_test_gpu, test_chapter_08_wgrad, test_library_gpu, test_chapter_06,
#    test_chapter_08, test_library_threads_gpu (about 420 s in session 43). Prediction: all pass.
#    A failure in a session 44 check is first suspected to be the test's (written without a GPU):
#    read its message before blaming a kernel.
# Call 2 (call2.sh): test_reliability, test_chapter_07 (the three new kernels are in its "every
# kernel" cases) and the block-scaled dispatch sweep at M <= 128. Call 3 (call3.sh): PyTorch tests,
# then the op against DeepGEMM with the committed table and with the sweep's picks.
# Packing (on the CPU machine, after cmake --build build at the head to run):
#   (cd build && tar cf - bin/commit.txt bin/gpu_tests.txt bin/libbenchmark.so.1.7.1 \
#      bin/libbenchmark.so.1debian bin/quantize_test_gpu bin/test_chapter_08_wgrad \
#      bin/test_library_gpu bin/test_chapter_06 bin/test_chapter_08 bin/test_library_threads_gpu \
#      bin/test_reliability bin/test_chapter_07 bin/test_chapter_07_splitk bin/test_chapter_09_hopper \
#      bin/fp8gemm_dispatch_sweep | xz -9e -T2 > ../.gpu/c10.txz)
#   (cd build && tar cf - bin/commit.txt bin/libbenchmark.so.1.7.1 bin/libbenchmark.so.1debian \
#      | xz -9e > ../.gpu/c10s.txz)   # call 3: the commit only (the carry limit)
#   bash chapters/10_production/python/stage.sh build /tmp/py10/py && (cd /tmp/py10 && tar cf - py \
#      | xz -6 -T2 > /work/main/.gpu/py10.txz)
# Run: carry .gpu/c10.txz.
set -u
source scripts/gpu_call.sh .gpu/c10.txz || exit 1
say "GPU tests"
gpu_tests_step '^(quantize_test_gpu|test_chapter_08_wgrad|test_library_gpu|test_chapter_06|test_chapter_08|test_library_threads_gpu)$' 540
tar cJf "$OUT/logs.txz" -C "$OUT" gl 2>/dev/null && rm -rf "$OUT/gl"
say end
cat "$L"
