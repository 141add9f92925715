#include "common/bench.hpp"

#include <cublasLt.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <memory>
#include <sstream>

#include "common/cublaslt.hpp"
#include "common/cuda.hpp"

namespace fp8gemm {

namespace {
// Measurement method, set from the command line by run_benchmarks() (recorded in the JSON):
//   --l2_flush=1 (default) | 0 | clean   flush L2 before every timed launch (a memset over twice
//       the L2 size, which leaves L2 full of dirty lines), or not, or flush it clean (the memset,
//       then a read of another such buffer: cold L2 without the memset's lines to write back
//       inside the timed launch; docs/measuring.md, "The flush's dirty lines")
//   --timing=interleaved (default) | per_launch | back_to_back
//       interleaved: for benchmarks registered with add_gpu_benchmark(), all those of one shape
//       are timed together: rounds of one launch each (flush, delay, events around the launch),
//       the order rotating every round, median over rounds per benchmark; so every
//       implementation sees the same clock over time (the H200's power cap lowers the SM clock
//       over the first ~0.5 s of a heavy load and lets it recover over ~0.2 s after one, and
//       timed one after the other the first implementation of a shape gets the higher clock:
//       chapter 6's README, "Timing order"). time_gpu() called directly times per launch;
//       per_launch: events around each launch, median over launches, one benchmark after the
//       other;
//   --gpu_delay_us=N (default 0)      before each timed launch (after the flush, before the start
//       event) keep the GPU busy for N us with a one-thread spin kernel: bench/peers.py does the
//       same for the Python peers (there it hides the Python call's host work), so that both
//       sides are timed by one method
//       back_to_back: 20 launches between two events, no flush or host sync between them,
//       time / 20 per sample, median over samples (what a training step sees: warm L2 for
//       weights that fit, no idle gaps).
//   --settle_ms=X (default 0)       before the timed launches, repeat the timed loop's work
//       (flush, delay, launch) for about X ms of GPU time, so that a benchmark that follows a
//       power-capped one is not timed while the SM clock is still coming back up
enum class Timing { interleaved, per_launch, back_to_back };
enum class Flush { off, memset, clean };  // --l2_flush=0 | 1 | clean
Flush g_l2_flush = Flush::memset;
Timing g_timing = Timing::interleaved;
double g_delay_us = 0;
double g_settle_ms = 0;
// The selection pass of run_benchmarks(): Google Benchmark runs the benchmarks its filter selects,
// each of which only notes that it was selected (add_gpu_benchmark's) or skips (time_gpu's).
bool g_selecting = false;
}  // namespace

void add_benchmark_context() {
  benchmark::AddCustomContext("l2_flush", g_l2_flush == Flush::off     ? "0"
                                          : g_l2_flush == Flush::clean ? "clean"
                                                                       : "1");
  benchmark::AddCustomContext("timing", g_timing == Timing::back_to_back ? "back_to_back"
                                       : g_timing == Timing::interleaved  ? "interleaved"
                                                                          : "per_launch");
  benchmark::AddCustomContext("gpu_delay_us", std::to_string(g_delay_us));
  benchmark::AddCustomContext("settle_ms", std::to_string(g_settle_ms));
  benchmark::AddCustomContext("git_commit", git_commit());
  if (cuda_device_count() == 0) {
    benchmark::AddCustomContext("gpu", "none");
    return;
  }
  for (const auto& [key, value] : gpu_context()) benchmark::AddCustomContext(key, value);
  benchmark::AddCustomContext("cublaslt_algo_index", std::to_string(CublasLtGemm::algo_index()));
}

std::vector<std::pair<std::string, std::string>> gpu_context() {
  cudaDeviceProp p{};
  FP8GEMM_CUDA_CHECK(cudaGetDeviceProperties(&p, 0));
  int sm_khz = 0, mem_khz = 0, driver = 0, runtime = 0;
  FP8GEMM_CUDA_CHECK(cudaDeviceGetAttribute(&sm_khz, cudaDevAttrClockRate, 0));
  FP8GEMM_CUDA_CHECK(cudaDeviceGetAttribute(&mem_khz, cudaDevAttrMemoryClockRate, 0));
  FP8GEMM_CUDA_CHECK(cudaDriverGetVersion(&driver));
  FP8GEMM_CUDA_CHECK(cudaRuntimeGetVersion(&runtime));
  return {{"gpu", p.name},
          {"gpu_sm_count", std::to_string(p.multiProcessorCount)},
          {"gpu_compute_capability", std::to_string(p.major) + "." + std::to_string(p.minor)},
          {"gpu_max_sm_clock_mhz", std::to_string(sm_khz / 1000)},
          {"gpu_memory_clock_mhz", std::to_string(mem_khz / 1000)},
          {"gpu_l2_bytes", std::to_string(p.l2CacheSize)},
          {"cuda_driver_version", std::to_string(driver)},
          {"cuda_runtime_version", std::to_string(runtime)},
          {"cublaslt_version", std::to_string(cublasLtGetVersion())}};
}

GemmCost fp8_gemm_cost(std::int64_t M, std::int64_t N, std::int64_t K, double scale_bytes) {
  GemmCost c;
  c.flops = 2.0 * double(M) * double(N) * double(K);
  c.bytes = double(M) * K + double(N) * K + 2.0 * double(M) * N + scale_bytes;
  return c;
}

namespace {

L2Flush& l2_flush() {
  static L2Flush* l2 = new L2Flush();  // one per process, created on first use (needs a GPU)
  return *l2;
}

/// The counters of one benchmark from its samples (ms): median time as the iteration time.
void report(benchmark::State& state, const std::vector<double>& ms, const GemmCost& cost,
            bool interleaved) {
  std::vector<double> sorted = ms;
  std::sort(sorted.begin(), sorted.end());
  const double median = sorted[sorted.size() / 2];
  state.SetIterationTime(median / 1e3);
  state.counters["TFLOPS"] = cost.flops / (median / 1e3) / 1e12;
  state.counters["GB/s"] = cost.bytes / (median / 1e3) / 1e9;
  state.counters["median_us"] = median * 1e3;
  state.counters["min_us"] = sorted.front() * 1e3;
  state.counters["max_us"] = sorted.back() * 1e3;
  state.counters["reps"] = double(sorted.size());
  state.counters["interleaved"] = interleaved ? 1.0 : 0.0;
}

/// A benchmark registered with add_gpu_benchmark(); its samples once its shape's group is timed.
struct GroupedBenchmark {
  std::string shape;
  std::function<void(cudaStream_t)> launch;
  GemmCost cost;
  bool timed = false;
  bool selected = true;  ///< by --benchmark_filter (the selection pass clears it first)
  std::vector<double> ms;
  std::string error;
};
std::vector<std::shared_ptr<GroupedBenchmark>>& grouped_benchmarks() {
  static std::vector<std::shared_ptr<GroupedBenchmark>> v;
  return v;
}

using Launch = std::function<void(cudaStream_t)>;

/// The samples (ms) of `launches` timed together on `stream`, warmed up already (time_gpu() is
/// the case of one launch, time_group() of a shape's benchmarks): one L2-flushed estimate each;
/// then --settle_ms of the rounds' own work; then rounds, in which the launches go in turn, the
/// order rotated by one every round, each after the flush (--l2_flush) and the delay
/// (--gpu_delay_us), outside its events, and `per_sample` times in a row between its events
/// (1, or 20 for back_to_back), the sample being that time / per_sample. The events are read
/// once per round. Rounds: clamp(250 ms x n / the sum of the estimates, 10, 300) launches each,
/// i.e. ~0.25 s of GPU time per launch, / per_sample.
std::vector<std::vector<double>> sample(const std::vector<const Launch*>& launches,
                                        cudaStream_t stream, int per_sample) {
  const std::size_t n = launches.size();
  std::vector<EventTimer> timers(n);
  auto before = [&] {  // outside the timed region
    if (g_l2_flush == Flush::clean) l2_flush().flush_clean(stream);
    else if (g_l2_flush == Flush::memset) l2_flush().flush(stream);
    gpu_delay(g_delay_us, stream);
  };
  double estimate_sum_ms = 0;
  for (std::size_t i = 0; i < n; ++i) {
    l2_flush().flush(stream);
    timers[i].start(stream);
    (*launches[i])(stream);
    timers[i].stop(stream);
    estimate_sum_ms += std::max(1e-3, double(timers[i].elapsed_ms()));
  }
  const int reps = int(std::clamp(250.0 * double(n) / estimate_sum_ms, 10.0, 300.0));
  const int rounds = (reps + per_sample - 1) / per_sample;
  // --settle_ms: the same work repeated first (16 launches per timed chunk), so that the clocks
  // the samples see are set by this load and not by the previous benchmark's (after a
  // power-capped 8192^3 the SM clock needs time to come back up).
  for (double settled = 0; settled < g_settle_ms;) {
    timers[0].start(stream);
    for (std::size_t k = 0; k < std::max<std::size_t>(16, n); ++k) {
      before();
      (*launches[k % n])(stream);
    }
    timers[0].stop(stream);
    settled += double(timers[0].elapsed_ms());
  }
  std::vector<std::vector<double>> ms(n);
  for (int r = 0; r < rounds; ++r) {
    for (std::size_t j = 0; j < n; ++j) {
      const std::size_t i = (j + std::size_t(r)) % n;
      before();
      timers[i].start(stream);
      for (int k = 0; k < per_sample; ++k) (*launches[i])(stream);
      timers[i].stop(stream);
    }
    for (std::size_t i = 0; i < n; ++i) ms[i].push_back(timers[i].elapsed_ms() / per_sample);
  }
  return ms;
}

/// Times every not yet timed benchmark of `shape` that --benchmark_filter selected together
/// (--timing=interleaved): 3 warm-up launches each (a benchmark whose warm-up throws keeps that
/// error and is left out), then sample() of the others. An error while sampling is every
/// member's. The members the filter left out are neither launched nor timed.
void time_group(const std::string& shape) {
  std::vector<GroupedBenchmark*> live;
  for (const auto& b : grouped_benchmarks()) {
    if (b->shape != shape || b->timed || !b->selected) continue;
    b->timed = true;
    try {
      for (int i = 0; i < 3; ++i) b->launch(nullptr);
      FP8GEMM_CUDA_CHECK(cudaStreamSynchronize(nullptr));
      live.push_back(b.get());
    } catch (const std::exception& e) {
      b->error = e.what();
    }
  }
  if (live.empty()) return;
  std::vector<const Launch*> launches;
  for (auto* b : live) launches.push_back(&b->launch);
  try {
    auto ms = sample(launches, nullptr, 1);
    for (std::size_t i = 0; i < live.size(); ++i) live[i]->ms = std::move(ms[i]);
  } catch (const std::exception& e) {
    for (auto* b : live) b->error = e.what();
  }
}

}  // namespace

void add_gpu_benchmark(const std::string& impl, const std::string& shape,
                       std::function<void(cudaStream_t)> launch, const GemmCost& cost) {
  auto b = std::make_shared<GroupedBenchmark>();
  b->shape = shape;
  b->launch = std::move(launch);
  b->cost = cost;
  grouped_benchmarks().push_back(b);
  benchmark::RegisterBenchmark((impl + "/" + shape).c_str(),
                               [b](benchmark::State& state) {
                                 if (g_selecting) {
                                   b->selected = true;
                                   state.SkipWithError("selection pass");
                                   return;
                                 }
                                 if (g_timing != Timing::interleaved) {
                                   time_gpu(state, b->launch, b->cost);
                                   return;
                                 }
                                 if (!b->timed) time_group(b->shape);
                                 if (!b->error.empty() || b->ms.empty()) {
                                   state.SkipWithError(b->error.empty() ? "not timed"
                                                                        : b->error.c_str());
                                   return;
                                 }
                                 for (auto _ : state) report(state, b->ms, b->cost, true);
                               })
      ->UseManualTime()
      ->Iterations(1)
      ->Unit(benchmark::kMicrosecond);
}

void time_gpu(benchmark::State& state, const std::function<void(cudaStream_t)>& launch,
              const GemmCost& cost, int warmup, cudaStream_t stream) {
  if (g_selecting) {  // run_benchmarks' selection pass: nothing to note, nothing to launch
    state.SkipWithError("selection pass");
    return;
  }
  try {
    for (int i = 0; i < warmup; ++i) launch(stream);
    FP8GEMM_CUDA_CHECK(cudaStreamSynchronize(stream));
    constexpr int kBackToBack = 20;
    const auto ms = sample({&launch}, stream, g_timing == Timing::back_to_back ? kBackToBack : 1);
    for (auto _ : state) report(state, ms[0], cost, false);
  } catch (const std::exception& e) {
    state.SkipWithError(e.what());
  }
}

namespace {

/// Reports nothing (the selection pass of run_benchmarks).
class SilentReporter : public benchmark::BenchmarkReporter {
 public:
  bool ReportContext(const Context&) override { return true; }
  void ReportRuns(const std::vector<Run>&) override {}
};

class CollectingReporter : public benchmark::ConsoleReporter {
 public:
  std::vector<BenchResult> results;
  void ReportRuns(const std::vector<Run>& runs) override {
    ConsoleReporter::ReportRuns(runs);
    for (const Run& run : runs) {
      if (run.error_occurred) continue;
      const std::string name = run.benchmark_name();
      // "<impl>/<shape>/iterations:1/manual_time" -> impl, shape
      std::vector<std::string> parts;
      std::stringstream ss(name);
      for (std::string p; std::getline(ss, p, '/');) parts.push_back(p);
      BenchResult r;
      r.implementation = parts.size() > 0 ? parts[0] : name;
      r.shape = parts.size() > 1 ? parts[1] : "";
      auto tf = run.counters.find("TFLOPS");
      auto med = run.counters.find("median_us");
      r.tflops = tf != run.counters.end() ? double(tf->second) : 0.0;
      r.median_us = med != run.counters.end() ? double(med->second) : 0.0;
      auto il = run.counters.find("interleaved");
      r.interleaved = il != run.counters.end() ? double(il->second) : 0.0;
      results.push_back(r);
    }
  }
};

}  // namespace

std::vector<BenchResult> run_benchmarks(int argc, char** argv, const std::string& default_json) {
  std::vector<std::string> storage;
  for (int i = 0; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--l2_flush=0") g_l2_flush = Flush::off;
    else if (a == "--l2_flush=1") g_l2_flush = Flush::memset;
    else if (a == "--l2_flush=clean") g_l2_flush = Flush::clean;
    else if (a.rfind("--l2_flush=", 0) == 0) {
      std::fprintf(stderr, "unknown %s: --l2_flush= takes 1, 0 or clean\n", a.c_str());
      std::exit(2);
    }
    else if (a == "--timing=back_to_back") g_timing = Timing::back_to_back;
    else if (a == "--timing=per_launch") g_timing = Timing::per_launch;
    else if (a == "--timing=interleaved") g_timing = Timing::interleaved;
    else if (a.rfind("--timing=", 0) == 0) {
      // Google Benchmark would ignore it, and the run would be timed by another method than asked.
      std::fprintf(stderr, "unknown %s: --timing= takes interleaved, per_launch or back_to_back\n",
                   a.c_str());
      std::exit(2);
    }
    else if (a.rfind("--gpu_delay_us=", 0) == 0) g_delay_us = std::stod(a.substr(15));
    else if (a.rfind("--settle_ms=", 0) == 0) g_settle_ms = std::stod(a.substr(12));
    else storage.push_back(a);
  }
  bool has_out = false;
  for (const auto& a : storage) has_out |= a.rfind("--benchmark_out=", 0) == 0;
  if (!has_out && !default_json.empty()) {
    storage.push_back("--benchmark_out=" + default_json);
    storage.push_back("--benchmark_out_format=json");
  }
  std::vector<char*> args;
  for (auto& s : storage) args.push_back(s.data());
  int n = int(args.size());
  benchmark::Initialize(&n, args.data());
  add_benchmark_context();
  // The interleaved groups must hold only what --benchmark_filter selects (else a filter naming
  // one implementation still times, and launches, every other one of its shape: under ncu, or in
  // a tuning run, that is wrong work and time). Which benchmarks the filter selects is Google
  // Benchmark's own matching, so a first, silent pass asks it: each add_gpu_benchmark() benchmark
  // it runs only marks itself; time_gpu() skips. Other RegisterBenchmark() bodies would run twice,
  // so the pass is made only where add_gpu_benchmark() registered something, and not for
  // --benchmark_list_tests (which would list twice).
  bool list_only = false;
  for (const auto& a : storage) list_only |= a.rfind("--benchmark_list_tests", 0) == 0;
  if (g_timing == Timing::interleaved && !grouped_benchmarks().empty() && !list_only) {
    SilentReporter silent_display, silent_file;
    bool out_set = false;
    for (const auto& a : storage) out_set |= a.rfind("--benchmark_out=", 0) == 0;
    for (const auto& b : grouped_benchmarks()) b->selected = false;
    g_selecting = true;
    benchmark::RunSpecifiedBenchmarks(&silent_display, out_set ? &silent_file : nullptr);
    g_selecting = false;
  }
  CollectingReporter reporter;
  benchmark::RunSpecifiedBenchmarks(&reporter);
  benchmark::Shutdown();
  return reporter.results;
}

void print_summary(const std::vector<BenchResult>& results, const std::string& peer,
                   const std::function<std::string(const std::string&, const std::string&)>& error_of) {
  std::map<std::string, double> peer_tflops;
  for (const auto& r : results)
    if (r.implementation == peer) peer_tflops[r.shape] = r.tflops;
  std::printf("\n%-28s %-20s %10s %14s  %s\n", "implementation", "shape (MxNxK)", "TFLOPS",
              ("% of " + peer).substr(0, 14).c_str(), "error vs float64 reference");
  for (const auto& r : results) {
    if (r.implementation == peer) continue;
    const auto it = peer_tflops.find(r.shape);
    char pct[32] = "-";
    if (it != peer_tflops.end() && it->second > 0)
      std::snprintf(pct, sizeof pct, "%.1f%%", 100.0 * r.tflops / it->second);
    std::printf("%-28s %-20s %10.1f %14s  %s\n", r.implementation.c_str(), r.shape.c_str(),
                r.tflops, pct, error_of(r.implementation, r.shape).c_str());
  }
  for (const auto& [shape, tf] : peer_tflops)
    std::printf("%-28s %-20s %10.1f %14s  %s\n", peer.c_str(), shape.c_str(), tf, "100.0%",
                error_of(peer, shape).c_str());
}

}  // namespace fp8gemm
