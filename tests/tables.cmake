# The per-shape kernel tables against the committed sweeps they came from (tools/check_table.py):
# every table kernel within 3% of the sweep's fastest on that shape. The self-test proves the
# check fails on a table that picks a slow kernel.
find_package(Python3 COMPONENTS Interpreter QUIET)
if(Python3_Interpreter_FOUND)
  set(_ch07_sweeps ${PROJECT_SOURCE_DIR}/plots/data/h200/ch07/sweep_large.json
                   ${PROJECT_SOURCE_DIR}/plots/data/h200/ch07/sweep_small.json)
  add_test(NAME table_matches_sweep_ch07
           COMMAND ${Python3_EXECUTABLE} ${PROJECT_SOURCE_DIR}/tools/check_table.py
                   --table ${PROJECT_SOURCE_DIR}/chapters/07_block_scaling/bs_gemm.cpp
                   --sweep ${_ch07_sweeps} --prefix ch07:)
  add_test(NAME table_check_catches_a_slow_choice
           COMMAND ${Python3_EXECUTABLE} ${PROJECT_SOURCE_DIR}/tools/check_table.py
                   --table ${CMAKE_CURRENT_SOURCE_DIR}/data/tables/slow_choice.cpp
                   --sweep ${_ch07_sweeps} --prefix ch07:)
  set_tests_properties(table_matches_sweep_ch07 table_check_catches_a_slow_choice
                       PROPERTIES LABELS cpu)
  set_tests_properties(table_check_catches_a_slow_choice PROPERTIES WILL_FAIL TRUE)
endif()
