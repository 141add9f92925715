# Shared by the CTest scripts that build an example against the installed package
# (tools/package_consumer.cmake: examples/consumer; examples/readme/check.cmake: examples/readme).
# The including script has BUILD_DIR, SOURCE_DIR, WORK_DIR and CXX defined (-D...).
#
# run(<command> <args>...): runs the command; stops the script with its output if it fails;
#   leaves its standard output in last_output.
# run_installed_example(<example folder> <build folder> <executable>): empties WORK_DIR,
#   `cmake --install`s BUILD_DIR into WORK_DIR/prefix, configures SOURCE_DIR/<example folder>
#   against it (find_package(fp8gemm)) in WORK_DIR/<build folder>, builds it and runs
#   <executable> from there; what it printed is left in last_output.
function(run)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "failed (${rc}): ${ARGN}\n${out}\n${err}")
  endif()
  set(last_output "${out}" PARENT_SCOPE)
endfunction()

function(run_installed_example example build executable)
  file(REMOVE_RECURSE ${WORK_DIR})
  run(${CMAKE_COMMAND} --install ${BUILD_DIR} --prefix ${WORK_DIR}/prefix)
  run(${CMAKE_COMMAND} -S ${SOURCE_DIR}/${example} -B ${WORK_DIR}/${build}
      -DCMAKE_PREFIX_PATH=${WORK_DIR}/prefix -DCMAKE_CXX_COMPILER=${CXX} -DCMAKE_BUILD_TYPE=Release)
  run(${CMAKE_COMMAND} --build ${WORK_DIR}/${build} -j 2)
  run(${WORK_DIR}/${build}/${executable})
  set(last_output "${last_output}" PARENT_SCOPE)
endfunction()
