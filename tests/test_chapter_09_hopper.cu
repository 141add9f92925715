// Chapter 9's Hopper half: the MXFP8 GEMM on the chapter-6 engine (hopper_mx.hpp) against the
// float64 definition, D = sum over 32-K blocks of 2^(sa - 127) 2^(sb - 127) A_blk . B_blk, on
// tile edges, K not a multiple of 128 (partial stages), several scale tiles, both kernels (TMA
// store and registers), a D row stride that only the registers kernel takes, wide exponent
// spreads, a NaN scale (its row of D, and only that row, NaN), determinism. Operands from
// mx_emulate.hpp (random e4m3 codes and UE8M0 exponents, the Mx1x32 layout with zero padding).
// The same for the dequantize_bf16 path (HopperPath), plus: its dequantiser bit for bit against the
// CPU's (common/mx.hpp), its accuracy at K = 65536 on all-positive data (the case that shows
// whether the tensor cores' bf16 sums need promotion), and rebind(). The requantize_block_scaled
// path (not exact) against the float64 product of the operands the CPU rule re-quantises
// (mx_requantize_1x128 / _128x128: what it is defined to compute) and, where the exponents spread
// over fewer than 14 binades per group, against the MX definition itself; its NaN row, rebind,
// determinism, max_sms and the pending-error rule as the other paths. On every path and kernel, the
// scale tensors' padding is not read as data (0xFF and 0xFE there change nothing).
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdint>
#include <random>
#include <stdexcept>
#include <string>
#include <tuple>
#include <vector>

#include "catch.hpp"
#include "common/mx.hpp"
#include "common/quantize_gpu.hpp"
#include "common/reference.hpp"
#include "hopper_mx.hpp"
#include "mx_emulate.hpp"
#include "mx_run.hpp"
#include "pending_error.hpp"

using namespace fp8gemm;
using namespace fp8gemm::ch09;

