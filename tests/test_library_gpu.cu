// GPU tests of the library's own layer (chapter 10): every library plan gives bit for bit the D of
// the chapter plan it wraps, run with the kernel the library chose (the chapter plans' accuracy is
// their own tests); the per-tensor plan's FP32 D (the library's own kernels) against float64;
// the table's kernel is the one that runs on a table shape; the environment
// override takes effect; MXFP8 takes the Hopper path on this GPU. Output is poisoned (NaN) before
// every run, so an unwritten D cannot compare equal.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "bs_check.hpp"  // ch07::DeviceOperands
#include "catch.hpp"
#include "common/cuda.hpp"
#include "common/reference.hpp"  // sample_rows
#include "fp8gemm/fp8gemm.hpp"
#include "grouped_check.hpp"  // ch08::GroupedOperands
#include "mx_emulate.hpp"     // ch09::random_operands, mx_call
#include "refusal.hpp"        // test::refusal_of
#include "row_reference.hpp"  // test::RowReference

using namespace fp8gemm;

namespace {

/// Runs `run` on the legacy stream after poisoning `d`, and returns what it wrote.
template <class Run>
std::vector<std::uint16_t> output_of(DeviceBuffer<std::uint16_t>& d, Run&& run) {
  poison_bf16(d.data(), d.size());
  run();
  FP8GEMM_CUDA_CHECK(cudaDeviceSynchronize());
  return d.download();
}

/// A table row's rule on this GPU: `table` where it has the SMs the row's sweep had (the H200's
/// and the H100 SXM's 132), else `table_sms` (the row rescaled: an H100 PCIe, a MIG slice).
DispatchRule table_rule_here(DispatchFamily f, std::int64_t M, std::int64_t N, std::int64_t K) {
  const DispatchEntry* e = dispatch_table_entry(f, M, N, K);
  const bool same = e && current_device_arch().sm_count == dispatch_sources()[std::size_t(e->source)].sms;
  return same ? DispatchRule::table : DispatchRule::table_sms;
}

bool all_written(const std::vector<std::uint16_t>& d) {
  for (std::uint16_t v : d)
    if (v == 0xFFFF) return false;
  return true;
}

/// Fills A (M x K) and B (N x K) with random e4m3 codes (seeds seed, seed + 1) and returns the
/// float64 product of the operands dequantised with the per-tensor scales 0.75 and 1.25, M x N.
std::vector<double> per_tensor_reference(const DeviceBuffer<std::uint8_t>& A,
                                         const DeviceBuffer<std::uint8_t>& B, std::int64_t M,
                                         std::int64_t N, std::int64_t K, std::uint64_t seed) {
  fill_random_e4m3(A.data(), A.size(), seed, 1.0f);
  fill_random_e4m3(B.data(), B.size(), seed + 1, 1.0f);
  FP8GEMM_CUDA_CHECK(cudaDeviceSynchronize());
  const auto a8 = A.download(), b8 = B.download();
  std::vector<double> ad(a8.size()), bd(b8.size());
  for (std::size_t i = 0; i < a8.size(); ++i) ad[i] = double(e4m3_decode(a8[i])) * 0.75;
  for (std::size_t i = 0; i < b8.size(); ++i) bd[i] = double(e4m3_decode(b8[i])) * 1.25;
  return reference_gemm(M, N, K, ad.data(), bd.data());
}

/// The M x N entries of an FP32 D whose rows are ldd apart (downloaded), packed; in
/// `padding_changed` how many of the other entries no longer hold `fill`'s bits.
std::vector<float> unpadded(const DeviceBuffer<float>& D, std::int64_t M, std::int64_t N,
                            std::int64_t ldd, float fill, std::int64_t& padding_changed) {
  const std::vector<float> all = D.download();
  std::vector<float> got(std::size_t(M * N));
  padding_changed = 0;
  for (std::int64_t r = 0; r < M; ++r)
    for (std::int64_t c = 0; c < ldd; ++c) {
      const float v = all[std::size_t(r * ldd + c)];
      if (c < N)
        got[std::size_t(r * N + c)] = v;
      else
        padding_changed += std::memcmp(&v, &fill, 4) != 0;
    }
  return got;
}

}  // namespace

TEST_CASE("library: this GPU is compute capability 9.0 and the plans accept it", "[library][gpu]") {
  const DeviceArch a = current_device_arch();
  INFO(a.name);
  CHECK(a.device >= 0);
  CHECK(a.major == 9);
  CHECK(a.minor == 0);
  CHECK(mx_kernel_arch(a, ch09::compiled_for_sm100()) == MxKernelArch::hopper_sm90a);
}

