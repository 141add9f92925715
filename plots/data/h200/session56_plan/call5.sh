#!/usr/bin/env bash
# Session 56's fifth call (carry .gpu/t56d.txz .gpu/py56d.txz, packed at the commit to run:
#   cmake --build build -j2 --target test_library_gpu test_library_threads_gpu \
#     test_chapter_07_splitk test_chapter_08_wgrad test_chapter_09_hopper fp8gemm_torch
#   (cd build && tar cf - bin/commit.txt bin/gpu_tests.txt bin/libbenchmark.so.1.7.1 \
#      bin/libbenchmark.so.1debian bin/test_library_gpu bin/test_library_threads_gpu \
#      bin/test_chapter_07_splitk bin/test_chapter_08_wgrad bin/test_chapter_09_hopper \
#      | xz -9 -T2 > ../.gpu/t56d.txz)
#   rm -rf /tmp/py10 && bash chapters/10_production/python/stage.sh build /tmp/py10/py
#   (cd /tmp/py10 && tar cf - py | xz -6 -T2 > "$OLDPWD/.gpu/py56d.txz")
# ), any Hopper GPU, about 250 s: after the review of the device check, every rebind() checks the
# device first. The tests that rebind every kind of plan: test_library_threads_gpu (new: each
# plan of "every kind of plan" re-bound to its own call with its device current, accepted; the
# counter kernel asserted; dB checked written), the split-K, weight-gradient and chapter 9 Hopper
# tests' rebind cases, test_library_gpu; the PyTorch tests (the plan cache rebinds on every
# changed buffer; the weight cache's writes under a lock). Predicted: pass; PyTorch "128 passed,
# 2 skipped".
set -u
source scripts/gpu_call.sh .gpu/t56d.txz .gpu/py56d.txz || exit 1
say "GPU tests"
packed_tests_step a '^(test_library_gpu|test_library_threads_gpu|test_chapter_07_splitk|test_chapter_08_wgrad|test_chapter_09_hopper)$' 280
rm -f "$OUT"/gpu_tests_*.txt
say "PyTorch tests"
torch_tests_step 150
say end
cat "$L"
