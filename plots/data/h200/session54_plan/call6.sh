#!/usr/bin/env bash
# Session 54's sixth call (carry .gpu/t54.txz .gpu/py54.txz, session54_plan/pack.sh and
# chapters/10_production/python/stage.sh at a8ff964), any Hopper GPU:
#  - the PyTorch tests with the new ops requantize_mx_1x128 / _128x128 (bit for bit against the
#    rule written in torch, the weights-once recipe, misuse, opcheck). Prediction: "121 passed,
#    2 skipped" (113 + 5 + 2 + 1);
#  - test_mx_gpu (requant_tuning::variant_run asserted on every check, a B-only odd-scales call)
#    and test_chapter_09_hopper. Prediction: pass;
#  - chapter 9's bench, its weights-once recipe now validated once and launched per run (as the
#    path's plan is). Prediction: as call 4 within 0.01 (the host work was hidden by the 50 us GPU
#    delay): the path ~0.884x / 0.820x, weights once ~0.933x / 0.903x. On an H200 its JSON is the
#    README's requant block too. About 200 s.
set -u
source scripts/gpu_call.sh .gpu/t54.txz .gpu/py54.txz || exit 1
say "PyTorch tests"
torch_tests_step 120
say "test_mx_gpu, test_chapter_09_hopper"
packed_tests_step a '^(test_mx_gpu|test_chapter_09_hopper)$' 150
rm -f "$OUT"/gpu_tests_*.txt
say "ch09_hopper_mxfp8"
timeout 200 "$B/ch09_hopper_mxfp8" --gpu_delay_us=50 --json="$OUT/requant.json" > "$OUT/ch09_bench.log" 2>&1
echo "ch09 bench rc=$?" >> "$L"
grep -E "weights_once|VALIDATION|FAIL" "$OUT/ch09_bench.log" | head -9 >> "$L"
grep -E "^(ch09_hopper_mx_requant|ch09_requant_weights_once|ch07_block_scaled) " "$OUT/ch09_bench.log" >> "$L"
xz -6 -f "$OUT/ch09_bench.log"
say end
cat "$L"