TEST_CASE("library: BlockScaledPlan = chapter 7's plan with the chosen kernel, bit for bit",
          "[library][gpu]") {
  struct Case {
    std::int64_t M, N, K;
    DispatchRule rule;
  };
  const Case cases[] = {{64, 7168, 2048, DispatchRule::table},
                        {4096, 7168, 2048, DispatchRule::table},
                        {300, 520, 1000 / 16 * 16, DispatchRule::chapter}};
  std::uint64_t seed = 1200;
  for (const Case& c : cases) {
    INFO(c.M << "x" << c.N << "x" << c.K);
    ch07::DeviceOperands ops(c.M, c.N, c.K, seed++);
    DeviceBuffer<std::uint16_t> d2(ops.D.size());
    const BlockScaledPlan lib(ops.gemm());
    const DispatchRule rule = c.rule == DispatchRule::table
                                  ? table_rule_here(DispatchFamily::block_scaled, c.M, c.N, c.K)
                                  : c.rule;
    CHECK(lib.choice().rule == rule);
    if (rule == DispatchRule::table)
      CHECK(lib.kernel().name ==
            dispatch_table_entry(DispatchFamily::block_scaled, c.M, c.N, c.K)->kernel);
    CHECK(lib.describe().find(std::string("kernel by ") + to_string(rule)) != std::string::npos);
    ch07::BlockScaledGemm g = ops.gemm();
    g.D = d2.data();
    const ch07::Plan chapter(g, ch07::Options{.kernel = lib.kernel().name});
    const auto a = output_of(ops.D, [&] { lib.run(nullptr); });
    const auto b = output_of(d2, [&] { chapter.run(nullptr); });
    CHECK(all_written(a));
    CHECK(a == b);
    // The common answer against float64: the chapter's plan with that kernel writing ops.D (run
    // by sampled_check, which poisons it first), equal to `a` bit for bit.
    const ch07::Plan on_ops(ops.gemm(), ch07::Options{.kernel = lib.kernel().name});
    const ch07::SampledCheck r = ch07::sampled_check(ops, on_ops, 16, seed + 50);
    INFO(r.describe);
    CHECK(r.ok);
    CHECK(ops.D.download() == a);
  }
}

TEST_CASE("library: BlockScaledPlan takes chapter 7's FP32 TMA kernels by name at ldd % 8 == 4",
          "[library][gpu]") {
  // A float D's rows are 16-byte aligned at ldd % 4 == 0: N = 388 passes for a float D where a
  // bf16 D's rule (ldd % 8 == 0) would refuse it (session 67's review: the plan asked the bf16
  // rule of every D). Each FP32 TMA kernel of chapter 7, named, with and without accumulate: the
  // chapter's plan with that kernel bit for bit from the same earlier D, every entry finite.
  ch07::DeviceOperands ops(300, 388, 656, 1260);
  DeviceBuffer<float> f(std::size_t(300 * 388)), f2(f.size());
  std::mt19937_64 gen(1261);
  std::normal_distribution<float> nd(0.0f, 100.0f);
  std::vector<float> before(f.size());
  for (float& x : before) x = nd(gen);
  int named = 0;
  for (const auto& k : ch07::kernels()) {
    if (k.epilogue != engine::EpilogueKind::tma_store_f32) continue;
    for (const bool accumulate : {false, true}) {
      INFO(k.name << (accumulate ? " D += A.B" : " D = A.B"));
      ch07::BlockScaledGemm g = ops.gemm();
      g.output = BlockScaledOutput::f32;
      g.D = f.data();
      g.accumulate = accumulate;
      BlockScaledOptions o;
      o.kernel = k.name;
      const BlockScaledPlan lib(g, o);
      CHECK(lib.kernel().name == k.name);
      g.D = f2.data();
      const ch07::Plan chapter(g, ch07::Options{.kernel = k.name});
      f.upload(before);
      f2.upload(before);
      lib.run(nullptr);
      chapter.run(nullptr);
      FP8GEMM_CUDA_CHECK(cudaDeviceSynchronize());
      const std::vector<float> a = f.download();
      CHECK(std::all_of(a.begin(), a.end(), [](float x) { return std::isfinite(x); }));
      CHECK(a == f2.download());
      CHECK(a != before);
      ++named;
    }
  }
  CHECK(named == 4);
  // Unnamed (session 69's rule): at N = 388 (ldd % 4 == 0) an accumulating float D takes the
  // FP32 kernel by TMA (M = 300 > 128: the 128 x 256), D = A.B the registers kernel; rule
  // epilogue either way, the reason saying which. The plan passes its call's accumulate to
  // choose_block_scaled: this is where dropping it would show.
  for (const bool accumulate : {false, true}) {
    INFO((accumulate ? "default, D += A.B" : "default, D = A.B"));
    ch07::BlockScaledGemm g = ops.gemm();
    g.output = BlockScaledOutput::f32;
    g.D = f.data();
    g.accumulate = accumulate;
    const BlockScaledPlan lib(g);
    INFO(lib.choice().why);
    CHECK(lib.choice().rule == DispatchRule::epilogue);
    CHECK(lib.kernel().name == (accumulate ? "128x256_s4_c2x1_promoted_f32_tma_b1"
                                           : "128x256_s4_c2x1_promoted_f32"));
    CHECK(test::has(lib.choice().why, accumulate ? "by TMA" : "from registers"));
  }
}

