# Chapter 7 (block scaling on the engine).
# GPU: every compiled kernel against the float64 reference on the dequantised operands at the
# scheduler's edges and K % 128 != 0; every scale layout (converted ones bitwise equal to the
# TMA-read one); scale edge values; FP32 output with accumulate; all-positive data at K = 65536;
# GPU quantisers -> GEMM end to end; determinism; refused memory.
# CPU: arguments refused before any CUDA call; the table names compiled kernels; SASS; ptxas.
if(TARGET fp8gemm_ch07)
  fp8gemm_test(test_chapter_07 LABEL gpu SOURCES test_chapter_07.cu LIBS fp8gemm_ch07)
  fp8gemm_test(test_chapter_07_args LABEL cpu SOURCES test_chapter_07_args.cu LIBS fp8gemm_ch07)

  # Every block-scaled kernel: the FP8 MMA, TMA loads (operands and scales), the FFMA promotion,
  # the register split, no local memory.
  fp8gemm_sass_test(NAME sass_chapter_07_all TARGET fp8gemm_ch07 KERNEL "BlockScaledMath" ARCH sm_90a
                    EACH
                    CONTAINS QGMMA UTMALDG.2D USETMAXREG SYNCS.PHASECHK FFMA
                    ABSENT LDL STL HMMA)
  # Block scaling's main loops wait on the ring asleep too (BarrierWait::sleep, session 17).
  fp8gemm_sass_test(NAME sass_chapter_07_sleeping_waits TARGET fp8gemm_ch07
                    KERNEL "BarrierWaitE0EEENS0_15BlockScaledMath" ARCH sm_90a EACH
                    CONTAINS NANOSLEEP.SYNCS)
  # DeepGEMM's tile: 256 x 128, A shared by a 1 x 2 cluster (multicast), TMA-store epilogue.
  # The 8192^3 kernel with the early first wave (its default since session 23; a twin since
  # session 22): at most as many S2UR as the setup needs (8 then); 15 at 4b4aa54, whose K loop
  # re-read the CTA id in every K block (chapter 6's sass_chapter_06_early_wave says more). And
  # the tile's first B-scale load (LDG) comes before the epilogue's first TMA store: made after
  # the epilogue (until 1a34e2b) its L2 latency fell between the first wave and its promotion.
  # Pinned (kPinnedLoop, the default since session 24): 6 S2UR, the setup's; the unpinned twin
  # (_ew8, 8) must fail that count.
  set(_ch07_ew_8192 "KernelConfigILi256ELi128ELi3ELi1ELi2ELNS0_12AccumulationE1ELNS0_12EpilogueKindE1ELi0ELNS0_13ConsumerOrderE0ELNS0_11BarrierWaitE0EEENS0_15BlockScaledMathIS7_")
  fp8gemm_sass_test(NAME sass_chapter_07_early_wave TARGET fp8gemm_ch07
                    KERNEL "${_ch07_ew_8192}Li1208E"
                    ARCH sm_90a
                    CONTAINS QGMMA.64x128x32.F32.E4M3.E4M3 FFMA UTMASTG.2D STSM
                    AT_MOST S2UR=6
                    FIRST_BEFORE "LDG<UTMASTG"
                    ABSENT LDL STL)
  fp8gemm_sass_test(NAME sass_chapter_07_early_wave_unpinned_fails TARGET fp8gemm_ch07
                    KERNEL "${_ch07_ew_8192}Li208E"
                    ARCH sm_90a
                    AT_MOST S2UR=6
                    EXPECT_FAILURE)
  # The promotion's FFMAs interleaved with the other consumer warpgroup's work: ptxas (CUDA 13.0)
  # clears the yield bit of about every other FFMA (0.47-0.54 of them) in every kernel with two
  # consumer warpgroups (BLOCK_M 128, 192, 256), which is what DeepGEMM's interleave_ffma.py
  # post-pass patched into its cubins by hand before CUDA 12.9 (../shared/notes/
  # hopper_fp8_gemm_techniques.md, section 2). With one consumer warpgroup (BLOCK_M 64, the decode
  # tiles) no other math warp shares a scheduler and ptxas clears none (0-10%): the second test
  # shows on such a kernel that the check fails; chapter 2's plain FFMA loop clears 9 of 2048.
  fp8gemm_sass_test(NAME sass_chapter_07_interleaved_ffma TARGET fp8gemm_ch07
                    KERNEL "KernelConfigILi(128|192|256)E.*BlockScaledMath" ARCH sm_90a
                    INTERLEAVED_FFMA 0.4)
  fp8gemm_sass_test(NAME sass_chapter_07_interleaved_ffma_one_warpgroup_fails TARGET fp8gemm_ch07
                    KERNEL "KernelConfigILi64ELi64ELi12E.*BlockScaledMath" ARCH sm_90a
                    INTERLEAVED_FFMA 0.4 EXPECT_FAILURE)
  fp8gemm_sass_test(NAME sass_chapter_07_256x128 TARGET fp8gemm_ch07
                    KERNEL "KernelConfigILi256ELi128ELi3ELi1ELi2ELNS0_12AccumulationE1ELNS0_12EpilogueKindE1ELi0E"
                    ARCH sm_90a
                    CONTAINS QGMMA.64x128x32.F32.E4M3.E4M3 UTMALDG.2D.MULTICAST UTMASTG.2D FFMA
                    ABSENT LDL STL)
