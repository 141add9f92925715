#!/usr/bin/env bash
# Session 54's first call: tests_call.sh's tests on any Hopper GPU, then, on an H200 only,
# chapter 9's bench (call3.sh's second half: $OUT/requant.json). Carry .gpu/t53.txz .gpu/py10.txz
# (session53_plan/pack.sh at the commit to run). About 250 s on an H100, 400 s on an H200.
set -u
source scripts/gpu_call.sh .gpu/t53.txz .gpu/py10.txz || exit 1
say "PyTorch tests"
torch_tests_step 110
say "test_mx_gpu, test_chapter_09_hopper, test_library_gpu"
packed_tests_step a '^(test_mx_gpu|test_chapter_09_hopper|test_library_gpu)$' 240
say "compute-sanitizer memcheck, the re-quantiser's cases"
SAN=$(command -v compute-sanitizer || ls /usr/local/cuda*/bin/compute-sanitizer 2>/dev/null | head -1)
timeout 200 "$SAN" --tool memcheck --error-exitcode 3 "$B/test_mx_gpu" "requantize_mx*" \
  > "$OUT/sanitizer_requant.log" 2>&1
echo "sanitizer rc=$?" >> "$L"
tail -5 "$OUT/sanitizer_requant.log" >> "$L"
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
