// GPU tests of chapter 7 (DeepSeek-V3 block scaling on the engine): every compiled kernel
// against the float64 reference on the dequantised operands (global and per-128x128-tile error)
// on shapes at the scheduler's edges and with K % 128 != 0; every scale layout; scale edge
// values; FP32 output with accumulate; all-positive data at K = 65536; the GPU quantisers
// feeding the GEMM; determinism; memory the GPU must not use.
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "bs_gemm.hpp"
#include "catch.hpp"
#include "common/check.hpp"
#include "common/cuda.hpp"
#include "common/fp8.hpp"
#include "common/quantize.hpp"
#include "common/quantize_gpu.hpp"
#include "common/reference.hpp"
#include "ch07_calls.hpp"
#include "pending_error.hpp"

using namespace fp8gemm;
using namespace fp8gemm::test_ch07;

namespace {

/// Runs the call with `options` and compares D with the float64 reference: every row, or, with
/// `sampled` > 0 (shapes whose full reference would take too long), `sampled` rows drawn with
/// `seed` (the first and the last among them) and a scan of all of D for non-finite entries (D
/// starts poisoned: an unwritten tile is NaN).
bool check(const HostCall& h, const ch07::Options& o, const std::string& what,
           std::vector<std::uint16_t>* result = nullptr, std::int64_t sampled = 0,
           std::uint64_t seed = 0) {
  DeviceCall dc(h);
  ch07::Plan plan(dc.g, o);
  plan.run(nullptr);
  FP8GEMM_CUDA_CHECK(cudaDeviceSynchronize());
  const std::vector<std::uint16_t> d = dc.d16.download();
  const std::vector<std::int64_t> rows =
      sampled > 0 ? sample_rows(h.s.M, sampled, seed) : all_rows(h.s.M);
  const std::vector<double> ref = sampled > 0 ? h.reference(rows) : h.reference();
  const ErrorStats e = compare_bf16_rows(d.data(), h.s.N, rows, ref.data());
  const double tile = worst_tile_error(d.data(), h.s.N, rows, ref.data());
  std::int64_t non_finite = 0;
  for (std::uint16_t v : d) non_finite += (v & 0x7F80) == 0x7F80;
  const double tol = per_tensor_tolerance(h.s.K);
  const bool ok = non_finite == 0 && e.non_finite == 0 && e.rel_frobenius <= tol && tile <= tol;
  std::printf("  %-44s %-16s %s rel %.2e tile %.2e  [%s]\n", what.c_str(), name(h.s).c_str(),
              ok ? "ok  " : "FAIL", e.rel_frobenius, tile, plan.describe().c_str());
  if (result) *result = d;
  return ok;
}

int sm_count() {
  int device = 0, n = 0;
  FP8GEMM_CUDA_CHECK(cudaGetDevice(&device));
  FP8GEMM_CUDA_CHECK(cudaDeviceGetAttribute(&n, cudaDevAttrMultiProcessorCount, device));
  return n;
}

GroupScaleLayout tma_a(std::int64_t M) { return GroupScaleLayout::mn_major_tma_aligned(M); }
BlockScaleLayout padded_b(std::int64_t K) { return BlockScaleLayout::padded(K); }

}  // namespace

