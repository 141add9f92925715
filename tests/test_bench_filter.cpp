// CPU test of the benchmark harness (common/bench.hpp): with --timing=interleaved, a shape's group
// holds only the benchmarks --benchmark_filter selects. Before run_benchmarks' selection pass, a
// filter naming one implementation still warmed up and timed every other one of its shape (under
// ncu, or in a tuning run, that launched kernels nobody asked for). The "launches" here are host
// functions that count their calls, so the test needs no GPU: without one the group's stream
// synchronisation fails after the warm-up calls and the benchmarks report an error, which is
// beside the point; what matters is who was called at all. On a GPU machine they are timed.
#include <string>
#include <vector>

#include "catch.hpp"
#include "common/bench.hpp"

TEST_CASE("an interleaved group holds only what --benchmark_filter selects", "[cpu][bench]") {
  using fp8gemm::add_gpu_benchmark;
  const fp8gemm::GemmCost cost{1e6, 1e3};  // flops, bytes: only the names matter here
  int keep = 0, drop = 0, a = 0, b = 0;
  add_gpu_benchmark("keep", "s1", [&keep](cudaStream_t) { ++keep; }, cost);
  add_gpu_benchmark("drop", "s1", [&drop](cudaStream_t) { ++drop; }, cost);
  // The control: a group whose members the filter all selects launches all of them.
  add_gpu_benchmark("a", "s2", [&a](cudaStream_t) { ++a; }, cost);
  add_gpu_benchmark("b", "s2", [&b](cudaStream_t) { ++b; }, cost);
  // One run (Google Benchmark is initialised once per process).
  std::vector<std::string> args = {"test_bench_filter", "--timing=interleaved",
                                   "--benchmark_filter=^keep/s1/|/s2/"};
  std::vector<char*> argv;
  for (auto& arg : args) argv.push_back(arg.data());
  fp8gemm::run_benchmarks(int(argv.size()), argv.data(), "");
  CHECK(keep > 0);
  CHECK(drop == 0);  // the same shape as keep, filtered out: never launched
  CHECK(a > 0);
  CHECK(b > 0);
}
