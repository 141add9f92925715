// GPU tests of chapter 8's k-grouped weight gradient (chapters/08_grouped_moe/wgrad.hpp):
// dB_g [N, K] = dD_g^T . A_g over each expert's tokens, FP32 (optionally accumulated) or bf16.
// Operands are made here directly in the transposed, token-padded layout the kernel reads (random
// e4m3 on each expert's real tokens, zero codes on its padding up to the next multiple of 128,
// random scales per (row, token block)), so the kernel is tested independently of the quantiser.
// Each group is compared with a float64 reference of the dequantised operands; an empty expert's
// dB_g must be exactly 0 (overwrite) or bit-identical to what it held (accumulate).
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <optional>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "catch.hpp"
#include "common/check.hpp"
#include "common/cuda.hpp"
#include "common/fp8.hpp"
#include "common/quantize.hpp"
#include "common/reference.hpp"
#include "refusal.hpp"
#include "wgrad.hpp"

using namespace fp8gemm;

namespace {

std::int64_t round_up128(std::int64_t x) { return (x + 127) / 128 * 128; }

/// One weight-gradient problem on the host: counts per expert, the padded transposed operands and
/// their scales, and dB's initial contents.
struct WgradCase {
  std::vector<int> counts;
  std::int64_t N, K;
  std::vector<int> offsets, padded;  // G + 1 each
  std::int64_t capacity = 0;         // columns of the operands (>= padded[G], slack beyond)
  std::vector<std::uint8_t> dDt, At; // [N, capacity], [K, capacity]
  std::vector<float> sd, sa;         // [capacity / 128][ld]
  GroupScaleLayout ld_layout, la_layout;

  WgradCase(std::vector<int> c, std::int64_t n, std::int64_t k, std::uint64_t seed)
      : counts(std::move(c)), N(n), K(k) {
    layout();
    capacity = round_up128(padded.back() + 200);  // slack the kernel must not read
    ld_layout = GroupScaleLayout::mn_major_tma_aligned(N);
    la_layout = GroupScaleLayout::mn_major_tma_aligned(K);
    fill(seed);
  }
  /// The real and the padded token offsets of the current counts.
  void layout() {
    const int G = int(counts.size());
    offsets.assign(G + 1, 0);
    padded.assign(G + 1, 0);
    for (int g = 0; g < G; ++g) {
      offsets[g + 1] = offsets[g] + counts[g];
      padded[g + 1] = padded[g] + int(round_up128(counts[g]));
    }
  }
  /// Fresh random operands for the current counts (padding columns: zero codes; slack: NaN codes,
  /// which would poison any sum that read them).
  void fill(std::uint64_t seed) {
    layout();
    const int G = int(counts.size());
    REQUIRE(padded[G] <= capacity);
    const auto rd = random_e4m3(std::size_t(N * capacity), seed);
    const auto ra = random_e4m3(std::size_t(K * capacity), seed + 1);
    dDt.assign(rd.size(), 0x7F);
    At.assign(ra.size(), 0x7F);
    for (int g = 0; g < G; ++g)
      for (std::int64_t j = padded[g]; j < padded[g + 1]; ++j) {
        const bool real = j < padded[g] + counts[g];
        for (std::int64_t n = 0; n < N; ++n)
          dDt[std::size_t(n * capacity + j)] = real ? rd[std::size_t(n * capacity + j)] : 0;
        for (std::int64_t k = 0; k < K; ++k)
          At[std::size_t(k * capacity + j)] = real ? ra[std::size_t(k * capacity + j)] : 0;
      }
    std::mt19937_64 gen(seed + 2);
    std::uniform_real_distribution<float> e(-3, 3);
    sd.assign(std::size_t(ld_layout.required_elements(N, capacity)), 0.0f);
    sa.assign(std::size_t(la_layout.required_elements(K, capacity)), 0.0f);
    for (auto& v : sd) v = std::exp2(e(gen));
    for (auto& v : sa) v = std::exp2(e(gen));
  }
  /// dB_g in float64 (N x K).
  std::vector<double> reference(int g) const {
    const std::int64_t T = counts[g];
    std::vector<double> a(std::size_t(N * T)), b(std::size_t(K * T));
    for (std::int64_t n = 0; n < N; ++n)
      for (std::int64_t i = 0; i < T; ++i) {
        const std::int64_t j = padded[g] + i;
        a[std::size_t(n * T + i)] = double(e4m3_decode(dDt[std::size_t(n * capacity + j)])) *
                                    sd[std::size_t(ld_layout.offset(n, j / 128))];
      }
    for (std::int64_t k = 0; k < K; ++k)
      for (std::int64_t i = 0; i < T; ++i) {
        const std::int64_t j = padded[g] + i;
        b[std::size_t(k * T + i)] = double(e4m3_decode(At[std::size_t(k * capacity + j)])) *
                                    sa[std::size_t(la_layout.offset(k, j / 128))];
      }
    return reference_gemm(N, K, T, a.data(), b.data());
  }
};

/// The device side of a WgradCase and a plan over it (dB FP32, or bf16 in dB_bf16).
struct WgradDevice {
  DeviceBuffer<std::uint8_t> dDt, At;
  DeviceBuffer<float> sd, sa, dB;
  DeviceBuffer<std::uint16_t> dB_bf16;
  DeviceBuffer<int> offsets;
  ch08::WeightGradGemm gemm;

