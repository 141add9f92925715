// fp8gemm_library_bench: what the library's layer costs (issue "Chapter 10", targets: library calls
// <= 2% slower than the chapter kernels they wrap at every benchmarked shape, same run; host
// overhead per run() <= 5 us).
//
// (a) GPU time of each library entry point against the chapter plan it wraps, built with the
//     kernel the library chose, so that the two launch the same kernel on the same operands and
//     any difference is the library's layer:
//       library:block_scaled  vs chapter:block_scaled   (fp8gemm::BlockScaledPlan, ch07::Plan)
//       library:per_tensor    vs chapter:per_tensor     (fp8gemm::PerTensorPlan, ch06::Plan)
//       library:mxfp8         vs chapter:mxfp8          (fp8gemm::MxPlan, ch09::HopperPlan)
//     on the DeepSeek-V3 shapes (M in {64, 128, 4096}) and 8192^3, and
//       library:grouped / chapter:grouped, library:wgrad / chapter:wgrad  (fp8gemm::GroupedPlan,
//     WeightGradPlan and chapter 8's plans) on a balanced, a masked and a weight-gradient case,
//       library:grouped_counter / chapter:grouped_counter  (both on the counter schedule, each
//     run given its side's tile counter: run(stream, tile_counter)) on 8 groups of 512 rows.
//     Each pair has a third side, the A/A control: a second chapter plan, built like the first
//     but writing the library's output buffer, so it differs from the library side only in the
//     layer and from the chapter side in nothing at all. Before timing, the library's and the
//     control's outputs are compared with the chapter plan's on the GPU: all must be identical.
//
//     Method (one pair at a time, the three sides interleaved): rounds of three launches, one
//     per side, in an order that cycles through all six permutations (each side takes each
//     position equally often); every launch has an L2 flush (a 2 x L2 memset) before it, outside
//     CUDA events recorded around the launch alone. The host enqueues a batch of 6 rounds behind
//     a 20 us spin kernel and one untimed launch, then synchronises once and reads the 18 times:
//     the GPU never waits for the host inside a batch, and every timed launch follows a launch
//     of the same kernel. Rounds: --pair_budget_ms (1000) of GPU time per pair from a first
//     estimate, between --min_rounds (48) and --max_rounds (1000), a multiple of 6. Per side: the
//     median, the interquartile range (p25..p75) and the minimum. Ratios: library / chapter
//     (the layer's cost) and control / chapter (A/A: the method's own error, since both sides
//     run identical code). Clock and power drift reach all three sides alike, because they
//     alternate within milliseconds. The earlier method (one side's block of up to 300 launches,
//     then the other's) gave the same kernel medians up to 11% apart at commit 82a9d6a, and at
//     M <= 128 favoured the side timed second in all 36 pairs (by 0.3-0.8 us).
//     Verdict per pair: "unjudged" when |A/A - 1| > 1% (the method cannot resolve 2% there),
//     else "OVER 2%" when library / chapter > 1.02, else "ok".
// (b) Host overhead of run(): a batch is --host_calls back-to-back run() calls enqueued behind a
//     5 ms gpu_delay that keeps the stream busy; CPU time per call (steady_clock around the
//     calls). The library and the chapter plan of one entry are measured together, their batches
//     alternating (library first, then chapter first, ...), in --host_repeats repeats of 15
//     batches per side after one warm-up batch each: host_library:<entry> and
//     host_chapter:<entry> per shape (median_us = the median of all 15 x repeats batches; p25,
//     p75, min; the lowest and highest of the repeats' own medians), and host_launch:empty_kernel
//     (a <<<1, 1>>> launch: the CUDA runtime's own floor on this machine) likewise; and
//     host_rebind:<entry> (block-scaled, MXFP8): a library plan of its own re-pointed at the other
//     of two outputs before each run() (rebind + run, what a PyTorch op pays when its output
//     moved; measured alone, same repeats). The first run
//     measured each side once, in its own block of 15 batches (MxPlan 5.22 us against its chapter
//     plan's 4.41 us at 4096x7168x2048, the same code path but one call).
// (c) What the table gains over the chapter's own rule, by the same interleaved method: on every
//     shape of (a) where the library's kernel (the table's) is not the one the chapter's own rule
//     (ch07::choose_kernel, ch06::choose_kernel, chapter 9's default Hopper kernel) would run,
//     a chapter plan with the rule's kernel against the chapter plan with the table's kernel,
//     the same control beside them: rule:<entry>/<shape>, ratio = rule's kernel / table's
//     kernel (> 1: the table is faster), A/A as in (a). The dispatch sweep timed each kernel in
//     one block of launches, not interleaved; this checks its verdict where it matters.
//     --no-rule leaves it out. It runs last, after (b).
// One Google Benchmark JSON (GPU, clocks, driver, CUDA, cuBLASLt version, commit and the method
// in its context): per pair one result "pair:<entry>/<shape>" whose counters are each side's
// median, p25, p75, min (library_us, chapter_us, control_us, ...), the rounds, and the ratios
// (ratio = library / chapter, aa_ratio = control / chapter, ratio_vs_control = library /
// control: the same output buffer, only the layer differs); host results carry their CPU
// microseconds per call in median_us; (c) as "rule:<entry>/<shape>" with the same counters (the
// rule's kernel in the library_* ones). The closing tables give every ratio and the verdicts.
//
//   fp8gemm_library_bench [--shapes=MxNxK,...] [--json=PATH] [--host_calls=200]
//                         [--host_repeats=5] [--no-grouped] [--no-rule]
//                         [--pair_budget_ms=1000] [--min_rounds=48] [--max_rounds=1000]
//                         [Google Benchmark flags, e.g. --benchmark_filter=pair:]
// (--gpu_delay_us and --timing of the chapter executables do not apply to (a): no host work
// sits between its events, and every launch is flushed.)
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <functional>
#include <map>
#include <memory>
#include <random>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "bs_check.hpp"
#include "common/bench.hpp"
#include "common/chapter_args.hpp"
#include "common/cuda.hpp"
#include "common/scaling.hpp"
#include "fp8gemm/fp8gemm.hpp"
#include "grouped_check.hpp"
#include "mx_emulate.hpp"
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

