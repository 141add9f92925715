# The library's own layer (chapter 10: fp8gemm::fp8gemm's plans, architecture rules, dispatch).
# CPU: test_library_cpu (the rules on made-up devices, the kernel choice in order, refusals, the
#      generated table against the chapters' kernel lists); library_dispatch_table (the committed
#      table and its markdown are what the committed sweeps give, and every pick of the C++
#      dispatcher on the DeepSeek-V3 shapes is within 3% of the sweep's fastest);
#      library_dispatch_check_self_test (that check fails on a stale table and a slow pick);
#      library_dispatch_rescaled_112 (the table rescaled to 112 SMs against a sweep on 112 SMs) and
#      library_dispatch_unrescaled_112_fails (the table as learned fails that sweep);
#      test_plan_cache_cpu (the PyTorch ops' plan cache: keys without buffers, rebind on a change,
#      refusals, LRU, many threads on one cached plan).
# GPU: test_library_gpu (library plans against the chapter plans they wrap, bit for bit; the
#      environment override; MXFP8's architecture dispatch on the device present);
#      test_library_threads_gpu (every kind of plan from 4 threads at once and on 2 streams with
#      rebind(), against float64 and bit for bit a single-threaded run; rebind's refusals);
#      test_strided_gpu (every plan with row strides larger than the row: the same kernel's D on
#      packed copies bit for bit, the padding of A, B and D untouched);
#      test_library_other_device (two GPUs: every kind of plan built on device 0, run() and
#      rebind() with device 1 current refused before any launch, then run on device 0).
if(TARGET fp8gemm)
  fp8gemm_test(test_library_cpu LABEL cpu SOURCES test_library_cpu.cpp LIBS fp8gemm)
  # The PyTorch ops' plan cache (header-only C++, no torch), with a stand-in plan.
  fp8gemm_test(test_plan_cache_cpu LABEL cpu SOURCES test_plan_cache_cpu.cpp)
  target_include_directories(test_plan_cache_cpu PRIVATE
                             ${PROJECT_SOURCE_DIR}/chapters/10_production/python/csrc)
  fp8gemm_test(test_library_gpu LABEL gpu SOURCES test_library_gpu.cu
               LIBS fp8gemm fp8gemm_ch07_checks fp8gemm_ch08_checks)
  fp8gemm_test(test_strided_gpu LABEL gpu SOURCES test_strided_gpu.cu
               LIBS fp8gemm fp8gemm_ch07_checks fp8gemm_ch08_checks)
  fp8gemm_test(test_library_threads_gpu LABEL gpu SOURCES test_library_threads_gpu.cu
               LIBS fp8gemm fp8gemm_ch08_checks ARGS "~[other-device]")
  # Its [other-device] case alone (a plan run or rebound with another device current is refused):
  # two GPUs needed; with fewer main() exits 77 and CTest reports it skipped (as
  # test_reliability_other_device, tests/reliability.cmake).
  add_test(NAME test_library_other_device COMMAND test_library_threads_gpu "[other-device]")
  set_tests_properties(test_library_other_device PROPERTIES LABELS gpu SKIP_RETURN_CODE 77
                       ENVIRONMENT FP8GEMM_TEST_MIN_GPUS=2)

  find_package(Python3 COMPONENTS Interpreter QUIET)
  if(Python3_Interpreter_FOUND)
    set(_gen ${PROJECT_SOURCE_DIR}/chapters/10_production/tools/gen_dispatch_table.py)
    add_test(NAME library_dispatch_table
             COMMAND ${Python3_EXECUTABLE} ${_gen} --check
                     --picks-exe $<TARGET_FILE:fp8gemm_dispatch_picks>)
    add_test(NAME library_dispatch_check_self_test
             COMMAND ${Python3_EXECUTABLE} ${_gen} --self-test)
    # The table rescaled to 112 SMs (rule table_sms) against the block-scaled sweep run on 112 SMs
    # (session 46, --max_sms=112): every pick within 3% of that sweep's fastest. The same check of
    # the picks on all SMs (the table as learned on 132) must fail there: it proves the check can.
    set(_check ${PROJECT_SOURCE_DIR}/tools/check_table.py)
    set(_sweep112 ${PROJECT_SOURCE_DIR}/plots/data/h200/ch10/dispatch_sweep_block_scaled_sms112.json)
    add_test(NAME library_dispatch_rescaled_112
             COMMAND ${Python3_EXECUTABLE} ${_check} --picks-exe $<TARGET_FILE:fp8gemm_dispatch_picks>
                     --sms 112 --dispatch-sweep ${_sweep112} --family block_scaled)
    add_test(NAME library_dispatch_unrescaled_112_fails
             COMMAND ${Python3_EXECUTABLE} ${_check} --picks-exe $<TARGET_FILE:fp8gemm_dispatch_picks>
                     --dispatch-sweep ${_sweep112} --family block_scaled --allow-sms-mismatch)
    # Passes on the check's own failure report only (not on a missing file or a bad argument).
    set_tests_properties(library_dispatch_unrescaled_112_fails PROPERTIES
                         PASS_REGULAR_EXPRESSION "FAIL 64x2112x7168.*check_table: 18 shapes checked, 8 off")
    # Sustained medians (fp8gemm_dispatch_sweep --sustain_ms) outrank the confirmation: in this
    # made-up sweep the table's 8192^3 block-scaled kernel is fastest confirmed and slowest
    # sustained, so the check must fail there (it passes if the sustained medians are ignored).
    # The fixture names the row's kernel (192x128_s4_c1x1): update it when that row changes.
    add_test(NAME library_check_table_sustained_fails
             COMMAND ${Python3_EXECUTABLE} ${_check} --picks-exe $<TARGET_FILE:fp8gemm_dispatch_picks>
                     --dispatch-sweep ${PROJECT_SOURCE_DIR}/tests/data/tables/sustained_fixture.json
                     --family block_scaled)
    set_tests_properties(library_check_table_sustained_fails PROPERTIES
                         PASS_REGULAR_EXPRESSION "FAIL 8192x8192x8192: table kernel 192x128_s4_c1x1.*1 shapes checked, 1 off")
    set_tests_properties(library_dispatch_table library_dispatch_check_self_test
                         library_dispatch_rescaled_112 library_dispatch_unrescaled_112_fails
                         library_check_table_sustained_fails
                         PROPERTIES LABELS cpu TIMEOUT 120)
  endif()
endif()

# ptxas's verdict on the library's own kernels (the per-tensor GEMM's FP32 D,
# src/per_tensor_f32.cu), as on every chapter's engine kernels.
fp8gemm_ptxas_test(ptxas_library DIR ${PROJECT_SOURCE_DIR}/chapters/10_production/include
                   SOURCES ${PROJECT_SOURCE_DIR}/chapters/10_production/src/per_tensor_f32.cu)
