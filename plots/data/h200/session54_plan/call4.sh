#!/usr/bin/env bash
# Session 54's fourth call (carry .gpu/t54.txz, packed at the commit after 072ddd4), any Hopper
# GPU: chapter 9's bench with ch09_requant_weights_once (new: B re-quantised once outside the
# timing, A per call, then chapter 7's plan). Predicted against chapter 7, same run: the
# re-quantising path as in session 53 (H100: 0.886x at 8192^3, 0.821x geomean at M = 4096); weights
# once ~0.94x at 8192^3 (half the re-quantised bytes), 0.88-0.93x geomean at M = 4096. On an H200
# its JSON is also the README's requant block ($OUT/requant.json). About 150 s.
set -u
source scripts/gpu_call.sh .gpu/t54.txz || exit 1
say "ch09_hopper_mxfp8"
timeout 200 "$B/ch09_hopper_mxfp8" --gpu_delay_us=50 --json="$OUT/requant.json" > "$OUT/ch09_bench.log" 2>&1
echo "ch09 bench rc=$?" >> "$L"
grep -E "weights_once|VALIDATION|FAIL" "$OUT/ch09_bench.log" | head -12 >> "$L"
tail -45 "$OUT/ch09_bench.log" >> "$L"
xz -6 -f "$OUT/ch09_bench.log"
say end
cat "$L"
