// CPU tests of common/quantize.hpp (the quantisers every GPU kernel is checked against) and
// common/reference.hpp (the float64 reference GEMM and the error metrics, the per-tile one
// included, and CheckResult::ok() which combines them).
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "catch.hpp"
#include "common/check.hpp"
#include "common/fp8.hpp"
#include "common/quantize.hpp"
#include "common/reference.hpp"
#include "common/scaling.hpp"

#if defined(FP8GEMM_CATCH2_V3)
using Catch::Approx;  // Catch2 3 keeps it in the namespace; 2 exports it globally
#endif

namespace {

using namespace fp8gemm;

// ================================ quantisers =======================================================

constexpr bool is_mx(ScaleRecipe r) { return r == ScaleRecipe::mx_1x32; }

/// Half an e4m3 ulp at |y| (y in units of the block scale): the spacing of e4m3 values is
/// 2^(e - 3) in the binade [2^e, 2^(e+1)), e >= -6, and 2^-9 below 2^-6 (subnormals).
double e4m3_half_ulp(double y) {
  const int e = std::max(std::ilogb(std::max(std::fabs(y), 1e-30)), -6);
  return std::ldexp(1.0, e - 4);
}

/// Random N(0, 1) data with what real activations and weights have: outliers (every 997th
/// element x 100, one at -3000), a block of zeros and a block of tiny values (1e-30), so blocks
/// of very different amax meet in one tensor.
template <class Recipe>
std::vector<float> test_data(std::int64_t rows, std::int64_t K, std::uint64_t seed) {
  std::vector<float> x = random_normal(std::size_t(rows * K), seed);
  for (std::size_t i = 0; i < x.size(); i += 997) x[i] *= 100.0f;
  x[x.size() / 2] = -3000.0f;
  const Recipe L(rows, K);
  const std::int64_t br = Recipe::block_rows() == 0 ? rows : Recipe::block_rows();
  const std::int64_t bc = Recipe::block_cols() == 0 ? K : Recipe::block_cols();
  auto scale_block = [&](std::int64_t i, std::int64_t j, float factor) {
    for (std::int64_t r = i * br; r < std::min(rows, (i + 1) * br); ++r)
      for (std::int64_t c = j * bc; c < std::min(K, (j + 1) * bc); ++c) x[r * K + c] *= factor;
  };
  if (L.scale_rows() * L.scale_cols() >= 3) {  // three distinct blocks
    scale_block(L.scale_rows() - 1, 0, 0.0f);
    scale_block(0, L.scale_cols() - 1, 1e-30f);
    // amax ~ 3e-37: amax / 448 is a subnormal float, for float recipes the hardest scale.
    scale_block(L.scale_rows() / 2, L.scale_cols() / 2, 1e-37f);
  }
  return x;
}

/// The properties every recipe's quantiser must have, checked block by block:
///  - every code is finite (no 0x7F / 0xFF) and |q| <= 448;
///  - float recipes: scale = amax / 448 up to rounding, so the element holding the amax encodes
///    within one e4m3 ulp of 448 (416 <= |q| <= 448); an all-zero block has scale 1;
///  - MX: the UE8M0 exponent is floor(log2 amax) - 8 (code 127 for an all-zero block; clamped
///    to code 0 for tiny blocks), so amax / scale < 512 and elements above 448 saturate to +-448;
///  - dequantised error: with s the stored scale, the quantiser computes y = fl(x / s) =
///    (x / s)(1 + d), |d| <= 2^-24 (d = 0 for MX, s a power of two), then rounds y to the nearest
///    e4m3 value q, so |y - q| <= half an e4m3 ulp at |y|. Hence
///      |x - q s| <= s (half_ulp(|x / s|) + |x / s| 2^-24)
///    (if y rounds up into the next binade it is that power of two exactly, and the bound still
///    holds). We allow 2^-23 for the second term; half an ulp is >= 2^-4 relative, so the bound is
///    tight: truncation, a wrong scale or a wrong scale index all break it;
///  - the scale tensor's padding slots are zero.
template <class Recipe>
void check_quantizer(std::int64_t rows, std::int64_t K, std::uint64_t seed) {
  INFO(to_string(Recipe::recipe) << " quantiser, rows " << rows << ", K " << K);
  const std::vector<float> x = test_data<Recipe>(rows, K, seed);
  const Quantized<Recipe> q = quantize<Recipe>(x.data(), rows, K);
  const Recipe& L = q.layout;
  REQUIRE(q.values.size() == std::size_t(rows * K));
  REQUIRE(q.scales.size() == std::size_t(L.size()));
  const std::vector<double> deq = dequantize(q);
  REQUIRE(deq.size() == x.size());

  const std::int64_t br = Recipe::block_rows() == 0 ? rows : Recipe::block_rows();
  const std::int64_t bc = Recipe::block_cols() == 0 ? K : Recipe::block_cols();
  std::vector<bool> used(std::size_t(L.size()), false);
  std::int64_t bad_codes = 0, bad_error = 0, bad_saturation = 0, bad_scale = 0, bad_amax_code = 0;
  double worst_error_ratio = 0;
  for (std::int64_t i = 0; i < L.scale_rows(); ++i) {
    for (std::int64_t j = 0; j < L.scale_cols(); ++j) {
      const std::int64_t slot = L.block_index(i, j);
      used[std::size_t(slot)] = true;
      const double s = scale_value(q.scales[std::size_t(slot)]);
      const std::int64_t r0 = i * br, r1 = std::min(rows, r0 + br);
      const std::int64_t c0 = j * bc, c1 = std::min(K, c0 + bc);
      float amax = 0;
      std::int64_t amax_at = r0 * K + c0;
      for (std::int64_t r = r0; r < r1; ++r)
        for (std::int64_t c = c0; c < c1; ++c)
          if (std::fabs(x[r * K + c]) > amax) {
            amax = std::fabs(x[r * K + c]);
            amax_at = r * K + c;
          }

      if constexpr (is_mx(Recipe::recipe)) {
        // Clamped to the codes a scale can have: tiny blocks get 2^-127 (code 0).
        const int want = amax == 0 ? 127 : std::clamp(std::ilogb(amax) - 8 + 127, 0, 254);
        bad_scale += q.scales[std::size_t(slot)] != want;
      } else {
        bad_scale += amax == 0 ? s != 1.0 : !(s > 0 && std::isfinite(s));
        const float q_amax = std::fabs(e4m3_decode(q.values[std::size_t(amax_at)]));
        bad_amax_code += amax > 0 && !(q_amax >= 416.0f && q_amax <= 448.0f);
      }

      for (std::int64_t r = r0; r < r1; ++r) {
        for (std::int64_t c = c0; c < c1; ++c) {
          const std::size_t e = std::size_t(r * K + c);
          const std::uint8_t code = q.values[e];
          const float v = e4m3_decode(code);
          bad_codes += (code & 0x7F) == 0x7F || !(std::fabs(v) <= 448.0f);
          const double y = double(x[e]) / s;
          if (std::fabs(y) > 448.0) {
            // Only MX may scale past 448 (amax / scale < 512); those saturate, keeping the sign.
            bad_saturation += !is_mx(Recipe::recipe) && std::fabs(y) > 448.0 * (1 + 1e-6);
            bad_saturation += v != std::copysign(448.0f, x[e]);
            continue;
          }
          const double bound = s * (e4m3_half_ulp(y) + std::fabs(y) * 0x1p-23);
          const double err = std::fabs(deq[e] - double(x[e]));
          worst_error_ratio = std::max(worst_error_ratio, err / bound);
          bad_error += !(err <= bound);
        }
      }
    }
  }
  std::int64_t nonzero_padding = 0;
  for (std::size_t slot = 0; slot < used.size(); ++slot)
    nonzero_padding += !used[slot] && q.scales[slot] != 0;
  INFO("worst error / bound = " << worst_error_ratio);
  CHECK(bad_codes == 0);
  CHECK(bad_scale == 0);
  CHECK(bad_amax_code == 0);
  CHECK(bad_saturation == 0);
  CHECK(bad_error == 0);
  CHECK(nonzero_padding == 0);
}

template <class Recipe>
void check_quantizer_on_shapes() {
  // Odd shapes: 672 = 5.25 x 128 = 21 x 32 (partial K blocks, L = 6 -> L4 = 8, 21 -> 24 MX
  // columns), 200 rows (partial 128-row blocks, MX row padding), and single elements.
  check_quantizer<Recipe>(200, 672, 11);
  check_quantizer<Recipe>(129, 1000, 12);
  check_quantizer<Recipe>(1, 32, 13);
  check_quantizer<Recipe>(3, 1, 14);
}

}  // namespace

