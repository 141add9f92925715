# Chapter 9, Blackwell half (the sm_100a MXFP8 kernel; never run on hardware here).
# CPU: validation messages, the plan's refusal of non-sm_100 GPUs, scale-layout addressing, the
#      instruction / shared-memory descriptors field by field, the launch configuration, a
#      CPU walk through the kernel's loops against the float64 definition, and the barrier
#      protocol under random schedules.
# SASS (full preset only): the block-scaled tensor-core MMA and its helpers in the sm_100a cubin,
#      for both instances (a CTA alone, a CTA pair).
# GPU: the kernel against the float64 reference; its own main() skips (exit 77) unless the GPU
#      is compute capability 10.0 and the build has sm_100a code.
if(TARGET fp8gemm_ch09)
  fp8gemm_test(test_chapter_09_host LABEL cpu SOURCES test_chapter_09_host.cpp LIBS fp8gemm_ch09)
  # The kernel's barrier protocol (both instances) under random schedules, and broken variants
  # of it that must fail (test_chapter_09_protocol.cpp).
  fp8gemm_test(test_chapter_09_protocol LABEL cpu SOURCES test_chapter_09_protocol.cpp
               LIBS fp8gemm_ch09)

  add_executable(test_chapter_09_gpu test_chapter_09_gpu.cu)
  target_include_directories(test_chapter_09_gpu PRIVATE ${CMAKE_CURRENT_SOURCE_DIR})
  target_link_libraries(test_chapter_09_gpu PRIVATE fp8gemm::common fp8gemm_ch09
                        ${FP8GEMM_CATCH_TARGET})
  target_compile_definitions(test_chapter_09_gpu PRIVATE ${FP8GEMM_CATCH_DEFS})
  fp8gemm_cuda_target(test_chapter_09_gpu)
  add_test(NAME test_chapter_09_gpu COMMAND test_chapter_09_gpu)
  set_tests_properties(test_chapter_09_gpu PROPERTIES LABELS gpu SKIP_RETURN_CODE 77)
  set_property(GLOBAL APPEND PROPERTY FP8GEMM_GPU_TESTS test_chapter_09_gpu)

  if(FP8GEMM_BUILD_SM100)
    # Read with cuobjdump --dump-sass (nvcc 13.0, sm_100a) before writing this; ptxas named:
    #   tcgen05.mma.cta_group::1.kind::mxf8f6f4.block_scale -> UTCQMMA, printed as
    #       "UTCQMMA gdesc[UR4], gdesc[UR8], tmem[D], tmem[SFA], idesc[..], tmem[SFB], UP0":
    #       the two extra tmem operands are the scale factors (the block-scaled form)
    #   tcgen05.cp.cta_group::1.32x128b.warpx4                -> UTCCP.T.S.4x32dp128bit
    #       (tmem[UR + 0x100] and tmem[UR + 0x104], UR = base + 8 x stage: the stage's scale
    #       slot, columns 256 + 8 s and 260 + 8 s)
    #   tcgen05.ld.sync.aligned.32x32b.x32                    -> LDTM.x32
    #   tcgen05.commit ... mbarrier::arrive::one              -> UTCBAR
    #   tcgen05.alloc                                         -> UTCATOMSWS.FIND_AND_SET.ALIGN
    #   tcgen05.dealloc                                       -> UTCATOMSWS.AND
    #   cp.async.bulk.tensor.2d (TMA loads)                   -> UTMALDG.2D
    #   cp.async.bulk.tensor.2d.global.shared::cta (D's store) -> UTMASTG.2D
    #   cp.reduce.async.bulk.tensor.2d ... .add (a float D with accumulate; session 65)
    #                                                         -> UTMAREDG.2D.ADD
    #   fence.proxy.async.shared::cta (before it)             -> FENCE.VIEW.ASYNC.S
    #   mbarrier.try_wait                                     -> SYNCS.PHASECHK.TRANS64.TRYWAIT
    # and no local memory (LDL / STL: no spills, no stack arrays).
    # The single-CTA instance (mxfp8_gemm_sm100_kernel<1>); none of the pair's forms.
    fp8gemm_sass_test(NAME sass_chapter_09_sm100 TARGET fp8gemm_ch09
                      KERNEL "mxfp8_gemm_sm100_kernelILi1E" ARCH sm_100a
                      CONTAINS UTCQMMA UTCCP.T.S.4x32dp128bit LDTM.x32 UTCBAR
                               UTCATOMSWS.FIND_AND_SET.ALIGN UTMALDG.2D SYNCS.PHASECHK
                               UTMASTG.2D UTMAREDG.2D.ADD FENCE.VIEW.ASYNC.S
                      ABSENT LDL STL UTCQMMA.2CTA UTCCP.T.S.2CTA UTCBAR.2CTA UTMALDG.2D.2CTA
                             UTCATOMSWS.2CTA UCGABAR_ARV R2UR.BROADCAST)
    # The CTA-pair instance (mxfp8_gemm_sm100_kernel<2>, Options::cta_group = 2), read the same
    # way; ptxas marks every .cta_group::2 form with .2CTA:
    #   tcgen05.mma.cta_group::2.kind::mxf8f6f4.block_scale -> UTCQMMA.2CTA (same six operands)
    #   tcgen05.cp.cta_group::2.32x128b.warpx4               -> UTCCP.T.S.2CTA.4x32dp128bit
    #   tcgen05.commit.cta_group::2 ... .multicast::cluster  -> UTCBAR.2CTA.MULTICAST [bar], URZ, mask
    #   tcgen05.alloc.cta_group::2                           -> UTCATOMSWS.2CTA.FIND_AND_SET.ALIGN
    #   cp.async.bulk.tensor.2d ... .cta_group::2            -> UTMALDG.2D.2CTA
    #   barrier.cluster.arrive / wait                        -> UCGABAR_ARV / UCGABAR_WAIT
    #   mbarrier.arrive.shared::cluster (the odd CTA's epilogue onto the even CTA's tmem_empty)
    #                                                        -> SYNCS.ARRIVE.TRANS64.RED.A1T0
    # (tcgen05.dealloc.cta_group::2 prints as UTCATOMSWS.AND, as the single-CTA one does.)
    # Neither instance may contain R2UR.BROADCAST: ptxas's loop around a TMA or tcgen05 issue
    # whose operands it cannot prove uniform (126 of them when the tile loops' start was computed
    # before the role branches; see kernel_sm100.cu).
    fp8gemm_sass_test(NAME sass_chapter_09_sm100_pair TARGET fp8gemm_ch09
                      KERNEL "mxfp8_gemm_sm100_kernelILi2E" ARCH sm_100a
                      CONTAINS UTCQMMA.2CTA UTCCP.T.S.2CTA.4x32dp128bit UTCBAR.2CTA.MULTICAST
                               UTCATOMSWS.2CTA.FIND_AND_SET.ALIGN UTMALDG.2D.2CTA LDTM.x32
                               UCGABAR_ARV UCGABAR_WAIT SYNCS.ARRIVE.TRANS64.RED.A1T0
                               SYNCS.PHASECHK UTMASTG.2D UTMAREDG.2D.ADD FENCE.VIEW.ASYNC.S
                      ABSENT LDL STL R2UR.BROADCAST)
  endif()
