#!/usr/bin/env bash
# Session 57's second call (carry .gpu/t57b.txz and .gpu/py57b.txz, packed at the commit to run:
#   cmake --build build -j2 --target test_strided_gpu test_chapter_08 test_library_threads_gpu \
#     fp8gemm_torch
#   (cd build && tar cf - bin/commit.txt bin/gpu_tests.txt bin/libbenchmark.so.1.7.1 \
#      bin/libbenchmark.so.1debian bin/test_strided_gpu bin/test_chapter_08 \
#      bin/test_library_threads_gpu | xz -9 -T2 > ../.gpu/t57b.txz)
#   rm -rf /tmp/py10 && bash chapters/10_production/python/stage.sh build /tmp/py10/py
#   (cd /tmp/py10 && tar cf - py | xz -6 -T2 > "$OLDPWD/.gpu/py57b.txz")
# ), any Hopper GPU, about 300 s: the fixes of two audits of this session.
#  1. test_chapter_08: a grouped plan's caller tile counter inside the offsets, D, A or a scale is
#     refused before any launch (the kernel's atomics and reset would write it while it reads
#     them); test_library_threads_gpu (the counter schedule from threads); test_strided_gpu (its
#     cases refactored into one helper per dense family). Predicted: pass.
#  2. PyTorch: test_weight_cache_fused_optimizer_and_streams (new: a fused AdamW step, which does
#     not bump the weight's version counter, makes the weight cache miss; an entry filled on one
#     stream and read on another is waited for). Predicted: pass, and the printed version
#     unchanged by the fused step (as on the CPU).
set -u
source scripts/gpu_call.sh .gpu/t57b.txz .gpu/py57b.txz || exit 1
say "test_chapter_08, test_library_threads_gpu, test_strided_gpu"
packed_tests_step a '^(test_chapter_08|test_library_threads_gpu|test_strided_gpu)$' 330
rm -f "$OUT"/gpu_tests_*.txt
say "PyTorch tests"
torch_tests_step 200
say end
cat "$L"