TEST_CASE("ch07: every kernel at the scheduler's edges, K % 128 != 0", "[ch07][gpu]") {
  const int sms = sm_count();
  std::uint64_t seed = 100;
  for (const auto& k : ch07::kernels()) {
    if (engine::writes_f32(k.epilogue)) continue;  // the FP32 tests below
    const std::int64_t bm = k.block_m * k.cluster_m, bn = k.block_n * k.cluster_n;
    // One tile; tiles below, at and one above the SM count (rows of cluster tiles); odd sizes.
    std::vector<Shape> shapes = {{1, 8, 16}, {bm, bn, 80}, {bm + 1, bn * 3 + 8, 656},
                                 {k.block_m * 3 - 5, 264, 1040}};
    // Tile counts at the SM count: every kernel, the large cluster tiles included (their D is
    // too large for a full float64 reference: sampled rows and a scan of all of D instead).
    const std::int64_t units_n = 4;
    std::vector<Shape> at_sm_count;
    for (std::int64_t units : {std::int64_t(sms) - 1, std::int64_t(sms), std::int64_t(sms) + 1})
      at_sm_count.push_back({ceil_div(units, units_n) * bm, units_n * bn, 272});
    for (const auto& s : shapes) {
      if (k.epilogue == engine::EpilogueKind::tma_store && s.N % 8 != 0) continue;
      ch07::Options o;
      o.kernel = k.name;
      CHECK(check(HostCall(s, tma_a(s.M), padded_b(s.K), seed++), o, k.name));
    }
    for (const auto& s : at_sm_count) {
      ch07::Options o;
      o.kernel = k.name;
      const HostCall h(s, tma_a(s.M), padded_b(s.K), seed++);
      if (s.M * s.N <= 2048 * 2048)
        CHECK(check(h, o, k.name + " at the SM count"));
      else
        CHECK(check(h, o, k.name + " at the SM count", nullptr, 64, seed++));
    }
    // One CTA (or cluster) computes 4-6 tiles whose K is more than twice the ring: the ring
    // position runs on across tiles, and the early-wave kernels (_ew) issue each tile's first
    // partial sum before the tile before is stored.
    const Shape long_k{2 * bm + 5, bn + 8, 128 * (2 * k.stages + 3) + 48};
    ch07::Options one;
    one.kernel = k.name;
    one.max_sms = k.cluster_m * k.cluster_n;
    CHECK(check(HostCall(long_k, tma_a(long_k.M), padded_b(long_k.K), seed++), one,
                k.name + " on one CTA"));
  }
}

TEST_CASE("ch07: the rule's choice for fewer SMs, against float64", "[ch07][gpu]") {
  // Since session 47 the chapter's rule plans for the SMs the grid may use (engine::rule_sms):
  // with max_sms 112 or 16 these calls take kernels the rule picks only on fewer SMs (64 x 2048 x
  // 1040: 64 x 32 on 112, 64 x 16 on 132; 1500 x 8192: the wave score on 112 or 16 slots), and the
  // plan must take the rule's kernel and compute the same D.
  std::uint64_t seed = 4700;
  for (int max_sms : {112, 16})
    for (const Shape& s : {Shape{64, 2048, 1040}, Shape{128, 4096, 1024}, Shape{100, 2304, 528},
                           Shape{1500, 8192, 512}}) {
      const HostCall h(s, tma_a(s.M), padded_b(s.K), seed++);
      ch07::Options o;
      o.max_sms = max_sms;
      {
        DeviceCall dc(h);
        const ch07::Plan plan(dc.g, o);
        INFO(name(s) << " at max_sms " << max_sms);
        CHECK(plan.kernel().name == ch07::choose_kernel(s.M, s.N, s.K, ch07::Output::bf16, true,
                                                        engine::rule_sms(max_sms))
                                        .name);
      }
      const std::string what = "rule at max_sms " + std::to_string(max_sms);
      if (s.M * s.N <= 2048 * 2048)
        CHECK(check(h, o, what));
      else
        CHECK(check(h, o, what, nullptr, 64, seed++));
    }
}

TEST_CASE("ch07: the table's choice on edge and DeepSeek-like shapes", "[ch07][gpu]") {
  std::uint64_t seed = 300;
  for (const Shape& s : {Shape{1, 1, 16}, Shape{7, 77, 48}, Shape{64, 2112, 512},
                         Shape{128, 640, 1536}, Shape{300, 2112, 640}, Shape{513, 1000, 2064}})
    CHECK(check(HostCall(s, tma_a(s.M), padded_b(s.K), seed++), {}, "table"));
}