/// Halfwords where two buffers differ bitwise (bf16 D: one per element; FP32 dB: two).
unsigned long long differences(const void* a, const void* b, std::size_t halfwords) {
  DeviceBuffer<unsigned long long> n(std::vector<unsigned long long>{0});
  count_differences<<<264, 256>>>(static_cast<const std::uint16_t*>(a),
                                  static_cast<const std::uint16_t*>(b), halfwords, n.data());
  FP8GEMM_CUDA_CHECK(cudaGetLastError());
  return n.download()[0];
}

using Launch = std::function<void(cudaStream_t)>;

/// One library entry point, the chapter plan it wraps, and the A/A control (a second chapter
/// plan, built like the first, writing the library's output buffer), on one shape.
struct Pair {
  std::string entry, shape;  // "block_scaled", "4096x7168x2048"
  Launch library, chapter, control;
  GemmCost cost;
  std::string note;  // the library's kernel and rule
  /// (b) only: a library plan of its own re-pointed at the other of two outputs and run, per
  /// call (rebind + run: what a PyTorch op pays when its output moved); empty: not measured.
  Launch rebound;
};

/// The dense shapes part (b) measures: one small and one large DeepSeek-V3 shape.
bool host_shape(const std::string& shape) {
  return shape == "64x7168x2048" || shape == "4096x7168x2048";
}

/// A launch that re-points `plan` at the other of two D buffers (the call `g` with D = d0 or d1,
/// in turn) and runs it.
template <class Plan, class Gemm>
Launch rebind_and_run(Plan& plan, const Gemm& g, void* d0, void* d1) {
  auto turn = std::make_shared<std::uint64_t>(0);
  return [&plan, g, d0, d1, turn](cudaStream_t st) {
    Gemm h = g;
    h.D = static_cast<decltype(h.D)>((*turn)++ % 2 ? d1 : d0);
    plan.rebind(h);
    plan.run(st);
  };
}

/// Everything a pair needs kept alive until the benchmarks have run.
std::vector<std::shared_ptr<void>> g_keep;
template <class T, class... A>
T& keep(A&&... args) {
  auto p = std::make_shared<T>(std::forward<A>(args)...);
  g_keep.push_back(p);
  return *p;
}

