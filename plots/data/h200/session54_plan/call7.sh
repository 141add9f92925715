#!/usr/bin/env bash
# Session 54's seventh call (carry .gpu/t54.txz (a8ff964) .gpu/py54b.txz (staged at the commit
# after dead960's follow-ups: the PyTorch tests' new per-stream count and the weights-once recipe
# captured and compiled)), any Hopper GPU: the PyTorch tests. Prediction: "122 passed, 2 skipped".
# Then, on an H200 only, chapter 9's bench (the README's requant block) and the re-quantiser's
# variants against a copy. About 60 s (H100), 150 s (H200). PKG=<archive> carries another staged
# package (call8.sh).
set -u
source scripts/gpu_call.sh .gpu/t54.txz "${PKG:-.gpu/py54b.txz}" || exit 1
say "PyTorch tests"
torch_tests_step 120
if ! nvidia-smi --query-gpu=name --format=csv,noheader | grep -q H200; then
  say "not an H200: stopping"; cat "$L"; exit 0
fi
say "ch09_hopper_mxfp8"
timeout 200 "$B/ch09_hopper_mxfp8" --gpu_delay_us=50 --json="$OUT/requant.json" > "$OUT/ch09_bench.log" 2>&1
echo "ch09 bench rc=$?" >> "$L"
grep -E "VALIDATION|FAIL" "$OUT/ch09_bench.log" | head -5 >> "$L"
grep -E "^(ch09_hopper_mx_requant|ch09_requant_weights_once|ch07_block_scaled) " "$OUT/ch09_bench.log" >> "$L"
xz -6 -f "$OUT/ch09_bench.log"
say "quantize_bench, the re-quantiser"
timeout 60 "$B/quantize_bench" --benchmark_filter='requantize' \
  --benchmark_out="$OUT/quantize_bench_requant.json" > "$OUT/qb.log" 2>&1
echo "quantize_bench rc=$?" >> "$L"; grep -E "^requantize" "$OUT/qb.log" | tail -15 >> "$L"; rm -f "$OUT/qb.log"
say end
cat "$L"