TEST_CASE("Quantiser properties: per-tensor", "[quantize]") { check_quantizer_on_shapes<PerTensor>(); }
TEST_CASE("Quantiser properties: rowwise", "[quantize]") { check_quantizer_on_shapes<Rowwise>(); }
TEST_CASE("Quantiser properties: 1x128", "[quantize]") { check_quantizer_on_shapes<Group1x128>(); }
TEST_CASE("Quantiser properties: 128x128", "[quantize]") { check_quantizer_on_shapes<Block128x128>(); }
TEST_CASE("Quantiser properties: MX 1x32", "[quantize]") { check_quantizer_on_shapes<Mx1x32>(); }

TEST_CASE("Quantiser on hand-picked values", "[quantize]") {
  SECTION("per-tensor: scale = amax / 448, amax encodes as 448") {
    const std::vector<float> x = {1.0f, -2.0f, 0.5f, 4.0f};
    const auto q = quantize<PerTensor>(x.data(), 2, 2);
    CHECK(q.scales[0] == 4.0f / 448.0f);
    CHECK(q.values[3] == 0x7E);                        // 4 / (4/448) = 448
    CHECK(e4m3_decode(q.values[1]) == -224.0f);        // -2 -> -224
    CHECK(dequantize(q)[1] == Approx(-2.0).epsilon(1e-6));
  }
  SECTION("MX: exponent floor(log2 amax) - 8; 500 / 2^0 saturates") {
    std::vector<float> x(32, 1.0f);
    x[5] = 500.0f;  // floor(log2 500) = 8 -> exponent 0 -> scale 1; 500 -> 448 (saturated)
    const auto q = quantize<Mx1x32>(x.data(), 1, 32);
    CHECK(q.scales[0] == 127);
    CHECK(q.values[5] == 0x7E);
    CHECK(q.values[0] == 0x38);  // 1.0
  }
  SECTION("all-zero operands: scale 1 (UE8M0 127), codes 0") {
    const std::vector<float> z(256 * 2, 0.0f);
    const auto a = quantize<Group1x128>(z.data(), 2, 256);
    for (float s : a.scales) CHECK(s == 1.0f);
    const auto m = quantize<Mx1x32>(z.data(), 2, 256);
    CHECK(m.scales[m.layout.block_index(1, 7)] == 127);
    for (std::uint8_t v : m.values) CHECK(v == 0);
  }
  SECTION("tiny blocks (amax / 448 underflows float) still give finite codes") {
    const float d = std::numeric_limits<float>::denorm_min();
    const std::vector<float> x = {7 * d, 0.0f, -7 * d, 3 * d};
    const auto q = quantize<PerTensor>(x.data(), 1, 4);
    CHECK(q.scales[0] > 0.0f);
    for (std::size_t i = 0; i < x.size(); ++i) {
      INFO("element " << i << " code " << int(q.values[i]));
      CHECK((q.values[i] & 0x7F) != 0x7F);
      CHECK(dequantize(q)[i] == double(x[i]));  // exact: multiples of the smallest subnormal
    }
  }
}

