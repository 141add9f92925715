# CTest script: install this build into a scratch prefix, build examples/consumer against the
# installed package with find_package(fp8gemm), run it. Arguments: -DBUILD_DIR, -DSOURCE_DIR,
# -DWORK_DIR, -DCXX (the C++ compiler), -DVERSION (the project's version, which the consumer must
# print).
file(REMOVE_RECURSE ${WORK_DIR})
function(run)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "failed (${rc}): ${ARGN}\n${out}\n${err}")
  endif()
  set(last_output "${out}" PARENT_SCOPE)
endfunction()
run(${CMAKE_COMMAND} --install ${BUILD_DIR} --prefix ${WORK_DIR}/prefix)
run(${CMAKE_COMMAND} -S ${SOURCE_DIR}/examples/consumer -B ${WORK_DIR}/consumer
    -DCMAKE_PREFIX_PATH=${WORK_DIR}/prefix -DCMAKE_CXX_COMPILER=${CXX} -DCMAKE_BUILD_TYPE=Release)
run(${CMAKE_COMMAND} --build ${WORK_DIR}/consumer -j 2)
run(${WORK_DIR}/consumer/consumer)
message(STATUS "consumer said:\n${last_output}")
if(NOT last_output MATCHES "fp8gemm ${VERSION}")
  message(FATAL_ERROR "the consumer printed no 'fp8gemm ${VERSION}' (fp8gemm::version() and the CMake project version disagree?)")
endif()
if(NOT last_output MATCHES "refused as it should be")
  message(FATAL_ERROR "the consumer's bad call was not refused")
endif()
