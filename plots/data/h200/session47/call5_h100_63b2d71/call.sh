#!/usr/bin/env bash
# Session 47, call 5, on an H100 (named nvidia-h200 twice more, an H100 came both times):
# test_chapter_07 at the session's last code (binaries of 63b2d71): the chapter plans now call
# engine::rule_sms (a device query) at construction and choose by the grid's SMs (its max_sms
# cases at 1, 2 and 16 SMs take other kernels for shapes outside the table now). Prediction:
# passes. Run: carry .gpu/t07h.txz.
set -u
source scripts/gpu_call.sh .gpu/t07h.txz || exit 1
nvidia-smi --query-gpu=name,clocks.max.sm,power.limit,driver_version --format=csv >> "$L"
say "test_chapter_07"
gpu_tests_step '^test_chapter_07$' 220
tar cJf "$OUT/logs.txz" -C "$OUT" gl 2>/dev/null && rm -rf "$OUT/gl"
say end
cat "$L"
