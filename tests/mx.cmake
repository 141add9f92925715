# Tests of MXFP8 on the CPU (common/mx.hpp, chapter 9's ground truth): the shared-exponent rules
# (OCP floor and RCEIL), the quantiser and its 128 x 4 swizzled scale layout, and the CPU model of
# the block-scaled MMA against the float64 reference.
fp8gemm_test(test_mx_cpu LABEL cpu SOURCES test_mx_cpu.cpp)
