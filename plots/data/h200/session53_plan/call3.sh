#!/usr/bin/env bash
# Session 53's third plan (.gpu/t53.txz packed at the commit to run): test_mx_gpu and
# test_chapter_09_hopper on any card (the commit after 0e3075f reshaped the re-quantiser's job
# struct and chapter 9's rebind; prediction "2 passed"), then chapter 9's bench on an H200 only
# (the file plots/plot.py renders into chapter 9's README, plots/data/h200/ch09/requant.json). Prediction: the re-quantising path 0.89-0.92x chapter 7 at
# 8192^3 and ~0.84-0.87x geomean at M = 4096 (the H200's 4.8 TB/s shortens the re-quantisation by
# up to 1.4x against the H100's 3.35 TB/s, while chapter 7's GEMM runs at about the same speed).
set -u
source scripts/gpu_call.sh .gpu/t53.txz || exit 1
say "test_mx_gpu, test_chapter_09_hopper"
packed_tests_step f '^(test_mx_gpu|test_chapter_09_hopper)$' 100
rm -f "$OUT"/gpu_tests_*.txt
if ! nvidia-smi --query-gpu=name --format=csv,noheader | grep -q H200; then
  say "not an H200: stopping"; cat "$L"; exit 0
fi
say "ch09_hopper_mxfp8"
timeout 150 "$B/ch09_hopper_mxfp8" --gpu_delay_us=50 --json="$OUT/requant.json" > "$OUT/ch09_bench.log" 2>&1
echo "ch09 bench rc=$?" >> "$L"
grep -E "^ch09_hopper_mx_requant|^ch09_requant_gemm|^ch07_block|VALIDATION|FAIL" "$OUT/ch09_bench.log" | tail -24 >> "$L"
xz -6 -f "$OUT/ch09_bench.log"
say end
cat "$L"