TEST_CASE("random_normal, random_e4m3 and dequantize_e4m3", "[quantize]") {
  const auto a = random_normal(10000, 5), b = random_normal(10000, 5), c = random_normal(10000, 6);
  CHECK(a == b);
  CHECK(a != c);
  double mean = 0, var = 0;
  for (float v : a) mean += v;
  mean /= double(a.size());
  for (float v : a) var += (v - mean) * (v - mean);
  var /= double(a.size());
  CHECK(std::fabs(mean) < 0.05);   // 5 standard errors (1 / sqrt(10000) = 0.01)
  CHECK(std::fabs(var - 1.0) < 0.07);
  const auto shifted = random_normal(10000, 5, 3.0f, 2.0f);
  CHECK(shifted[17] == Approx(3.0 + 2.0 * a[17]).margin(1e-5));

  const auto e = random_e4m3(4096, 9), f = random_e4m3(4096, 9);
  CHECK(e == f);
  for (std::uint8_t v : e) CHECK((v & 0x7F) != 0x7F);
  // stddev 1e-10 underflows every value to zero; the generator must still not be all zero.
  const auto tiny = random_e4m3(64, 3, 1e-10f);
  CHECK(std::any_of(tiny.begin(), tiny.end(), [](std::uint8_t v) { return (v & 0x7F) != 0; }));

  const std::vector<double> d = dequantize_e4m3({0x38, 0xB8, 0x7E, 0x00}, 0.5);
  CHECK(d == std::vector<double>{0.5, -0.5, 224.0, 0.0});
}