  WgradDevice(const WgradCase& c, bool accumulate,
              ch08::WeightGradOutput output = ch08::WeightGradOutput::f32)
      : dDt(c.dDt), At(c.At), sd(c.sd), sa(c.sa),
        dB(std::size_t(std::int64_t(c.counts.size()) * c.N * c.K)),
        dB_bf16(output == ch08::WeightGradOutput::bf16 ? dB.size() : 0), offsets(c.offsets) {
    gemm.groups = int(c.counts.size());
    gemm.N = c.N;
    gemm.K = c.K;
    gemm.token_capacity = c.capacity;
    gemm.offsets = offsets.data();
    gemm.dD_t = dDt.data();
    gemm.scale_dD_t = sd.data();
    gemm.scale_dD_t_layout = c.ld_layout;
    gemm.A_t = At.data();
    gemm.scale_A_t = sa.data();
    gemm.scale_A_t_layout = c.la_layout;
    gemm.dB = output == ch08::WeightGradOutput::bf16 ? static_cast<void*>(dB_bf16.data())
                                                      : static_cast<void*>(dB.data());
    gemm.output = output;
    gemm.accumulate = accumulate;
  }
  /// dB as floats (bf16 widened exactly), whichever type the plan writes.
  std::vector<float> download_db() const {
    if (gemm.output == ch08::WeightGradOutput::f32) return dB.download();
    const auto bits = dB_bf16.download();
    std::vector<float> v(bits.size());
    for (std::size_t i = 0; i < bits.size(); ++i) v[i] = bf16_to_float(bits[i]);
    return v;
  }
  /// dB's contents before the call: `before` (NaN stays NaN in bf16).
  void upload_db(const std::vector<float>& before) {
    if (gemm.output == ch08::WeightGradOutput::f32) return dB.upload(before);
    std::vector<std::uint16_t> bits(before.size());
    for (std::size_t i = 0; i < bits.size(); ++i) bits[i] = float_to_bf16(before[i]);
    dB_bf16.upload(bits);
  }
  void upload(const WgradCase& c) {
    dDt.upload(c.dDt);
    At.upload(c.At);
    sd.upload(c.sd);
    sa.upload(c.sa);
    offsets.upload(c.offsets);
  }
};

/// dB's contents before the call: NaN (overwrite: every element must be written) or random values
/// (accumulate: the result must be old + product, an empty group's old values untouched).
std::vector<float> initial_db(const WgradCase& c, bool accumulate, std::uint64_t seed) {
  std::vector<float> v(std::size_t(std::int64_t(c.counts.size()) * c.N * c.K));
  if (!accumulate) {
    for (auto& x : v) x = std::nanf("");
    return v;
  }
  std::mt19937_64 gen(seed);
  std::normal_distribution<float> nd(0.0f, 8.0f);
  for (auto& x : v) x = nd(gen);
  return v;
}

/// Checks dB (downloaded) against the references: each group's relative error within the per-
/// tensor tolerance of its reduction length; empty groups exactly 0 or exactly `before`.
bool check_db(const WgradCase& c, const std::vector<float>& before, const std::vector<float>& d,
              bool accumulate, const char* what) {
  const std::int64_t per = c.N * c.K;
  bool ok = true;
  double worst = 0;
  for (int g = 0; g < int(c.counts.size()); ++g) {
    const float* got = d.data() + std::size_t(g * per);
    const float* old = before.data() + std::size_t(g * per);
    if (c.counts[g] == 0) {
      std::int64_t bad = 0;
      for (std::int64_t i = 0; i < per; ++i)
        bad += accumulate ? std::memcmp(&got[i], &old[i], 4) != 0 : got[i] != 0.0f;
      if (bad != 0) {
        std::printf("  %s: empty group %d has %lld wrong elements (%s)\n", what, g,
                    static_cast<long long>(bad), accumulate ? "must be untouched" : "must be 0");
        ok = false;
      }
      continue;
    }
    std::vector<double> ref = c.reference(g);
    if (accumulate) {
      EarlierShare share;
      for (std::int64_t i = 0; i < per; ++i) share.add_to(ref[std::size_t(i)], double(old[i]));
      // dB's earlier values must be >= 1 % of the result, or a skipped add would pass (session
      // 65; N(0, 8) is ~5 % of it at 517 tokens by the operands' statistics, more below).
      if (!share.visible(0.01)) {
        std::printf("  %s: group %d: BLIND, dB's earlier values are %.1e of the result\n", what, g,
                    share.share());
        ok = false;
      }
    }
    const ErrorStats s = compare(got, ref.data(), per);
    worst = std::max(worst, s.rel_frobenius);
    if (!s.ok(per_tensor_tolerance(c.counts[g]))) {
      std::printf("  %s: group %d (%d tokens) rel %.3e non-finite %lld\n", what, g, c.counts[g],
                  s.rel_frobenius, static_cast<long long>(s.non_finite));
      ok = false;
    }
  }
  std::printf("  %s G=%zu N=%lld K=%lld %s: worst group rel %.2e  %s\n", what, c.counts.size(),
              static_cast<long long>(c.N), static_cast<long long>(c.K),
              accumulate ? "dB += " : "dB = ", worst, ok ? "ok" : "FAIL");
  return ok;
}

/// The dB type a named kernel writes; "" (the default): FP32.
ch08::WeightGradOutput output_of(const std::string& kernel) {
  if (kernel.empty()) return ch08::WeightGradOutput::f32;
  return ch08::wgrad_output_of(engine::find_kernel(ch08::wgrad_kernels(), kernel, "test"));
}

/// One plan over case c (the kernel's dB type, or `output` for the default), run once and
/// checked against the float64 reference. A bf16 kernel asked to accumulate must refuse.
bool run_wgrad(const WgradCase& c, bool accumulate, std::uint64_t seed, const std::string& kernel = "",
               std::optional<ch08::WeightGradOutput> output = std::nullopt) {
  const ch08::WeightGradOutput out = output.value_or(output_of(kernel));
  WgradDevice dev(c, accumulate, out);
  ch08::WeightGradOptions o;
  o.kernel = kernel;
  if (accumulate && out == ch08::WeightGradOutput::bf16) {
    const std::string why = test::refusal_of([&] { ch08::WeightGradPlan p(dev.gemm, o); });
    std::printf("  wgrad %s: bf16 dB with accumulate refused: %s\n", kernel.c_str(), why.c_str());
    return why.find("accumulate needs FP32 dB") != std::string::npos;
  }
  const std::vector<float> before = initial_db(c, accumulate, seed);
  dev.upload_db(before);
  ch08::WeightGradPlan plan(dev.gemm, o);
  plan.run(nullptr);
  FP8GEMM_CUDA_CHECK(cudaDeviceSynchronize());
  const std::string what = "wgrad [" + plan.describe() + "]";
  return check_db(c, before, dev.download_db(), accumulate, what.c_str());
}

}  // namespace

