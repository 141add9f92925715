#!/usr/bin/env bash
# Session 69, call 2: carry .gpu/t69b.txz (BINS="test_library_gpu test_chapter_07 test_chapter_08"
# bash plots/data/h200/session69_plan/pack.sh b, after call 1 dropped chapter 8's 1 x 2 FP32
# kernel). Any Hopper, about PLAN seconds (default 400). Call 1 cut test_library_gpu (its step's
# 200 s ran out with test_chapter_09_hopper's 63 s before it) and ran test_chapter_07's FP32 cases
# only: the two whole, then test_chapter_08 whole if time is left.
#   Predictions: all pass (test_library_gpu 74-92 s in earlier runs; its per-tensor FP32 kernels'
#   accumulate case now with D's earlier values at the product's rms, required visible).
set -u
PLAN=${PLAN:-400}
source scripts/gpu_call.sh .gpu/t69b.txz || exit 1
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,power.limit,driver_version --format=csv >> "$L"
say "test_library_gpu, test_chapter_07"
packed_tests_step lib 'test_library_gpu|test_chapter_07$' 250
left=$(seconds_left "$PLAN")
if [[ $left -gt 120 ]]; then
  say "test_chapter_08 whole, $left s left"
  packed_tests_step ch08 'test_chapter_08$' $((left - 10))
fi
finish_call
