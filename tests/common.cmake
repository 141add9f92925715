# Tests of common/ (issue "Foundation", parts 3 and 4).
# CPU: FP8 formats against the OCP spec and cuda_fp8.h, scale layouts, quantisers, the reference
# GEMM and its error metrics, argument validation.
fp8gemm_test(common_test_fp8 LABEL cpu SOURCES test_fp8.cpp)
fp8gemm_test(common_test_scaling LABEL cpu SOURCES test_scaling.cpp)
fp8gemm_test(common_test_quantize_reference LABEL cpu SOURCES test_quantize_reference.cpp)
fp8gemm_test(common_test_validate LABEL cpu SOURCES test_validate.cpp)

# GPU (skipped, exit 77, where there is none): host/device FP8 agreement, random fill, poison,
# timer, L2 flush, architecture check; the cuBLASLt baseline against the float64 reference.
fp8gemm_test(common_test_gpu LABEL gpu SOURCES test_gpu_common.cu)
fp8gemm_test(common_test_cublaslt LABEL gpu SOURCES test_cublaslt.cu)
# The benchmark harness's interleaved timing (common/bench.hpp), where it is built.
if(TARGET fp8gemm_bench)
  fp8gemm_test(common_test_bench_harness LABEL gpu SOURCES test_bench_harness.cu LIBS fp8gemm::bench)
  # --benchmark_filter with interleaved groups: the members it leaves out are never launched.
  fp8gemm_test(common_test_bench_filter LABEL cpu SOURCES test_bench_filter.cpp LIBS fp8gemm::bench)
endif()

# SASS of common's random fill as linked into the GPU test: the e4m3 encode rounds with FRND
# (float rint, ties to even), sqrtf of Box-Muller is MUFU.RSQ, one byte store per element, and no
# local-memory traffic (LDL/STL would mean spills or a stack frame in a kernel this small).
fp8gemm_sass_test(NAME common_sass_fill_random_e4m3 TARGET common_test_gpu
                  KERNEL fill_random_e4m3_kernel ARCH sm_90a
                  CONTAINS STG.E.U8 FRND MUFU.RSQ
                  ABSENT LDL STL)
# The grouped tile schedule of chapter 8 (host/device code, checked on the CPU).
fp8gemm_test(common_test_grouped_schedule LABEL cpu SOURCES test_grouped_schedule.cpp)
fp8gemm_test(common_test_ragged_rows LABEL cpu SOURCES test_ragged_rows.cpp)
# The engine chapters' shared command line (common/chapter_args.hpp).
fp8gemm_test(common_test_chapter_cli LABEL cpu SOURCES test_chapter_cli.cpp)

# The executables and tuning tools read their arguments before anything else and refuse a
# malformed one with a message naming it (exit 1), with or without a GPU: a malformed count was
# read as its leading digits ("12abc" as 12), ended in an uncaught exception, or (ch06_sweep) an
# unknown argument was ignored.
function(fp8gemm_cli_refusal_test name exe arg expect)
  if(TARGET ${exe})
    add_test(NAME ${name} COMMAND ${exe} ${arg})
    set_tests_properties(${name} PROPERTIES LABELS cpu PASS_REGULAR_EXPRESSION "${expect}")
  endif()
endfunction()
fp8gemm_cli_refusal_test(cli_refuses_ch01 ch01_naive --sizes=12abc "bad --sizes=12abc")
fp8gemm_cli_refusal_test(cli_refuses_ch06 ch06_warp_specialization --sustained=abc
                         "bad --sustained=abc")
fp8gemm_cli_refusal_test(cli_refuses_ch07 ch07_block_scaling --splits=0 "bad --splits=0")
fp8gemm_cli_refusal_test(cli_refuses_ch09 ch09_hopper_mxfp8 --shapes=64x64 "bad shape '64x64'")
# An FP32 kernel named without --float-d (its plan would refuse it only later, on the GPU).
fp8gemm_cli_refusal_test(cli_refuses_ch07_f32_kernel ch07_block_scaling
                         --kernels=128x128_s5_c1x1_promoted_f32_tma_b2
                         "writes a float D: pass --float-d to time it")
fp8gemm_cli_refusal_test(cli_refuses_ch09_f32_kernel ch09_hopper_mxfp8
                         --kernels=128x128_s5_c1x1_promoted_f32_tma_b2
                         "writes a float D: pass --float-d to time it")
fp8gemm_cli_refusal_test(cli_refuses_ch07_timeline ch07_timeline --reps=0 "bad --reps=0")
fp8gemm_cli_refusal_test(cli_refuses_probe wgmma_overlap_probe --kblocks=x "bad --kblocks=x")
fp8gemm_cli_refusal_test(cli_refuses_ch06_sweep ch06_sweep --repz=5 "unknown argument --repz=5")
fp8gemm_cli_refusal_test(cli_refuses_dispatch_sweep fp8gemm_dispatch_sweep --reps=0 "bad --reps=0")
fp8gemm_cli_refusal_test(cli_refuses_dispatch_sweep_sms fp8gemm_dispatch_sweep --max_sms=-1
                         "bad --max_sms=-1")
fp8gemm_cli_refusal_test(cli_refuses_dispatch_sweep_sustain fp8gemm_dispatch_sweep
                         --sustain_ms=2s "bad --sustain_ms=2s")
fp8gemm_cli_refusal_test(cli_refuses_dispatch_sweep_sustain_alone fp8gemm_dispatch_sweep
                         "--sustain_ms=100;--confirm=0" "--confirm=0 confirms none")
fp8gemm_cli_refusal_test(cli_refuses_dispatch_picks fp8gemm_dispatch_picks --sms=0 "bad --sms=0")
fp8gemm_cli_refusal_test(cli_refuses_library_bench fp8gemm_library_bench --host_calls=2x
                         "bad --host_calls=2x")
fp8gemm_cli_refusal_test(cli_refuses_ch08 ch08_grouped_moe --shapes=1x2 "bad shape '1x2'")
