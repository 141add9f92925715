# CTest script: install this build into a scratch prefix, build examples/consumer against the
# installed package with find_package(fp8gemm), run it. Arguments: -DBUILD_DIR, -DSOURCE_DIR,
# -DWORK_DIR, -DCXX (the C++ compiler), -DVERSION (the project's version, which the consumer must
# print).
include(${SOURCE_DIR}/tools/installed_example.cmake)
run_installed_example(examples/consumer consumer consumer)
message(STATUS "consumer said:\n${last_output}")
if(NOT last_output MATCHES "fp8gemm ${VERSION}")
  message(FATAL_ERROR "the consumer printed no 'fp8gemm ${VERSION}' (fp8gemm::version() and the CMake project version disagree?)")
endif()
if(NOT last_output MATCHES "refused as it should be")
  message(FATAL_ERROR "the consumer's bad call was not refused")
endif()