TEST_CASE("ch08 wgrad: experts of 0, 1, 127, 128, 129, 300 tokens, every kernel, = and +=",
          "[ch08][wgrad][gpu]") {
  const WgradCase c({0, 1, 127, 128, 129, 0, 300}, 264, 200, 100);
  REQUIRE(!ch08::wgrad_kernels().empty());  // else the loop below checks nothing
  for (const auto& k : ch08::wgrad_kernels())
    for (bool accumulate : {false, true}) CHECK(run_wgrad(c, accumulate, 101, k.name));
}

TEST_CASE("ch08 wgrad: one expert, G = 64 small experts, long reductions", "[ch08][wgrad][gpu]") {
  CHECK(run_wgrad(WgradCase({1000}, 128, 256, 110), false, 111));
  std::mt19937 gen(120);
  std::uniform_int_distribution<int> rows(0, 40);
  std::vector<int> small(64);
  for (auto& r : small) r = rows(gen);
  small[3] = small[17] = 0;
  CHECK(run_wgrad(WgradCase(small, 136, 72, 121), true, 122));
  CHECK(run_wgrad(WgradCase({0, 5000, 2}, 256, 384, 130), false, 131));
}

TEST_CASE("ch08 wgrad: max_sms limits the grid, every dB tile still computed",
          "[ch08][wgrad][gpu]") {
  // WeightGradOptions::max_sms: the default kernel (its choice counts waves over max_sms SMs) and
  // a 2 x 1 cluster kernel, = and +=, a grid of at most max(max_sms, cluster) CTAs, every group
  // against float64.
  const WgradCase c({0, 1, 127, 128, 129, 0, 300, 517}, 264, 400, 150);
  const engine::KernelInfo* pair = nullptr;
  for (const auto& k : ch08::wgrad_kernels())
    if (!pair && k.cluster_size() == 2) pair = &k;
  REQUIRE(pair != nullptr);
  int cases = 0;
  for (int max_sms : {1, 2, 16})
    for (const std::string kernel : {std::string(), pair->name})
      for (bool accumulate : {false, true}) {
        WgradDevice dev(c, accumulate);
        ch08::WeightGradOptions o;
        o.kernel = kernel;
        o.max_sms = max_sms;
        const std::vector<float> before = initial_db(c, accumulate, 151 + std::uint64_t(cases));
        dev.upload_db(before);
        ch08::WeightGradPlan plan(dev.gemm, o);
        plan.run(nullptr);
        FP8GEMM_CUDA_CHECK(cudaDeviceSynchronize());
        const int cluster_ctas = plan.kernel().cluster_size();
        if (!kernel.empty()) CHECK(cluster_ctas == 2);
        CHECK(plan.grid_ctas() >= 1);
        CHECK(plan.grid_ctas() <= std::max(max_sms, cluster_ctas));
        const std::string what =
            "wgrad max_sms " + std::to_string(max_sms) + " [" + plan.describe() + "]";
        CHECK(check_db(c, before, dev.download_db(), accumulate, what.c_str()));
        ++cases;
      }
  CHECK(cases == 12);
}

