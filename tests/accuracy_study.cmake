# CPU tests of the accuracy study shared by chapter 7 and chapter 9's MXFP8 rows
# (common/accuracy_study.hpp, chapters/09_blackwell_mxfp8/accuracy_study.*): chapter 7's committed
# numbers recomputed and its JSON bytes (the refactor moved nothing), the error metrics on
# hand-computed cases, and chapter 9's pipeline against its float64 definition and CPU model.
if(TARGET fp8gemm_ch09_accuracy)
  fp8gemm_test(test_accuracy_study LABEL cpu SOURCES test_accuracy_study.cpp
               LIBS fp8gemm_ch09_accuracy)
endif()