TEST_CASE("library: a plan on fewer SMs runs the table rescaled to them (rule table_sms)",
          "[library][gpu]") {
  // 64 x 2112 x 7168: the table's 64 x 16 tile makes 132 tiles, one wave on all 132 SMs of the
  // sweep's H200 and two on 112; rescaled, the plan takes a wider tile (dispatch.hpp). Its grid
  // has at most 112 CTAs, and it writes chapter 7's answer for that kernel on 112 SMs, bit for bit.
  const int sms = current_device_arch().sm_count;
  INFO("GPU SMs " << sms);
  const int cap = std::min(112, sms - 1);  // below the GPU's count (a rescaled row)
  REQUIRE(cap >= 1);
  ch07::DeviceOperands ops(64, 2112, 7168, 1250);
  BlockScaledOptions o;
  o.max_sms = cap;
  const BlockScaledPlan lib(ops.gemm(), o);
  INFO(lib.describe());
  CHECK(lib.choice().rule == DispatchRule::table_sms);
  CHECK(lib.describe().find("rescaled to " + std::to_string(cap) + " SMs") != std::string::npos);
  if (cap == 112) CHECK(lib.kernel().name == "64x32_s14_c1x1_promoted_tma_b1");
  const std::string text = lib.describe();  // "...: <kernel>, grid <CTAs>, ..."
  const std::size_t at = text.find("grid ");
  REQUIRE(at != std::string::npos);
  CHECK(std::stoi(text.substr(at + 5)) <= cap);
  // All SMs: the table's row as it is (on a GPU of the sweep's 132 SMs; else rescaled to its own).
  const BlockScaledPlan all(ops.gemm());
  CHECK(all.choice().rule == table_rule_here(DispatchFamily::block_scaled, 64, 2112, 7168));
  DeviceBuffer<std::uint16_t> d2(ops.D.size());
  ch07::BlockScaledGemm g = ops.gemm();
  g.D = d2.data();
  const ch07::Plan chapter(g, ch07::Options{.max_sms = cap, .kernel = lib.kernel().name});
  const auto a = output_of(ops.D, [&] { lib.run(nullptr); });
  CHECK(all_written(a));
  CHECK(a == output_of(d2, [&] { chapter.run(nullptr); }));
  const ch07::Plan on_ops(ops.gemm(), ch07::Options{.max_sms = cap, .kernel = lib.kernel().name});
  const ch07::SampledCheck r = ch07::sampled_check(ops, on_ops, 16, 1251);
  INFO(r.describe);
  CHECK(r.ok);
}

TEST_CASE("library: a grid that is not persistent plans for every SM, whatever max_sms says",
          "[library][gpu]") {
  // One CTA per tile ignores max_sms, so the table's row must not be rescaled for it (session 50:
  // PerTensorPlan passed max_sms to the dispatch even then, as chapter 6's own rule does not).
  const int sms = current_device_arch().sm_count;
  const int cap = std::min(112, sms - 1);
  REQUIRE(cap >= 1);
  const std::int64_t M = 4096, N = 7168, K = 2048;
  DeviceBuffer<std::uint8_t> A(std::size_t(M * K)), B(std::size_t(N * K));
  DeviceBuffer<std::uint16_t> D(std::size_t(M * N));
  DeviceBuffer<float> scales(std::vector<float>{1.0f, 1.0f});
  const PerTensorGemm g{M, N, K, A.data(), B.data(), D.data(), scales.data(), scales.data() + 1};
  PerTensorOptions o;
  o.max_sms = cap;
  o.persistent = false;
  const PerTensorPlan flat(g, o);
  INFO(flat.describe());
  CHECK(flat.choice().rule == table_rule_here(DispatchFamily::per_tensor_promoted, M, N, K));
  // The control: the same cap on a persistent grid is rescaled (`fp8gemm_dispatch_picks --sms=112`
  // prints table_sms for this row, on the CPU).
  o.persistent = true;
  const PerTensorPlan capped(g, o);
  INFO(capped.describe());
  CHECK(capped.choice().rule == DispatchRule::table_sms);
}