TEST_CASE("ch08 wgrad: deterministic", "[ch08][wgrad][gpu]") {
  const WgradCase c({77, 300, 0, 1029}, 256, 256, 140);
  WgradDevice dev(c, false);
  ch08::WeightGradPlan plan(dev.gemm);
  std::vector<float> first;
  for (int run = 0; run < 2; ++run) {
    dev.dB.upload(initial_db(c, false, 141));
    plan.run(nullptr);
    FP8GEMM_CUDA_CHECK(cudaDeviceSynchronize());
    const auto d = dev.dB.download();
    if (run == 0) {
      // The first run is right (two unwritten, NaN-initialised dB would compare equal).
      CHECK(check_db(c, initial_db(c, false, 141), d, false, "wgrad determinism, first run"));
      first = d;
    } else {
      CHECK(std::memcmp(first.data(), d.data(), d.size() * 4) == 0);
    }
  }
}

TEST_CASE("ch08 wgrad: the checking mode refuses bad offsets and too small a capacity",
          "[ch08][wgrad][gpu]") {
  // WeightGradOptions::check_offsets (session 55): good offsets run as without it; offsets not
  // from 0, decreasing, or whose padded total exceeds token_capacity (an offsets array ending
  // past the T the operands were quantised for) are refused by std::runtime_error naming the rule,
  // and nothing is launched (dB keeps its NaN); a capturing stream is refused by
  // std::invalid_argument, the capture left valid.
  const WgradCase c({100, 0, 250, 3}, 192, 136, 160);
  WgradDevice dev(c, false);
  ch08::WeightGradOptions o;
  o.check_offsets = true;
  const ch08::WeightGradPlan plan(dev.gemm, o);
  CHECK(plan.describe().find("checking offsets") != std::string::npos);
  const std::vector<float> before = initial_db(c, false, 161);
  dev.upload_db(before);
  plan.run(nullptr);
  FP8GEMM_CUDA_CHECK(cudaDeviceSynchronize());
  CHECK(check_db(c, before, dev.download_db(), false, "wgrad checking mode, good offsets"));
  struct Bad {
    std::vector<int> offsets;
    const char* expect;
  };
  const int past = int(c.capacity) + 1;
  REQUIRE(c.capacity == 768);  // the cases below are written for it
  for (const Bad& b : {Bad{{3, 100, 100, 350, 353}, "offsets[0] = 3 must be 0"},
                       Bad{{0, 100, 90, 350, 353}, "offsets[2] = 90 is less than offsets[1] = 100"},
                       Bad{{0, 100, 100, 350, past}, "exceeds token_capacity = "},
                       // 703 tokens fit 768 columns, but padded per expert they take 1152
                       Bad{{0, 1, 2, 3, 703}, "P_G = 1152 "},
                       // a decreasing offset is reported, not the total it distorts
                       Bad{{0, 500, 100, 9000, 9001}, "offsets[2] = 100 is less than offsets[1] = 500"}}) {
    dev.offsets.upload(b.offsets);
    dev.upload_db(before);  // NaN everywhere
    std::string what;
    try {
      plan.run(nullptr);
    } catch (const std::runtime_error& e) {
      what = e.what();
    }
    INFO(what);
    CHECK(what.find(b.expect) != std::string::npos);
    CHECK(what.find("the GEMM was not launched") != std::string::npos);
    FP8GEMM_CUDA_CHECK(cudaDeviceSynchronize());
    std::int64_t written = 0;
    for (float x : dev.download_db()) written += std::isnan(x) ? 0 : 1;
    CHECK(written == 0);
  }
  // A padded total exactly at the capacity passes (128 + 128 + 128 + 384 = 768).
  dev.offsets.upload(std::vector<int>{0, 128, 256, 384, 768});
  CHECK_NOTHROW(plan.run(nullptr));
  FP8GEMM_CUDA_CHECK(cudaDeviceSynchronize());
  // G = 300: entries past one thread's first (the check's 256 threads stride over them).
  {
    std::vector<int> counts(300, 1);
    counts[7] = 0;
    const WgradCase big(counts, 136, 72, 162);
    WgradDevice bdev(big, false);
    const ch08::WeightGradPlan bplan(bdev.gemm, o);
    CHECK_NOTHROW(bplan.run(nullptr));
    FP8GEMM_CUDA_CHECK(cudaDeviceSynchronize());
    auto refusal = [&](const std::vector<int>& offsets) {
      bdev.offsets.upload(offsets);
      std::string what;
      try {
        bplan.run(nullptr);
      } catch (const std::runtime_error& e) {
        what = e.what();
      }
      return what;
    };
    std::vector<int> dec = big.offsets;
    dec[290] = dec[289] - 1;
    CHECK(refusal(dec).find("offsets[290] = ") != std::string::npos);
    std::vector<int> over = big.offsets;
    over[300] += int(big.capacity);
    CHECK(refusal(over).find("exceeds token_capacity = " + std::to_string(big.capacity)) !=
          std::string::npos);
  }
  dev.offsets.upload(c.offsets);
  cudaStream_t stream;
  FP8GEMM_CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  FP8GEMM_CUDA_CHECK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal));
  CHECK_THROWS_AS(plan.run(stream), std::invalid_argument);
  cudaGraph_t graph = nullptr;
  CHECK(cudaStreamEndCapture(stream, &graph) == cudaSuccess);  // the capture is still valid
  if (graph != nullptr) FP8GEMM_CUDA_CHECK(cudaGraphDestroy(graph));
  FP8GEMM_CUDA_CHECK(cudaStreamDestroy(stream));
  FP8GEMM_CUDA_CHECK(cudaGetLastError());
}

