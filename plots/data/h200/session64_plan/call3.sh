#!/usr/bin/env bash
# Session 64, call 3 (the same pack as call 2: .gpu/t64.txz .gpu/py64.txz at a53f932), what call 2
# left undone, about 570 s (PLAN):
#   1. test_chapter_08 whole (call 2's 150 s ran out in its stream-K test, every test before it
#      passed, the float D's among them): 260 s;
#   2. the PyTorch package's tests, all of them (call 2's ran without PYTHONPATH): gpu_run.sh
#      tests, what is left.
set -u
PLAN=${PLAN:-570}
source scripts/gpu_call.sh .gpu/t64.txz .gpu/py64.txz || exit 1
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,power.limit,driver_version --format=csv >> "$L"
say "test_chapter_08"
packed_tests_step ch08 'test_chapter_08$' 260
left=$(seconds_left "$PLAN")
say "PyTorch tests, $left s left"
torch_tests_step $((left - 10))
say end
cat "$L"