TEST_CASE("ch07: every scale layout gives the same bits", "[ch07][gpu]") {
  const Shape s{203, 264, 656};  // M odd: mn-major packed is not TMA-aligned; 6 K groups
  std::vector<std::uint16_t> want, got;
  REQUIRE(check(HostCall(s, tma_a(s.M), padded_b(s.K), 500), {}, "mn-major TMA-aligned, padded", &want));
  const std::vector<std::pair<GroupScaleLayout, BlockScaleLayout>> layouts = {
      {GroupScaleLayout::mn_major_packed(s.M), padded_b(s.K)},
      {GroupScaleLayout::k_major_packed(s.K), padded_b(s.K)},
      {GroupScaleLayout{ScaleMajor::k, 9}, BlockScaleLayout::packed(s.K)},
      {GroupScaleLayout{ScaleMajor::mn, 260}, BlockScaleLayout{13}}};
  for (const auto& [la, lb] : layouts) {
    // Same seed: the same scale values, stored differently.
    const HostCall h(s, la, lb, 500);
    CHECK(check(h, {}, "scale_a " + describe(la) + ", scale_b ld " + std::to_string(lb.ld), &got));
    CHECK(got == want);
    DeviceCall dc(h);
    const ch07::Plan plan(dc.g);
    CHECK(plan.converts_scale_a() == !(la.major == ScaleMajor::mn && la.ld % 4 == 0));
  }
}

TEST_CASE("ch07: an mn-major ld past a tensor map's stride is converted, same bits",
          "[ch07][gpu]") {
  // With one K group (K <= 128) an mn-major ld has no upper bound from the extent: an ld of 2^38
  // floats (a row stride of 2^40 bytes, one past what a tensor map takes) is converted like any
  // other layout the kernel cannot read by TMA (session 70; before, make_tensor_map_2d refused
  // the call naming neither the plan nor scale_a).
  const Shape s{203, 264, 96};
  std::vector<std::uint16_t> want, got;
  REQUIRE(check(HostCall(s, tma_a(s.M), padded_b(s.K), 505), {}, "mn-major TMA-aligned", &want));
  for (const std::int64_t ld : {std::int64_t(1) << 38, (std::int64_t(1) << 38) - 4}) {
    const GroupScaleLayout la{ScaleMajor::mn, ld};
    const HostCall h(s, la, padded_b(s.K), 505);  // same seed: the same scale values
    CHECK(check(h, {}, "scale_a " + describe(la), &got));
    CHECK(got == want);
    DeviceCall dc(h);
    const ch07::Plan plan(dc.g);
    CHECK(plan.converts_scale_a() == (ld > kMaxTmaScaleLd));
  }
}

