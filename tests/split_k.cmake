# Chapter 7's opt-in split-K (common/engine/split_k.hpp / .cuh, chapters/07_block_scaling/
# splitk.*, kernels_splitk.cu), run on the H200 (chapter 7's README, "Small M (decode)").
# CPU: the schedule covers every (tile, K block) once; bad splits refused before any CUDA call.
# GPU: split-K against the float64 reference at the small-M DeepSeek shapes and odd shapes,
# bitwise determinism, S = 1 equal to the unsplit kernel.
fp8gemm_test(common_test_split_k_schedule LABEL cpu SOURCES test_split_k_schedule.cpp)
if(TARGET fp8gemm_ch07)
  fp8gemm_test(test_chapter_07_splitk_args LABEL cpu SOURCES test_chapter_07_splitk_args.cu
               LIBS fp8gemm_ch07)
  fp8gemm_test(test_chapter_07_splitk LABEL gpu SOURCES test_chapter_07_splitk.cu LIBS fp8gemm_ch07)
endif()
# Chapter 8's stream-K division (common/engine/stream_k.hpp): CPU.
fp8gemm_test(common_test_stream_k_schedule LABEL cpu SOURCES test_stream_k_schedule.cpp)
