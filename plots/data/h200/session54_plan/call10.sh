#!/usr/bin/env bash
# Session 54's tenth call (carry .gpu/t54d.txz: quantize_test_gpu and test_mx_gpu built at 0698a01,
# after the two helpers were shared: e4m3x2_to_float2, zero_block_row_padding), any Hopper GPU.
# Their SASS is identical to the tested code's (cuobjdump); this runs the two binaries whose
# kernels include them. Prediction: "2 passed". About 80 s.
set -u
source scripts/gpu_call.sh .gpu/t54d.txz || exit 1
say "quantize_test_gpu, test_mx_gpu"
packed_tests_step a '^(quantize_test_gpu|test_mx_gpu)$' 150
rm -f "$OUT"/gpu_tests_*.txt
say end
cat "$L"
