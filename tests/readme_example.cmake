# CTest `readme_example` (cpu): README.md's C++ example is examples/readme/fp8_linear.cpp verbatim,
# and that file, with examples/readme/main.cpp calling it, builds against `cmake --install` of this
# build and runs (without a GPU: up to where it says so; examples/readme/check.cmake).
if(TARGET fp8gemm)
  add_test(NAME readme_example
           COMMAND ${CMAKE_COMMAND} -DBUILD_DIR=${CMAKE_BINARY_DIR} -DSOURCE_DIR=${PROJECT_SOURCE_DIR}
                   -DWORK_DIR=${CMAKE_BINARY_DIR}/readme_example_test -DCXX=${CMAKE_CXX_COMPILER}
                   -P ${PROJECT_SOURCE_DIR}/examples/readme/check.cmake)
  set_tests_properties(readme_example PROPERTIES LABELS cpu TIMEOUT 900)
endif()