// ================================ reference GEMM ===================================================

TEST_CASE("reference_gemm on a hand-computed integer product", "[reference]") {
  // A (2 x 3) . B^T with B (2 x 3): D = A . B^T, row-major, "NT".
  const std::vector<double> A = {1, 2, 3,  //
                                 4, 5, 6};
  const std::vector<double> B = {7, 8, 9,  //
                                 1, 0, -1};
  // D[0][0] = 7 + 16 + 27 = 50, D[0][1] = 1 - 3 = -2, D[1][0] = 28 + 40 + 54 = 122, D[1][1] = -2
  CHECK(reference_gemm(2, 2, 3, A.data(), B.data()) == std::vector<double>{50, -2, 122, -2});
  // K = 1: the outer product.
  const std::vector<double> u = {1, 2, 3}, v = {4, -5};
  CHECK(reference_gemm(3, 2, 1, u.data(), v.data()) == std::vector<double>{4, -5, 8, -10, 12, -15});
}

TEST_CASE("reference_gemm with an identity A gives B transposed", "[reference]") {
  const std::int64_t K = 5, N = 3;
  std::vector<double> I(std::size_t(K * K), 0.0);
  for (std::int64_t k = 0; k < K; ++k) I[std::size_t(k * K + k)] = 1.0;
  std::vector<double> B(std::size_t(N * K));
  for (std::size_t i = 0; i < B.size(); ++i) B[i] = double(i * i % 11) - 5.0;
  const std::vector<double> D = reference_gemm(K, N, K, I.data(), B.data());  // M = K
  REQUIRE(D.size() == std::size_t(K * N));
  for (std::int64_t m = 0; m < K; ++m)
    for (std::int64_t n = 0; n < N; ++n) CHECK(D[std::size_t(m * N + n)] == B[std::size_t(n * K + m)]);
}

TEST_CASE("reference_gemm_rows agrees with reference_gemm", "[reference]") {
  const std::int64_t M = 17, N = 13, K = 29;
  const auto fa = random_normal(std::size_t(M * K), 1), fb = random_normal(std::size_t(N * K), 2);
  const std::vector<double> A(fa.begin(), fa.end()), B(fb.begin(), fb.end());
  const std::vector<double> full = reference_gemm(M, N, K, A.data(), B.data());
  const std::vector<std::int64_t> rows = {16, 0, 5, 5};
  const std::vector<double> part = reference_gemm_rows(M, N, K, A.data(), B.data(), rows);
  REQUIRE(part.size() == rows.size() * std::size_t(N));
  for (std::size_t i = 0; i < rows.size(); ++i)
    for (std::int64_t n = 0; n < N; ++n)
      CHECK(part[i * N + std::size_t(n)] == full[std::size_t(rows[i] * N + n)]);
}

