// fp8gemm_library_bench: what the library's layer costs (issue "Chapter 10", targets: library calls
// <= 2% slower than the chapter kernels they wrap at every benchmarked shape, same run; host
// overhead per run() <= 5 us).
//
// (a) GPU time, common/bench.hpp's method (warm-up, L2 flush before each launch, CUDA events,
//     median; --gpu_delay_us=N as the chapter executables): each library entry point against the
//     chapter plan it wraps, built with the kernel the library chose, so that the two launch the
//     same kernel on the same operands and any difference is the library's layer:
//       library:block_scaled  vs chapter:block_scaled   (fp8gemm::BlockScaledPlan, ch07::Plan)
//       library:per_tensor    vs chapter:per_tensor     (fp8gemm::PerTensorPlan, ch06::Plan)
//       library:mxfp8         vs chapter:mxfp8          (fp8gemm::MxPlan, ch09::HopperPlan)
//     on the DeepSeek-V3 shapes (M in {64, 128, 4096}) and 8192^3, and
//       library:grouped / chapter:grouped, library:wgrad / chapter:wgrad  (fp8gemm::GroupedPlan,
//     WeightGradPlan and chapter 8's plans) on a balanced, a masked and a weight-gradient case.
//     The pair's order alternates from shape to shape (drift does not favour one side). Before
//     timing, each pair's outputs are compared on the GPU: they must be identical.
// (b) Host overhead of run(): the stream is kept busy (gpu_delay, 5 ms) while --host_calls
//     back-to-back run() calls are enqueued behind it; CPU time per call, median of 15 batches:
//       host_library:<entry> and host_chapter:<entry> per shape, and host_launch:empty_kernel
//     (a <<<1, 1>>> launch: the CUDA runtime's own floor on this machine).
// One Google Benchmark JSON (GPU, clocks, driver, CUDA, cuBLASLt version, commit in its context);
// host results carry their CPU microseconds per call in median_us. The closing table gives every
// ratio and the verdict against the targets.
//
//   fp8gemm_library_bench [--shapes=MxNxK,...] [--json=PATH] [--host_calls=200] [--no-grouped]
//                         [--gpu_delay_us=N] [Google Benchmark flags]
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <functional>
#include <map>
#include <memory>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "bs_check.hpp"
#include "common/bench.hpp"
#include "common/chapter_args.hpp"
#include "common/cuda.hpp"
#include "common/scaling.hpp"
#include "fp8gemm/fp8gemm.hpp"
#include "grouped_check.hpp"
#include "wgrad_check.hpp"

using namespace fp8gemm;