TEST_CASE("ch07: scale edge values", "[ch07][gpu]") {
  const Shape s{130, 136, 384};
  SECTION("tiny and huge scales stay accurate") {
    CHECK(check(HostCall(s, tma_a(s.M), padded_b(s.K), 600, -60, -50), {}, "scales 2^-60 .. 2^-50"));
    CHECK(check(HostCall(s, tma_a(s.M), padded_b(s.K), 601, 50, 60), {}, "scales 2^50 .. 2^60"));
  }
  SECTION("an all-zero scale group removes exactly its block; a NaN scale poisons its rows only") {
    HostCall h(s, tma_a(s.M), padded_b(s.K), 602);
    h.sa[std::size_t(h.la.offset(5, 1))] = 0.0f;  // row 5, K block 1 contributes nothing
    CHECK(check(h, {}, "scale_a[5, 1] = 0"));
    h.sa[std::size_t(h.la.offset(9, 2))] = std::nanf("");
    DeviceCall dc(h);
    // D starts finite (bf16 0x3F3F, about 0.75), not NaN: row 9's NaN must be written, and every
    // other row is compared with the float64 reference.
    FP8GEMM_CUDA_CHECK(cudaMemset(dc.d16.data(), 0x3F, dc.d16.size() * 2));
    ch07::Plan(dc.g).run(nullptr);
    FP8GEMM_CUDA_CHECK(cudaDeviceSynchronize());
    const auto d = dc.d16.download();
    const std::vector<double> ref = h.reference();
    int nan_rows_ok = 0;
    for (std::int64_t n = 0; n < s.N; ++n)
      nan_rows_ok += std::isnan(bf16_to_float(d[std::size_t(9 * s.N + n)])) ? 1 : 0;
    CHECK(nan_rows_ok == s.N);
    std::vector<std::uint16_t> d_other;
    std::vector<double> ref_other;
    for (std::int64_t r = 0; r < s.M; ++r)
      if (r != 9)
        for (std::int64_t n = 0; n < s.N; ++n) {
          d_other.push_back(d[std::size_t(r * s.N + n)]);
          ref_other.push_back(ref[std::size_t(r * s.N + n)]);
        }
    const ErrorStats e = compare_bf16(d_other.data(), ref_other.data(), std::int64_t(ref_other.size()));
    CHECK(e.non_finite == 0);
    CHECK(e.rel_frobenius <= per_tensor_tolerance(s.K));
  }
}

TEST_CASE("ch07: FP32 output, with and without accumulate", "[ch07][gpu]") {
  // 100 x 388: M <= 128 with rows 16-byte aligned, where the accumulate default is the
  // 128 x 128 TMA kernel (session 69).
  for (const Shape& s :
       {Shape{1, 9, 16}, Shape{130, 270, 656}, Shape{300, 520, 272}, Shape{100, 388, 400}}) {
    const HostCall h(s, tma_a(s.M), padded_b(s.K), 700 + std::uint64_t(s.M));
    const std::vector<double> ref = h.reference();
    for (bool accumulate : {false, true}) {
      {
        // The default's choice: from registers, but with accumulate by TMA (a reduce-add) where
        // D's rows are 16-byte aligned (ldd = N here: N = 520 and 388), the 128 x 128 tile where
        // M <= 128.
        DeviceCall dc(h, ch07::Output::f32);
        dc.g.accumulate = accumulate;
        const ch07::Plan plan(dc.g, ch07::Options{});
        INFO(plan.describe());
        CHECK((plan.kernel().epilogue == engine::EpilogueKind::tma_store_f32) ==
              (accumulate && s.N % 4 == 0));
        CHECK(plan.kernel().block_m == 128);
        CHECK(plan.kernel().block_n == (s.M <= 128 ? 128 : 256));
      }
      const ErrorStats e = f32_output_error(h, ref, accumulate, ch07::Options{}, "table");
      CHECK(e.non_finite == 0);
      // No bf16 rounding of D (that alone is ~1.7e-3): what is left is the tensor cores'
      // accumulation inside each 128-K block, measured 4e-5 .. 1.3e-4 on the H200.
      CHECK(e.rel_frobenius <= 5e-4);
    }
  }
}

TEST_CASE("ch07: every FP32 kernel by name, with and without accumulate", "[ch07][gpu]") {
  // The FP32 kernels from registers (the default's for D = A.B) and by TMA (session 67; with
  // accumulate a TMA reduce-add, the accumulate default since session 69), each named, against float64 (+ D's earlier values, as large as the product) at
  // shapes that are not multiples of the tiles: N = 388 and 520 (rows 16-byte aligned: every
  // kernel) and N = 270 (the registers kernels only; the TMA ones refuse it, test_chapter_07_args).
  int cases = 0;
  for (const Shape& s : {Shape{130, 388, 656}, Shape{300, 520, 272}, Shape{1, 270, 400}}) {
    const HostCall h(s, tma_a(s.M), padded_b(s.K), 710 + std::uint64_t(s.M));
    const std::vector<double> ref = h.reference();
    for (const auto& k : ch07::kernels()) {
      if (!engine::writes_f32(k.epilogue)) continue;
      if (k.epilogue == engine::EpilogueKind::tma_store_f32 && s.N % 4 != 0) continue;
      ch07::Options o;
      o.kernel = k.name;
      for (bool accumulate : {false, true}) {
        INFO(k.name << (accumulate ? " D += A.B" : " D = A.B") << " " << s.M << " x " << s.N
                    << " x " << s.K);
        const ErrorStats e = f32_output_error(h, ref, accumulate, o, "named");
        CHECK(e.non_finite == 0);
        CHECK(e.rel_frobenius <= 5e-4);
        ++cases;
      }
    }
  }
  CHECK(cases == 20);  // 4 kernels x 2 x 2 shapes + 2 kernels x 2 x 1 shape
}

