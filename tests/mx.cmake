# Tests of MXFP8 on the CPU (common/mx.hpp, chapter 9's ground truth): the shared-exponent rules
# (OCP floor and RCEIL), the quantiser and its 128 x 4 swizzled scale layout, and the CPU model of
# the block-scaled MMA against the float64 reference.
fp8gemm_test(test_mx_cpu LABEL cpu SOURCES test_mx_cpu.cpp)
# GPU (skipped, exit 77, where there is none): quantize_mx_1x32 and quantize_mx_1x32_dual against
# quantize_mx byte for byte, the whole swizzled scale buffer included, on awkward shapes, leading
# dimensions, alignments and values, under both exponent rules; requantize_mx (MXFP8 into chapter
# 7's format) against mx_requantize_1x128 / _128x128 the same way.
fp8gemm_test(test_mx_gpu LABEL gpu SOURCES test_mx_gpu.cu)
