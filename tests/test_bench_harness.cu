// GPU test of the benchmark harness (common/bench.hpp): with --timing=interleaved, benchmarks of
// one shape are timed together, round by round, and each still gets its own launch's time; a
// benchmark that calls time_gpu() itself is timed alone. The "implementations" are one-thread
// spin kernels of known length (gpu_delay: 40, 120, 80 and 60 us); a
// harness that read another benchmark's events, or timed the flush or the delay, would give the
// wrong ratio or the wrong absolute times. Without a GPU, gpu_main.cpp exits 77 (skipped).
#include <cuda_runtime.h>

#include <map>
#include <string>
#include <vector>

#include "catch.hpp"
#include "common/bench.hpp"
#include "common/cuda.hpp"

namespace {

using namespace fp8gemm;

TEST_CASE("interleaved timing gives each benchmark its own launch's time", "[gpu][bench]") {
  GemmCost cost;
  cost.flops = 1e9;
  cost.bytes = 1e6;
  add_gpu_benchmark("spin40", "harness", [](cudaStream_t s) { gpu_delay(40, s); }, cost);
  add_gpu_benchmark("spin120", "harness", [](cudaStream_t s) { gpu_delay(120, s); }, cost);
  // A third one alone in its shape: a group of one.
  add_gpu_benchmark("spin80", "alone", [](cudaStream_t s) { gpu_delay(80, s); }, cost);
  // time_gpu() called directly: timed alone, per launch, whatever --timing says.
  benchmark::RegisterBenchmark("spin60/direct", [cost](benchmark::State& st) {
    time_gpu(st, [](cudaStream_t s) { gpu_delay(60, s); }, cost);
  })->UseManualTime()->Iterations(1);
  // --gpu_delay_us=30 sits outside the timed region: it must not show in the times.
  std::vector<std::string> args = {"test_bench_harness", "--timing=interleaved",
                                   "--gpu_delay_us=30"};
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  const std::vector<BenchResult> results = run_benchmarks(int(argv.size()), argv.data(), "");
  std::map<std::string, double> us;
  for (const auto& r : results) us[r.implementation] = r.median_us;
  REQUIRE(us.size() == 4);
  INFO("spin40 " << us["spin40"] << " us, spin120 " << us["spin120"] << " us, spin80 "
                 << us["spin80"] << " us");
  // The spin kernel runs at least its length, plus a launch's few microseconds at most.
  CHECK(us["spin40"] >= 40.0);
  CHECK(us["spin40"] < 40.0 + 15.0);
  CHECK(us["spin120"] >= 120.0);
  CHECK(us["spin120"] < 120.0 + 15.0);
  CHECK(us["spin80"] >= 80.0);
  CHECK(us["spin80"] < 80.0 + 15.0);
  CHECK(us["spin60"] >= 60.0);
  CHECK(us["spin60"] < 60.0 + 15.0);
  std::map<std::string, double> interleaved;
  for (const auto& r : results) interleaved[r.implementation] = r.interleaved;
  CHECK(interleaved["spin40"] == 1.0);
  CHECK(interleaved["spin80"] == 1.0);
  CHECK(interleaved["spin60"] == 0.0);
}

}  // namespace
