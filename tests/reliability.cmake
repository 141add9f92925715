# Reliability of chapters 1-6 (docs/contract.md; chapter 6 in both accumulation modes): every refused call throws std::invalid_argument
# naming the argument before any GPU work and leaves no CUDA error; every accepted one is correct.
#  - test_reliability (gpu): D at byte offsets 0..15 (odd refused, even correct, guards
#    untouched), host / pinned / registered / short / other-device memory refused, managed memory
#    correct, partial overlap refused, scales whose FP32 product overflows or is subnormal, zero,
#    negative, Inf and NaN scales, a non-blocking stream (and that the kernel waits for it), the
#    exact small-integer mode, a pending earlier error, every GPU of the machine.
#    scripts/gpu_loop.sh (step sanitize) runs its [refused] and [offsets] cases under
#    compute-sanitizer memcheck.
#  - test_reliability_threads (gpu, its own process so the calls are the first): threads making
#    their first chapter-4 / chapter-5 / chapter-1-3 calls at once; two threads' cuBLASLt plans.
#  - test_reliability_other_device (gpu): the binary's [other-device] case alone, which needs two
#    GPUs: with fewer, main() exits 77 (FP8GEMM_TEST_MIN_GPUS) and CTest reports it as skipped
#    rather than as a pass that checked nothing. scripts/gpu_loop.sh runs the whole binary, where
#    the case prints "only 1 GPU: nothing to check".
fp8gemm_test(test_reliability LABEL gpu SOURCES test_reliability.cu LIBS fp8gemm_ch06
             ARGS "~[other-device]")
add_test(NAME test_reliability_other_device COMMAND test_reliability "[other-device]")
set_tests_properties(test_reliability_other_device PROPERTIES LABELS gpu SKIP_RETURN_CODE 77
                     ENVIRONMENT FP8GEMM_TEST_MIN_GPUS=2)
fp8gemm_test(test_reliability_threads LABEL gpu SOURCES test_reliability_threads.cu)
