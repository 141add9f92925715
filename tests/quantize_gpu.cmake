# Tests of the DeepSeek-V3 quantisers (common/quantize_gpu.hpp: chapter 7's quantisation kernels and
# chapter 8's expert-token quantiser for the weight gradient).
# CPU: the rules of the CPU ground truth (common/quantize.hpp) and every argument check of the
# GPU entry points (they throw before any CUDA call, so they run without a GPU).
fp8gemm_test(quantize_test_cpu LABEL cpu SOURCES test_quantize_cpu.cpp)
# GPU (skipped, exit 77, where there is none): every kernel against the CPU quantisers, byte for
# byte and scale bit for scale bit, on awkward shapes, layouts, leading dimensions and values; the
# expert-token quantiser also in a CUDA graph replayed with other expert sizes.
fp8gemm_test(quantize_test_gpu LABEL gpu SOURCES test_quantize_gpu.cu)