TEST_CASE("ch08 wgrad: CUDA graph replayed with other expert sizes", "[ch08][wgrad][gpu]") {
  // One capture; between replays the offsets (and the operands, in the layout they imply) change
  // in place. Token capacity fixed by the first case's slack.
  WgradCase c({100, 0, 250, 3}, 192, 136, 150);
  WgradDevice dev(c, false);
  ch08::WeightGradPlan plan(dev.gemm);
  cudaStream_t stream;
  FP8GEMM_CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  cudaGraph_t graph;
  FP8GEMM_CUDA_CHECK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal));
  plan.run(stream);
  FP8GEMM_CUDA_CHECK(cudaStreamEndCapture(stream, &graph));
  cudaGraphExec_t exec;
  FP8GEMM_CUDA_CHECK(cudaGraphInstantiate(&exec, graph, 0));
  const std::vector<std::vector<int>> sizes = {{100, 0, 250, 3}, {0, 0, 0, 353}, {129, 128, 1, 0}};
  std::uint64_t seed = 151;
  for (const auto& s : sizes) {
    c.counts = s;
    c.fill(seed++);
    dev.upload(c);
    const auto before = initial_db(c, false, seed++);
    dev.dB.upload(before);
    // The uploads ran on the legacy stream, which the non-blocking `stream` does not wait for (a
    // pageable cudaMemcpy may return before its copy reaches the device).
    FP8GEMM_CUDA_CHECK(cudaDeviceSynchronize());
    FP8GEMM_CUDA_CHECK(cudaGraphLaunch(exec, stream));
    FP8GEMM_CUDA_CHECK(cudaStreamSynchronize(stream));
    CHECK(check_db(c, before, dev.dB.download(), false, "wgrad graph replay"));
  }
  FP8GEMM_CUDA_CHECK(cudaGraphExecDestroy(exec));
  FP8GEMM_CUDA_CHECK(cudaGraphDestroy(graph));
  FP8GEMM_CUDA_CHECK(cudaStreamDestroy(stream));
}