TEST_CASE("library: the environment override picks the kernel", "[library][gpu]") {
  const char* var = dispatch_env_var(DispatchFamily::block_scaled);
  const std::string k = "128x128_s6_c1x1_promoted_tma_b1";
  REQUIRE(setenv(var, ("64x7168x2048=" + k).c_str(), 1) == 0);
  ch07::DeviceOperands ops(64, 7168, 2048, 1300);
  const BlockScaledPlan lib(ops.gemm());
  ch07::DeviceOperands other(128, 7168, 2048, 1301);
  const BlockScaledPlan untouched(other.gemm());
  unsetenv(var);
  CHECK(lib.choice().rule == DispatchRule::environment);
  CHECK(lib.kernel().name == k);
  CHECK(untouched.choice().rule == table_rule_here(DispatchFamily::block_scaled, 128, 7168, 2048));
  DeviceBuffer<std::uint16_t> d2(ops.D.size());
  ch07::BlockScaledGemm g = ops.gemm();
  g.D = d2.data();
  const ch07::Plan chapter(g, ch07::Options{.kernel = k});
  const auto a = output_of(ops.D, [&] { lib.run(nullptr); });
  CHECK(all_written(a));
  CHECK(a == output_of(d2, [&] { chapter.run(nullptr); }));
}

TEST_CASE("library: PerTensorPlan = chapter 6's plan with the chosen kernel, bit for bit",
          "[library][gpu]") {
  struct Shape {
    std::int64_t M, N, K;
    DispatchRule rule;
  };
  // Two table shapes, and one that is no multiple of any tile (the chapter's rule).
  const Shape shapes[] = {{128, 7168, 2048, DispatchRule::table},
                          {4096, 7168, 2048, DispatchRule::table},
                          {300, 520, 1008, DispatchRule::chapter}};
  for (Accumulation acc : {Accumulation::promoted, Accumulation::fast})
    for (const Shape& s : shapes) {
      const std::int64_t M = s.M, N = s.N, K = s.K;
      INFO(M << "x" << N << "x" << K << " " << engine::to_string(acc));
      DeviceBuffer<std::uint8_t> A(std::size_t(M * K)), B(std::size_t(N * K));
      DeviceBuffer<std::uint16_t> D(std::size_t(M * N)), D2(std::size_t(M * N));
      DeviceBuffer<float> scales(std::vector<float>{0.75f, 0, 0, 0, 1.25f});
      // Random A and B, and 24 sampled rows of D = 0.75 x 1.25 x A . B^T in float64.
      test::RowReference reference;
      reference.init(
          A, B, M, N, K, 1400 + std::uint64_t(M), [](std::int64_t, std::int64_t) { return 0.75; },
          [](std::int64_t, std::int64_t) { return 1.25; });
      const PerTensorGemm g{
          M, N, K, A.data(), B.data(), D.data(), scales.data(), scales.data() + 4};
      PerTensorOptions o;
      o.accumulation = acc;
      const PerTensorPlan lib(g, o);
      CHECK(lib.choice().rule ==
            (s.rule == DispatchRule::table
                 ? table_rule_here(acc == Accumulation::fast ? DispatchFamily::per_tensor_fast
                                                             : DispatchFamily::per_tensor_promoted,
                                   M, N, K)
                 : s.rule));
      CHECK(lib.kernel().accumulation == acc);
      PerTensorGemm g2 = g;
      g2.D = D2.data();
      o.kernel = lib.kernel().name;
      const ch06::Plan chapter(g2, o);
      const auto a = output_of(D, [&] { lib.run(nullptr); });
      CHECK(all_written(a));
      CHECK(a == output_of(D2, [&] { chapter.run(nullptr); }));
      // The common answer against float64, on the sampled rows.
      CHECK(reference.check(a) == "");
    }
}

