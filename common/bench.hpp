// The benchmark harness on Google Benchmark. Every timed GEMM goes through time_gpu():
// warm-up launches, then per iteration an L2 flush (outside the timed region), a CUDA-event
// timed launch, and the elapsed time reported as manual time. Counters (computed from the
// median of the iterations, not the mean, so a stray slow iteration does not move them):
//   TFLOPS   = 2 M N K / median time
//   GB/s     = (M K + N K + 2 M N (+ scales)) bytes / median time
//   median_us, min_us
// add_context() writes GPU name, SM count, max SM and memory clocks, driver, CUDA runtime,
// cuBLASLt version and the git commit into the JSON context.
#pragma once

#include <benchmark/benchmark.h>
#include <cuda_runtime.h>

#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

namespace fp8gemm {

/// The commit the binary was built from ("<sha>[-dirty]"), recorded at build time.
const char* git_commit();

/// Adds GPU and software context to the benchmark JSON (call before RunSpecifiedBenchmarks).
void add_benchmark_context();

/// Device 0 and the software, as (key, value) text pairs in this order: gpu, gpu_sm_count,
/// gpu_compute_capability, gpu_max_sm_clock_mhz, gpu_memory_clock_mhz, gpu_l2_bytes,
/// cuda_driver_version, cuda_runtime_version, cublaslt_version. Needs a GPU. What
/// add_benchmark_context() records, for executables that write their own JSON.
std::vector<std::pair<std::string, std::string>> gpu_context();

struct GemmCost {
  double flops = 0;  ///< 2 M N K
  double bytes = 0;  ///< minimum bytes moved through device memory
};
/// Cost of an FP8 GEMM with bf16 output and `scale_bytes` bytes of scales.
GemmCost fp8_gemm_cost(std::int64_t M, std::int64_t N, std::int64_t K, double scale_bytes = 8);

/// Times `launch` (which must enqueue the work on `stream` and check its own errors) inside a
/// Google Benchmark state with manual time. warmup launches run first.
void time_gpu(benchmark::State& state, const std::function<void(cudaStream_t)>& launch,
              const GemmCost& cost, int warmup = 3, cudaStream_t stream = nullptr);

/// Registers the benchmark "<impl>/<shape>": `launch` timed by the harness's method. With
/// --timing=interleaved (the default) the benchmarks registered here are grouped by `shape` and
/// timed together, in rounds of one launch each (order rotating every round, L2 flushed before
/// each launch), so that every implementation of a shape is timed over the same clock history;
/// otherwise each is timed alone by time_gpu(). Each result's "interleaved" counter says which.
/// A group holds only the benchmarks --benchmark_filter selects (run_benchmarks asks Google
/// Benchmark in a silent first pass); the others are neither launched nor timed.
void add_gpu_benchmark(const std::string& impl, const std::string& shape,
                       std::function<void(cudaStream_t)> launch, const GemmCost& cost);

/// Method options (parsed and removed from argv by run_benchmarks, recorded in the JSON
/// context): --l2_flush=1|0 (default 1), --timing=interleaved|per_launch|back_to_back (default
/// interleaved, for add_gpu_benchmark's benchmarks; per_launch times one benchmark after the
/// other; back_to_back times 20 launches with no flush or host sync between them),
/// --gpu_delay_us=N, --settle_ms=X.

/// One benchmark's result, named "<implementation>/<M>x<N>x<K>".
struct BenchResult {
  std::string implementation, shape;
  double tflops = 0, median_us = 0;
  double interleaved = 0;  ///< 1: timed in its shape's interleaved group; 0: alone
};

/// Standard main body, once per process (Google Benchmark cannot be initialised again after its
/// Shutdown: a second call crashed in the first draft of common_test_bench_filter): initialises
/// Google Benchmark with argv (adding
/// `--benchmark_out=default_json --benchmark_out_format=json` unless the caller gave an output),
/// adds the context, runs what is registered, and returns the results (console output as usual).
std::vector<BenchResult> run_benchmarks(int argc, char** argv, const std::string& default_json);

/// Prints the closing table: one row per (implementation != peer, shape): shape, TFLOPS,
/// % of the peer's TFLOPS at the same shape, and the error string given for that shape.
void print_summary(const std::vector<BenchResult>& results, const std::string& peer,
                   const std::function<std::string(const std::string& impl,
                                                   const std::string& shape)>& error_of);

}  // namespace fp8gemm