namespace {

__global__ void empty_kernel() {}

__global__ void count_differences(const std::uint16_t* a, const std::uint16_t* b, std::size_t n,
                                  unsigned long long* out) {
  unsigned long long c = 0;
  for (std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; i < n;
       i += std::size_t(gridDim.x) * blockDim.x)
    c += a[i] != b[i];
  atomicAdd(out, c);
}

/// Elements where two bf16 (or, with `words` = 2 per element, FP32) buffers differ bitwise.
unsigned long long differences(const void* a, const void* b, std::size_t halfwords) {
  DeviceBuffer<unsigned long long> n(std::vector<unsigned long long>{0});
  count_differences<<<264, 256>>>(static_cast<const std::uint16_t*>(a),
                                  static_cast<const std::uint16_t*>(b), halfwords, n.data());
  FP8GEMM_CUDA_CHECK(cudaGetLastError());
  return n.download()[0];
}

using Launch = std::function<void(cudaStream_t)>;

/// One library entry point and the chapter plan it wraps, on one shape.
struct Pair {
  std::string entry, shape;  // "block_scaled", "4096x7168x2048"
  Launch library, chapter;
  GemmCost cost;
  std::string note;  // the library's kernel and rule
};

/// Everything a pair needs kept alive until the benchmarks have run.
std::vector<std::shared_ptr<void>> g_keep;
template <class T, class... A>
T& keep(A&&... args) {
  auto p = std::make_shared<T>(std::forward<A>(args)...);
  g_keep.push_back(p);
  return *p;
}

/// Runs both sides once with their outputs poisoned (0xFF bytes) and returns the differing
/// halfwords; `bytes` of output at each of `d_lib`, `d_ch`.
unsigned long long compare_once(const Pair& p, void* d_lib, void* d_ch, std::size_t bytes) {
  FP8GEMM_CUDA_CHECK(cudaMemset(d_lib, 0xFF, bytes));
  FP8GEMM_CUDA_CHECK(cudaMemset(d_ch, 0xFF, bytes));
  p.library(nullptr);
  p.chapter(nullptr);
  FP8GEMM_CUDA_CHECK(cudaDeviceSynchronize());
  return differences(d_lib, d_ch, bytes / 2);
}

/// MXFP8 operands on the device (e4m3 from the GPU generator, UE8M0 exponents 127 +- 6).
struct MxDevice {
  DeviceBuffer<std::uint8_t> A, B, sa, sb;
  DeviceBuffer<std::uint16_t> D, D2;
  ch09::MxGemm g;
  MxDevice(const Shape& s, std::uint64_t seed)
      : A(std::size_t(s.M * s.K)),
        B(std::size_t(s.N * s.K)),
        D(std::size_t(s.M * s.N)),
        D2(std::size_t(s.M * s.N)) {
    fill_random_e4m3(A.data(), A.size(), seed, 1.0f);
    fill_random_e4m3(B.data(), B.size(), seed + 1, 1.0f);
    std::mt19937_64 rng(seed + 2);
    std::uniform_int_distribution<int> e(121, 133);
    auto scales = [&](std::int64_t rows) {
      const Mx1x32 l(rows, s.K);
      std::vector<std::uint8_t> v(std::size_t(l.size()), 0);
      for (std::int64_t r = 0; r < rows; ++r)
        for (std::int64_t j = 0; j < l.scale_cols(); ++j)
          v[std::size_t(l.block_index(r, j))] = std::uint8_t(e(rng));
      return v;
    };
    sa = DeviceBuffer<std::uint8_t>(scales(s.M));
    sb = DeviceBuffer<std::uint8_t>(scales(s.N));
    g.M = s.M;
    g.N = s.N;
    g.K = s.K;
    g.A = A.data();
    g.B = B.data();
    g.scale_a = sa.data();
    g.scale_a_bytes = std::int64_t(sa.size());
    g.scale_b = sb.data();
    g.scale_b_bytes = std::int64_t(sb.size());
    g.D = D.data();
  }
};

struct PerTensorDevice {
  DeviceBuffer<std::uint8_t> A, B;
  DeviceBuffer<std::uint16_t> D, D2;
  DeviceBuffer<float> scales;
  PerTensorDevice(const Shape& s, std::uint64_t seed)
      : A(std::size_t(s.M * s.K)),
        B(std::size_t(s.N * s.K)),
        D(std::size_t(s.M * s.N)),
        D2(std::size_t(s.M * s.N)),
        scales(std::vector<float>{0.75f, 0, 0, 0, 1.25f}) {
    fill_random_e4m3(A.data(), A.size(), seed, 1.0f);
    fill_random_e4m3(B.data(), B.size(), seed + 1, 1.0f);
  }
  PerTensorGemm gemm(std::uint16_t* d) const {
    return {0, 0, 0, A.data(), B.data(), d, scales.data(), scales.data() + 4};
  }
};

std::string why_short(const KernelChoice& c) { return c.kernel + " (" + to_string(c.rule) + ")"; }

/// CPU microseconds per call of `call`, enqueued `calls` times back to back on `stream` behind a
/// 5 ms GPU delay (the GPU never drains the queue while the host is timed: 200 calls take well
/// under 5 ms to enqueue); median of 15 batches after one to warm up.
double host_us_per_call(const std::function<void(cudaStream_t)>& call, cudaStream_t stream,
                        int calls) {
  std::vector<double> per_call;
  for (int batch = 0; batch < 16; ++batch) {
    gpu_delay(5000, stream);
    const auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < calls; ++i) call(stream);
    const auto t1 = std::chrono::steady_clock::now();
    FP8GEMM_CUDA_CHECK(cudaStreamSynchronize(stream));
    if (batch > 0)  // the first batch warms the host caches and the driver's queue
      per_call.push_back(std::chrono::duration<double, std::micro>(t1 - t0).count() / calls);
  }
  std::sort(per_call.begin(), per_call.end());
  return per_call[per_call.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  std::printf("fp8gemm %s: the library's plans against the chapter plans they wrap\n", version());
  if (cuda_device_count() == 0) {
    std::printf("No CUDA GPU found: fp8gemm_library_bench needs an NVIDIA Hopper GPU (sm_90a).\n");
    return 2;
  }
  std::printf("GPU: %s\ncommit: %s\n", describe_device().c_str(), git_commit());
  int host_calls = 200;
  bool grouped = true;
  const ChapterArgs args = parse_chapter_args(argc, argv, {8192}, "fp8gemm_library_bench.json",
                                              [&](const std::string& a) {
                                                if (a.rfind("--host_calls=", 0) == 0) {
                                                  host_calls = std::stoi(a.substr(13));
                                                  return true;
                                                }
                                                if (a == "--no-grouped") {
                                                  grouped = false;
                                                  return true;
                                                }
                                                return false;
                                              });
  const std::vector<Shape> shapes = args.shapes();

  // ---- the pairs, each compared once before anything is timed ----
  std::vector<Pair> pairs;
  bool identical = true;
  std::uint64_t seed = 20000;
  auto check = [&](const Pair& p, void* d_lib, void* d_ch, std::size_t bytes) {
    const unsigned long long n = compare_once(p, d_lib, d_ch, bytes);
    std::printf("  %-14s %-34s library %-44s %s\n", p.entry.c_str(), p.shape.c_str(),
                p.note.c_str(), n == 0 ? "identical to the chapter plan" : "DIFFERS");
    identical &= n == 0;
    pairs.push_back(p);
  };
  std::printf("\nlibrary vs chapter plan, same kernel, outputs compared bit for bit:\n");
  for (const Shape& s : shapes) {
    const double bs_scale_bytes =
        4.0 * double(ceil_div(s.K, 128)) * double(s.M + ceil_div(s.N, 128));
    {  // block-scaled
      auto& ops = keep<ch07::DeviceOperands>(s.M, s.N, s.K, seed++);
      auto& d2 = keep<DeviceBuffer<std::uint16_t>>(ops.D.size());
      auto& lib = keep<BlockScaledPlan>(ops.gemm());
      ch07::BlockScaledGemm g = ops.gemm();
      g.D = d2.data();
      auto& ch = keep<ch07::Plan>(g, ch07::Options{.kernel = lib.kernel().name});
      check({"block_scaled", s.name(), [&lib](cudaStream_t st) { lib.run(st); },
             [&ch](cudaStream_t st) { ch.run(st); }, fp8_gemm_cost(s.M, s.N, s.K, bs_scale_bytes),
             why_short(lib.choice())},
            ops.D.data(), d2.data(), ops.D.bytes());
    }
    {  // per-tensor, promoted (the default)
      auto& ops = keep<PerTensorDevice>(s, seed);
      seed += 2;
      PerTensorGemm g = ops.gemm(ops.D.data());
      g.M = s.M;
      g.N = s.N;
      g.K = s.K;
      auto& lib = keep<PerTensorPlan>(g);
      g.D = ops.D2.data();
      ch06::Options o;
      o.kernel = lib.kernel().name;
      auto& ch = keep<ch06::Plan>(g, o);
      check({"per_tensor", s.name(), [&lib](cudaStream_t st) { lib.run(st); },
             [&ch](cudaStream_t st) { ch.run(st); }, fp8_gemm_cost(s.M, s.N, s.K),
             why_short(lib.choice())},
            ops.D.data(), ops.D2.data(), ops.D.bytes());
    }
    if (s.K % 32 == 0) {  // MXFP8 (the Hopper path on this GPU)
      auto& ops = keep<MxDevice>(s, seed);
      seed += 3;
      auto& lib = keep<MxPlan>(ops.g);
      ch09::MxGemm g = ops.g;
      g.D = ops.D2.data();
      auto& ch = keep<ch09::HopperPlan>(g, ch09::HopperOptions{lib.choice().kernel});
      check({"mxfp8", s.name(), [&lib](cudaStream_t st) { lib.run(st); },
             [&ch](cudaStream_t st) { ch.run(st); },
             fp8_gemm_cost(s.M, s.N, s.K, double(ops.sa.size() + ops.sb.size())),
             why_short(lib.choice())},
            ops.D.data(), ops.D2.data(), ops.D.bytes());
    }
  }
  if (grouped) {
    for (const ch08::GroupedShape& c :
         {ch08::balanced_case(4, 8192, 4096, 7168), ch08::masked_case(4, 256, 7168, 2048)}) {
      auto& ops = keep<ch08::GroupedOperands>(c, seed++);
      auto& d2 = keep<DeviceBuffer<std::uint16_t>>(ops.D.size());
      auto& lib = keep<GroupedPlan>(ops.gemm());
      ch08::GroupedGemm g = ops.gemm();
      g.D = d2.data();
      auto& ch = keep<ch08::Plan>(g);
      // Each row meets its own expert's B: 2 rows N K flops; every expert's B is read once.
      const double rows = double(c.real_rows());
      GemmCost cost;
      cost.flops = 2.0 * rows * double(c.N) * double(c.K);
      cost.bytes = rows * double(c.K) + double(c.groups()) * double(c.N) * double(c.K) +
                   2.0 * rows * double(c.N);
      check({"grouped", c.name, [&lib](cudaStream_t st) { lib.run(st); },
             [&ch](cudaStream_t st) { ch.run(st); }, cost, "chapter 8's default"},
            ops.D.data(), d2.data(), ops.D.bytes());
    }
    ch08::WgradShape w;
    w.name = "wgrad_g4_t4096_n4096_k2048";
    w.counts = std::vector<int>(4, 1024);
    w.N = 4096;
    w.K = 2048;
    auto& ops = keep<ch08::WgradOperands>(w, seed++);
    auto& d2 = keep<DeviceBuffer<float>>(ops.dB.size());
    auto& lib = keep<WeightGradPlan>(ops.gemm());
    ch08::WeightGradGemm g = ops.gemm();
    g.dB = d2.data();
    auto& ch = keep<ch08::WeightGradPlan>(g);
    GemmCost cost;
    cost.flops = 2.0 * double(w.tokens()) * double(w.N) * double(w.K);
    cost.bytes = double(w.tokens()) * double(w.N + w.K) + 4.0 * double(w.groups()) * w.N * w.K;
    check({"wgrad", w.name, [&lib](cudaStream_t st) { lib.run(st); },
           [&ch](cudaStream_t st) { ch.run(st); }, cost, "chapter 8's default"},
          ops.dB.data(), d2.data(), ops.dB.bytes());
  }
  if (!identical) {
    std::printf("\nA library plan's output differs from its chapter plan's: not timing.\n");
    return 1;
  }

  // ---- (a) GPU time: library and chapter plan adjacent, the order alternating ----
  auto reg = [](const std::string& name, const Launch& f, const GemmCost& cost) {
    benchmark::RegisterBenchmark(name.c_str(),
                                 [f, cost](benchmark::State& st) { time_gpu(st, f, cost); })
        ->UseManualTime()
        ->Iterations(1)
        ->Unit(benchmark::kMicrosecond);
  };
  for (std::size_t i = 0; i < pairs.size(); ++i) {
    const Pair& p = pairs[i];
    const std::string lib = "library:" + p.entry + "/" + p.shape;
    const std::string ch = "chapter:" + p.entry + "/" + p.shape;
    if (i % 2 == 0) {
      reg(lib, p.library, p.cost);
      reg(ch, p.chapter, p.cost);
    } else {
      reg(ch, p.chapter, p.cost);
      reg(lib, p.library, p.cost);
    }
  }

  // ---- (b) host overhead per run() ----
  cudaStream_t stream = nullptr;
  FP8GEMM_CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  auto reg_host = [&](const std::string& name, const Launch& f) {
    benchmark::RegisterBenchmark(name.c_str(),
                                 [f, stream, host_calls](benchmark::State& st) {
                                   try {
                                     for (auto _ : st) {
                                       const double us = host_us_per_call(f, stream, host_calls);
                                       st.SetIterationTime(us / 1e6);
                                       st.counters["median_us"] = us;
                                       st.counters["calls_per_batch"] = host_calls;
                                     }
                                   } catch (const std::exception& e) {
                                     st.SkipWithError(e.what());
                                   }
                                 })
        ->UseManualTime()
        ->Iterations(1)
        ->Unit(benchmark::kMicrosecond);
  };
  reg_host("host_launch:empty_kernel/1x1x1",
           [](cudaStream_t st) { empty_kernel<<<1, 1, 0, st>>>(); });
  for (const Pair& p : pairs) {
    // The host's work does not depend on the size: one small and one large DeepSeek shape per
    // dense entry, the small masked case and the weight gradient (each batch runs its 200 calls
    // on the GPU afterwards: the balanced case would take a quarter second per batch).
    const bool pick = p.shape == "64x7168x2048" || p.shape == "4096x7168x2048" ||
                      p.shape.rfind("masked", 0) == 0 || p.entry == "wgrad";
    if (!pick) continue;
    reg_host("host_library:" + p.entry + "/" + p.shape, p.library);
    reg_host("host_chapter:" + p.entry + "/" + p.shape, p.chapter);
  }

  std::vector<char*> rest = args.rest;
  const auto results = run_benchmarks(int(rest.size()), rest.data(), args.json);
  FP8GEMM_CUDA_CHECK(cudaStreamDestroy(stream));

  // ---- the verdicts ----
  std::map<std::string, double> us;  // "<kind>:<entry>/<shape>" -> median us
  for (const auto& r : results) us[r.implementation + "/" + r.shape] = r.median_us;
  std::printf(
      "\n(a) GPU time, library vs chapter plan (same kernel; target: library <= 2%% slower)\n");
  std::printf("%-14s %-34s %12s %12s %9s  %s\n", "entry", "shape", "library us", "chapter us",
              "ratio", "verdict");
  int over = 0, measured = 0;
  double worst = 0;
  for (const Pair& p : pairs) {
    const double a = us["library:" + p.entry + "/" + p.shape];
    const double b = us["chapter:" + p.entry + "/" + p.shape];
    if (a <= 0 || b <= 0) continue;
    const double ratio = a / b;
    ++measured;
    over += ratio > 1.02;
    worst = std::max(worst, ratio);
    std::printf("%-14s %-34s %12.2f %12.2f %9.4f  %s\n", p.entry.c_str(), p.shape.c_str(), a, b,
                ratio, ratio > 1.02 ? "OVER 2%" : "ok");
  }
  std::printf("%d of %d pairs over 2%%; worst ratio %.4f\n", over, measured, worst);
  std::printf("\n(b) host CPU time per run(), back to back behind a busy GPU (target: <= 5 us)\n");
  std::printf("%-14s %-34s %12s %12s\n", "entry", "shape", "library us", "chapter us");
  std::printf("%-14s %-34s %12.2f %12s\n", "empty kernel", "<<<1, 1>>>",
              us["host_launch:empty_kernel/1x1x1"], "-");
  int host_over = 0;
  for (const Pair& p : pairs) {
    const auto it = us.find("host_library:" + p.entry + "/" + p.shape);
    if (it == us.end()) continue;
    host_over += it->second > 5.0;
    std::printf("%-14s %-34s %12.2f %12.2f  %s\n", p.entry.c_str(), p.shape.c_str(), it->second,
                us["host_chapter:" + p.entry + "/" + p.shape],
                it->second > 5.0 ? "OVER 5 us" : "ok");
  }
  std::printf("%d library entry points over 5 us per run()\n", host_over);
  return 0;
}
