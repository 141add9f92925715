# Chapter 6 (the engine: persistent, warp-specialised, TMA-store epilogue, clusters).
# GPU: every compiled kernel and both accumulation modes against the float64 reference at the
# scheduler's edges; the table on edge and random shapes; promoted accuracy on all-positive data
# at K = 65536; exact integers; determinism; streams, threads, max_sms; the reliability rule.
# CPU: arguments refused before any CUDA call; the table only names compiled kernels; SASS.
if(TARGET fp8gemm_ch06)
  fp8gemm_test(test_chapter_06 LABEL gpu SOURCES test_chapter_06.cu LIBS fp8gemm_ch06_accuracy)
  fp8gemm_test(test_chapter_06_args LABEL cpu SOURCES test_chapter_06_args.cu LIBS fp8gemm_ch06)

  # SASS of every engine kernel (ch06's library): the warpgroup FP8 MMA, TMA loads, the register
  # split (USETMAXREG), mbarrier waits, and no local memory (no spills, no stack arrays).
  fp8gemm_sass_test(NAME sass_chapter_06_all TARGET fp8gemm_ch06 KERNEL "gemm_kernel" ARCH sm_90a
                    EACH
                    CONTAINS QGMMA UTMALDG.2D USETMAXREG SYNCS.PHASECHK
                    ABSENT LDL STL F2FP.F16 HMMA LDSM)
  # A cluster kernel (128 x 256, 2 x 1 cluster, fast): B arrives by multicast, D leaves by TMA
  # store from stmatrix-written shared memory, and the consumers' arrivals on the other CTA's
  # barriers carry no cluster-scope fence (MEMBAR.ALL.GPU: twice, the barrier initialisation and
  # the cluster barrier at the exit;
  # a `.release.cluster` arrive put one in every K block and cost 15% on the H200).
  fp8gemm_sass_test(NAME sass_chapter_06_multicast TARGET fp8gemm_ch06
                    KERNEL "KernelConfigILi128ELi256ELi4ELi2ELi1ELNS0_12AccumulationE0ELNS0_12EpilogueKindE1ELi2ELNS0_13ConsumerOrderE0ELNS0_11BarrierWaitE0E"
                    ARCH sm_90a
                    CONTAINS QGMMA.64x256x32.F32.E4M3.E4M3 UTMALDG.2D.MULTICAST UTMASTG.2D STSM
                             USETMAXREG.DEALLOC USETMAXREG.TRY_ALLOC
                    AT_MOST MEMBAR.ALL.GPU=2
                    ABSENT LDL STL)
  # The ring-barrier waits (BarrierWait, session 17): the default kernels sleep on the slow path
  # (try_wait with a suspend-time hint: NANOSLEEP.SYNCS), the _spin twins re-issue try_wait and
  # never sleep.
  fp8gemm_sass_test(NAME sass_chapter_06_sleeping_waits TARGET fp8gemm_ch06
                    KERNEL "BarrierWaitE0E" ARCH sm_90a EACH
                    CONTAINS SYNCS.PHASECHK.TRANS64.TRYWAIT NANOSLEEP.SYNCS)
  fp8gemm_sass_test(NAME sass_chapter_06_spinning_waits TARGET fp8gemm_ch06
                    KERNEL "BarrierWaitE1E" ARCH sm_90a EACH
                    CONTAINS SYNCS.PHASECHK.TRANS64.TRYWAIT
                    ABSENT NANOSLEEP)
  # Promoted accumulation: partial sums of 128 columns (two per 256-wide tile) added with FADD;
  # the three-consumer 192 x 128 kernel (64 rows per warpgroup) likewise.
  fp8gemm_sass_test(NAME sass_chapter_06_promoted TARGET fp8gemm_ch06
                    KERNEL "KernelConfigILi128ELi256ELi4ELi2ELi1ELNS0_12AccumulationE1ELNS0_12EpilogueKindE1ELi2E"
                    ARCH sm_90a
                    CONTAINS QGMMA.64x128x32.F32.E4M3.E4M3 FADD UTMALDG.2D.MULTICAST UTMASTG.2D
                    ABSENT LDL STL)
  # Ping-pong consumers (ConsumerOrder::pingpong, kernels_pingpong.cu): each warpgroup hands the
  # tensor cores to the other after its main loop (bar.arrive on named barrier 6 or 7, BAR.ARV)
  # and stores its tile by TMA while the other's main loop runs.
  fp8gemm_sass_test(NAME sass_chapter_06_pingpong TARGET fp8gemm_ch06
                    KERNEL "ConsumerOrderE1E" ARCH sm_90a EACH
                    CONTAINS QGMMA BAR.ARV BAR.SYNC UTMASTG.2D STSM USETMAXREG.TRY_ALLOC
                    ABSENT LDL STL)
  # The early first wave (kEarlyWaveLoop + 8, the promoted 256 x 128 default since session 22):
  # with the consumers' tile loop in the order "main loop, next tile, issue, store" ptxas re-read
  # the CTA id (S2UR SR_CgaCtaId) for the release in every K block of the 8x loop (15 S2UR in
  # chapter 7's kernel at 4b4aa54, ~150 cycles more per K block on the H200); in the engine's
  # order the kernel had 9. With the loop's addresses pinned (kPinnedLoop + kEarlyWaveLoop + 8,
  # the default since session 24) the K loop re-derives none of them: 7, as many as the setup
  # needs. The unpinned twin (_ew8) must fail the same check, so the check can fail.
  set(_ch06_ew_8192 "KernelConfigILi256ELi128ELi3ELi1ELi2ELNS0_12AccumulationE1ELNS0_12EpilogueKindE1ELi0ELNS0_13ConsumerOrderE0ELNS0_11BarrierWaitE0EEENS0_13PerTensorMathIS7_")
  fp8gemm_sass_test(NAME sass_chapter_06_early_wave TARGET fp8gemm_ch06
                    KERNEL "${_ch06_ew_8192}Li1208E"
                    ARCH sm_90a
                    CONTAINS QGMMA.64x128x32.F32.E4M3.E4M3 FADD UTMASTG.2D STSM
                    AT_MOST S2UR=7
                    ABSENT LDL STL)
  fp8gemm_sass_test(NAME sass_chapter_06_early_wave_unpinned_fails TARGET fp8gemm_ch06
                    KERNEL "${_ch06_ew_8192}Li208E"
                    ARCH sm_90a
                    AT_MOST S2UR=7
                    EXPECT_FAILURE)
  # Ping-pong hands the tensor cores to the other warpgroup once its last wgmma are issued
  # (session 23): the bar.arrive on the order barrier comes before the main loop's last
  # wgmma.wait_group 0, in the fast table's 8192^3 kernel. Its _lho twin (the order before) must
  # fail the same check, so the check can fail.
  set(_ch06_pp_8192 "KernelConfigILi128ELi192ELi4ELi2ELi1ELNS0_12AccumulationE0ELNS0_12EpilogueKindE1ELi2ELNS0_13ConsumerOrderE1ELNS0_11BarrierWaitE0EEE")
  fp8gemm_sass_test(NAME sass_chapter_06_pingpong_hand_over TARGET fp8gemm_ch06
                    KERNEL "${_ch06_pp_8192}NS0_13PerTensorMathIS7_Li8E"
                    ARCH sm_90a
                    CONTAINS QGMMA.64x192x32.F32.E4M3.E4M3 BAR.ARV UTMASTG.2D
                    ORDER "BAR.ARV<WARPGROUP.DEPBAR"
                    ABSENT LDL STL)
  fp8gemm_sass_test(NAME sass_chapter_06_pingpong_hand_over_late_fails TARGET fp8gemm_ch06
                    KERNEL "${_ch06_pp_8192}NS0_16LateHandOverMathIS7_E"
                    ARCH sm_90a
                    ORDER "BAR.ARV<WARPGROUP.DEPBAR"
                    EXPECT_FAILURE)
  fp8gemm_sass_test(NAME sass_chapter_06_promoted_three_consumers TARGET fp8gemm_ch06
                    KERNEL "KernelConfigILi192ELi128ELi4ELi2ELi1ELNS0_12AccumulationE1ELNS0_12EpilogueKindE1ELi0E"
                    ARCH sm_90a
                    CONTAINS QGMMA.64x128x32.F32.E4M3.E4M3 FADD UTMALDG.2D.MULTICAST UTMASTG.2D
                             USETMAXREG.TRY_ALLOC
                    ABSENT LDL STL)
endif()

# ptxas's verdict on every engine kernel (fp8gemm_ptxas_test, tests/CMakeLists.txt). The
# self-test proves the check catches a kernel that reads its accumulators while a wgmma is in
# flight.
file(GLOB _ch06_instances ${PROJECT_SOURCE_DIR}/chapters/06_warp_specialization/kernels_*.cu)
fp8gemm_ptxas_test(ptxas_chapter_06 DIR ${PROJECT_SOURCE_DIR}/chapters/06_warp_specialization
                   SOURCES ${_ch06_instances})
fp8gemm_ptxas_test(ptxas_check_catches_serialised_wgmma EXPECT_FINDINGS
                   DIR ${PROJECT_SOURCE_DIR}/chapters/06_warp_specialization
                   SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/data/ptxas/wgmma_accumulator_read_in_flight.cu)

# The table of session 17's barrier-wait comparison (the chapter's lab notebook, NOTEBOOK.md,
# "Waits that sleep") is printed from its committed JSON (plots/data/h200/engine_wait/summarise.py
# --check fails if the block differs).
fp8gemm_doc_table_test(engine_wait_readme chapters/06_warp_specialization/NOTEBOOK.md
                       engine_wait/summarise.py)