namespace {
struct Shape {
  std::int64_t M, N, K, pad;
};
std::vector<double> run_hopper(const MxOperands& o, const std::string& kernel,
                               std::int64_t pad = 0,
                               HopperPath path = HopperPath::promote_per_block) {
  HopperOptions opt;
  opt.kernel = kernel;
  opt.path = path;
  return test::run_mx<HopperPlan>(o, pad, opt);
}
std::vector<double> run_bf16(const MxOperands& o, const std::string& kernel = "",
                             std::int64_t pad = 0) {
  return run_hopper(o, kernel, pad, HopperPath::dequantize_bf16);
}
std::vector<double> run_requant(const MxOperands& o, const std::string& kernel = "",
                                std::int64_t pad = 0) {
  return run_hopper(o, kernel, pad, HopperPath::requantize_block_scaled);
}
/// What the requantize_block_scaled path is defined to compute: the float64 product of A and B
/// re-quantised by the CPU rule (common/mx.hpp), dequantised exactly.
std::vector<double> reference_requant_f64(const MxOperands& o) {
  auto operand = [](std::int64_t rows, std::int64_t K, const std::vector<std::uint8_t>& v,
                    const std::vector<std::uint8_t>& s) {
    MxQuantized q;
    q.rows = rows;
    q.cols = K;
    q.values = v;
    q.scales = s;
    return q;
  };
  const std::vector<double> a = dequantize(mx_requantize_1x128(operand(o.M, o.K, o.A, o.sa)));
  const std::vector<double> b = dequantize(mx_requantize_128x128(operand(o.N, o.K, o.B, o.sb)));
  return reference_gemm(o.M, o.N, o.K, a.data(), b.data());
}
/// The message of the std::invalid_argument plan.rebind(g) throws ("accepted" if none).
std::string rebind_refusal(HopperPlan& plan, const MxGemm& g) {
  try {
    plan.rebind(g);
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "accepted";
}
/// The three paths, for the tests that hold for each.
constexpr HopperPath kPaths[] = {HopperPath::promote_per_block, HopperPath::dequantize_bf16,
                                 HopperPath::requantize_block_scaled};
/// The default kernel of `path` on o with D starting finite (every bf16 0x3C3C), not from the NaN
/// poison: the NaN-scale checks expect NaN, which a D that was never written would also hold.
std::vector<double> run_from_finite(const MxOperands& o, HopperPath path) {
  HopperOptions opt;
  opt.path = path;
  return test::run_mx_filled<HopperPlan>(o, 0, 0x3C, opt);
}
/// Row 17 of D is NaN and no other element is, after a NaN scale (UE8M0 0xFF) for row 17; D started
/// finite (run_from_finite), so row 17's NaN was written by the kernel. The other rows match the
/// float64 definition (a kernel that left them at the finite fill would have no NaN there either).
void check_nan_row_only(const MxOperands& o, const std::vector<double>& got) {
  const std::int64_t M = o.M, N = o.N;
  std::int64_t nan_in_row = 0, nan_elsewhere = 0;
  for (std::int64_t m = 0; m < M; ++m)
    for (std::int64_t c = 0; c < N; ++c) {
      const bool isnan = std::isnan(got[std::size_t(m * N + c)]);
      (m == 17 ? nan_in_row : nan_elsewhere) += isnan ? 1 : 0;
    }
  CHECK(nan_in_row == N);
  CHECK(nan_elsewhere == 0);
  std::vector<std::int64_t> rows;
  std::vector<double> others;
  for (std::int64_t m = 0; m < M; ++m)
    if (m != 17) {
      rows.push_back(m);
      others.insert(others.end(), got.begin() + m * N, got.begin() + (m + 1) * N);
    }
  CHECK(relative_frobenius(others, reference_f64_rows(o, rows)) < 4e-3);
}
}  // namespace

TEST_CASE("ch09 Hopper MXFP8 GEMM matches the float64 definition, every kernel",
          "[ch09][hopper][gpu]") {
  std::vector<engine::KernelInfo> all = hopper_kernels();  // and the earlier versions
  all.insert(all.end(), hopper_earlier_kernels().begin(), hopper_earlier_kernels().end());
  // Shapes outside, kernels inside: the float64 reference once per shape (2048 x 2048 x 4096
  // takes seconds on the CPU).
  for (const Shape s : {Shape{128, 128, 128, 0}, Shape{1, 8, 32, 0}, Shape{200, 136, 160, 0},
                        Shape{130, 130, 352, 0}, Shape{257, 392, 672, 0},
                        Shape{777, 520, 2080, 0}, Shape{2048, 2048, 4096, 0}}) {
    const MxOperands o = random_operands(s.M, s.N, s.K, 11 + std::uint64_t(s.M + s.N + s.K));
    const auto ref = reference_f64(o);
    for (const auto& k : all) {
      if (engine::writes_f32(k.epilogue)) continue;  // a float D: the float D test below
      INFO(k.name << ": " << s.M << " x " << s.N << " x " << s.K);
      if (k.epilogue == engine::EpilogueKind::tma_store && (s.N + s.pad) % 8 != 0) {
        // A TMA-store kernel needs D's rows 16 bytes apart: asked for by name, it refuses.
        REQUIRE_THROWS_AS(run_hopper(o, k.name, s.pad), std::invalid_argument);
        continue;
      }
      const auto got = run_hopper(o, k.name, s.pad);
      bool finite = true;
      for (double x : got) finite = finite && std::isfinite(x);
      REQUIRE(finite);  // the NaN poison is gone: every element was written
      // bf16 output (2^-8 relative) dominates; FP32 promotion every 32 K adds ~1e-6 at these K.
      CHECK(relative_frobenius(got, ref) < 4e-3);
    }
  }
}

TEST_CASE("ch09 Hopper MXFP8: wide exponents, an odd D stride, a NaN scale",
          "[ch09][hopper][gpu]") {
  // Exponents 127 +- 40: products of scales from 2^-80 to 2^80, still normal floats.
  const MxOperands wide = random_operands(300, 264, 544, 5, 40);
  CHECK(relative_frobenius(run_hopper(wide, ""), reference_f64(wide)) < 4e-3);
  // ldd = N + 3: not a TMA-store D, the default picks the registers kernel.
  const MxOperands o = random_operands(190, 200, 256, 6);
  CHECK(relative_frobenius(test::run_mx<HopperPlan>(o, 3), reference_f64(o)) < 4e-3);
  // A NaN scale (UE8M0 0xFF) for row 17, block 2 of A: row 17 of D is NaN, the others are not.
  MxOperands n = random_operands(64, 72, 256, 7);
  const Mx1x32 la(n.M, n.K);
  n.sa[std::size_t(la.block_index(17, 2))] = 0xFF;
  check_nan_row_only(n, run_from_finite(n, HopperPath::promote_per_block));
}

namespace {
/// o with every byte of both scale tensors that no block of the operands owns (the rows past M or
/// N up to whole 128-row tiles, the blocks past K / 32 up to whole 128-K tiles) set to `fill`.
MxOperands with_scale_padding(MxOperands o, std::uint8_t fill) {
  auto fill_padding = [fill](std::vector<std::uint8_t>& s, std::int64_t rows, std::int64_t K) {
    const Mx1x32 l(rows, K);
    std::vector<bool> owned(s.size(), false);
    for (std::int64_t r = 0; r < rows; ++r)
      for (std::int64_t j = 0; j < l.scale_cols(); ++j) owned[std::size_t(l.block_index(r, j))] = true;
    std::int64_t filled = 0;
    for (std::size_t i = 0; i < s.size(); ++i)
      if (!owned[i]) {
        s[i] = fill;
        ++filled;
      }
    REQUIRE(filled > 0);  // the shapes below all have padding in K
  };
  fill_padding(o.sa, o.M, o.K);
  fill_padding(o.sb, o.N, o.K);
  return o;
}
}  // namespace

TEST_CASE("ch09 Hopper: the scale padding is never read as data, every kernel and path",
          "[ch09][hopper][gpu]") {
  // The Mx1x32 layout pads the scales to whole 128 x 128 tiles; a caller's buffer may hold
  // anything there (torch.empty, another quantiser's leftovers). Past K the operands are zero,
  // but a padding code of 255 (NaN) or two large codes (an infinite scale product) would make
  // 0 x scale NaN: with the padding full of 0xFF, then of 0xFE, D must be bit for bit what it is
  // with zero padding, at K = 160, 192, 224 (one, two and three of a last stage's four blocks
  // inside K) and 352. Session 55: the promoting kernels read the padding until they masked it.
  std::vector<engine::KernelInfo> all = hopper_kernels();
  all.insert(all.end(), hopper_earlier_kernels().begin(), hopper_earlier_kernels().end());
  for (const Shape s : {Shape{130, 136, 160, 0}, Shape{200, 72, 192, 0}, Shape{70, 264, 224, 0},
                        Shape{257, 200, 352, 0}}) {
    const MxOperands o = random_operands(s.M, s.N, s.K, 91 + std::uint64_t(s.K));
    for (const std::uint8_t fill : {std::uint8_t(0xFF), std::uint8_t(0xFE)}) {
      const MxOperands p = with_scale_padding(o, fill);
      for (const auto& k : all) {
        if (k.epilogue == engine::EpilogueKind::tma_store && s.N % 8 != 0) continue;
        if (engine::writes_f32(k.epilogue)) continue;  // the float D test's padding case
        INFO(k.name << ": " << s.M << " x " << s.N << " x " << s.K << ", padding 0x" << std::hex
                    << int(fill));
        const auto clean = run_hopper(o, k.name);
        CHECK(relative_frobenius(clean, reference_f64(o)) < 4e-3);
        CHECK(run_hopper(p, k.name) == clean);  // no NaN either: NaN != NaN
      }
      for (const HopperPath path : {HopperPath::dequantize_bf16,
                                    HopperPath::requantize_block_scaled}) {
        INFO("path " << int(path) << ": " << s.M << " x " << s.N << " x " << s.K);
        CHECK(run_hopper(p, "", 0, path) == run_hopper(o, "", 0, path));
      }
    }
  }
}

TEST_CASE("ch09 Hopper: max_sms limits the grid, both paths right", "[ch09][hopper][gpu]") {
  // HopperOptions::max_sms: the GEMM's persistent grid at most max(max_sms, cluster) CTAs, the
  // result against float64 on both paths; a negative count refused before any GPU work.
  const MxOperands o = random_operands(520, 400, 1056, 61);
  const auto ref = reference_f64(o);
  DeviceBuffer<std::uint8_t> a(o.A), b(o.B), sa(o.sa), sb(o.sb);
  DeviceBuffer<std::uint16_t> d(std::size_t(o.M * o.N));
  const MxGemm g = mx_call(o, a.data(), b.data(), sa.data(), sb.data(), d.data(), o.N);
  for (const HopperPath path : kPaths)
    for (int max_sms : {1, 2, 16}) {
      INFO("path " << int(path) << ", max_sms " << max_sms);
      HopperOptions opt;
      opt.path = path;
      opt.max_sms = max_sms;
      const HopperPlan plan(g, opt);
      std::printf("  max_sms %2d: %s\n", max_sms, plan.describe().c_str());
      if (path == HopperPath::requantize_block_scaled) {
        // Chapter 7's plan, given the same max_sms (its own tests check its grid).
        REQUIRE(plan.block_scaled() != nullptr);
        CHECK_THROWS_AS(plan.engine(), std::logic_error);
      } else {
        const engine::EnginePlan& e = plan.engine();
        CHECK(plan.block_scaled() == nullptr);
        CHECK(e.grid_ctas() >= 1);
        CHECK(e.grid_ctas() <= std::max(max_sms, e.kernel().cluster_size()));
      }
      CHECK(relative_frobenius(test::run_mx<HopperPlan>(o, 0, opt), ref) < 4e-3);
    }
  HopperOptions bad;
  bad.max_sms = -1;
  REQUIRE_THROWS_AS(HopperPlan(g, bad), std::invalid_argument);
}

TEST_CASE("ch09 Hopper MXFP8 GEMM is deterministic", "[ch09][hopper][gpu]") {
  const MxOperands o = random_operands(512, 512, 2048, 42);
  const auto first = run_hopper(o, "");
  CHECK(relative_frobenius(first, reference_f64(o)) < 4e-3);  // equal, and right
  CHECK(run_hopper(o, "") == first);
}

// ------------------------------------------ dequantize_bf16 ------------------------------------

TEST_CASE("ch09 Hopper dequantize_bf16: the dequantiser is bit for bit the CPU's",
          "[ch09][hopper][gpu]") {
  // Every e4m3 code against every scale code from 0 to 255 somewhere (codes past 246 overflow
  // to Inf for the larger elements, codes below 6 can round on bf16's subnormal grid, 0xFF is NaN),
  // rows not a multiple of 128, K not of 128; the 16-byte kernel and, with ldy = K + 3, the
  // element-wise one.
  const std::int64_t rows = 200, K = 544;
  MxQuantized q;
  q.rows = rows;
  q.cols = K;
  q.values.resize(std::size_t(rows * K));
  q.scales.assign(std::size_t(mx_scale_bytes(rows, K / 32)), 0);
  std::mt19937_64 rng(77);
  for (auto& v : q.values) v = std::uint8_t(rng());
  for (std::int64_t r = 0; r < rows; ++r)
    for (std::int64_t j = 0; j < K / 32; ++j)
      q.scales[std::size_t(mx_scale_offset(r, j, rows, K / 32))] =
          std::uint8_t((r * (K / 32) + j) % 256);
  const std::vector<std::uint16_t> want = dequantize_mx_bf16(q);
  for (const std::int64_t ldy : {K, K + 3}) {
    DeviceBuffer<std::uint8_t> dq(q.values), ds(q.scales);
    DeviceBuffer<std::uint16_t> dy(std::size_t(rows * ldy));
    poison_bf16(dy.data(), dy.size());
    dequantize_mx_1x32_bf16({dq.data(), rows, K, K, ds.data(), dy.data(), ldy});
    FP8GEMM_CUDA_CHECK(cudaDeviceSynchronize());
    const std::vector<std::uint16_t> got = dy.download();
    std::int64_t differ = 0;
    for (std::int64_t r = 0; r < rows; ++r)
      for (std::int64_t k = 0; k < K; ++k)
        differ += got[std::size_t(r * ldy + k)] != want[std::size_t(r * K + k)];
    INFO("ldy = " << ldy);
    CHECK(differ == 0);
  }
}

TEST_CASE("ch09 Hopper dequantize_bf16 matches the float64 definition, every kernel",
          "[ch09][hopper][gpu]") {
  for (const Shape s : {Shape{128, 128, 128, 0}, Shape{1, 8, 32, 0}, Shape{200, 136, 160, 0},
                        Shape{130, 130, 352, 0}, Shape{257, 392, 672, 0},
                        Shape{777, 520, 2080, 0}, Shape{2048, 2048, 4096, 0}}) {
    const MxOperands o = random_operands(s.M, s.N, s.K, 13 + std::uint64_t(s.M + s.N + s.K));
    const auto ref = reference_f64(o);
    for (const auto& k : hopper_bf16_kernels()) {
      if (engine::writes_f32(k.epilogue)) continue;  // a float D: the float D test below
      INFO(k.name << ": " << s.M << " x " << s.N << " x " << s.K);
      if (k.epilogue == engine::EpilogueKind::tma_store && s.N % 8 != 0) {
        REQUIRE_THROWS_AS(run_bf16(o, k.name), std::invalid_argument);
        continue;
      }
      const auto got = run_bf16(o, k.name);
      bool finite = true;
      for (double x : got) finite = finite && std::isfinite(x);
      REQUIRE(finite);
      CHECK(relative_frobenius(got, ref) < 4e-3);
    }
  }
  // Wide exponents; ldd = N + 3 (the registers kernel); a NaN scale.
  const MxOperands wide = random_operands(300, 264, 544, 5, 40);
  CHECK(relative_frobenius(run_bf16(wide), reference_f64(wide)) < 4e-3);
  const MxOperands o = random_operands(190, 200, 256, 6);
  CHECK(relative_frobenius(run_bf16(o, "", 3), reference_f64(o)) < 4e-3);
  MxOperands n = random_operands(64, 72, 256, 7);
  n.sa[std::size_t(Mx1x32(n.M, n.K).block_index(17, 2))] = 0xFF;
  check_nan_row_only(n, run_from_finite(n, HopperPath::dequantize_bf16));
}

TEST_CASE("ch09 Hopper: both paths at K = 65536 on all-positive data", "[ch09][hopper][gpu]") {
  // Elements in [0.5, 0.94] (e4m3 exponent field 6, any mantissa), scales 1: the sum grows with
  // K and a tensor-core accumulator that keeps too few bits loses it (chapter 6: FP8 fast
  // accumulation 7.7e-1 here). The promote_per_block path adds every 32 K into FP32; the bf16
  // path leaves the whole K to the tensor cores' FP32 sums, and must stay as accurate.
  // The sums are all near 0.72^2 K = 34000, just above 2^15, where bf16's step is 256: D's own
  // rounding is a relative 2.8e-3 here (measured on the H200, both paths, session 11), more than
  // any accumulation error this test is after. So each element is checked against the float64
  // sum to within one bf16 ulp of it (half an ulp is the output's rounding; the other half is the
  // accumulation's allowance, 128 here, i.e. 3.8e-3 relative; fast FP8 accumulation misses by
  // thousands).
  MxOperands o = random_operands(64, 128, 65536, 21, 0);
  for (auto* v : {&o.A, &o.B})
    for (auto& b : *v) b = std::uint8_t(0x30 | (b & 0x07));
  const auto ref = reference_f64(o);
  auto beyond_one_ulp = [&](const std::vector<double>& got) {
    std::int64_t n = 0;
    for (std::size_t i = 0; i < ref.size(); ++i) {
      int e = 0;
      std::frexp(ref[i], &e);  // ref in [2^(e-1), 2^e): bf16's ulp there is 2^(e - 1 - 7)
      n += !(std::fabs(got[i] - ref[i]) <= std::ldexp(1.0, e - 8));
    }
    return n;
  };
  const auto promoted = run_hopper(o, "");
  const auto bf16 = run_bf16(o);
  // Every block's scale is 1 here, so re-quantising changes nothing, and chapter 7's promotion
  // every 128 K must keep the sums as well.
  const auto requant = run_requant(o);
  INFO("relative Frobenius error: promote_per_block "
       << relative_frobenius(promoted, ref) << ", dequantize_bf16 " << relative_frobenius(bf16, ref)
       << ", requantize_block_scaled " << relative_frobenius(requant, ref));
  CHECK(beyond_one_ulp(promoted) == 0);
  CHECK(beyond_one_ulp(bf16) == 0);
  CHECK(beyond_one_ulp(requant) == 0);
  CHECK(relative_frobenius(bf16, ref) < 4e-3);
}

TEST_CASE("ch09 Hopper dequantize_bf16 and requantize_block_scaled: deterministic, and rebind",
          "[ch09][hopper][gpu]") {
  for (const HopperPath path :
       {HopperPath::dequantize_bf16, HopperPath::requantize_block_scaled}) {
    INFO("path " << int(path));
    const MxOperands o = random_operands(512, 512, 2048, 42);
    const auto first = run_hopper(o, "", 0, path);
    CHECK(relative_frobenius(first, reference_f64(o)) < 4e-3);  // not only equal to itself
    CHECK(first == run_hopper(o, "", 0, path));
    // A plan re-pointed at other operands and another D gives their product.
    const MxOperands p = random_operands(o.M, o.N, o.K, 43);
    DeviceBuffer<std::uint8_t> a(o.A), b(o.B), sa(o.sa), sb(o.sb);
    DeviceBuffer<std::uint8_t> a2(p.A), b2(p.B), sa2(p.sa), sb2(p.sb);
    DeviceBuffer<std::uint16_t> d(std::size_t(o.M * o.N)), d2(std::size_t(o.M * o.N));
    HopperOptions opt;
    opt.path = path;
    HopperPlan plan(mx_call(o, a.data(), b.data(), sa.data(), sb.data(), d.data()), opt);
    // bf16 operands (2 bytes an element), or e4m3 operands and their scales.
    const std::size_t bytes = path == HopperPath::dequantize_bf16 ? 2 : 1;
    CHECK(plan.workspace_bytes() >= std::size_t((o.M + o.N) * o.K) * bytes);
    plan.rebind(mx_call(p, a2.data(), b2.data(), sa2.data(), sb2.data(), d2.data()));
    poison_bf16(d2.data(), d2.size());
    plan.run(nullptr);
    FP8GEMM_CUDA_CHECK(cudaDeviceSynchronize());
    const std::vector<double> got = test::download_bf16(d2);
    CHECK(relative_frobenius(got, reference_f64(p)) < 4e-3);
    // Another shape is refused, naming the field.
    MxOperands small = random_operands(256, 512, 2048, 44);
    CHECK_THROWS_AS(plan.rebind(mx_call(small, a2.data(), b2.data(), sa2.data(), sb2.data(),
                                        d2.data())),
                    std::invalid_argument);
  }
}

TEST_CASE("ch09 Hopper dequantize_bf16: a workspace that cannot fit is refused and leaves no "
          "CUDA error pending",
          "[ch09][hopper][gpu]") {
  // The plan allocates its own workspace (2 (M + N) K bytes of bf16 operands on this path). With
  // the GPU's memory taken by a filler, that cudaMalloc fails: the plan throws naming it, and
  // since session 70 leaves nothing pending (before, cudaErrorMemoryAllocation stayed in the
  // runtime's last-error slot and the next call of any other plan refused as if an earlier call
  // had failed). The operands are never read (no run): allocated, not filled.
  const std::int64_t M = 4096, N = 4096, K = 4096;  // workspace: 64 MiB
  DeviceBuffer<std::uint8_t> a(std::size_t(M * K)), b(std::size_t(N * K));
  DeviceBuffer<std::uint8_t> sa(std::size_t(scale_bytes(M, K))), sb(std::size_t(scale_bytes(N, K)));
  DeviceBuffer<std::uint16_t> d(std::size_t(M * N));
  MxGemm g;
  g.M = M, g.N = N, g.K = K;
  g.A = a.data(), g.B = b.data(), g.scale_a = sa.data(), g.scale_b = sb.data(), g.D = d.data();
  HopperOptions opt;
  opt.path = HopperPath::dequantize_bf16;
  const std::size_t workspace = std::size_t(2 * (M + N) * K);
  // The filler: all free memory but less than half the workspace (stepping down where one
  // cudaMalloc of that size fails; those failures are cleared here).
  std::size_t free_bytes = 0, total = 0;
  FP8GEMM_CUDA_CHECK(cudaMemGetInfo(&free_bytes, &total));
  void* filler = nullptr;
  for (std::size_t leave = workspace / 4; leave < workspace / 2 && !filler; leave += workspace / 16)
    if (free_bytes <= leave || cudaMalloc(&filler, free_bytes - leave) != cudaSuccess) {
      filler = nullptr;
      (void)cudaGetLastError();
    }
  FP8GEMM_CUDA_CHECK(cudaMemGetInfo(&free_bytes, &total));
  INFO("free after the filler: " << free_bytes << " bytes, the workspace " << workspace);
  if (!filler || free_bytes >= workspace) {
    if (filler) FP8GEMM_CUDA_CHECK(cudaFree(filler));
    WARN("not checked: could not fill the GPU's memory to below the workspace");
    return;
  }
  REQUIRE(cudaPeekAtLastError() == cudaSuccess);
  std::string message;
  try {
    HopperPlan plan(g, opt);
  } catch (const std::runtime_error& e) {
    message = e.what();
  }
  const cudaError_t pending = cudaPeekAtLastError();
  FP8GEMM_CUDA_CHECK(cudaFree(filler));
  INFO(message);
  CHECK(message.find("cudaErrorMemoryAllocation") != std::string::npos);
  CHECK(pending == cudaSuccess);
  // With the memory back, the same call builds.
  CHECK_NOTHROW(HopperPlan(g, opt));
}

TEST_CASE("ch09 Hopper dequantize_bf16 and requantize_block_scaled: an earlier pending CUDA "
          "error is reported as such",
          "[ch09][hopper][gpu]") {
  // Each path launches its conversion before the GEMM; that launch's own check must not take an
  // earlier, unrelated error for its own (docs/contract.md, the reliability rule). A failed
  // cudaMalloc leaves a non-sticky error pending: run() throws naming it as an earlier call's,
  // launches nothing (D keeps its poison), and leaves the error for its owner.
  for (const HopperPath path :
       {HopperPath::dequantize_bf16, HopperPath::requantize_block_scaled}) {
    INFO("path " << int(path));
    const MxOperands o = random_operands(256, 256, 512, 45);
    DeviceBuffer<std::uint8_t> a(o.A), b(o.B), sa(o.sa), sb(o.sb);
    DeviceBuffer<std::uint16_t> d(std::size_t(o.M * o.N));
    HopperOptions opt;
    opt.path = path;
    HopperPlan plan(mx_call(o, a.data(), b.data(), sa.data(), sb.data(), d.data()), opt);
    poison_bf16(d.data(), d.size());
    FP8GEMM_CUDA_CHECK(cudaDeviceSynchronize());
    const gpu_test::PendingErrorRun r =
        gpu_test::run_with_pending_error([&] { plan.run(nullptr); });
    REQUIRE(r.error != cudaSuccess);
    INFO(r.message);
    CHECK(r.message.find("from an earlier call") != std::string::npos);
    CHECK(r.message.find("fp8gemm::ch09_hopper_mxfp8") != std::string::npos);
    CHECK(cudaGetLastError() == r.error);  // still pending for its owner; now cleared
    FP8GEMM_CUDA_CHECK(cudaDeviceSynchronize());
    std::int64_t written = 0;
    for (std::uint16_t v : d.download()) written += (v & 0x7F80) != 0x7F80;
    CHECK(written == 0);  // nothing launched: D is all poison (NaN)
    // Cleared, the same plan works.
    plan.run(nullptr);
    FP8GEMM_CUDA_CHECK(cudaDeviceSynchronize());
    const std::vector<double> got = test::download_bf16(d);
    CHECK(relative_frobenius(got, reference_f64(o)) < 4e-3);
  }
}

TEST_CASE("ch09 Hopper requantize_block_scaled: what it computes, against float64",
          "[ch09][hopper][gpu]") {
  // Tile edges, K not a multiple of 128 (a partial last group), M not of 4 (chapter 7 converts
  // nothing: its A scales are written TMA-aligned), odd D stride (chapter 7's registers kernel).
  for (const Shape s : {Shape{128, 128, 128, 0}, Shape{1, 8, 32, 0}, Shape{200, 136, 160, 0},
                        Shape{130, 130, 352, 0}, Shape{257, 392, 672, 0}, Shape{190, 200, 256, 3},
                        Shape{777, 520, 2080, 0}}) {
    const MxOperands o = random_operands(s.M, s.N, s.K, 17 + std::uint64_t(s.M + s.N + s.K));
    INFO(s.M << " x " << s.N << " x " << s.K << ", ldd = N + " << s.pad);
    const auto got = run_requant(o, "", s.pad);
    bool finite = true;
    for (double x : got) finite = finite && std::isfinite(x);
    REQUIRE(finite);
    // What it is defined to compute (chapter 7's GEMM: bf16 D's rounding, ~1.7e-3) ...
    CHECK(relative_frobenius(got, reference_requant_f64(o)) < 4e-3);
    // ... and, the exponents spread over 13 binades (127 +- 6), the MX product itself.
    CHECK(relative_frobenius(got, reference_f64(o)) < 4e-3);
  }
  // Exponents 127 +- 40: blocks far below their group's largest flush to zero. The path still
  // computes its definition; how far that is from the MX product is printed (the README's study
  // measures it on realistic data).
  const MxOperands wide = random_operands(300, 264, 544, 5, 40);
  const auto got = run_requant(wide);
  CHECK(relative_frobenius(got, reference_requant_f64(wide)) < 4e-3);
  std::printf("  requantize_block_scaled, exponents 127 +- 40: %.3e from the MX product\n",
              relative_frobenius(got, reference_f64(wide)));
  // Data on which the rule and the MX product part (chapter 9's README, "Data made to defeat the
  // rule"): block 0 of every 1 x 128 group of A and blocks 1-3 of B 16 binades above the rest,
  // so three quarters of every dot product are A's quiet blocks times B's loud ones, and both
  // operands' quiet blocks are shifted 16 binades down. The path must compute its definition and
  // be far from the MX product; a path that skipped the re-quantisation, or chose another
  // exponent, would be near the MX product instead.
  MxOperands c = random_operands(256, 264, 1024, 9, 0);
  for (auto [v, rows, loud] : {std::tuple{&c.sa, c.M, 0x1}, std::tuple{&c.sb, c.N, 0xE}})
    for (std::int64_t r = 0; r < rows; ++r)
      for (std::int64_t j = 0; j < c.K / 32; ++j)
        (*v)[std::size_t(Mx1x32(rows, c.K).block_index(r, j))] =
            std::uint8_t((loud >> (j % 4) & 1) ? 127 + 16 : 127);
  const auto got_c = run_requant(c);
  const double from_mx = relative_frobenius(got_c, reference_f64(c));
  std::printf("  requantize_block_scaled, complementary blocks: %.3e from the MX product\n",
              from_mx);
  CHECK(relative_frobenius(got_c, reference_requant_f64(c)) < 4e-3);
  CHECK(from_mx > 0.1);
  // A NaN scale (UE8M0 0xFF) for row 17, block 2 of A: its 1 x 128 group is NaN, so row 17 of D
  // is, and no other.
  MxOperands n = random_operands(64, 72, 256, 7);
  n.sa[std::size_t(Mx1x32(n.M, n.K).block_index(17, 2))] = 0xFF;
  check_nan_row_only(n, run_from_finite(n, HopperPath::requantize_block_scaled));
}

TEST_CASE("ch09 Hopper: a float D on every path, with and without accumulate",
          "[ch09][hopper][gpu]") {
  // Output::f32 (session 64): each path's FP32 kernel (the default path's and the dequantize_bf16
  // path's from registers, chapter 7's on the requantize path; by name also the default tile's
  // TMA FP32 kernel, session 66, and the dequantize_bf16 path's two, session 67) against float64 within 5e-4 (no bf16
  // rounding, which alone is ~1e-3: the bf16 tests allow 4e-3), with accumulate against
  // before + A.B^T; D's rows 3 floats wider than N (no TMA: a registers kernel) and 4 wider (by
  // TMA where the kernel does), those columns never written; every FP32 kernel by name (the TMA
  // ones at 4 only: they refuse the other D); a scale padding of 0xFF read as nothing. D's earlier
  // values are as large as the product (N(0, rms of it)): a kernel that skipped the add would be
  // ~0.7 off (session 64's N(0, 4) beside products of rms 1e4-1e8 could not show it).
  std::mt19937_64 gen(64);
  int cases = 0;
  for (const Shape s : {Shape{200, 136, 160, 3}, Shape{257, 392, 672, 3}, Shape{1, 8, 32, 3}}) {
    const MxOperands o = random_operands(s.M, s.N, s.K, 640 + std::uint64_t(s.M + s.K));
    const auto ref = reference_f64(o);
    const auto ref_rq = reference_requant_f64(o);
    std::normal_distribution<float> nd(0.0f, float(rms(ref)));
    struct Variant {
      HopperPath path;
      std::string kernel;
    };
    std::vector<Variant> variants = {{HopperPath::promote_per_block, ""},
                                     {HopperPath::dequantize_bf16, ""},
                                     {HopperPath::requantize_block_scaled, ""}};
    for (const auto& k : hopper_kernels())
      if (engine::writes_f32(k.epilogue)) variants.push_back({HopperPath::promote_per_block, k.name});
    for (const auto& k : hopper_bf16_kernels())
      if (engine::writes_f32(k.epilogue)) variants.push_back({HopperPath::dequantize_bf16, k.name});
    REQUIRE(variants.size() == 8);  // two FP32 kernels on the default path, three on the bf16 path
    for (const Variant& v : variants)
      for (const std::int64_t pad : {s.pad, std::int64_t(4)}) {
        if (pad != 4 && v.kernel.find("_tma") != std::string::npos) continue;
        for (const bool accumulate : {false, true}) {
          INFO("path " << int(v.path) << " kernel '" << v.kernel << "' " << s.M << " x " << s.N
                       << " x " << s.K << " ldd N + " << pad
                       << (accumulate ? " D += A.B^T" : " D = A.B^T"));
          std::vector<float> before(std::size_t(s.M * (s.N + pad)));
          for (auto& x : before) x = nd(gen);
          std::int64_t padding_changed = -1;
          HopperOptions opt;
          opt.kernel = v.kernel;
          opt.path = v.path;
          const auto got = test::run_mx_f32<HopperPlan>(o, pad, accumulate ? &before : nullptr,
                                                        padding_changed, opt);
          const std::vector<double> want =
              test::expected_f32(v.path == HopperPath::requantize_block_scaled ? ref_rq : ref,
                                 accumulate ? &before : nullptr, s.M, s.N, s.N + pad);
          const double e = relative_frobenius(got, want);
          std::printf("  float D %-36s path %d %s %lld x %lld x %lld ldd N+%lld: rel %.2e\n",
                      v.kernel.empty() ? "(default)" : v.kernel.c_str(), int(v.path),
                      accumulate ? "+=" : "= ", static_cast<long long>(s.M),
                      static_cast<long long>(s.N), static_cast<long long>(s.K),
                      static_cast<long long>(pad), e);
          CHECK(e < 5e-4);
          CHECK(padding_changed == 0);
          ++cases;
        }
      }
  }
  CHECK(cases == 78);
  {
    // The default path's choice for a float D: from registers for D = A.B^T at any ldd; with
    // accumulate by TMA (a reduce-add) where D's rows are 16-byte aligned (ldd a multiple of 4),
    // else from registers.
    const MxOperands o = random_operands(130, 136, 160, 652);
    DeviceBuffer<std::uint8_t> a(o.A), b(o.B), sa(o.sa), sb(o.sb);
    DeviceBuffer<float> d(std::size_t(o.M * (o.N + 3)));
    int by_tma = 0, from_registers = 0;
    for (const bool accumulate : {false, true})
      for (const std::int64_t ldd : {o.N, o.N + 3}) {
        MxGemm g = mx_call(o, a.data(), b.data(), sa.data(), sb.data(), d.data(), ldd);
        g.output = Output::f32;
        g.accumulate = accumulate;
        const HopperPlan plan(g, HopperOptions{});
        INFO(plan.describe());
        const bool tma = plan.describe().starts_with("128x128_s5_c1x1_promoted_f32_tma_b2,");
        CHECK(tma == (accumulate && ldd % 4 == 0));
        if (!tma) CHECK(plan.describe().starts_with("128x128_s5_c1x1_promoted_f32,"));
        (tma ? by_tma : from_registers) += 1;
      }
    CHECK(by_tma == 1);  // accumulate at ldd = N (136)
    CHECK(from_registers == 3);
    // The dequantize_bf16 path: its bf16 rule's tile by TMA (N = 136 is no multiple of 256: the
    // 128 x 192 one) wherever D's rows are 16-byte aligned, with or without accumulate, else from
    // registers. The requantize path: chapter 7's rule (M = 130 > 128: 128 x 256), by TMA with
    // accumulate where D's rows are 16-byte aligned.
    for (const bool accumulate : {false, true})
      for (const std::int64_t ldd : {o.N, o.N + 3}) {
        MxGemm g = mx_call(o, a.data(), b.data(), sa.data(), sb.data(), d.data(), ldd);
        g.output = Output::f32;
        g.accumulate = accumulate;
        HopperOptions bf16_path;
        bf16_path.path = HopperPath::dequantize_bf16;
        const HopperPlan plan(g, bf16_path);
        INFO(plan.describe());
        CHECK(plan.describe().find(ldd % 4 == 0 ? "bytes of workspace), "
                                                  "128x192_s4_c1x1_fast_f32_tma_b2_bf16,"
                                                : "bytes of workspace), "
                                                  "128x256_s4_c1x1_fast_f32_bf16,") !=
              std::string::npos);
        HopperOptions requant_path;
        requant_path.path = HopperPath::requantize_block_scaled;
        const HopperPlan rq(g, requant_path);
        INFO(rq.describe());
        CHECK(rq.describe().find(accumulate && ldd % 4 == 0
                                     ? "128x256_s4_c2x1_promoted_f32_tma_b1"
                                     : "128x256_s4_c2x1_promoted_f32,") != std::string::npos);
      }
  }
  // The scale padding (0xFF: a NaN scale where a kernel read it as data) changes nothing; on
  // every path rebind() refuses another accumulate, and a bf16 plan refuses accumulate by its
  // rule.
  const MxOperands o = random_operands(130, 136, 160, 651);
  DeviceBuffer<std::uint8_t> a(o.A), b(o.B), sa(o.sa), sb(o.sb);
  DeviceBuffer<float> d(std::size_t(o.M * o.N));
  std::int64_t pc = 0;
  for (const HopperPath path : kPaths) {
    INFO("path " << int(path));
    HopperOptions opt;
    opt.path = path;
    CHECK(test::run_mx_f32<HopperPlan>(with_scale_padding(o, 0xFF), 0, nullptr, pc, opt) ==
          test::run_mx_f32<HopperPlan>(o, 0, nullptr, pc, opt));
    MxGemm g = mx_call(o, a.data(), b.data(), sa.data(), sb.data(), d.data());
    g.output = Output::f32;
    HopperPlan plan(g, opt);
    MxGemm flipped = g;
    flipped.accumulate = true;
    CHECK(rebind_refusal(plan, flipped).find("rebind: accumulate") != std::string::npos);
    MxGemm g16 = mx_call(o, a.data(), b.data(), sa.data(), sb.data(), d.data());
    HopperPlan plan16(g16, opt);
    g16.accumulate = true;
    CHECK(rebind_refusal(plan16, g16).find("accumulate = true needs Output::f32") !=
          std::string::npos);
  }
}
