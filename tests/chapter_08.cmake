# Chapter 8 (grouped MoE forward pass). CPU: bad calls refused before any CUDA call; the checking
# mode's rules and messages on host arrays; the executable's case names (bench/peers_moe.py's) and
# --case syntax; ptxas findings.
# GPU (run in most device sessions since the chapter was written: its README's Status; chapters/08_grouped_moe/grouped_check.hpp's
# float64 reference per group, rows outside the groups must keep the poison): contiguous groups of
# 0, 1, 127, 128, 129 rows with every kernel, G = 1, G = 256 experts of 0..40 rows, masked groups
# with masked_m from 0 to M_max (all 0, all M_max), a CUDA graph replayed with other offsets /
# masked_m, determinism, the checking mode (good descriptions pass; decreasing, first != 0,
# last != rows, negative or > M_max refused by std::runtime_error naming the index, D untouched;
# std::invalid_argument under stream capture, the capture left valid); the stream-K kernels on
# calls the division splits (session 18: checked to split, rerun bit-identical, graph replay).
if(TARGET fp8gemm_ch08_checks)
  fp8gemm_test(test_chapter_08_args LABEL cpu SOURCES test_chapter_08_args.cpp LIBS fp8gemm_ch08)
  fp8gemm_test(test_chapter_08 LABEL gpu SOURCES test_chapter_08.cu LIBS fp8gemm_ch08_checks)
endif()
fp8gemm_ptxas_test(ptxas_chapter_08 DIR ${PROJECT_SOURCE_DIR}/chapters/08_grouped_moe
                   SOURCES ${PROJECT_SOURCE_DIR}/chapters/08_grouped_moe/kernels_grouped.cu
                           ${PROJECT_SOURCE_DIR}/chapters/08_grouped_moe/kernels_grouped_2x1.cu
                           ${PROJECT_SOURCE_DIR}/chapters/08_grouped_moe/kernels_grouped_narrow.cu
                           ${PROJECT_SOURCE_DIR}/chapters/08_grouped_moe/kernels_grouped_streamk.cu
                           ${PROJECT_SOURCE_DIR}/chapters/08_grouped_moe/kernels_grouped_f32.cu)
# scripts/gpu_loop.sh's step ch08 on a CPU (tools/check_ch08_step.sh): the executable, wrapped to
# only list its cases, must be given exactly bench/peers_moe.py's forward cases, by name.
find_package(Python3 COMPONENTS Interpreter QUIET)
if(TARGET ch08_grouped_moe AND Python3_Interpreter_FOUND)
  add_test(NAME chapter_08_cases_match_peers
           COMMAND bash ${PROJECT_SOURCE_DIR}/tools/check_ch08_step.sh ${PROJECT_SOURCE_DIR}
                   $<TARGET_FILE:ch08_grouped_moe> ${CMAKE_CURRENT_BINARY_DIR}/ch08_step)
  set_tests_properties(chapter_08_cases_match_peers PROPERTIES LABELS cpu)
endif()
# The session tables of chapter 8's README and lab notebook (NOTEBOOK.md, the sessions' sections)
# are printed from their committed JSON (no number by hand): each script run with --check fails if
# its block in the file named (README.md or NOTEBOOK.md of chapters/08_grouped_moe) differs
# from its output (fp8gemm_doc_table_test).
set(_ch08_notebook chapters/08_grouped_moe/NOTEBOOK.md)
fp8gemm_doc_table_test(chapter_08_session12_tables ${_ch08_notebook} ch08/unrolled_session12/summarise.py)
# Session 14's table (the 2 x 1 kernels against DeepGEMM).
fp8gemm_doc_table_test(chapter_08_session14_table ${_ch08_notebook} ch08/session14/summarise.py)
# Session 15's (the staged loop against its lean twins), from its JSON by the same script.
fp8gemm_doc_table_test(chapter_08_session15_table ${_ch08_notebook} ch08/session14/summarise.py
    ${PROJECT_SOURCE_DIR}/plots/data/h200/ch08/session15/peers_interleaved_40f51ed_call3.json
    --marker session15-table
    --ratio 256x128_s4_c1x1_promoted_tma_b1_loop12,256x128_s4_c1x1_promoted_tma_b1
    --ratio 256x128_s4_c1x2_promoted_tma_b1_loop12,256x128_s4_c1x2_promoted_tma_b1)
