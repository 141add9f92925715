#!/usr/bin/env bash
# Session 33, call 3: binaries (.gpu/c.txz: ch08_grouped_moe, test_library_gpu) and the PyTorch
# package (.gpu/py.txz) of 6d074fd. What changed since call 2: the PyTorch op that takes a grouped
# kernel by name keys a plan of a kernel that owns a workspace (_dyn, _sk, _skr) by the stream, with
# a new test (test_grouped_workspace_kernel_plan_per_stream); fp8gemm.hpp comments. Kernels: none.
# The _dyn kernel (atomics, a self-resetting counter) has not been under compute-sanitizer yet.
# Predictions: memcheck "0 errors", racecheck "0 hazards", synccheck "0 errors" on the _dyn kernel
# (--no-bench --sizes=256: groups of 0, 1, 127, 128, 129, 256 rows, 33793-row groups so that every
# CTA draws several tiles); PyTorch tests 101 passed, 2 skipped; test_library_gpu passes.
set -u
source scripts/gpu_call.sh .gpu/c.txz .gpu/py.txz || exit 1
mkdir -p "$OUT/san"
for tool in memcheck racecheck synccheck; do
  say "$tool, _dyn"
  timeout 100 compute-sanitizer --tool $tool --error-exitcode 1 "$B/ch08_grouped_moe" --no-bench --sizes=256 \
    --forward-only --kernels=128x256_s4_c1x1_promoted_tma_b1_dyn > "$OUT/san/$tool.log" 2>&1; echo "rc=$?" >> "$L"
  tail -2 "$OUT/san/$tool.log" >> "$L"
done
LEFT=$(seconds_left 400)
say "PyTorch tests, $LEFT s left"
timeout 120 bash chapters/10_production/python/gpu_run.sh /tmp/py "$OUT/torch" tests \
  > "$OUT/gpu_run.log" 2>&1; echo "gpu_run rc=$?" >> "$L"
tail -1 "$OUT/torch/tests.log" >> "$L" 2>/dev/null
grep -E "plan_per_stream" "$OUT/torch/tests.log" >> "$L" 2>/dev/null
LEFT=$(seconds_left 400)
if [ "$LEFT" -gt 90 ]; then
  say "test_library_gpu, $LEFT s left"
  timeout $((LEFT - 5)) "$B/test_library_gpu" > "$OUT/san/test_library_gpu.log" 2>&1; echo "rc=$?" >> "$L"
  tail -2 "$OUT/san/test_library_gpu.log" >> "$L"
fi
tar cJf "$OUT/c.txz" -C "$OUT" san torch gpu_run.log 2>/dev/null; rm -rf "$OUT/san" "$OUT/torch" "$OUT/gpu_run.log"
say end
cat "$L"
