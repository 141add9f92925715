# Tests of the DeepSeek-V3 quantisers (common/quantize_gpu.hpp: chapter 7's quantisation kernels and
# chapter 8's expert-token quantiser for the weight gradient).
# CPU: the rules of the CPU ground truth (common/quantize.hpp) and every argument check of the
# GPU entry points (they throw before any CUDA call, so they run without a GPU).
fp8gemm_test(quantize_test_cpu LABEL cpu SOURCES test_quantize_cpu.cpp)
# GPU (skipped, exit 77, where there is none): every kernel against the CPU quantisers, byte for
# byte and scale bit for scale bit, on awkward shapes, layouts, leading dimensions and values; the
# expert-token quantiser also in a CUDA graph replayed with other expert sizes.
fp8gemm_test(quantize_test_gpu LABEL gpu SOURCES test_quantize_gpu.cu)
# ptxas (CPU, label sass): the lean kernels (tuning_1x128 "v2_lean", "v3_shared", "v4_occ4": 16 in
# quantize_gpu.cu, 12 in quantize_grouped_gpu.cu) compile without stack frames or spills.
add_test(NAME ptxas_quantize_lean
         COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/ptxas_quantize_lean.py
                 --nvcc ${CMAKE_CUDA_COMPILER} --expect 28
                 ${PROJECT_SOURCE_DIR}/common/src/quantize_gpu.cu
                 ${PROJECT_SOURCE_DIR}/common/src/quantize_grouped_gpu.cu
                 -- -std=c++20 ${FP8GEMM_GENCODE_SM90A} --expt-relaxed-constexpr -O3 -DNDEBUG
                 -I${PROJECT_SOURCE_DIR})
set_tests_properties(ptxas_quantize_lean PROPERTIES LABELS "cpu;sass" TIMEOUT 600)
