# The per-shape kernel tables against the committed sweeps they came from (tools/check_table.py):
# every table kernel within 3% of the sweep's fastest on that shape. Since session 26 chapter 7's
# table copies the library's block-scaled picks, so it is checked against the library's dispatch
# sweep (ranked by its interleaved confirmation), not against the chapter's older tuning sweep.
# The self-test proves the check fails on a table that picks a slow kernel.
find_package(Python3 COMPONENTS Interpreter QUIET)
if(Python3_Interpreter_FOUND)
  # The block-scaled re-sweep of the M <= 128 shapes (session 46) first, then the full sweep.
  set(_dispatch_sweep ${PROJECT_SOURCE_DIR}/plots/data/h200/ch10/dispatch_sweep_block_scaled.json
                      ${PROJECT_SOURCE_DIR}/plots/data/h200/ch10/dispatch_sweep.json)
  add_test(NAME table_matches_sweep_ch07
           COMMAND ${Python3_EXECUTABLE} ${PROJECT_SOURCE_DIR}/tools/check_table.py
                   --table ${PROJECT_SOURCE_DIR}/chapters/07_block_scaling/bs_gemm.cpp
                   --dispatch-sweep ${_dispatch_sweep} --family block_scaled)
  add_test(NAME table_check_catches_a_slow_choice
           COMMAND ${Python3_EXECUTABLE} ${PROJECT_SOURCE_DIR}/tools/check_table.py
                   --table ${CMAKE_CURRENT_SOURCE_DIR}/data/tables/slow_choice.cpp
                   --dispatch-sweep ${_dispatch_sweep} --family block_scaled)
  set_tests_properties(table_matches_sweep_ch07 table_check_catches_a_slow_choice
                       PROPERTIES LABELS cpu)
  set_tests_properties(table_check_catches_a_slow_choice PROPERTIES WILL_FAIL TRUE)
  # The ranking both check_table.py and gen_dispatch_table.py use (tools/sweep_ranking.py), case
  # by case; with --break-rule (block medians of every correct row always) exactly the five
  # cases that depend on the rule must fail (a pass on that report only: not on an ImportError).
  add_test(NAME sweep_ranking_test
           COMMAND ${Python3_EXECUTABLE} ${PROJECT_SOURCE_DIR}/tools/test_sweep_ranking.py)
  add_test(NAME sweep_ranking_test_can_fail
           COMMAND ${Python3_EXECUTABLE} ${PROJECT_SOURCE_DIR}/tools/test_sweep_ranking.py --break-rule)
  set_tests_properties(sweep_ranking_test sweep_ranking_test_can_fail PROPERTIES LABELS cpu)
  set_tests_properties(sweep_ranking_test_can_fail PROPERTIES
                       PASS_REGULAR_EXPRESSION "test_sweep_ranking: 7 cases, 5 failed")
endif()