// ================================ error metrics ====================================================

TEST_CASE("compare: relative Frobenius and DeepGEMM diff on hand-computed vectors", "[reference]") {
  // got = (1, 2, 3), ref = (1, 2, 2): ||got - ref|| = 1, ||ref|| = 3 -> rel 1/3;
  // <got, ref> = 11, <got, got> = 14, <ref, ref> = 9 -> diff = 1 - 22/23 = 1/23; max |d| = 1.
  const std::vector<float> got = {1, 2, 3};
  const std::vector<double> ref = {1, 2, 2};
  const ErrorStats e = compare(got.data(), ref.data(), 3);
  CHECK(e.rel_frobenius == Approx(1.0 / 3.0).epsilon(1e-12));
  CHECK(e.deepgemm_diff == Approx(1.0 / 23.0).epsilon(1e-12));
  CHECK(e.max_abs == 1.0);
  CHECK(e.non_finite == 0);
  CHECK(e.ok(0.34));
  CHECK_FALSE(e.ok(0.33));

  // The same through bf16 (1.0 = 0x3F80, 2.0 = 0x4000, 3.0 = 0x4040).
  const std::vector<std::uint16_t> got16 = {0x3F80, 0x4000, 0x4040};
  const ErrorStats e16 = compare_bf16(got16.data(), ref.data(), 3);
  CHECK(e16.rel_frobenius == e.rel_frobenius);
  CHECK(e16.deepgemm_diff == e.deepgemm_diff);

  // Rows of a 3 x 2 D: rows {2, 0}, reference rows in that order.
  const std::vector<std::uint16_t> d = {0x3F80, 0x4000, 0xFFFF, 0xFFFF, 0x4040, 0x3F80};
  const std::vector<double> ref_rows = {3, 1, 1, 2};
  const ErrorStats er = compare_bf16_rows(d.data(), 2, {2, 0}, ref_rows.data());
  CHECK(er.non_finite == 0);  // the NaN row (1) is not among the rows compared
  CHECK(er.rel_frobenius == 0.0);
  CHECK(er.deepgemm_diff == 0.0);
}

TEST_CASE("compare: a NaN or inf in got is never ok", "[reference]") {
  const std::vector<double> ref = {1, 2, 3};
  for (float bad : {std::numeric_limits<float>::quiet_NaN(), std::numeric_limits<float>::infinity()}) {
    const std::vector<float> got = {1, bad, 3};
    const ErrorStats e = compare(got.data(), ref.data(), 3);
    CHECK(e.non_finite == 1);
    CHECK_FALSE(e.ok(1e30));
    CHECK(std::isinf(e.rel_frobenius));
  }
  const std::vector<std::uint16_t> poisoned = {0x3F80, 0xFFFF, 0x4040};  // poison_bf16's NaN
  CHECK_FALSE(compare_bf16(poisoned.data(), ref.data(), 3).ok(1e30));
  // Exact results are ok at tolerance 0; a zero reference with a zero result too.
  const std::vector<float> exact = {1, 2, 3}, zeros = {0, 0};
  const std::vector<double> zero_ref = {0, 0};
  CHECK(compare(exact.data(), ref.data(), 3).ok(0.0));
  CHECK(compare(zeros.data(), zero_ref.data(), 2).ok(0.0));
}

TEST_CASE("bf16 conversions: round to nearest even, round trip", "[reference]") {
  CHECK(float_to_bf16(1.0f) == 0x3F80);
  CHECK(float_to_bf16(1.0f + 0x1p-8f) == 0x3F80);         // tie, 0x3F80 is even
  CHECK(float_to_bf16(1.0f + 3 * 0x1p-8f) == 0x3F82);     // tie, 0x3F81 is odd
  CHECK(float_to_bf16(std::nextafter(1.0f + 0x1p-8f, 2.0f)) == 0x3F81);
  CHECK(float_to_bf16(-2.0f) == 0xC000);
  CHECK((float_to_bf16(std::numeric_limits<float>::quiet_NaN()) & 0x7FFF) > 0x7F80);
  std::int64_t mismatches = 0;
  for (std::uint32_t b = 0; b < 0x10000; ++b) {
    const float f = bf16_to_float(std::uint16_t(b));
    if (std::isnan(f)) continue;
    mismatches += float_to_bf16(f) != b;
  }
  CHECK(mismatches == 0);
}