TEST_CASE("library: PerTensorPlan with FP32 D, with and without accumulate, against float64",
          "[library][gpu]") {
  // The library's own kernels (no chapter plan to compare with): every element against the
  // float64 product of the dequantised operands (+ D's earlier value with accumulate), D's row
  // padding (ldd = N + 3) untouched, D poisoned (NaN) without accumulate. One row and N = 9 (no
  // float2 stores at ldd = 9), and shapes no tile divides, on both halves of the rule (M <= 128:
  // chapter 6's decode tiles, 64 x 16 here, at 100 x 270 narrowed from 64 x 32; above: 128 x 256
  // or 128 x 128, by TMA at ldd = N = 520, from registers at ldd = N + 3: the same tile, so the
  // same bits).
  struct Shape {
    std::int64_t M, N, K;
  };
  const Shape shapes[] = {{1, 9, 16}, {100, 270, 656}, {300, 520, 1008}};
  const float nan_payload = [] {
    const std::uint32_t bits = 0x7FC0ABCDu;
    float f;
    std::memcpy(&f, &bits, 4);
    return f;
  }();
  std::uint64_t seed = 1500;
  for (Accumulation acc : {Accumulation::promoted, Accumulation::fast})
    for (const Shape& s : shapes) {
      const std::int64_t M = s.M, N = s.N, K = s.K;
      DeviceBuffer<std::uint8_t> A(std::size_t(M * K)), B(std::size_t(N * K));
      DeviceBuffer<float> scales(std::vector<float>{0.75f, 0, 0, 0, 1.25f});
      seed += 2;
      const std::vector<double> ref = per_tensor_reference(A, B, M, N, K, seed - 1);
      std::mt19937_64 gen(++seed);
      // D's earlier values as large as the product, so that a skipped add fails (until session
      // 66: N(0, 4), about 13 % of the result by the operands' statistics).
      std::normal_distribution<float> nd(0.0f, float(rms(ref)));
      std::vector<float> before(std::size_t(M * N));
      for (float& x : before) x = nd(gen);
      // Fast accumulation's error grows with K (chapter 6): the per-tensor tolerance. Promoted,
      // with no bf16 rounding of D, is left with the tensor cores' sums inside each 128-K block
      // (chapter 7's FP32 output measured 4e-5 .. 1.3e-4).
      const double tolerance = acc == Accumulation::promoted ? 5e-4 : per_tensor_tolerance(K);
      std::vector<float> first_run;
      for (bool accumulate : {false, true})
        for (std::int64_t pad : {0, 3}) {
          const std::int64_t ldd = N + pad;
          INFO(M << "x" << N << "x" << K << " " << engine::to_string(acc)
                 << (accumulate ? ", D += A.B" : ", D = A.B") << ", ldd = N + " << pad);
          std::vector<float> host(std::size_t(M * ldd), nan_payload);
          for (std::int64_t r = 0; r < M; ++r)
            for (std::int64_t c = 0; c < N; ++c)
              host[std::size_t(r * ldd + c)] =
                  accumulate ? before[std::size_t(r * N + c)] : std::nanf("");
          DeviceBuffer<float> D(host);
          PerTensorGemmF32 g{.M = M,
                             .N = N,
                             .K = K,
                             .A = A.data(),
                             .B = B.data(),
                             .D = D.data(),
                             .scale_a = scales.data(),
                             .scale_b = scales.data() + 4,
                             .ldd = pad ? ldd : 0,
                             .accumulate = accumulate};
          PerTensorOptions o;
          o.accumulation = acc;
          PerTensorPlan plan(g, o);
          INFO(plan.describe());
          CHECK(plan.writes_f32());
          CHECK(plan.choice().rule == DispatchRule::epilogue);
          const bool by_tma = M > 128 && ldd % 4 == 0;
          CHECK(plan.kernel().epilogue == (by_tma ? engine::EpilogueKind::tma_store_f32
                                                  : engine::EpilogueKind::registers_f32));
          CHECK(plan.kernel().accumulation == acc);
          plan.run(nullptr);
          FP8GEMM_CUDA_CHECK(cudaDeviceSynchronize());
          std::int64_t padding_changed = -1;
          const std::vector<float> got = unpadded(D, M, N, ldd, nan_payload, padding_changed);
          CHECK(padding_changed == 0);
          std::vector<double> want(ref);
          EarlierShare share;
          if (accumulate) {
            for (std::size_t i = 0; i < want.size(); ++i) share.add_to(want[i], double(before[i]));
            CHECK(share.visible(0.1));
          }
          const ErrorStats e = compare(got.data(), want.data(), std::int64_t(want.size()));
          std::printf("  per-tensor FP32 D %lldx%lldx%lld %-8s %-8s ldd N+%lld rel %.2e  [%s]\n",
                      (long long)M, (long long)N, (long long)K, engine::to_string(acc),
                      accumulate ? "D+=A.B" : "D=A.B", (long long)pad, e.rel_frobenius,
                      plan.kernel().name.c_str());
          CHECK(e.non_finite == 0);
          CHECK(e.rel_frobenius <= tolerance);
          if (!accumulate && pad == 0) {
            first_run = got;
            // Deterministic, and re-pointed at another D (rebind) it writes the same bits there:
            // a D 4-byte but not 8-byte aligned (one float into a fresh buffer), whose stores are
            // single floats (no float2); a TMA plan refuses that D and takes one 16 bytes in.
            const std::int64_t offset = by_tma ? 4 : 1;
            DeviceBuffer<float> D2(std::vector<float>(std::size_t(M * N + offset), std::nanf("")));
            PerTensorGemmF32 g2 = g;
            if (by_tma) {
              g2.D = D2.data() + 1;
              const std::string r = test::refusal_of([&] { plan.rebind(g2); });
              INFO(r);
              CHECK(test::has(r, "is not 16-byte aligned"));
              CHECK(test::has(r, "stores D with TMA"));
            }
            g2.D = D2.data() + offset;
            plan.rebind(g2);
            plan.run(nullptr);
            FP8GEMM_CUDA_CHECK(cudaDeviceSynchronize());
            const std::vector<float> again = D2.download();
            CHECK(std::memcmp(again.data() + offset, got.data(), got.size() * 4) == 0);
            for (std::int64_t i = 0; i < offset; ++i) CHECK(std::isnan(again[std::size_t(i)]));
            // What rebind refuses: another accumulate, a bf16 call.
            PerTensorGemmF32 g3 = g2;
            g3.accumulate = true;  // (g2.D: an address this plan takes)
            CHECK(test::has(test::refusal_of([&] { plan.rebind(g3); }), "accumulate differs"));
            DeviceBuffer<std::uint16_t> D16(std::size_t(M * N));
            const PerTensorGemm bf16{M, N, K, A.data(), B.data(), D16.data(), scales.data(),
                                     scales.data() + 4};
            CHECK(test::has(test::refusal_of([&] { plan.rebind(bf16); }), "output"));
            PerTensorPlan bf16_plan(bf16, o);
            CHECK_FALSE(bf16_plan.writes_f32());
            CHECK(test::has(test::refusal_of([&] { bf16_plan.rebind(g2); }), "output"));
          } else if (!accumulate) {
            // The same sums at another ldd: the same bits.
            CHECK(std::memcmp(first_run.data(), got.data(), got.size() * 4) == 0);
          } else if (pad == 0) {
            // An accumulating plan re-pointed at another D still adds (rebind keeps accumulate).
            DeviceBuffer<float> D3(before);
            PerTensorGemmF32 g3 = g;
            g3.D = D3.data();
            plan.rebind(g3);
            plan.run(nullptr);
            FP8GEMM_CUDA_CHECK(cudaDeviceSynchronize());
            const std::vector<float> again = D3.download();
            CHECK(std::memcmp(again.data(), got.data(), got.size() * 4) == 0);
          }
        }
    }
}

