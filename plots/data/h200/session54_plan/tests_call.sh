#!/usr/bin/env bash
# Session 54's first call (README.md beside this file): the tests session 53 wrote after its last
# GPU call, on any Hopper GPU. Carry .gpu/t53.txz and .gpu/py10.txz (session53_plan/pack.sh at
# the commit to run).
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
say end
cat "$L"
