# The installed package (chapter 10): `cmake --install` of this build, then examples/consumer
# built against it with find_package(fp8gemm) and run (without a GPU it checks the version and
# that a bad call is refused; with one it runs a block-scaled GEMM end to end). CPU test.
if(TARGET fp8gemm)
  add_test(NAME package_consumer
           COMMAND ${CMAKE_COMMAND} -DBUILD_DIR=${CMAKE_BINARY_DIR} -DSOURCE_DIR=${PROJECT_SOURCE_DIR}
                   -DWORK_DIR=${CMAKE_BINARY_DIR}/package_test -DCXX=${CMAKE_CXX_COMPILER}
                   -DVERSION=${PROJECT_VERSION}
                   -P ${PROJECT_SOURCE_DIR}/tools/package_consumer.cmake)
  set_tests_properties(package_consumer PROPERTIES LABELS cpu TIMEOUT 900)
endif()