// ================================ the per-tile check ===============================================

TEST_CASE("worst_tile_error on hand-computed tiles", "[reference][tile]") {
  // A 2 x 2 D in 1 x 1 tiles. ref = 1 everywhere, got = 1.5 at (1, 1): rms(ref) = 1, so that
  // tile's error is 0.5 / max(1, 1 * 1) = 0.5; the others are exact.
  const std::vector<double> ref = {1, 1, 1, 1};
  std::vector<std::uint16_t> got = {0x3F80, 0x3F80, 0x3F80, 0x3FC0};  // 1, 1, 1, 1.5
  CHECK(worst_tile_error(got.data(), 2, {0, 1}, ref.data(), 1, 1) == 0.5);
  // In one 2 x 2 tile the same error is ||(0, 0, 0, 0.5)|| / ||(1, 1, 1, 1)|| = 0.25.
  CHECK(worst_tile_error(got.data(), 2, {0, 1}, ref.data(), 2, 2) == 0.25);
  // A tile whose reference is tiny is measured against the typical entry instead:
  // ref (100, 100, 100, 0), got (100, 100, 100, 0.5): rms(ref) = sqrt(30000 / 4) = 86.6.
  const std::vector<double> ref_small = {100, 100, 100, 0};
  got = {0x42C8, 0x42C8, 0x42C8, 0x3F00};  // 100, 100, 100, 0.5
  CHECK(worst_tile_error(got.data(), 2, {0, 1}, ref_small.data(), 1, 1) ==
        Approx(0.5 / std::sqrt(7500.0)).epsilon(1e-12));
  // Only the rows compared count; a NaN among them is never ok.
  got = {0x3F80, 0x3F80, 0xFFFF, 0xFFFF};
  CHECK(worst_tile_error(got.data(), 2, {0}, ref.data(), 1, 1) == 0.0);
  CHECK(std::isinf(worst_tile_error(got.data(), 2, {0, 1}, ref.data(), 1, 1)));
}

