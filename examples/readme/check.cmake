# CTest `readme_example` (tests/readme_example.cmake), a CMake script:
#   1. README.md's C++ example, the fenced block between <!-- example:cpp:begin --> and
#      <!-- example:cpp:end -->, is examples/readme/fp8_linear.cpp verbatim (the README shows the
#      file the test compiles, not a copy that can drift);
#   2. `cmake --install` of this build into a scratch prefix;
#   3. examples/readme configured against it (find_package(fp8gemm)), built and run: it must
#      print the refusal of a bad call, then either that there is no GPU or its result.
# Arguments: -DBUILD_DIR, -DSOURCE_DIR, -DWORK_DIR, -DCXX (the C++ compiler).
set(_example ${SOURCE_DIR}/examples/readme/fp8_linear.cpp)
file(READ ${SOURCE_DIR}/README.md _readme)
file(READ ${_example} _file)
set(_begin "<!-- example:cpp:begin -->\n```c++\n")
set(_end "```\n<!-- example:cpp:end -->")
string(FIND "${_readme}" "${_begin}" _b)
string(FIND "${_readme}" "${_end}" _e)
if(_b EQUAL -1 OR _e EQUAL -1 OR _e LESS _b)
  message(FATAL_ERROR "README.md has no C++ example between '<!-- example:cpp:begin -->' + "
                      "```c++ and ``` + '<!-- example:cpp:end -->'")
endif()
string(LENGTH "${_begin}" _blen)
math(EXPR _start "${_b} + ${_blen}")
math(EXPR _len "${_e} - ${_start}")
string(SUBSTRING "${_readme}" ${_start} ${_len} _block)
if(NOT _block STREQUAL _file)
  file(WRITE ${WORK_DIR}.readme_block.cpp "${_block}")
  message(FATAL_ERROR "README.md's C++ example differs from ${_example}: copy the file into the "
                      "README (the block as found is in ${WORK_DIR}.readme_block.cpp; diff them)")
endif()
message(STATUS "README.md's C++ example is ${_example} verbatim")

include(${SOURCE_DIR}/tools/installed_example.cmake)
run_installed_example(examples/readme build readme_example)
message(STATUS "the example said:\n${last_output}")
if(NOT last_output MATCHES "refused before any GPU work")
  message(FATAL_ERROR "the example's bad call was not refused")
endif()
if(NOT last_output MATCHES "no CUDA GPU" AND NOT last_output MATCHES "relative error")
  message(FATAL_ERROR "the example neither said 'no CUDA GPU' nor printed its result")
endif()