endif()

# Chapter 9's Hopper half (the MXFP8 recipe on the engine, sm_90a): GPU tests of its three paths
# (run on the H200 and, in session 53, on an H100; the re-quantising path runs chapter 7's plan),
# the CPU refusals, and the ptxas verdict on its kernels.
if(TARGET fp8gemm_ch09_hopper)
  fp8gemm_test(test_chapter_09_hopper LABEL gpu SOURCES test_chapter_09_hopper.cu
               LIBS fp8gemm_ch09_hopper)
  fp8gemm_test(test_chapter_09_hopper_args LABEL cpu SOURCES test_chapter_09_hopper_args.cpp
               LIBS fp8gemm_ch09_hopper)
endif()
fp8gemm_ptxas_test(ptxas_chapter_09_hopper DIR ${PROJECT_SOURCE_DIR}/chapters/09_blackwell_mxfp8
                   SOURCES ${PROJECT_SOURCE_DIR}/chapters/09_blackwell_mxfp8/kernels_hopper.cu
                           ${PROJECT_SOURCE_DIR}/chapters/09_blackwell_mxfp8/kernels_hopper_bf16.cu)

# Session 54's table of the requantize_block_scaled path on an H100 (session 53's with the
# weights-once column), printed into chapter 9's README from its committed JSON
# (fp8gemm_doc_table_test).
fp8gemm_doc_table_test(chapter_09_requant_h100 chapters/09_blackwell_mxfp8/README.md
                       session54/requant_h100.py)