TEST_CASE("ch07: promoted block scaling stays accurate at K = 65536 on all-positive data",
          "[ch07][gpu]") {
  const std::int64_t M = 256, N = 256, K = 65536;
  std::mt19937_64 gen(42);
  std::uniform_real_distribution<float> u(0.5f, 1.0f);
  std::vector<float> a(std::size_t(M * K)), b(std::size_t(N * K));
  for (auto& x : a) x = u(gen);
  for (auto& x : b) x = u(gen);
  const auto qa = quantize<Group1x128>(a.data(), M, K);
  const auto qb = quantize<Block128x128>(b.data(), N, K);
  DeviceBuffer<std::uint8_t> da(qa.values), db(qb.values);
  DeviceBuffer<float> dsa(qa.scales), dsb(qb.scales);
  DeviceBuffer<std::uint16_t> d(std::size_t(M * N));
  poison_bf16(d.data(), d.size());
  ch07::Plan({.M = M, .N = N, .K = K, .A = da.data(), .B = db.data(), .scale_a = dsa.data(),
              .scale_a_layout = GroupScaleLayout::mn_major_packed(M), .scale_b = dsb.data(),
              .scale_b_layout = BlockScaleLayout::padded(K), .D = d.data()})
      .run(nullptr);
  FP8GEMM_CUDA_CHECK(cudaDeviceSynchronize());
  std::vector<std::int64_t> rows;
  for (std::int64_t r = 0; r < M; r += 8) rows.push_back(r);
  const auto ref = reference_gemm_rows(M, N, K, dequantize(qa).data(), dequantize(qb).data(), rows);
  const auto got = d.download();
  const ErrorStats e = compare_bf16_rows(got.data(), N, rows, ref.data());
  std::printf("  all-positive 256x256x65536: rel %.2e\n", e.rel_frobenius);
  CHECK(e.non_finite == 0);
  CHECK(e.rel_frobenius <= 2e-3);
}

