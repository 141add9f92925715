# Chapter 5 (wgmma + TMA ring).
# GPU: correctness on >= 30 edge and seeded-random shapes against the float64 reference, 10-run
# bitwise determinism. CPU: bad arguments of ch05::gemm and make_tensor_map_2d throw before any
# CUDA call; the SASS of the chapter's kernel uses the warpgroup FP8 MMA (QGMMA, shape 64x256x32,
# FP32 accumulators, e4m3 x e4m3) fed by
# TMA (UTMALDG) and mbarriers (SYNCS), and nothing else does the arithmetic or the copies: no
# per-element FP8 conversion (F2FP.F16.E4M3 / .E5M2 unpacks), no warp-level MMA (HMMA, QMMA), no
# shared-memory loads by threads (LDS, LDSM: listed apart because sass_check.py matches whole
# mnemonics or their dotted suffixes, so LDS does not catch LDSM) or cp.async (LDGSTS), no local
# memory (LDL, STL).
fp8gemm_test(test_chapter_05 LABEL gpu SOURCES test_chapter_05.cu)
fp8gemm_test(test_chapter_05_args LABEL cpu SOURCES test_chapter_05_args.cu)

if(TARGET ch05_wgmma)
  fp8gemm_sass_test(NAME sass_chapter_05_wgmma TARGET ch05_wgmma KERNEL "ch0512wgmma_kernel"
                    ARCH sm_90a
                    CONTAINS QGMMA.64x256x32.F32.E4M3.E4M3 UTMALDG.2D SYNCS.PHASECHK
                             SYNCS.ARRIVE.TRANS64 WARPGROUP.ARRIVE WARPGROUP.DEPBAR
                    ABSENT F2FP.F16 F2F.F16 HMMA QMMA LDS LDSM LDGSTS LDL STL)
endif()
