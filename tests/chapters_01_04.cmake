# Chapters 1-4 (naive, smem tiling, mma.sync, TMA):
#  - test_chapters_01_04 (gpu): every kernel on >= 30 random shapes against the float64 reference;
#  - test_chapter_args (cpu): bad arguments throw std::invalid_argument before any CUDA call;
#  - SASS checks (cpu): the instructions each chapter is about are really in its kernel.
fp8gemm_test(test_chapters_01_04 LABEL gpu SOURCES test_chapters_01_04.cu)
fp8gemm_test(test_chapter_args LABEL cpu SOURCES test_chapter_args.cu)

# The chapter executables exist only with FP8GEMM_BUILD_BENCHMARKS; the GPU test binary holds the
# same kernels, so fall back to it.
function(fp8gemm_chapter_sass_test name chapter_target)
  if(TARGET ${chapter_target})
    fp8gemm_sass_test(NAME ${name} TARGET ${chapter_target} ${ARGN})
  else()
    fp8gemm_sass_test(NAME ${name} TARGET test_chapters_01_04 ${ARGN})
  endif()
endfunction()

# Chapter 2 runs on the CUDA cores: packed e4m3 -> f16 conversion, FP32 FFMA, no tensor core.
fp8gemm_chapter_sass_test(sass_ch02_smem_tiling ch02_smem_tiling
  KERNEL "ch02.*smem_tiling_kernel" ARCH sm_90a
  CONTAINS FFMA F2FP.F16.E4M3.UNPACK_B LDS.128 ABSENT HMMA)
# Chapter 3: sm_90a has no FP8 mma.sync in hardware; ptxas lowers mma.sync.m16n8k32 e4m3 to
# F2FP.F16.E4M3.UNPACK_B (e4m3x2 -> f16x2) + two HMMA.16816.F32 + FADD into the accumulator.
fp8gemm_chapter_sass_test(sass_ch03_mma_sync ch03_mma_sync
  KERNEL "ch03.*mma_sync_kernel" ARCH sm_90a
  CONTAINS HMMA.16816.F32 F2FP.F16.E4M3.UNPACK_B LDSM LDGSTS ABSENT FFMA)
# Chapter 4: the same compute, operands moved by TMA (UTMALDG) and waited for on mbarriers.
fp8gemm_chapter_sass_test(sass_ch04_tma ch04_tma
  KERNEL "ch04.*tma_kernel" ARCH sm_90a
  CONTAINS UTMALDG HMMA.16816.F32 LDSM SYNCS ABSENT LDGSTS)