TEST_CASE("ch08 wgrad: a dB that TMA cannot store: the default falls back, a TMA kernel is refused",
          "[ch08][wgrad][gpu]") {
  const WgradCase c({50, 0, 200}, 136, 72, 160);
  WgradDevice dev(c, false);
  // lddb = K + 1: rows 292 bytes apart, not a multiple of 16 (the TMA epilogue's rule).
  const std::int64_t G = std::int64_t(c.counts.size()), lddb = c.K + 1, rows = G * c.N;
  DeviceBuffer<float> db(std::size_t(rows * lddb));
  db.upload(std::vector<float>(std::size_t(rows * lddb), std::nanf("")));
  ch08::WeightGradGemm g = dev.gemm;
  g.dB = db.data();
  g.lddb = lddb;
  ch08::WeightGradPlan plan(g);
  INFO(plan.describe());
  CHECK(plan.describe().find("_f32,") != std::string::npos);  // the registers epilogue
  plan.run(nullptr);
  FP8GEMM_CUDA_CHECK(cudaDeviceSynchronize());
  const std::vector<float> strided = db.download();
  std::vector<float> packed(std::size_t(rows * c.K));
  for (std::int64_t r = 0; r < rows; ++r)
    std::memcpy(&packed[std::size_t(r * c.K)], &strided[std::size_t(r * lddb)], std::size_t(c.K) * 4);
  CHECK(check_db(c, initial_db(c, false, 0), packed, false, "wgrad lddb = K + 1"));
  // Each row's padding column (K) is not dB's: still NaN (a store past K would land there).
  std::int64_t padding_written = 0;
  for (std::int64_t r = 0; r < rows; ++r)
    padding_written += !std::isnan(strided[std::size_t(r * lddb + c.K)]);
  CHECK(padding_written == 0);
  // A TMA kernel named for that dB: refused, naming the rule.
  std::string tma_kernel;
  for (const auto& k : ch08::wgrad_kernels())
    if (k.epilogue == engine::EpilogueKind::tma_store_f32) tma_kernel = k.name;
  REQUIRE(!tma_kernel.empty());
  ch08::WeightGradOptions o;
  o.kernel = tma_kernel;
  CHECK(test::refusal_of([&] { ch08::WeightGradPlan p(g, o); }).find("stores dB with TMA") !=
        std::string::npos);
  // The default plan on a packed dB stores by TMA; re-pointed at a dB 4 bytes off, it refuses.
  ch08::WeightGradPlan tma_plan(dev.gemm);
  CHECK(tma_plan.describe().find("_f32_tma_") != std::string::npos);
  ch08::WeightGradGemm off = dev.gemm;
  off.dB = db.data() + 1;
  CHECK(test::refusal_of([&] { tma_plan.rebind(off); }).find("must be 16-byte aligned") !=
        std::string::npos);
  // The refused rebind left the plan as it was: it still writes its own dB, correctly.
  dev.dB.upload(initial_db(c, false, 0));
  tma_plan.run(nullptr);
  FP8GEMM_CUDA_CHECK(cudaDeviceSynchronize());
  CHECK(check_db(c, initial_db(c, false, 0), dev.dB.download(), false,
                 "wgrad TMA plan after a refused rebind"));
}

TEST_CASE("ch08 wgrad: back-to-back epilogues (mostly empty experts), every kernel",
          "[ch08][wgrad][gpu]") {
  // 60 of 64 experts empty: most tiles have no K block, so a CTA's epilogues follow each other
  // with no main loop between them, and a TMA staging buffer reused too early shows (found by
  // the 8192-token validation at 096690a: an empty expert's dB_g not 0). dB = only: an empty
  // expert's matrix must come out exactly 0.
  std::vector<int> counts(64, 0);
  counts[5] = 1;
  counts[20] = 129;
  counts[41] = 300;
  counts[63] = 5;
  const WgradCase c(counts, 512, 960, 170);
  REQUIRE(!ch08::wgrad_kernels().empty());  // else the loop below checks nothing
  for (const auto& k : ch08::wgrad_kernels()) CHECK(run_wgrad(c, false, 171, k.name));
}

