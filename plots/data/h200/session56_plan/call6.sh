#!/usr/bin/env bash
# Session 56's sixth call (carry .gpu/t56d.txz (call 5's binaries, unused but for gpu_call.sh's
# set-up) and .gpu/py56e.txz, the staged PyTorch package at the commit to run:
#   cmake --build build -j2 --target fp8gemm_torch
#   rm -rf /tmp/py10 && bash chapters/10_production/python/stage.sh build /tmp/py10/py
#   (cd /tmp/py10 && tar cf - py | xz -6 -T2 > "$OLDPWD/.gpu/py56e.txz")
# ), any Hopper GPU, about 60 s: the PyTorch ops' check_offsets=True (chapter 8's checking modes
# through the grouped ops, the weight gradient and Fp8GroupedExperts). Predicted: every test
# passes, "129 passed, 2 skipped" (call 5's 128 and test_check_offsets).
set -u
source scripts/gpu_call.sh .gpu/t56d.txz .gpu/py56e.txz || exit 1
say "PyTorch tests"
torch_tests_step 150
say end
cat "$L"