TEST_CASE("library: every per-tensor FP32 kernel by name, D += A.B against float64",
          "[library][gpu]") {
  // Whatever the rule picks, each of per_tensor_f32_kernels() (Options::kernel) on a shape no tile
  // divides (200 rows: partial 64- and 128-row tiles; 270 columns), accumulating into random D,
  // its padding untouched: ldd = N + 3 (single-float stores) for the registers kernels, N + 6
  // (rows 16 bytes apart) for the TMA ones, which refuse N + 3 by name.
  const std::int64_t M = 200, N = 270, K = 656;
  DeviceBuffer<std::uint8_t> A(std::size_t(M * K)), B(std::size_t(N * K));
  DeviceBuffer<float> scales(std::vector<float>{0.75f, 0, 0, 0, 1.25f});
  std::vector<double> want = per_tensor_reference(A, B, M, N, K, 1580);
  // D's earlier values at the product's scale (rms), so that a kernel that skipped the add, or
  // added twice, fails (EarlierShare; this case drew N(0, 4) until session 69, never checked).
  std::mt19937_64 gen(1582);
  std::normal_distribution<float> nd(0.0f, float(rms(want)));
  std::vector<float> before(std::size_t(M * N));
  EarlierShare share;
  for (std::size_t i = 0; i < before.size(); ++i) {
    before[i] = nd(gen);
    share.add_to(want[i], double(before[i]));
  }
  REQUIRE(share.visible(0.1));
  const auto padded = [&](std::int64_t ldd) {
    std::vector<float> host(std::size_t(M * ldd), -3.5f);  // padding: -3.5
    for (std::int64_t r = 0; r < M; ++r)
      for (std::int64_t c = 0; c < N; ++c)
        host[std::size_t(r * ldd + c)] = before[std::size_t(r * N + c)];
    return host;
  };
  int ran = 0, tma = 0;
  // Each registers kernel's D by its name; the TMA kernel of the same tile must write the same
  // bits (the same sums and scale; TMA's reduce-add is the same one FP32 add as the registers').
  std::map<std::string, std::vector<float>> by_name;
  for (const engine::KernelInfo& k : per_tensor_f32_kernels()) {
    INFO(k.name);
    const bool by_tma = k.epilogue == engine::EpilogueKind::tma_store_f32;
    const std::int64_t ldd = by_tma ? N + 6 : N + 3;
    DeviceBuffer<float> D(padded(ldd));
    PerTensorOptions o;
    o.accumulation = k.accumulation;
    o.kernel = k.name;
    const PerTensorPlan plan(PerTensorGemmF32{.M = M,
                                              .N = N,
                                              .K = K,
                                              .A = A.data(),
                                              .B = B.data(),
                                              .D = D.data(),
                                              .scale_a = scales.data(),
                                              .scale_b = scales.data() + 4,
                                              .ldd = ldd,
                                              .accumulate = true},
                             o);
    CHECK(plan.choice().rule == DispatchRule::option);
    plan.run(nullptr);
    FP8GEMM_CUDA_CHECK(cudaDeviceSynchronize());
    std::int64_t padding_changed = -1;
    const std::vector<float> got = unpadded(D, M, N, ldd, -3.5f, padding_changed);
    CHECK(padding_changed == 0);
    const ErrorStats e = compare(got.data(), want.data(), std::int64_t(want.size()));
    std::printf("  per-tensor FP32 kernel %-40s D+=A.B 200x270x656 ldd N+%lld rel %.2e\n",
                k.name.c_str(), (long long)(ldd - N), e.rel_frobenius);
    CHECK(e.non_finite == 0);
    CHECK(e.rel_frobenius <=
          (k.accumulation == Accumulation::promoted ? 5e-4 : per_tensor_tolerance(K)));
    ++ran;
    // The twin: the name without "_tma_b<n>"; the comparison kernels (128 x 256 without its
    // cluster, or with one staging unit) against the registers 128 x 256 in 2 x 1 clusters.
    std::string twin = k.name;
    if (const auto at = twin.find("_tma_b"); at != std::string::npos) twin.erase(at, 7);
    if (k.comparison_only) twin = "128x256_s4_c2x1_promoted_f32";
    if (!by_tma) by_name[twin] = got;
    if (by_tma) {
      ++tma;
      INFO("against " << twin);
      REQUIRE(by_name.count(twin) == 1);
      CHECK(std::memcmp(by_name[twin].data(), got.data(), got.size() * 4) == 0);
      // By name for a D whose rows are not 16 bytes apart: refused, clearly.
      PerTensorGemmF32 bad{.M = M, .N = N, .K = K, .A = A.data(), .B = B.data(), .D = D.data(),
                           .scale_a = scales.data(), .scale_b = scales.data() + 4, .ldd = N + 3,
                           .accumulate = true};
      const std::string r = test::refusal_of([&] { PerTensorPlan p(bad, o); });
      INFO(r);
      CHECK(test::has(r, "stores D with TMA"));
      CHECK(test::has(r, "ldd a multiple of 4"));
    }
  }
  CHECK(ran == 32);
  CHECK(tma == 10);
}

