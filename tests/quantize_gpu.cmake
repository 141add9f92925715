# Tests of the DeepSeek-V3 quantisers (common/quantize_gpu.hpp, chapter 7's quantisation kernels).
# CPU: the rules of the CPU ground truth (common/quantize.hpp) and every argument check of the
# GPU entry points (they throw before any CUDA call, so they run without a GPU).
fp8gemm_test(quantize_test_cpu LABEL cpu SOURCES test_quantize_cpu.cpp)
# GPU (skipped, exit 77, where there is none): every kernel against the CPU quantisers, byte for
# byte and scale bit for scale bit, on awkward shapes, layouts, leading dimensions and values.
fp8gemm_test(quantize_test_gpu LABEL gpu SOURCES test_quantize_gpu.cu)