TEST_CASE("ch08 wgrad: the lean and staggered loops compute the first loop's sums bit for bit",
          "[ch08][wgrad][gpu]") {
  // The lean loops (kgrouped.cuh, kPinnedLoop + u: the defaults of the two-warpgroup FP32 TMA
  // tiles with one staging unit since session 29, plain names; _pin_loop1, _pin_loop2,
  // _pin_loop4) change only how the descriptors and addresses are computed and where the stage is
  // released, the staggered loop (_stag) only when each warpgroup issues its wgmma, the early
  // first wave (the default of the bf16 TMA tiles and of the FP32 ones with two staging units
  // since session 30, plain names; _pin_ew2, _pin_ew1) only when a tile's first partial sum is
  // issued (before the tile before it is stored): not what the wgmma compute or the order of the
  // promotion's FMAs.
  // So every element must equal the first loop's (the _loop0 twin) bit for bit. Empty experts
  // and ragged token counts included (a warpgroup that hands the other a turn no piece takes
  // would hang or race here).
  const WgradCase c({0, 1, 300, 129, 0, 1000, 0, 0, 257}, 392, 328, 190);
  for (const auto& [first, other] : std::initializer_list<std::pair<const char*, const char*>>{
           {"128x192_s5_c1x1_promoted_f32_tma_b1", ""}, {"128x256_s4_c1x1_promoted_f32_tma_b1", ""},
           {"128x192_s5_c1x1_promoted_tma_b1", ""}, {"128x256_s4_c1x1_promoted_tma_b1", ""},
           {"128x192_s5_c1x1_promoted_f32_tma_b1", "_pin_loop1"}, {"128x192_s5_c1x1_promoted_tma_b1", "_pin_loop1"},
           {"128x192_s5_c1x1_promoted_f32_tma_b1", "_stag"}, {"128x256_s4_c1x1_promoted_f32_tma_b1", "_stag"},
           {"128x192_s5_c1x1_promoted_tma_b1", "_stag"}, {"128x256_s4_c1x1_promoted_tma_b1", "_stag"},
           {"128x128_s6_c1x1_promoted_f32_tma_b1", "_stag"},
           {"128x192_s5_c1x1_promoted_f32_tma_b1", "_pin_ew2"},
           {"128x192_s5_c1x1_promoted_f32_tma_b1", "_pin_ew1"}, {"128x256_s4_c1x1_promoted_f32_tma_b1", "_pin_ew1"},
           {"128x192_s5_c1x1_promoted_tma_b1", "_pin_loop4"}, {"128x256_s4_c1x1_promoted_tma_b1", "_pin_loop1"},
           {"128x192_s4_c1x1_promoted_f32_tma_b2", ""}, {"128x192_s4_c1x1_promoted_f32_tma_b2", "_pin_loop2"}}) {
    const std::string base = std::string(first) + "_loop0", twin = std::string(first) + other;
    const auto output = ch08::wgrad_output_of(engine::find_kernel(ch08::wgrad_kernels(), base, "test"));
    WgradDevice a(c, false, output), b(c, false, output);
    ch08::WeightGradOptions oa, ob;
    oa.kernel = base;
    ob.kernel = twin;
    a.upload_db(initial_db(c, false, 0));  // NaN: every element must be written
    b.upload_db(initial_db(c, false, 0));
    ch08::WeightGradPlan pa(a.gemm, oa), pb(b.gemm, ob);
    pa.run(nullptr);
    pb.run(nullptr);
    FP8GEMM_CUDA_CHECK(cudaDeviceSynchronize());
    const auto da = a.download_db(), db = b.download_db();
    REQUIRE(da.size() == db.size());
    std::int64_t differ = 0;
    for (std::size_t i = 0; i < da.size(); ++i)
      differ += std::memcmp(&da[i], &db[i], sizeof(float)) != 0;
    INFO(twin << ": " << differ << " of " << da.size() << " elements differ from " << base);
    CHECK(differ == 0);
    CHECK(check_db(c, initial_db(c, false, 0), db, false, twin.c_str()));
  }
}

