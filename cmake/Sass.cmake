# SASS inspection: find a cuobjdump (the toolkit's, or the one in the PyPI package
# nvidia-cuda-cuobjdump) so that tests can assert which instructions a kernel contains.
#
#   fp8gemm_sass_test(NAME <test> TARGET <exe or lib target> [KERNEL <regex>]
#                     [ARCH sm_90a] [EACH] CONTAINS <opcode>... [ABSENT <opcode>...]
#                     [AT_MOST <opcode>=<count>...] [ORDER <first><<last>...]
#                     [FIRST_BEFORE <a><<b>...] [INTERLEAVED_FFMA <fraction>] [EXPECT_FAILURE])
#
# registers a CPU-labelled CTest that disassembles the target's binary with tools/sass_check.py
# and fails unless every CONTAINS opcode appears (and no ABSENT opcode does) in the kernels whose
# mangled or demangled name matches KERNEL (EACH: every CONTAINS opcode in every matching kernel,
# not just in one of them; ORDER A<B: the first A before the last B in every matching kernel;
# FIRST_BEFORE A<B: the first A before the first B; INTERLEAVED_FFMA F: in every matching kernel at
# least the fraction F of its FFMAs have the yield bit of their control word clear, i.e. ptxas lets
# the scheduler switch warps inside a promotion's run of FFMAs;
# EXPECT_FAILURE: the checks must fail on this kernel, to show that they can; a missing kernel
# still fails the test).
find_program(FP8GEMM_CUOBJDUMP cuobjdump
  HINTS ${CUDAToolkit_BIN_DIR}
  PATHS ENV PATH)
if(NOT FP8GEMM_CUOBJDUMP)
  execute_process(COMMAND python3 -c
      "import nvidia, os, glob; print(next(iter(glob.glob(os.path.join(list(nvidia.__path__)[0], '**', 'bin', 'cuobjdump'), recursive=True)), ''))"
    OUTPUT_VARIABLE _cuobjdump_py OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
  if(_cuobjdump_py)
    set(FP8GEMM_CUOBJDUMP ${_cuobjdump_py} CACHE FILEPATH "cuobjdump" FORCE)
  endif()
endif()
if(FP8GEMM_CUOBJDUMP)
  message(STATUS "SASS checks use ${FP8GEMM_CUOBJDUMP}")
else()
  message(WARNING "No cuobjdump found (pip install nvidia-cuda-cuobjdump): SASS tests will fail")
  set(FP8GEMM_CUOBJDUMP cuobjdump)
endif()
find_package(Python3 COMPONENTS Interpreter REQUIRED)

function(fp8gemm_sass_test)
  cmake_parse_arguments(ARG "EACH;EXPECT_FAILURE" "NAME;TARGET;KERNEL;ARCH;INTERLEAVED_FFMA"
                        "CONTAINS;ABSENT;AT_MOST;ORDER;FIRST_BEFORE" ${ARGN})
  if(NOT ARG_ARCH)
    set(ARG_ARCH sm_90a)
  endif()
  if(NOT ARG_KERNEL)
    set(ARG_KERNEL ".")
  endif()
  set(args --cuobjdump ${FP8GEMM_CUOBJDUMP} --binary $<TARGET_FILE:${ARG_TARGET}>
           --arch ${ARG_ARCH} --kernel ${ARG_KERNEL})
  if(ARG_EACH)
    list(APPEND args --each)
  endif()
  foreach(op ${ARG_CONTAINS})
    list(APPEND args --contains ${op})
  endforeach()
  foreach(spec ${ARG_AT_MOST})
    list(APPEND args --at-most ${spec})
  endforeach()
  foreach(op ${ARG_ABSENT})
    list(APPEND args --absent ${op})
  endforeach()
  foreach(spec ${ARG_ORDER})
    list(APPEND args --order ${spec})
  endforeach()
  foreach(spec ${ARG_FIRST_BEFORE})
    list(APPEND args --first-before ${spec})
  endforeach()
  if(ARG_INTERLEAVED_FFMA)
    list(APPEND args --interleaved-ffma ${ARG_INTERLEAVED_FFMA})
  endif()
  if(ARG_EXPECT_FAILURE)
    list(APPEND args --expect-failure)
  endif()
  add_test(NAME ${ARG_NAME} COMMAND ${Python3_EXECUTABLE} ${CMAKE_SOURCE_DIR}/tools/sass_check.py ${args})
  set_tests_properties(${ARG_NAME} PROPERTIES LABELS "cpu;sass")
endfunction()
