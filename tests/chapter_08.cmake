# Chapter 8 (grouped MoE, first version). CPU: bad calls refused before any CUDA call; ptxas
# findings. GPU (written with the kernels, not yet run on a GPU): contiguous groups of 0, 1, 127,
# 128, 129 rows, masked groups with masked_m 0 and M_max, G = 1, a float64 reference per group,
# rows outside the groups untouched, CUDA-graph replay with changed offsets, determinism.
if(TARGET fp8gemm_ch08)
  fp8gemm_test(test_chapter_08_args LABEL cpu SOURCES test_chapter_08_args.cpp LIBS fp8gemm_ch08)
  fp8gemm_test(test_chapter_08 LABEL gpu SOURCES test_chapter_08.cu LIBS fp8gemm_ch08)
endif()
fp8gemm_ptxas_test(ptxas_chapter_08 DIR ${PROJECT_SOURCE_DIR}/chapters/08_grouped_moe
                   SOURCES ${PROJECT_SOURCE_DIR}/chapters/08_grouped_moe/kernels_grouped.cu)