TEST_CASE("ch07: GPU quantisers -> block-scaled GEMM, end to end", "[ch07][gpu]") {
  for (const Shape& s : {Shape{129, 264, 656}, Shape{512, 384, 2048}}) {
    // N(0, 1) times a power of two per 1 x 128 group of x and per 128 x 128 block of w (2^-4 ..
    // 2^4): every group's and block's scale differs, so a scale the GEMM took from the wrong
    // group or block changes D by far more than the tolerance of the tight check below.
    auto pow2 = [](std::int64_t i, std::int64_t j) {
      return std::ldexp(1.0f, int((i * 5 + j * 3) % 9) - 4);
    };
    std::vector<float> x = random_normal(std::size_t(s.M * s.K), 11);
    std::vector<float> w = random_normal(std::size_t(s.N * s.K), 12);
    for (std::int64_t r = 0; r < s.M; ++r)
      for (std::int64_t k = 0; k < s.K; ++k)
        x[std::size_t(r * s.K + k)] *= pow2(r / 32, k / 128);
    for (std::int64_t n = 0; n < s.N; ++n)
      for (std::int64_t k = 0; k < s.K; ++k)
        w[std::size_t(n * s.K + k)] *= pow2(n / 128, k / 128 + 1);
    std::vector<std::uint16_t> xb(x.size()), wb(w.size());
    for (std::size_t i = 0; i < x.size(); ++i) xb[i] = float_to_bf16(x[i]);
    for (std::size_t i = 0; i < w.size(); ++i) wb[i] = float_to_bf16(w[i]);
    DeviceBuffer<std::uint16_t> dx(xb), dw(wb);
    DeviceBuffer<std::uint8_t> qa(x.size()), qb(w.size());
    const GroupScaleLayout la = GroupScaleLayout::k_major_packed(s.K);  // converted by the plan
    const BlockScaleLayout lb = BlockScaleLayout::packed(s.K);           // likewise
    DeviceBuffer<float> sa(std::size_t(la.required_elements(s.M, s.K)));
    DeviceBuffer<float> sb(std::size_t(lb.required_elements(s.N, s.K)));
    quantize_1x128(dx.data(), s.M, s.K, s.K, qa.data(), s.K, sa.data(), la, {}, nullptr);
    quantize_128x128(dw.data(), s.N, s.K, s.K, qb.data(), s.K, sb.data(), lb, {}, nullptr);
    DeviceBuffer<std::uint16_t> d(std::size_t(s.M * s.N));
    poison_bf16(d.data(), d.size());
    ch07::Plan({.M = s.M, .N = s.N, .K = s.K, .A = qa.data(), .B = qb.data(), .scale_a = sa.data(),
                .scale_a_layout = la, .scale_b = sb.data(), .scale_b_layout = lb, .D = d.data()})
        .run(nullptr);
    FP8GEMM_CUDA_CHECK(cudaDeviceSynchronize());
    const auto got = d.download();
    // Tight: against the float64 product of the operands as quantised (the GEMM's tolerance).
    // The quantisers' layouts and the GEMM's reading of them must agree.
    {
      const HostCall quantised(s, la, lb, qa.download(), qb.download(), sa.download(),
                               sb.download());
      const auto ref = quantised.reference();
      const ErrorStats e = compare_bf16(got.data(), ref.data(), std::int64_t(ref.size()));
      const double tile = worst_tile_error(got.data(), s.N, all_rows(s.M), ref.data());
      std::printf("  bf16 -> quantise -> GEMM %-16s rel %.2e tile %.2e vs the quantised operands\n",
                  name(s).c_str(), e.rel_frobenius, tile);
      CHECK(e.non_finite == 0);
      CHECK(e.rel_frobenius <= per_tensor_tolerance(s.K));
      CHECK(tile <= per_tensor_tolerance(s.K));
    }
    // Loose: against the exact product of the bf16 inputs: quantisation error (~2-3% per element
    // for e4m3, averaging down over K) plus the GEMM's.
    std::vector<double> xd(x.size()), wd(w.size());
    for (std::size_t i = 0; i < x.size(); ++i) xd[i] = bf16_to_float(xb[i]);
    for (std::size_t i = 0; i < w.size(); ++i) wd[i] = bf16_to_float(wb[i]);
    const auto ref = reference_gemm(s.M, s.N, s.K, xd.data(), wd.data());
    const ErrorStats e = compare_bf16(got.data(), ref.data(), std::int64_t(ref.size()));
    std::printf("  bf16 -> quantise -> GEMM %-16s rel %.2e vs the bf16 product\n", name(s).c_str(),
                e.rel_frobenius);
    CHECK(e.non_finite == 0);
    CHECK(e.rel_frobenius <= 5e-2);
    CHECK(e.rel_frobenius > 1e-4);  // quantisation error is there: the inputs were not already e4m3
  }
}

