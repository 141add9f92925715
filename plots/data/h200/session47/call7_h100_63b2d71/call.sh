#!/usr/bin/env bash
# Session 47, call 7, on an H100 (the H200 never came): two cases of test_chapter_06 at the
# session's last code (binaries of 63b2d71), the ones that run the chapter's own choice through
# the new engine::rule_sms: "max_sms limits the grid and the result stays right" (700 x 900 x 272
# at max_sms 1, 2, 16: the large-tile rule now scores waves on those counts) and "the table's
# kernels on edge and seeded-random shapes, both modes" (all SMs). Prediction: both pass.
# Run: carry .gpu/t06.txz.
set -u
source scripts/gpu_call.sh .gpu/t06.txz || exit 1
nvidia-smi --query-gpu=name,clocks.max.sm,power.limit,driver_version --format=csv >> "$L"
for c in "ch06: max_sms limits the grid and the result stays right" \
         "ch06: the table's kernels on edge and seeded-random shapes, both modes"; do
  say "$c"
  timeout 100 "$B/test_chapter_06" "$c" -s 2>&1 | grep -E "max_sms|passed|failed|FAILED" | tail -8 >> "$L"
  echo "rc=${PIPESTATUS[0]}" >> "$L"
done
say end
cat "$L"
