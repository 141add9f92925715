# CTest `plots_script` (cpu): plots/test_plot.py runs plots/plot.py on the synthetic fixture
# tests/data/bench_fixture/ (temp README skeletons, temp output) and checks the PNGs, the tables,
# idempotence and the handling of errored benchmarks, chapter 6's promoted peer and its ch06/
# ablation, accuracy and sweep tables and PNGs; when plots/data/h200/ holds JSON it also
# runs plot.py on that committed data (temp copies of the READMEs) so it always parses.
# Exits 77 (skipped) where matplotlib is not installed.
add_test(NAME plots_script
         COMMAND ${Python3_EXECUTABLE} ${CMAKE_SOURCE_DIR}/plots/test_plot.py
         WORKING_DIRECTORY ${CMAKE_SOURCE_DIR})
set_tests_properties(plots_script PROPERTIES LABELS cpu SKIP_RETURN_CODE 77 TIMEOUT 300)

# CTest `peers_timing` (cpu): bench/peers.py's timing (interleaved groups, time_call as a group of
# one) against a simulated GPU clock; no torch needed.
add_test(NAME peers_timing
         COMMAND ${Python3_EXECUTABLE} ${CMAKE_SOURCE_DIR}/bench/test_peers_timing.py
         WORKING_DIRECTORY ${CMAKE_SOURCE_DIR})
set_tests_properties(peers_timing PROPERTIES LABELS cpu)

# CTest `peers_moe_interleave` (cpu): bench/peers_moe.py --interleave (a case's checked calls timed in
# one Gpu.time_group, each with its own delay, a wrong result left out; same JSON fields plus
# interleaved) on peers_timing's simulated GPU clock, with fake calls; and the library's own grouped
# ops (fp8gemm_grouped_contiguous / _masked, fp8gemm_weight_grad) against a fake fp8gemm package that
# enforces the C++ ops' no-copy scale layouts: they join the case's group, or are error entries
# with the reason when the package or its compiled ops are missing; no torch needed.
add_test(NAME peers_moe_interleave
         COMMAND ${Python3_EXECUTABLE} ${CMAKE_SOURCE_DIR}/bench/test_peers_moe_interleave.py
         WORKING_DIRECTORY ${CMAKE_SOURCE_DIR})
set_tests_properties(peers_moe_interleave PROPERTIES LABELS cpu)

# CTest `plots_tables_up_to_date` (cpu): the generated tables in README.md and the chapter READMEs
# are what plots/plot.py makes of the committed JSON and tables today (`--check --no-png`: writes
# nothing, exit 1 if a table would change; PNG bytes depend on the matplotlib version, so they are
# not compared). Session 50 found chapter 7's tuning-sweep table stale: its last column follows the
# chapter's kernel table, which had changed in session 46 without a re-run of plot.py.
add_test(NAME plots_tables_up_to_date
         COMMAND ${Python3_EXECUTABLE} ${CMAKE_SOURCE_DIR}/plots/plot.py --check --no-png
         WORKING_DIRECTORY ${CMAKE_SOURCE_DIR})
set_tests_properties(plots_tables_up_to_date PROPERTIES LABELS cpu TIMEOUT 300)
