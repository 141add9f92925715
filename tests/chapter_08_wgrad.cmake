# Chapter 8's k-grouped weight gradient. GPU: experts of 0, 1, 127, 128, 129, 300 tokens, every
# kernel, overwrite and accumulate (an empty expert's dB_g exactly 0, or untouched), G = 1 and 64,
# a float64 reference per expert, determinism, a CUDA graph replayed with other expert sizes.
# CPU: bad calls refused before any CUDA call.
if(TARGET fp8gemm_ch08)
  fp8gemm_test(test_chapter_08_wgrad LABEL gpu SOURCES test_chapter_08_wgrad.cu LIBS fp8gemm_ch08)
  fp8gemm_test(test_chapter_08_wgrad_args LABEL cpu SOURCES test_chapter_08_wgrad_args.cpp
               LIBS fp8gemm_ch08)
  # The weight gradient's promotion (an FMUL and an FFMA per element and 128 tokens) is
  # interleaved by ptxas as chapter 7's is (chapter_07.cmake, sass_chapter_07_interleaved_ffma):
  # 0.35-0.59 of the FFMAs of every k-grouped kernel with the yield bit clear.
  fp8gemm_sass_test(NAME sass_chapter_08_wgrad_interleaved_ffma TARGET fp8gemm_ch08
                    KERNEL "KGroupedMath" ARCH sm_90a INTERLEAVED_FFMA 0.3)
endif()
fp8gemm_ptxas_test(ptxas_chapter_08_wgrad DIR ${PROJECT_SOURCE_DIR}/chapters/08_grouped_moe
                   SOURCES ${PROJECT_SOURCE_DIR}/chapters/08_grouped_moe/kernels_wgrad.cu)
# End to end: an expert layer's forward, dgrad and wgrad from bf16 through the GPU quantisers.
if(TARGET fp8gemm_ch08)
  fp8gemm_test(test_chapter_08_e2e LABEL gpu SOURCES test_chapter_08_e2e.cu LIBS fp8gemm_ch08)
endif()