TEST_CASE("library: MxPlan runs chapter 9's Hopper kernels here, bit for bit", "[library][gpu]") {
  // Two table shapes, and one that is no multiple of any tile (K a multiple of 32, MXFP8's rule).
  const std::int64_t shapes[][3] = {{256, 7168, 2048}, {4096, 7168, 2048}, {300, 520, 992}};
  for (const auto& s : shapes) {
    const std::int64_t M = s[0], N = s[1], K = s[2];
    INFO(M << "x" << N << "x" << K);
    const ch09::MxOperands host = ch09::random_operands(M, N, K, 1600 + std::uint64_t(M));
    DeviceBuffer<std::uint8_t> A(host.A), B(host.B), sa(host.sa), sb(host.sb);
    DeviceBuffer<std::uint16_t> D(std::size_t(M * N)), D2(std::size_t(M * N));
    const MxPlan lib(ch09::mx_call(host, A.data(), B.data(), sa.data(), sb.data(), D.data()));
    CHECK(lib.arch() == MxKernelArch::hopper_sm90a);
    CHECK(lib.choice().rule != DispatchRule::single);
    const ch09::HopperPlan chapter(
        ch09::mx_call(host, A.data(), B.data(), sa.data(), sb.data(), D2.data()),
        ch09::HopperOptions{lib.choice().kernel});
    const auto a = output_of(D, [&] { lib.run(nullptr); });
    CHECK(all_written(a));
    CHECK(a == output_of(D2, [&] { chapter.run(nullptr); }));
    // The common answer against float64 (the MX definition, chapter 9's reference) on 16 rows.
    const std::vector<std::int64_t> rows = sample_rows(M, 16, 1650 + std::uint64_t(M));
    CHECK(test::RowReference::of_rows(N, rows, ch09::reference_f64_rows(host, rows), K).check(a) ==
          "");
    // The opt-in dequantize_bf16 path: chapter 9's plan on that path, bit for bit, run() doing
    // both of its launches (the dequantisation too: the chapter's plan has its own workspace).
    MxOptions o;
    o.hopper_dequantize_bf16 = true;
    const MxPlan lib16(ch09::mx_call(host, A.data(), B.data(), sa.data(), sb.data(), D.data()), o);
    CHECK(lib16.choice().kernel.ends_with("_bf16"));
    const ch09::HopperPlan chapter16(
        ch09::mx_call(host, A.data(), B.data(), sa.data(), sb.data(), D2.data()),
        ch09::HopperOptions{"", ch09::HopperPath::dequantize_bf16});
    const auto b = output_of(D, [&] { lib16.run(nullptr); });
    CHECK(all_written(b));
    CHECK(b == output_of(D2, [&] { chapter16.run(nullptr); }));
    // The opt-in, not exact requantize_block_scaled path: chapter 9's plan on that path, bit for
    // bit, its GEMM chapter 7's table kernel; against float64 like the others (the exponents of
    // random_operands span 13 binades: nothing re-quantised loses enough to show).
    MxOptions rq;
    rq.hopper_requantize_block_scaled = true;
    const MxPlan lib_rq(ch09::mx_call(host, A.data(), B.data(), sa.data(), sb.data(), D.data()),
                        rq);
    CHECK(lib_rq.choice().rule == DispatchRule::chapter);
    const ch09::HopperPlan chapter_rq(
        ch09::mx_call(host, A.data(), B.data(), sa.data(), sb.data(), D2.data()),
        ch09::HopperOptions{"", ch09::HopperPath::requantize_block_scaled});
    CHECK(lib_rq.choice().kernel == chapter_rq.block_scaled()->kernel().name);
    const auto c = output_of(D, [&] { lib_rq.run(nullptr); });
    CHECK(all_written(c));
    CHECK(c == output_of(D2, [&] { chapter_rq.run(nullptr); }));
    CHECK(test::RowReference::of_rows(N, rows, ch09::reference_f64_rows(host, rows), K).check(c) ==
          "");
    // A float D (session 64): chapter 9's FP32 kernel, not the table's, bit for bit with the
    // chapter's plan, every element written (both D start as NaN), and rebind() refusing a bf16 D.
    DeviceBuffer<float> F(std::size_t(M * N)), F2(std::size_t(M * N));
    ch09::MxGemm gf = ch09::mx_call(host, A.data(), B.data(), sa.data(), sb.data(), F.data());
    gf.output = MxOutput::f32;
    MxPlan lib32(gf);
    CHECK(lib32.choice().kernel == "128x128_s5_c1x1_promoted_f32");  // D = A.B^T: registers
    CHECK(test::has(lib32.describe(), "Output::f32"));
    ch09::MxGemm gf2 = gf;
    gf2.D = F2.data();
    const ch09::HopperPlan chapter32(gf2);
    FP8GEMM_CUDA_CHECK(cudaMemset(F.data(), 0xFF, F.bytes()));
    FP8GEMM_CUDA_CHECK(cudaMemset(F2.data(), 0xFF, F2.bytes()));
    lib32.run(nullptr);
    chapter32.run(nullptr);
    FP8GEMM_CUDA_CHECK(cudaDeviceSynchronize());
    const std::vector<float> f = F.download();
    CHECK(std::all_of(f.begin(), f.end(), [](float x) { return std::isfinite(x); }));
    CHECK(f == F2.download());
    // With accumulate (session 67): the TMA reduce-add kernel (N % 4 == 0), bit for bit with the
    // chapter's plan from the same earlier D (f: finite, the product above).
    ch09::MxGemm gacc = gf;
    gacc.accumulate = true;
    MxPlan lib_acc(gacc);
    CHECK(lib_acc.choice().kernel == "128x128_s5_c1x1_promoted_f32_tma_b2");
    ch09::MxGemm gacc2 = gacc;
    gacc2.D = F2.data();
    const ch09::HopperPlan chapter_acc(gacc2);
    FP8GEMM_CUDA_CHECK(cudaMemcpy(F2.data(), F.data(), F.bytes(), cudaMemcpyDeviceToDevice));
    lib_acc.run(nullptr);
    chapter_acc.run(nullptr);
    FP8GEMM_CUDA_CHECK(cudaDeviceSynchronize());
    const std::vector<float> f_acc = F.download();
    CHECK(f_acc == F2.download());
    CHECK(f_acc != f);  // the product was added
    ch09::MxGemm as_bf16 = gf;
    as_bf16.output = MxOutput::bf16;
    as_bf16.D = D.data();
    CHECK(test::has(test::refusal_of([&] { lib32.rebind(as_bf16); }), "d_element_bytes"));
  }
}

TEST_CASE("library: GroupedPlan = chapter 8's plan, bit for bit", "[library][gpu]") {
  ch08::GroupedShape shape;
  shape.name = "library_contiguous";
  shape.layout = ch08::Layout::contiguous;
  shape.rows = {128, 0, 300, 77};
  shape.N = 512;
  shape.K = 1024;
  ch08::GroupedOperands ops(shape, 1700);
  DeviceBuffer<std::uint16_t> d2(ops.D.size());
  const GroupedPlan lib(ops.gemm());
  ch08::GroupedGemm g = ops.gemm();
  g.D = d2.data();
  const ch08::Plan chapter(g);
  const auto a = output_of(ops.D, [&] { lib.run(nullptr); });
  CHECK(a == output_of(d2, [&] { chapter.run(nullptr); }));
  // The rows of the groups were written (all rows belong to a group here).
  CHECK(all_written(a));
  // ops.D holds the library's D: against float64 per group (chapter 8's check).
  const ch08::GroupedCheck c = ch08::check_grouped(ops, shape, 16, 1701);
  INFO(c.describe);
  CHECK(c.ok);
}