TEST_CASE("ch07: an earlier pending CUDA error is reported as such, scale conversion too",
          "[ch07][gpu]") {
  // A k-major scale_a makes run() launch the scale conversion before the GEMM; that launch's own
  // check must not take an earlier, unrelated error for its own (docs/contract.md, the reliability
  // rule). A failed cudaMalloc leaves a non-sticky error pending: run() throws naming it as an
  // earlier call's, launches nothing (D keeps its poison) and leaves the error for its owner.
  const Shape s{129, 264, 656};
  // The TMA-aligned layout is the control (no conversion: the engine's launch checks first, as it
  // always did); the k-major one takes the conversion path this case is about.
  for (const GroupScaleLayout la : {tma_a(s.M), GroupScaleLayout::k_major_packed(s.K)}) {
    const HostCall h(s, la, padded_b(s.K), 950);
    DeviceCall dc(h);
    const ch07::Plan plan(dc.g);
    CHECK(plan.converts_scale_a() == (la.major == ScaleMajor::k));
    FP8GEMM_CUDA_CHECK(cudaDeviceSynchronize());
    const gpu_test::PendingErrorRun r =
        gpu_test::run_with_pending_error([&] { plan.run(nullptr); });
    REQUIRE(r.error != cudaSuccess);
    INFO(describe(la) << ": " << r.message);
    CHECK(r.message.find("from an earlier call") != std::string::npos);
    CHECK(r.message.find("fp8gemm::ch07_block_scaling") != std::string::npos);
    CHECK(cudaGetLastError() == r.error);  // still pending for its owner; now cleared
    FP8GEMM_CUDA_CHECK(cudaDeviceSynchronize());
    std::int64_t written = 0;
    for (std::uint16_t v : dc.d16.download()) written += (v & 0x7F80) != 0x7F80;
    CHECK(written == 0);  // nothing launched: D is all poison (NaN)
    // Cleared, the same plan gives the right product.
    plan.run(nullptr);
    FP8GEMM_CUDA_CHECK(cudaDeviceSynchronize());
    const std::vector<std::uint16_t> d = dc.d16.download();
    const std::vector<double> ref = h.reference();
    const ErrorStats e = compare_bf16(d.data(), ref.data(), std::int64_t(ref.size()));
    CHECK(e.non_finite == 0);
    CHECK(e.rel_frobenius <= per_tensor_tolerance(s.K));
  }
}

TEST_CASE("ch07: bitwise deterministic over 10 runs", "[ch07][gpu]") {
  const HostCall h({1000, 2112, 1536}, tma_a(1000), padded_b(1536), 800);
  DeviceCall dc(h);
  ch07::Plan plan(dc.g);
  const auto outputs = repeated_outputs(plan, dc, 10);
  for (const auto& d : outputs) CHECK(d == outputs.front());
  // The first run is right (ten unwritten, all-NaN outputs would compare equal).
  const std::vector<double> ref = h.reference();
  const ErrorStats e = compare_bf16(outputs.front().data(), ref.data(), std::int64_t(ref.size()));
  CHECK(e.non_finite == 0);
  CHECK(e.rel_frobenius <= per_tensor_tolerance(h.s.K));
}

TEST_CASE("ch07: memory the GPU must not read is refused", "[ch07][gpu]") {
  const HostCall h({64, 64, 128}, tma_a(64), padded_b(128), 900);
  DeviceCall dc(h);
  std::vector<float> host_scales(h.sa);
  ch07::BlockScaledGemm g = dc.g;
  g.scale_a = host_scales.data();
  CHECK_THROWS_AS(ch07::Plan(g), std::invalid_argument);
  // scale_a needs ceil(128/128) x 64 = 64 floats: 10 floats before the end of an allocation
  // are too few (the driver rounds small allocations up, so the buffer must be a large one).
  g = dc.g;
  DeviceBuffer<float> big(4096);
  g.scale_a = big.data() + 4096 - 10;
  CHECK_THROWS_AS(ch07::Plan(g), std::invalid_argument);
  CHECK(cudaGetLastError() == cudaSuccess);
}
