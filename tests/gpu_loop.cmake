# The GPU calls' test steps on a CPU (tools/check_gpu_loop_tests.sh): scripts/gpu_loop.sh's tests
# step and scripts/gpu_call.sh's packed_tests_step run three stand-ins for GPU tests built from
# gpu_loop_fixture.cpp (pass, a failing CHECK, exit 77), and what they report of each is checked.
# The _can_fail twin (--break) runs the failing stand-in's passing case: every check of the
# failure must then miss (all nine) and the others hold.
add_executable(gpu_loop_fixture gpu_loop_fixture.cpp)
target_include_directories(gpu_loop_fixture PRIVATE ${CMAKE_CURRENT_SOURCE_DIR})
target_link_libraries(gpu_loop_fixture PRIVATE fp8gemm_cpu_test_main ${FP8GEMM_CATCH_TARGET})
add_test(NAME gpu_loop_tests_step
         COMMAND bash ${PROJECT_SOURCE_DIR}/tools/check_gpu_loop_tests.sh ${PROJECT_SOURCE_DIR}
                 $<TARGET_FILE:gpu_loop_fixture> ${CMAKE_CURRENT_BINARY_DIR}/gpu_loop_step)
add_test(NAME gpu_loop_tests_step_can_fail
         COMMAND bash ${PROJECT_SOURCE_DIR}/tools/check_gpu_loop_tests.sh ${PROJECT_SOURCE_DIR}
                 $<TARGET_FILE:gpu_loop_fixture> ${CMAKE_CURRENT_BINARY_DIR}/gpu_loop_step_broken --break)
set_tests_properties(gpu_loop_tests_step gpu_loop_tests_step_can_fail PROPERTIES LABELS cpu)
set_tests_properties(gpu_loop_tests_step_can_fail PROPERTIES
                     PASS_REGULAR_EXPRESSION "--break: the 9 checks of the failure missed")