/// Runs `a` and `b` once with their outputs poisoned (0xFF bytes) and returns the differing
/// halfwords; `bytes` of output at each of `d_a`, `d_b`.
unsigned long long compare_once(const Launch& a, const Launch& b, void* d_a, void* d_b,
                                std::size_t bytes) {
  FP8GEMM_CUDA_CHECK(cudaMemset(d_a, 0xFF, bytes));
  FP8GEMM_CUDA_CHECK(cudaMemset(d_b, 0xFF, bytes));
  a(nullptr);
  b(nullptr);
  FP8GEMM_CUDA_CHECK(cudaDeviceSynchronize());
  return differences(d_a, d_b, bytes / 2);
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
    sa = DeviceBuffer<std::uint8_t>(ch09::random_mx_scales(s.M, s.K, rng));
    sb = DeviceBuffer<std::uint8_t>(ch09::random_mx_scales(s.N, s.K, rng));
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

// ---- (a) the interleaved GPU-time method ----

/// One side's launch times: median, quartiles, minimum (microseconds).
struct SideStats {
  double median_us = 0, p25_us = 0, p75_us = 0, min_us = 0;
  int samples = 0;
  double iqr_pct() const { return median_us > 0 ? 100.0 * (p75_us - p25_us) / median_us : 0; }
};

SideStats side_stats(std::vector<double> us) {
  SideStats s;
  if (us.empty()) return s;
  std::sort(us.begin(), us.end());
  const std::size_t n = us.size();
  // Quantile q by linear interpolation between the closest ranks (q = 0.5: the usual median).
  auto q = [&](double f) {
    const double x = f * double(n - 1);
    const std::size_t i = std::size_t(x);
    const double t = x - double(i);
    return i + 1 < n ? us[i] * (1 - t) + us[i + 1] * t : us[i];
  };
  s.median_us = q(0.5);
  s.p25_us = q(0.25);
  s.p75_us = q(0.75);
  s.min_us = us.front();
  s.samples = int(n);
  return s;
}

/// The three sides of one pair, measured together.
struct PairTiming {
  SideStats library, chapter, control;
  int rounds = 0;
  double ratio() const { return library.median_us / chapter.median_us; }
  double aa_ratio() const { return control.median_us / chapter.median_us; }
  /// Library against the control: the same output buffer, so only the layer differs.
  double ratio_vs_control() const { return library.median_us / control.median_us; }
};

struct Method {
  double pair_budget_ms = 1000;
  int min_rounds = 48, max_rounds = 1000;
};

constexpr int kSides = 3;              // library, chapter, control
constexpr int kRoundsPerBatch = 6;     // one of each order per batch
constexpr int kOrders[6][kSides] = {{0, 1, 2}, {0, 2, 1}, {1, 0, 2},
                                    {1, 2, 0}, {2, 0, 1}, {2, 1, 0}};

/// Interleaved timing of a pair's three sides on `stream` (the file's header: the method).
PairTiming time_pair(const Pair& p, cudaStream_t stream, L2Flush& l2, double flush_ms,
                     const Method& m) {
  const Launch* side[kSides] = {&p.library, &p.chapter, &p.control};
  constexpr int kPerBatch = kSides * kRoundsPerBatch;
  std::vector<cudaEvent_t> start(kPerBatch), stop(kPerBatch);
  for (int i = 0; i < kPerBatch; ++i) {
    FP8GEMM_CUDA_CHECK(cudaEventCreate(&start[i]));
    FP8GEMM_CUDA_CHECK(cudaEventCreate(&stop[i]));
  }
  PairTiming out;
  try {
    // Warm-up: two launches of every side (module load, TMA descriptors, instruction caches).
    for (int i = 0; i < 2; ++i)
      for (const Launch* f : side) (*f)(stream);
    // First estimate of one launch (flushed), for the number of rounds.
    l2.flush(stream);
    FP8GEMM_CUDA_CHECK(cudaEventRecord(start[0], stream));
    p.chapter(stream);
    FP8GEMM_CUDA_CHECK(cudaEventRecord(stop[0], stream));
    FP8GEMM_CUDA_CHECK(cudaEventSynchronize(stop[0]));
    float est_ms = 0;
    FP8GEMM_CUDA_CHECK(cudaEventElapsedTime(&est_ms, start[0], stop[0]));
    const double round_ms = kSides * (std::max(1e-3, double(est_ms)) + flush_ms);
    int rounds = int(std::clamp(m.pair_budget_ms / round_ms, double(m.min_rounds),
                                double(std::max(m.min_rounds, m.max_rounds))));
    rounds = std::max(kRoundsPerBatch, (rounds + kRoundsPerBatch - 1) / kRoundsPerBatch *
                                           kRoundsPerBatch);

    std::vector<double> us[kSides];
    for (auto& v : us) v.reserve(std::size_t(rounds));
    int who[kPerBatch];
    for (int b = 0; b < rounds / kRoundsPerBatch; ++b) {
      gpu_delay(20, stream);  // the host gets ahead of the GPU before the first timed launch
      l2.flush(stream);
      p.chapter(stream);      // untimed: every timed launch follows a launch of the same kernel
      int k = 0;
      for (int r = 0; r < kRoundsPerBatch; ++r) {
        // Batch b opens with order b % 6, so the orders take turns at the head of a batch.
        const int* order = kOrders[(r + b) % 6];
        for (int j = 0; j < kSides; ++j, ++k) {
          who[k] = order[j];
          l2.flush(stream);  // outside the events
          FP8GEMM_CUDA_CHECK(cudaEventRecord(start[k], stream));
          (*side[order[j]])(stream);
          FP8GEMM_CUDA_CHECK(cudaEventRecord(stop[k], stream));
        }
      }
      FP8GEMM_CUDA_CHECK(cudaEventSynchronize(stop[kPerBatch - 1]));
      for (k = 0; k < kPerBatch; ++k) {
        float ms = 0;
        FP8GEMM_CUDA_CHECK(cudaEventElapsedTime(&ms, start[k], stop[k]));
        us[who[k]].push_back(double(ms) * 1e3);
      }
    }
    out.library = side_stats(us[0]);
    out.chapter = side_stats(us[1]);
    out.control = side_stats(us[2]);
    out.rounds = rounds;
  } catch (...) {
    for (int i = 0; i < kPerBatch; ++i) {
      cudaEventDestroy(start[i]);
      cudaEventDestroy(stop[i]);
    }
    throw;
  }
  for (int i = 0; i < kPerBatch; ++i) {
    FP8GEMM_CUDA_CHECK(cudaEventDestroy(start[i]));
    FP8GEMM_CUDA_CHECK(cudaEventDestroy(stop[i]));
  }
  return out;
}

/// Milliseconds of one L2 flush (median of 20, events around it).
double time_flush(L2Flush& l2, cudaStream_t stream) {
  EventTimer t;
  std::vector<double> ms;
  for (int i = 0; i < 21; ++i) {
    t.start(stream);
    l2.flush(stream);
    t.stop(stream);
    if (i > 0) ms.push_back(t.elapsed_ms());
  }
  std::sort(ms.begin(), ms.end());
  return ms[ms.size() / 2];
}

constexpr double kTarget = 1.02;   // library <= 2% slower than the chapter plan
constexpr double kAaLimit = 0.01;  // judged only where |A/A - 1| <= 1%

std::string verdict(const PairTiming& t) {
  if (!(std::fabs(t.aa_ratio() - 1) <= kAaLimit)) return "unjudged (A/A beyond 1%)";
  return t.ratio() > kTarget ? "OVER 2%" : "ok";
}

/// CPU microseconds per call of one batch: `call` enqueued `calls` times back to back on `stream`
/// behind a 5 ms GPU delay (the GPU never drains the queue while the host is timed: 200 calls
/// take well under 5 ms to enqueue), then a synchronisation outside the timing.
double host_batch_us(const Launch& call, cudaStream_t stream, int calls) {
  gpu_delay(5000, stream);
  const auto t0 = std::chrono::steady_clock::now();
  for (int i = 0; i < calls; ++i) call(stream);
  const auto t1 = std::chrono::steady_clock::now();
  FP8GEMM_CUDA_CHECK(cudaStreamSynchronize(stream));
  return std::chrono::duration<double, std::micro>(t1 - t0).count() / calls;
}

constexpr int kHostBatches = 15;  // per side and repeat

/// One side's host time: every batch's us per call, and each repeat's median.
struct HostSide {
  SideStats all;                                // over kHostBatches x repeats batches
  double repeat_min_us = 0, repeat_max_us = 0;  // the lowest / highest repeat median
};

HostSide host_side(const std::vector<std::vector<double>>& repeats) {
  HostSide h;
  std::vector<double> all;
  for (std::size_t r = 0; r < repeats.size(); ++r) {
    all.insert(all.end(), repeats[r].begin(), repeats[r].end());
    const double m = side_stats(repeats[r]).median_us;
    h.repeat_min_us = r == 0 ? m : std::min(h.repeat_min_us, m);
    h.repeat_max_us = r == 0 ? m : std::max(h.repeat_max_us, m);
  }
  h.all = side_stats(all);
  return h;
}

/// Host time of `sides` (one or two launches) measured together: one warm-up batch each, then
/// `repeats` repeats of kHostBatches batches per side, the sides' batches alternating and the
/// side that goes first alternating too (batch i of repeat r: side (i + r + j) % n at place j).
std::vector<HostSide> host_sides(const std::vector<const Launch*>& sides, cudaStream_t stream,
                                 int calls, int repeats) {
  const std::size_t n = sides.size();
  for (const Launch* f : sides) host_batch_us(*f, stream, calls);  // warm-up
  std::vector<std::vector<std::vector<double>>> us(
      n, std::vector<std::vector<double>>(std::size_t(repeats)));
  for (int r = 0; r < repeats; ++r)
    for (int i = 0; i < kHostBatches; ++i)
      for (std::size_t j = 0; j < n; ++j) {
        const std::size_t side = (std::size_t(i + r) + j) % n;
        us[side][std::size_t(r)].push_back(host_batch_us(*sides[side], stream, calls));
      }
  std::vector<HostSide> out;
  for (std::size_t k = 0; k < n; ++k) out.push_back(host_side(us[k]));
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  std::printf("fp8gemm %s: the library's plans against the chapter plans they wrap\n", version());
  // The arguments first, so that a bad one is refused with a message, GPU or not.
  int host_calls = 200, host_repeats = 5;
  bool grouped = true, rule = true;
  Method method;
  ChapterArgs args;
  const bool args_ok = parse_arguments("fp8gemm_library_bench", [&] {
    args = parse_chapter_args(
        argc, argv, {8192}, "fp8gemm_library_bench.json", [&](const std::string& a) {
          auto value = [&](const char* key) -> const char* {
            const std::size_t n = std::strlen(key);
            return a.compare(0, n, key) == 0 ? a.c_str() + n : nullptr;
          };
          if (const char* v = value("--host_calls=")) {
            host_calls = int(parse_count(a, "--host_calls=", 1));
          } else if (const char* v = value("--host_repeats=")) {
            host_repeats = int(parse_count(a, "--host_repeats=", 1));
          } else if (const char* v = value("--pair_budget_ms=")) {
            method.pair_budget_ms = std::stod(v);
          } else if (const char* v = value("--min_rounds=")) {
            method.min_rounds = int(parse_count(a, "--min_rounds=", 1));
          } else if (const char* v = value("--max_rounds=")) {
            method.max_rounds = int(parse_count(a, "--max_rounds=", 1));
          } else if (a == "--no-grouped") {
            grouped = false;
          } else if (a == "--no-rule") {
            rule = false;
          } else {
            return false;
          }
          return true;
        });
  });
  if (!args_ok) return 1;
  if (cuda_device_count() == 0) {
    std::printf("No CUDA GPU found: fp8gemm_library_bench needs an NVIDIA Hopper GPU (sm_90a).\n");
    return 2;
  }
  std::printf("GPU: %s\ncommit: %s\n", describe_device().c_str(), git_commit());
  const std::vector<Shape> shapes = args.shapes();

  // ---- the pairs, each compared once before anything is timed ----
  std::vector<Pair> pairs;
  // (c): the chapter's own rule's kernel in the `library` slot, then the pair's chapter plan and
  // control (both the table's kernel); `note`: "<rule's kernel> <table's kernel>".
  std::vector<Pair> duels;
  bool identical = true;
  std::uint64_t seed = 20000;
  // d_lib: the library's output (the control writes it too); d_ch: the chapter plan's.
  auto check = [&](const Pair& p, void* d_lib, void* d_ch, std::size_t bytes) {
    const unsigned long long n = compare_once(p.library, p.chapter, d_lib, d_ch, bytes);
    const unsigned long long c = compare_once(p.control, p.chapter, d_lib, d_ch, bytes);
    std::printf("  %-14s %-34s library %-44s %s\n", p.entry.c_str(), p.shape.c_str(),
                p.note.c_str(),
                n == 0 && c == 0 ? "identical to the chapter plan (control too)"
                : n != 0         ? "DIFFERS"
                                 : "control DIFFERS");
    identical &= n == 0 && c == 0;
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
      const ch07::Options o{.kernel = lib.kernel().name};
      auto& ctl = keep<ch07::Plan>(ops.gemm(), o);
      ch07::BlockScaledGemm g = ops.gemm();
      g.D = d2.data();
      auto& ch = keep<ch07::Plan>(g, o);
      Launch rebound;  // (b)'s rebind + run, at the shapes (b) measures
      if (host_shape(s.name())) {
        auto& rb = keep<BlockScaledPlan>(ops.gemm());
        auto& d3 = keep<DeviceBuffer<std::uint16_t>>(ops.D.size());
        rebound = rebind_and_run(rb, ops.gemm(), ops.D.data(), d3.data());
      }
      check({"block_scaled", s.name(), [&lib](cudaStream_t st) { lib.run(st); },
             [&ch](cudaStream_t st) { ch.run(st); }, [&ctl](cudaStream_t st) { ctl.run(st); },
             fp8_gemm_cost(s.M, s.N, s.K, bs_scale_bytes), why_short(lib.choice()), rebound},
            ops.D.data(), d2.data(), ops.D.bytes());
      const std::string own =
          ch07::choose_kernel(s.M, s.N, s.K, ch07::Output::bf16, true, engine::rule_sms(0)).name;
      if (rule && own != lib.kernel().name) {
        auto& rp = keep<ch07::Plan>(g, ch07::Options{.kernel = own});
        duels.push_back({"block_scaled", s.name(), [&rp](cudaStream_t st) { rp.run(st); },
                         pairs.back().chapter, pairs.back().control, pairs.back().cost,
                         own + " " + lib.kernel().name});
      }
    }
    {  // per-tensor, promoted (the default)
      auto& ops = keep<PerTensorDevice>(s, seed);
      seed += 2;
      PerTensorGemm g = ops.gemm(ops.D.data());
      g.M = s.M;
      g.N = s.N;
      g.K = s.K;
      auto& lib = keep<PerTensorPlan>(g);
      ch06::Options o;
      o.kernel = lib.kernel().name;
      auto& ctl = keep<ch06::Plan>(g, o);
      g.D = ops.D2.data();
      auto& ch = keep<ch06::Plan>(g, o);
      check({"per_tensor", s.name(), [&lib](cudaStream_t st) { lib.run(st); },
             [&ch](cudaStream_t st) { ch.run(st); }, [&ctl](cudaStream_t st) { ctl.run(st); },
             fp8_gemm_cost(s.M, s.N, s.K), why_short(lib.choice())},
            ops.D.data(), ops.D2.data(), ops.D.bytes());
      const std::string own =
          ch06::choose_kernel(s.M, s.N, s.K, Accumulation::promoted, true, engine::rule_sms(0))
              .name;
      if (rule && own != lib.kernel().name) {
        ch06::Options ro;
        ro.kernel = own;
        auto& rp = keep<ch06::Plan>(g, ro);
        duels.push_back({"per_tensor", s.name(), [&rp](cudaStream_t st) { rp.run(st); },
                         pairs.back().chapter, pairs.back().control, pairs.back().cost,
                         own + " " + lib.kernel().name});
      }
    }
    if (s.K % 32 == 0) {  // MXFP8 (the Hopper path on this GPU)
      auto& ops = keep<MxDevice>(s, seed);
      seed += 3;
      auto& lib = keep<MxPlan>(ops.g);
      const ch09::HopperOptions o{lib.choice().kernel};
      auto& ctl = keep<ch09::HopperPlan>(ops.g, o);
      ch09::MxGemm g = ops.g;
      g.D = ops.D2.data();
      auto& ch = keep<ch09::HopperPlan>(g, o);
      Launch rebound;
      if (host_shape(s.name())) {
        auto& rb = keep<MxPlan>(ops.g);
        auto& d3 = keep<DeviceBuffer<std::uint16_t>>(ops.D.size());
        rebound = rebind_and_run(rb, ops.g, ops.D.data(), d3.data());
      }
      check({"mxfp8", s.name(), [&lib](cudaStream_t st) { lib.run(st); },
             [&ch](cudaStream_t st) { ch.run(st); }, [&ctl](cudaStream_t st) { ctl.run(st); },
             fp8_gemm_cost(s.M, s.N, s.K, double(ops.sa.size() + ops.sb.size())),
             why_short(lib.choice()), rebound},
            ops.D.data(), ops.D2.data(), ops.D.bytes());
      std::string own;  // chapter 9's default: the first TMA-store kernel (dispatch.cpp)
      for (const auto& k : ch09::hopper_kernels())
        if (k.epilogue == engine::EpilogueKind::tma_store && own.empty()) own = k.name;
      if (rule && !own.empty() && own != lib.choice().kernel) {
        auto& rp = keep<ch09::HopperPlan>(g, ch09::HopperOptions{own});
        duels.push_back({"mxfp8", s.name(), [&rp](cudaStream_t st) { rp.run(st); },
                         pairs.back().chapter, pairs.back().control, pairs.back().cost,
                         own + " " + lib.choice().kernel});
      }
    }
  }
  if (grouped) {
    // Each row meets its own expert's B: 2 rows N K flops; every expert's B is read once.
    const auto grouped_cost = [](const ch08::GroupedShape& c) {
      const double rows = double(c.real_rows());
      GemmCost cost;
      cost.flops = 2.0 * rows * double(c.N) * double(c.K);
      cost.bytes = rows * double(c.K) + double(c.groups()) * double(c.N) * double(c.K) +
                   2.0 * rows * double(c.N);
      return cost;
    };
    // The plans' defaults (run(stream)), and the counter schedule
    // (GroupedOptions::counter_schedule, the PyTorch op's choice) on 512 rows per group, so that
    // every side runs the counter kernel, each run given a counter of its side's own
    // (run(stream, tile_counter)).
    const struct {
      ch08::GroupedShape shape;
      bool counter;
    } cases[] = {{ch08::balanced_case(4, 8192, 4096, 7168), false},
                 {ch08::masked_case(4, 256, 7168, 2048), false},
                 {ch08::balanced_case(8, 512, 2048, 2048), true}};
    for (const auto& [c, counter] : cases) {
      auto& ops = keep<ch08::GroupedOperands>(c, seed++);
      auto& d2 = keep<DeviceBuffer<std::uint16_t>>(ops.D.size());
      GroupedOptions o;
      o.counter_schedule = counter;
      auto& lib = keep<GroupedPlan>(ops.gemm(), o);
      auto& ctl = keep<ch08::Plan>(ops.gemm(), o);
      ch08::GroupedGemm g = ops.gemm();
      g.D = d2.data();
      auto& ch = keep<ch08::Plan>(g, o);
      if (lib.takes_tile_counter() != counter || ch.takes_tile_counter() != counter)
        throw std::logic_error("library_bench: " + c.name + ": the plans " +
                               (counter ? "take no tile counter" : "take a tile counter"));
      Launch on_lib = [&lib](cudaStream_t st) { lib.run(st); };
      Launch on_ch = [&ch](cudaStream_t st) { ch.run(st); };
      Launch on_ctl = [&ctl](cudaStream_t st) { ctl.run(st); };
      if (counter) {
        int* k_lib = keep<DeviceBuffer<int>>(ch08::make_tile_counter()).data();
        int* k_ch = keep<DeviceBuffer<int>>(ch08::make_tile_counter()).data();
        int* k_ctl = keep<DeviceBuffer<int>>(ch08::make_tile_counter()).data();
        on_lib = [&lib, k_lib](cudaStream_t st) { lib.run(st, k_lib); };
        on_ch = [&ch, k_ch](cudaStream_t st) { ch.run(st, k_ch); };
        on_ctl = [&ctl, k_ctl](cudaStream_t st) { ctl.run(st, k_ctl); };
      }
      check({counter ? "grouped_counter" : "grouped", c.name, on_lib, on_ch, on_ctl,
             grouped_cost(c), counter ? "chapter 8's counter schedule" : "chapter 8's default"},
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
    auto& ctl = keep<ch08::WeightGradPlan>(ops.gemm());
    ch08::WeightGradGemm g = ops.gemm();
    g.dB = d2.data();
    auto& ch = keep<ch08::WeightGradPlan>(g);
    GemmCost cost;
    cost.flops = 2.0 * double(w.tokens()) * double(w.N) * double(w.K);
    cost.bytes = double(w.tokens()) * double(w.N + w.K) + 4.0 * double(w.groups()) * w.N * w.K;
    check({"wgrad", w.name, [&lib](cudaStream_t st) { lib.run(st); },
           [&ch](cudaStream_t st) { ch.run(st); }, [&ctl](cudaStream_t st) { ctl.run(st); }, cost,
           "chapter 8's default"},
          ops.dB.data(), d2.data(), ops.dB.bytes());
  }
  if (!identical) {
    std::printf("\nA library plan's (or the control's) output differs from its chapter plan's: "
                "not timing.\n");
    return 1;
  }

  cudaStream_t stream = nullptr;
  FP8GEMM_CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  L2Flush l2;
  const double flush_ms = time_flush(l2, stream);
  std::printf("\nL2 flush (%.0f MiB memset): %.1f us; (a) budget %.0f ms of GPU time per pair, "
              "%d-%d rounds of 3 launches\n",
              double(l2.bytes()) / (1 << 20), flush_ms * 1e3, method.pair_budget_ms,
              method.min_rounds, method.max_rounds);
  benchmark::AddCustomContext(
      "gpu_time_method",
      "interleaved: per pair, rounds of library, chapter and control (a second chapter plan on "
      "the library's output) in all six orders; L2 flush before each launch, CUDA events around "
      "it; batches of 6 rounds enqueued ahead behind a spin kernel and one untimed launch; per "
      "side median, p25, p75, min; ratio = library / chapter, aa_ratio = control / chapter");
  benchmark::AddCustomContext("pair_budget_ms", std::to_string(method.pair_budget_ms));
  benchmark::AddCustomContext("rounds_min_max", std::to_string(method.min_rounds) + "-" +
                                                    std::to_string(method.max_rounds));
  benchmark::AddCustomContext("l2_flush_us", std::to_string(flush_ms * 1e3));

  // ---- (a) GPU time: one benchmark per pair, its three sides interleaved ----
  std::map<std::string, PairTiming> timings, rule_timings;  // "<entry>/<shape>"
  auto reg_pair = [&](const std::string& prefix, const Pair& p,
                      std::map<std::string, PairTiming>& into) {
    const std::string key = p.entry + "/" + p.shape;
    benchmark::RegisterBenchmark(
        (prefix + key).c_str(),
        [&p, key, &into, &l2, flush_ms, method, stream](benchmark::State& st) {
          try {
            for (auto _ : st) {
              const PairTiming t = time_pair(p, stream, l2, flush_ms, method);
              into[key] = t;
              st.SetIterationTime(t.library.median_us / 1e6);
              st.counters["median_us"] = t.library.median_us;  // the first side
              st.counters["TFLOPS"] = p.cost.flops / (t.library.median_us * 1e-6) / 1e12;
              const std::pair<const char*, const SideStats*> sides[] = {
                  {"library", &t.library}, {"chapter", &t.chapter}, {"control", &t.control}};
              for (const auto& [name, side] : sides) {
                const std::string n = name;
                st.counters[n + "_us"] = side->median_us;
                st.counters[n + "_p25_us"] = side->p25_us;
                st.counters[n + "_p75_us"] = side->p75_us;
                st.counters[n + "_min_us"] = side->min_us;
              }
              st.counters["rounds"] = t.rounds;
              st.counters["ratio"] = t.ratio();
              st.counters["aa_ratio"] = t.aa_ratio();
              st.counters["ratio_vs_control"] = t.ratio_vs_control();
            }
          } catch (const std::exception& e) {
            st.SkipWithError(e.what());
          }
        })
        ->UseManualTime()
        ->Iterations(1)
        ->Unit(benchmark::kMicrosecond);
  };
  for (const Pair& p : pairs) reg_pair("pair:", p, timings);

  // ---- (b) host overhead per run() ----
  // The library and the chapter plan of an entry are measured together (alternating batches);
  // whichever of the two benchmarks runs first measures both, the other reports its side.
  std::map<std::string, std::vector<HostSide>> host_times;  // "<entry>/<shape>" -> {lib, chapter}
  const Launch empty = [](cudaStream_t st) { empty_kernel<<<1, 1, 0, st>>>(); };
  auto reg_host = [&](const std::string& name, const std::string& key, std::size_t side,
                      std::vector<const Launch*> sides) {
    benchmark::RegisterBenchmark(
        name.c_str(),
        [key, side, sides, stream, host_calls, host_repeats, &host_times](benchmark::State& st) {
          try {
            for (auto _ : st) {
              auto it = host_times.find(key);
              if (it == host_times.end())
                it = host_times.emplace(key, host_sides(sides, stream, host_calls, host_repeats))
                         .first;
              const HostSide& h = it->second[side];
              st.SetIterationTime(h.all.median_us / 1e6);
              st.counters["median_us"] = h.all.median_us;
              st.counters["p25_us"] = h.all.p25_us;
              st.counters["p75_us"] = h.all.p75_us;
              st.counters["min_us"] = h.all.min_us;
              st.counters["repeat_min_us"] = h.repeat_min_us;
              st.counters["repeat_max_us"] = h.repeat_max_us;
              st.counters["batches"] = h.all.samples;
              st.counters["repeats"] = host_repeats;
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
  reg_host("host_launch:empty_kernel/1x1x1", "empty", 0, {&empty});
  for (const Pair& p : pairs) {
    // The host's work does not depend on the size: one small and one large DeepSeek shape per
    // dense entry, the small masked case, the counter schedule's and the weight gradient (each
    // batch runs its 200 calls on the GPU afterwards: the balanced case would take a quarter
    // second per batch).
    const bool pick = host_shape(p.shape) || p.shape.rfind("masked", 0) == 0 ||
                      p.entry == "wgrad" || p.entry == "grouped_counter";
    if (!pick) continue;
    const std::string key = p.entry + "/" + p.shape;
    reg_host("host_library:" + key, key, 0, {&p.library, &p.chapter});
    reg_host("host_chapter:" + key, key, 1, {&p.library, &p.chapter});
    if (p.rebound) reg_host("host_rebind:" + key, "rebind:" + key, 0, {&p.rebound});
  }

  // ---- (c) the table's kernel against the chapter's own rule, after (a) and (b) ----
  for (const Pair& d : duels) reg_pair("rule:", d, rule_timings);

  std::vector<char*> rest = args.rest;
  const auto results = run_benchmarks(int(rest.size()), rest.data(), args.json);
  FP8GEMM_CUDA_CHECK(cudaStreamDestroy(stream));

  // ---- the verdicts ----
  std::printf(
      "\n(a) GPU time, library vs chapter plan (same kernel), interleaved; medians in us, IQR as "
      "%% of the median;\n    ratio = library / chapter (target <= 1.02), A/A = control / chapter "
      "(judged only where within 1%%),\n    lib/ctl = library / control (same output buffer: "
      "only the layer differs)\n");
  std::printf("%-12s %-28s %10s %6s %10s %6s %10s %6s %6s %8s %8s %8s  %s\n", "entry", "shape",
              "library", "IQR%", "chapter", "IQR%", "control", "IQR%", "rounds", "ratio", "A/A",
              "lib/ctl", "verdict");
  int over = 0, judged = 0, unjudged = 0;
  double worst = 0, worst_aa = 1;
  std::string worst_at, worst_aa_at;
  for (const Pair& p : pairs) {
    const auto it = timings.find(p.entry + "/" + p.shape);
    if (it == timings.end() || it->second.chapter.median_us <= 0) continue;
    const PairTiming& t = it->second;
    const std::string v = verdict(t);
    if (v.rfind("unjudged", 0) == 0) {
      ++unjudged;
    } else {
      ++judged;
      over += v == "OVER 2%";
      if (t.ratio() > worst) {
        worst = t.ratio();
        worst_at = p.entry + " " + p.shape;
      }
    }
    if (std::fabs(t.aa_ratio() - 1) > std::fabs(worst_aa - 1)) {
      worst_aa = t.aa_ratio();
      worst_aa_at = p.entry + " " + p.shape;
    }
    std::printf("%-12s %-28s %10.2f %6.1f %10.2f %6.1f %10.2f %6.1f %6d %8.4f %8.4f %8.4f  %s\n",
                p.entry.c_str(), p.shape.c_str(), t.library.median_us, t.library.iqr_pct(),
                t.chapter.median_us, t.chapter.iqr_pct(), t.control.median_us,
                t.control.iqr_pct(), t.rounds, t.ratio(), t.aa_ratio(), t.ratio_vs_control(),
                v.c_str());
  }
  std::printf("%d pairs judged (A/A within 1%%), %d of them over 2%%; worst judged ratio %.4f "
              "(%s); %d unjudged; A/A furthest from 1: %.4f (%s)\n",
              judged, over, worst, worst_at.c_str(), unjudged, worst_aa, worst_aa_at.c_str());

  std::map<std::string, double> us;  // "<kind>:<entry>/<shape>" -> median us
  for (const auto& r : results) us[r.implementation + "/" + r.shape] = r.median_us;
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
  std::printf(
      "\n(b) detail: us per run(), %d repeats x %d batches of %d calls per side, the "
      "library's and the chapter plan's batches alternating;\n    median [p25-p75] min "
      "{lowest-highest repeat median}\n",
      host_repeats, kHostBatches, host_calls);
  auto detail = [](const HostSide& h) {
    char buf[96];
    std::snprintf(buf, sizeof buf, "%5.2f [%5.2f-%5.2f] %5.2f {%5.2f-%5.2f}", h.all.median_us,
                  h.all.p25_us, h.all.p75_us, h.all.min_us, h.repeat_min_us, h.repeat_max_us);
    return std::string(buf);
  };
  if (const auto it = host_times.find("empty"); it != host_times.end())
    std::printf("  %-14s %-34s %s\n", "empty kernel", "<<<1, 1>>>", detail(it->second[0]).c_str());
  for (const Pair& p : pairs) {
    const auto it = host_times.find(p.entry + "/" + p.shape);
    if (it == host_times.end()) continue;
    std::printf("  %-14s %-34s library %s  chapter %s  library - chapter %+.2f\n", p.entry.c_str(),
                p.shape.c_str(), detail(it->second[0]).c_str(), detail(it->second[1]).c_str(),
                it->second[0].all.median_us - it->second[1].all.median_us);
    if (const auto r = host_times.find("rebind:" + p.entry + "/" + p.shape); r != host_times.end())
      std::printf("  %-14s %-34s rebind(D) + run() %s  over the library's run() %+.2f\n",
                  p.entry.c_str(), p.shape.c_str(), detail(r->second[0]).c_str(),
                  r->second[0].all.median_us - it->second[0].all.median_us);
  }

  if (!duels.empty()) {
    std::printf(
        "\n(c) the table's kernel against the chapter's own rule, interleaved (chapter plans, same "
        "operands);\n    rule/table = the rule's kernel's median / the table's kernel's (> 1: the "
        "table is faster), A/A as in (a)\n");
    std::printf("%-12s %-16s %-34s %-34s %9s %9s %9s %8s  %s\n", "entry", "shape",
                "chapter's rule", "table", "rule us", "table us", "rule/tab", "A/A", "verdict");
    int faster = 0, slower = 0, same = 0, unresolved = 0;
    for (const Pair& d : duels) {
      const auto it = rule_timings.find(d.entry + "/" + d.shape);
      if (it == rule_timings.end() || it->second.chapter.median_us <= 0) continue;
      const PairTiming& t = it->second;
      const std::string own = d.note.substr(0, d.note.find(' '));
      const std::string table = d.note.substr(d.note.find(' ') + 1);
      const double aa = std::fabs(t.aa_ratio() - 1);
      std::string v;
      if (!(aa <= kAaLimit)) {
        v = "unresolved (A/A beyond 1%)";
        ++unresolved;
      } else if (t.ratio() > 1 + std::max(aa, 0.005)) {
        v = "table faster";
        ++faster;
      } else if (t.ratio() < 1 - std::max(aa, 0.005)) {
        v = "RULE FASTER";
        ++slower;
      } else {
        v = "same within the noise";
        ++same;
      }
      std::printf("%-12s %-16s %-34s %-34s %9.2f %9.2f %9.4f %8.4f  %s\n", d.entry.c_str(),
                  d.shape.c_str(), own.c_str(), table.c_str(), t.library.median_us,
                  t.chapter.median_us, t.ratio(), t.aa_ratio(), v.c_str());
    }
    std::printf("table faster at %d, the rule faster at %d, the same within max(|A/A - 1|, 0.5%%) "
                "at %d, unresolved at %d\n",
                faster, slower, same, unresolved);
  }
  return 0;
}