TEST_CASE("ch08 wgrad: bf16 dB is the FP32 dB rounded once, the default picks a bf16 kernel",
          "[ch08][wgrad][gpu]") {
  // The bf16 kernels run the FP32 kernels' main loops: the same sums, rounded to nearest even once
  // in the epilogue. So each bf16 element must equal float_to_bf16 of the FP32 kernel's element,
  // bit for bit, and also pass the float64 check on its own.
  const WgradCase c({0, 1, 300, 129, 0, 1000}, 392, 328, 180);
  for (const auto& [f32_kernel, bf16_kernel] :
       {std::pair<std::string, std::string>{"128x192_s5_c1x1_promoted_f32_tma_b1",
                                            "128x192_s5_c1x1_promoted_tma_b1"},
        {"128x256_s4_c1x1_promoted_f32_tma_b1", "128x256_s4_c1x1_promoted_tma_b1"},
        {"128x192_s4_c1x1_promoted_f32_tma_b2", "128x192_s4_c1x1_promoted_tma_b2"},
        {"128x256_s3_c1x1_promoted_f32_tma_b2", "128x256_s3_c1x1_promoted_tma_b2"},
        {"128x192_s5_c1x1_promoted_f32", "128x192_s5_c1x1_promoted_reg"}}) {
    WgradDevice f(c, false), b(c, false, ch08::WeightGradOutput::bf16);
    f.upload_db(initial_db(c, false, 181));
    b.upload_db(initial_db(c, false, 181));
    ch08::WeightGradOptions of, ob;
    of.kernel = f32_kernel;
    ob.kernel = bf16_kernel;
    ch08::WeightGradPlan pf(f.gemm, of), pb(b.gemm, ob);
    pf.run(nullptr);
    pb.run(nullptr);
    FP8GEMM_CUDA_CHECK(cudaDeviceSynchronize());
    const auto d32 = f.dB.download();
    const auto d16 = b.dB_bf16.download();
    std::int64_t differ = 0;
    for (std::size_t i = 0; i < d16.size(); ++i) differ += d16[i] != float_to_bf16(d32[i]);
    INFO(bf16_kernel << ": " << differ << " of " << d16.size() << " elements differ");
    CHECK(differ == 0);
    CHECK(check_db(c, initial_db(c, false, 0), b.download_db(), false, bf16_kernel.c_str()));
  }
  // The default bf16 plan: a bf16 TMA kernel (no _f32 in its name) on a packed dB; the registers
  // one where TMA cannot store dB (lddb = K + 1: rows 2 (K + 1) bytes apart).
  WgradDevice dev(c, false, ch08::WeightGradOutput::bf16);
  ch08::WeightGradPlan plan(dev.gemm);
  INFO(plan.describe());
  CHECK(plan.describe().find("_promoted_tma_b") != std::string::npos);
  CHECK(plan.describe().find("_f32") == std::string::npos);
  CHECK(run_wgrad(c, false, 182, "", ch08::WeightGradOutput::bf16));
  const std::int64_t G = std::int64_t(c.counts.size()), lddb = c.K + 1, rows = G * c.N;
  DeviceBuffer<std::uint16_t> db(std::size_t(rows * lddb));
  db.upload(std::vector<std::uint16_t>(std::size_t(rows * lddb), 0x7FC0));  // NaN
  ch08::WeightGradGemm g = dev.gemm;
  g.dB = db.data();
  g.lddb = lddb;
  ch08::WeightGradPlan strided(g);
  INFO(strided.describe());
  CHECK(strided.describe().find("_promoted_reg") != std::string::npos);
  strided.run(nullptr);
  FP8GEMM_CUDA_CHECK(cudaDeviceSynchronize());
  const auto bits = db.download();
  std::vector<float> packed(std::size_t(rows * c.K));
  for (std::int64_t r = 0; r < rows; ++r)
    for (std::int64_t k = 0; k < c.K; ++k)
      packed[std::size_t(r * c.K + k)] = bf16_to_float(bits[std::size_t(r * lddb + k)]);
  CHECK(check_db(c, initial_db(c, false, 0), packed, false, "wgrad bf16 lddb = K + 1"));
  std::int64_t padding_written = 0;  // each row's column K is not dB's: still the NaN
  for (std::int64_t r = 0; r < rows; ++r)
    padding_written += bits[std::size_t(r * lddb + c.K)] != 0x7FC0;
  CHECK(padding_written == 0);
  // The TMA plan re-pointed at a dB 2 bytes off (inside the larger strided buffer, so that only
  // the alignment is wrong): refused.
  ch08::WeightGradGemm off = dev.gemm;
  off.dB = db.data() + 1;
  const std::string why = test::refusal_of([&] { plan.rebind(off); });
  INFO(why);
  CHECK(why.find("must be 16-byte aligned") != std::string::npos);
  // The refused rebind left the plan as it was: it still writes its own dB, correctly.
  dev.upload_db(initial_db(c, false, 0));
  plan.run(nullptr);
  FP8GEMM_CUDA_CHECK(cudaDeviceSynchronize());
  CHECK(check_db(c, initial_db(c, false, 0), dev.download_db(), false,
                 "wgrad bf16 plan after a refused rebind"));
}
