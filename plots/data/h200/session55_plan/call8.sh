#!/usr/bin/env bash
# Session 55's eighth call (carry .gpu/t55f.txz .gpu/py55c.txz, packed at the commit to run as
# below), any Hopper GPU: after the review of the session's diff.
#  - test_chapter_08_wgrad: the checking mode's new cases (a padded total past the capacity that
#    raw counts would not exceed, precedence of a decreasing offset, a total exactly at the
#    capacity, G = 300). Predicted: pass;
#  - the PyTorch tests: the graph-capture and compile tests with the cache on, the grouped
#    layer's cache test, pickling (CPU). Predicted: "127 passed, 2 skipped" (call 2's 126 and
#    test_grouped_experts_weight_cache; the pickling check is a new assertion of an existing test).
# About 120 s.
#   cmake --build build -j2 --target test_chapter_08_wgrad fp8gemm_torch
#   (cd build && tar cf - bin/commit.txt bin/gpu_tests.txt bin/libbenchmark.so.1.7.1 \
#      bin/libbenchmark.so.1debian bin/test_chapter_08_wgrad | xz -9 -T2 > ../.gpu/t55f.txz)
#   rm -rf /tmp/py10 && bash chapters/10_production/python/stage.sh build /tmp/py10/py
#   (cd /tmp/py10 && tar cf - py | xz -6 -T2 > "$OLDPWD/.gpu/py55c.txz")
set -u
source scripts/gpu_call.sh .gpu/t55f.txz .gpu/py55c.txz || exit 1
say "test_chapter_08_wgrad"
packed_tests_step a '^(test_chapter_08_wgrad)$' 100
rm -f "$OUT"/gpu_tests_*.txt
say "PyTorch tests"
torch_tests_step 150
say end
cat "$L"
