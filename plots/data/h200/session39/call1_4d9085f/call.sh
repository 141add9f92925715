#!/usr/bin/env bash
# Session 39, call 1: binaries and PyTorch package at 4d9085f (.gpu/c.txz, .gpu/py.txz): main with
# branch producer-warp's engine back (572f0ad's common/engine, byte for byte; its last change, the
# warpgroup index computed plainly, never ran on a GPU). Every GPU test binary, then the package's
# tests. Prediction: "18 passed, 0 failed, 1 skipped" (test_chapter_09_gpu: no sm_100a GPU);
# PyTorch "105 passed, 2 skipped" (session 38, call 3).
set -u
source scripts/gpu_call.sh .gpu/c.txz .gpu/py.txz || exit 1
say "GPU tests"
gpu_tests_step "^($(paste -sd'|' "$B/gpu_tests.txt"))\$" 520
LEFT=$(seconds_left 585)
say "PyTorch tests ($LEFT s left)"
[ "$LEFT" -gt 45 ] && timeout $((LEFT - 5)) bash chapters/10_production/python/gpu_run.sh /tmp/py "$OUT/torch" tests \
  > "$OUT/gpu_run.log" 2>&1; echo "gpu_run rc=$?" >> "$L"
tail -1 "$OUT/torch/tests.log" >> "$L" 2>/dev/null
grep -E "FAILED|Error" "$OUT/torch/tests.log" | head -5 >> "$L" 2>/dev/null
tar cJf "$OUT/logs.txz" -C "$OUT" gl torch gpu_run.log 2>/dev/null && rm -rf "$OUT/gl" "$OUT/torch" "$OUT/gpu_run.log"
say end
cat "$L"