TEST_CASE("the per-tile check fails a D with one bad 128 x 128 tile that the global error passes",
          "[reference][tile][check]") {
  // A 4096 x 4096 reference (N(0, 1) entries standing in for a 4096^3 product) rounded to bf16,
  // then one 128 x 128 tile scaled by 1.03 (a 3% error confined to it, as a kernel with a wrong
  // scale or a missing K slice in one tile would give). The global relative error averages it
  // over all 1024 tiles: 0.03 / sqrt(1024) ~ 1e-3 on top of the bf16 rounding, well within the
  // tolerance; the tile's own error is 0.03.
  const std::int64_t M = 4096, N = 4096, K = 4096;
  std::vector<double> ref(std::size_t(M * N));
  std::mt19937_64 gen(20261130);
  std::normal_distribution<double> normal(0.0, 1.0);
  for (double& x : ref) x = normal(gen);
  std::vector<std::uint16_t> got(ref.size());
  for (std::size_t i = 0; i < ref.size(); ++i) got[i] = float_to_bf16(float(ref[i]));
  std::vector<std::int64_t> rows(static_cast<std::size_t>(M));
  for (std::int64_t m = 0; m < M; ++m) rows[std::size_t(m)] = m;
  const double tol = per_tensor_tolerance(K);

  const double clean_tile = worst_tile_error(got.data(), N, rows, ref.data());
  const std::int64_t bad_m = 17, bad_n = 9;  // tile row 17, tile column 9
  for (std::int64_t m = bad_m * 128; m < (bad_m + 1) * 128; ++m)
    for (std::int64_t n = bad_n * 128; n < (bad_n + 1) * 128; ++n) {
      const std::size_t i = std::size_t(m * N + n);
      got[i] = float_to_bf16(float(ref[i] * 1.03));
    }
  CheckResult r;
  r.tolerance = tol;
  r.error = compare_bf16_rows(got.data(), N, rows, ref.data());
  r.worst_tile_error = worst_tile_error(got.data(), N, rows, ref.data());
  std::printf("4096 x 4096, one tile x 1.03: global %.2e, worst tile %.2e (clean D: worst tile "
              "%.2e), tolerance %.2e\n",
              r.error.rel_frobenius, r.worst_tile_error, clean_tile, tol);
  CHECK(clean_tile <= tol);                 // the bf16 rounding alone passes per tile
  CHECK(r.error.ok(tol));                   // the global error alone would pass ...
  CHECK(r.worst_tile_error > tol);          // ... the tile check does not
  CHECK(r.worst_tile_error == Approx(0.03).epsilon(0.1));
  CHECK_FALSE(r.ok());

  // Sampled rows (as check_per_tensor does above 1024 rows): a sampled row through the bad tile
  // is enough to catch it.
  const std::vector<std::int64_t> sample = {0, 100, bad_m * 128 + 5, 3000, M - 1};
  std::vector<double> ref_rows;
  for (std::int64_t m : sample)
    ref_rows.insert(ref_rows.end(), ref.begin() + m * N, ref.begin() + (m + 1) * N);
  CHECK(compare_bf16_rows(got.data(), N, sample, ref_rows.data()).ok(tol));
  CHECK(worst_tile_error(got.data(), N, sample, ref_rows.data()) > tol);
}

TEST_CASE("sample_rows: first and last rows, sorted, unique, at most M", "[reference][cpu]") {
  using fp8gemm::sample_rows;
  CHECK(sample_rows(1, 8, 1) == std::vector<std::int64_t>{0});
  CHECK(sample_rows(2, 8, 1) == std::vector<std::int64_t>{0, 1});
  for (std::int64_t M : {3, 17, 1000, 100000})
    for (std::int64_t count : {2, 8, 48}) {
      const auto rows = sample_rows(M, count, 7);
      REQUIRE(!rows.empty());
      CHECK(rows.front() == 0);
      CHECK(rows.back() == M - 1);
      CHECK(std::int64_t(rows.size()) <= std::min(count, M));
      CHECK(std::is_sorted(rows.begin(), rows.end()));
      CHECK(std::adjacent_find(rows.begin(), rows.end()) == rows.end());
      CHECK(sample_rows(M, count, 7) == rows);  // seeded: the same rows again
    }
  CHECK(sample_rows(100000, 48, 1) != sample_rows(100000, 48, 2));
}

TEST_CASE("EarlierShare: the accumulate checks' guard on hand-computed values", "[reference][cpu]") {
  using fp8gemm::EarlierShare;
  EarlierShare none;
  CHECK(none.share() == 0.0);
  CHECK(!none.visible(0.01));  // no entries: no check at all
  // Earlier values (3, 0) added to products (2, 0): results (5, 0), ||3|| / ||5|| = 0.6.
  EarlierShare s;
  double w0 = 2.0, w1 = 0.0;
  s.add_to(w0, 3.0);
  s.add_to(w1, 0.0);
  CHECK(w0 == 5.0);  // the earlier value is added into the expected result
  CHECK(w1 == 0.0);
  CHECK(std::fabs(s.share() - 0.6) < 1e-12);
  CHECK(s.visible(0.1));
  CHECK(!s.visible(0.7));
  // The values session 65 found in chapter 9's test: N(0, 4) beside a product of rms 1e6.
  EarlierShare blind;
  double big = 1e6;
  blind.add_to(big, 4.0);
  CHECK(!blind.visible(0.01));
  EarlierShare nan;
  double one = 1.0;
  nan.add_to(one, std::nan(""));
  CHECK(!nan.visible(0.01));  // a NaN never counts as visible
}