fp8gemm_doc_table_test(chapter_08_session15_staged_s3 ${_ch08_notebook} ch08/session15/staged_s3.py)
# Session 16's (the narrow tiles against the tiles they cut, calls 1-4).
fp8gemm_doc_table_test(chapter_08_session16_narrow ${_ch08_notebook} ch08/session16/narrow.py)
# Session 17's: the peers in one process with the sleeping barrier wait (chapter 7's ratio to
# DeepGEMM; chapter 8's defaults against DeepGEMM, torch and their _spin twins).
fp8gemm_doc_table_test(chapter_08_session17_peers ${_ch08_notebook} engine_wait/peers.py)
# ... and the masked calls with 256 x 128, 3 stages, a staging buffer per unit (call 8).
fp8gemm_doc_table_test(chapter_08_session17_masked ${_ch08_notebook} ch08/session17/masked_s3b4.py)
# Session 18's: the stream-K kernels against their data-parallel twins (calls 1, 3 and 4).
fp8gemm_doc_table_test(chapter_08_session18_streamk ${_ch08_notebook} ch08/session18/streamk.py)
# Session 24's (its Status entry, now in NOTEBOOK.md): chapter 8 against its peers in one process
# at 6e6f2fc (pinned loop addresses).
fp8gemm_doc_table_test(chapter_08_session24_peers ${_ch08_notebook} session24/summarise.py)
# Session 30's: chapter 8 against its peers at ca5bdb1 (the weight gradient's early wave).
fp8gemm_doc_table_test(chapter_08_session30_peers ${_ch08_notebook} session30/summarise.py)
# Session 31's: the one-group FP32 and bf16 sweeps, cuBLASLt, and the peers at 945a6e2.
fp8gemm_doc_table_test(chapter_08_session31_tables ${_ch08_notebook} session31/summarise.py)
# Session 32's: the idle-warpgroup skip against the binary before it, and the peers at 622dbc7.
fp8gemm_doc_table_test(chapter_08_session32_tables ${_ch08_notebook} session32/summarise.py)
# Session 33's: the _dyn kernel against the static one, and the slabs each side of issue 10's
# skewed comparison computes.
fp8gemm_doc_table_test(chapter_08_session33_tables ${_ch08_notebook} session33/summarise.py)
# Session 35's: the counter kernel against the 256 x 128 default, four shapes (the regime).
fp8gemm_doc_table_test(chapter_08_session35_regime ${_ch08_notebook} session35/summarise.py)
# Session 36's experts in four orders (call 5).
fp8gemm_doc_table_test(chapter_08_session36_order ${_ch08_notebook} session36/group_order.py)
# Session 36's peers run (call 6), beside session 35's call 7.
fp8gemm_doc_table_test(chapter_08_session36_peers ${_ch08_notebook} session36/peers.py)
# Session 36's masked 3-stage tile at K 4096 and 7168 (call 7).
fp8gemm_doc_table_test(chapter_08_session36_masked_k ${_ch08_notebook} session36/masked_k.py)
# Session 37's peers run (call 4), beside session 36's call 6.
fp8gemm_doc_table_test(chapter_08_session37_peers ${_ch08_notebook} session37/peers.py)
# Session 38: chapter 8's cases against the engine before the producer warp.
fp8gemm_doc_table_test(chapter_08_session38 ${_ch08_notebook} session38/summarise.py)
# Session 39's, in the README's Status (the producer warp merged, against session 37's engine).
fp8gemm_doc_table_test(chapter_08_session39 chapters/08_grouped_moe/README.md session39/summarise.py)
# A --only that selects no case is refused before any GPU work, naming the cases (the arguments
# are parsed before the GPU check; without the refusal the executable reports no GPU instead).
if(TARGET ch08_grouped_moe)
  add_test(NAME cli_ch08_only_matches_nothing COMMAND ch08_grouped_moe --only=no_such_case)
  set_tests_properties(cli_ch08_only_matches_nothing PROPERTIES LABELS cpu
                       PASS_REGULAR_EXPRESSION "--only='no_such_case' matches no case[.] The cases: bal_")
  # Weight-gradient kernels named for cases without a weight gradient would time nothing.
  add_test(NAME cli_ch08_wgrad_kernels_without_wgrad_case
           COMMAND ch08_grouped_moe --kernels=128x192_s4_c1x1_promoted_f32_tma_b2
                   --case=lin_t4096:4096:2112:7168 --only=lin_)
  set_tests_properties(cli_ch08_wgrad_kernels_without_wgrad_case PROPERTIES LABELS cpu
                       PASS_REGULAR_EXPRESSION "names weight-gradient kernels, but no selected case has a weight gradient")
  # A name that is no compiled kernel would be skipped at every case and time nothing.
  add_test(NAME cli_ch08_unknown_kernel COMMAND ch08_grouped_moe --kernels=256x128_s4_no_such_kernel)
  set_tests_properties(cli_ch08_unknown_kernel PROPERTIES LABELS cpu
                       PASS_REGULAR_EXPRESSION "'256x128_s4_no_such_kernel' is no compiled kernel of chapter 8")
  # --forward-only with --kernels naming only weight-gradient kernels would time nothing.
  add_test(NAME cli_ch08_forward_only_without_forward_kernel
           COMMAND ch08_grouped_moe --forward-only --kernels=128x192_s4_c1x1_promoted_f32_tma_b2)
  set_tests_properties(cli_ch08_forward_only_without_forward_kernel PROPERTIES LABELS cpu
                       PASS_REGULAR_EXPRESSION "--forward-only: --kernels names weight-gradient kernels only")
endif()
