// A Catch2 program that stands in for a GPU test in tools/check_gpu_loop_tests.sh: run without
// arguments its one visible case passes; run with "[fails]" its hidden case fails one CHECK. The
// script checks what scripts/gpu_loop.sh's tests step and scripts/gpu_call.sh's packed_tests_step
// make of each (the PASS / FAIL lines, Catch's summary line, the FAILED block), on a CPU.
#include "catch.hpp"

TEST_CASE("gpu loop fixture: passes", "[gpu_loop_fixture]") {
  const int sum = 1 + 1;
  CHECK(sum == 2);
}

TEST_CASE("gpu loop fixture: fails", "[.fails]") {
  const int two = 2;
  CHECK(two == 3);  // the line check_gpu_loop_tests.sh looks for in the FAILED block
}