endif()

file(GLOB _ch07_instances ${PROJECT_SOURCE_DIR}/chapters/07_block_scaling/kernels_*.cu)
fp8gemm_ptxas_test(ptxas_chapter_07 DIR ${PROJECT_SOURCE_DIR}/chapters/07_block_scaling
                   SOURCES ${_ch07_instances})

# Tables in chapter 7's lab notebook printed from committed data (fp8gemm_doc_table_test):
# session 17's straddling tiles (default loop against the rolled one), and:
set(_ch07_notebook chapters/07_block_scaling/NOTEBOOK.md)
fp8gemm_doc_table_test(chapter_07_straddle_session17 ${_ch07_notebook} ch07/straddle_session17/summarise.py)
# Session 36's 1 x 128 dual variants (an L2 prefetch, cache hints) beside v6_interior.
fp8gemm_doc_table_test(chapter_07_session36_dual ${_ch07_notebook} session36/summarise.py)
# Session 37: ncu against DeepGEMM at M <= 128, the peers run, the k-split consumers' test;
# and ncu's source view (the producer's instructions per ring stage).
fp8gemm_doc_table_test(chapter_07_session37 ${_ch07_notebook} session37/summarise.py)
fp8gemm_doc_table_test(chapter_07_session37_producer ${_ch07_notebook} session37/producer.py)
# Session 38: the producer warp against main (old / new), ncu, the peers, the M <= 128 tiles.
fp8gemm_doc_table_test(chapter_07_session38 ${_ch07_notebook} session38/summarise.py)
# Session 39: the producer warp merged (old / new), the two-deep loop over a ring cycle (twins,
# ncu, its loop's instructions), chapter 6's warp-uniform index (old / new).
fp8gemm_doc_table_test(chapter_07_session39 ${_ch07_notebook} session39/summarise.py)
# Session 40: main's GPU tests, the cycle entered by a jump, deeper rings and A multicast (ncu),
# the ring-cycle loop against two-deep over every run by K.
fp8gemm_doc_table_test(chapter_07_session40 ${_ch07_notebook} session40/summarise.py)
# Session 43: session 42's calls on branch long-cycle's binaries (every GPU test, old / new,
# the PyTorch op against DeepGEMM); the branch merged.
fp8gemm_doc_table_test(chapter_07_session43 ${_ch07_notebook} session43/summarise.py)
