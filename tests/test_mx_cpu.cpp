// CPU tests of MXFP8 (common/mx.hpp): the shared-exponent rules floor_ocp (OCP MX v1.0) and
// rceil (cuBLAS / torchao), the quantiser and its 128 x 4 swizzled UE8M0 scale layout, and the
// CPU model of the block-scaled MMA against the float64 reference on dequantised operands.
// Every check draws its own random data (a fresh seed per call of next_seed()).
#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <random>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include "catch.hpp"
#include "common/fp8.hpp"
#include "common/mx.hpp"
#include "common/quantize.hpp"
#include "common/quantize_gpu.hpp"
#include "common/reference.hpp"
#include "common/scaling.hpp"
#include "refusal.hpp"

namespace {

using namespace fp8gemm;

constexpr MxExponentRule kRules[] = {MxExponentRule::floor_ocp, MxExponentRule::rceil};
const float kInf = std::numeric_limits<float>::infinity();
const float kNaN = std::numeric_limits<float>::quiet_NaN();

std::uint64_t next_seed() {
  static std::uint64_t s = 0x6d78667038ull;  // "mxfp8"
  return ++s * 0x9E3779B97F4A7C15ull;
}

/// rows x cols floats: N(0, 1) times 2^e with e random per 32-block in [lo, hi], so neighbouring
/// blocks have different scales. Never all zero.
std::vector<float> random_blocks(std::int64_t rows, std::int64_t cols, std::uint64_t seed,
                                 int lo = -20, int hi = 20) {
  std::mt19937_64 gen(seed);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::uniform_int_distribution<int> expo(lo, hi);
  std::vector<float> x(static_cast<std::size_t>(rows * cols));
  for (std::int64_t r = 0; r < rows; ++r)
    for (std::int64_t j = 0; j < cols / 32; ++j) {
      const float f = std::ldexp(1.0f, expo(gen));
      for (std::int64_t c = j * 32; c < j * 32 + 32; ++c)
        x[static_cast<std::size_t>(r * cols + c)] = normal(gen) * f;
    }
  return x;
}

/// A float drawn log-uniformly over every finite positive float, subnormals included
/// (random bit patterns of the magnitude).
float random_positive_float(std::mt19937_64& gen) {
  std::uniform_int_distribution<std::uint32_t> bits(1u, 0x7F7FFFFFu);
  const std::uint32_t u = bits(gen);
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

float amax_of(const float* x, int n) {
  float a = 0.0f;
  for (int i = 0; i < n; ++i) a = std::max(a, std::fabs(x[i]));
  return a;
}

/// The swizzled offset written out from the rule (independently of scaling.hpp / mx.hpp).
std::int64_t direct_offset(std::int64_t r, std::int64_t j, std::int64_t col_blocks) {
  const std::int64_t col_tiles = (col_blocks + 3) / 4;
  const std::int64_t tile = (r / 128) * col_tiles + j / 4;
  const std::int64_t rr = r % 128;
  return tile * 512 + (rr % 32) * 16 + (rr / 32) * 4 + j % 4;
}

std::uint8_t random_finite_e4m3(std::mt19937_64& gen) {
  std::uniform_int_distribution<int> code(0, 255);
  for (;;) {
    const int c = code(gen);
    if ((c & 0x7F) != 0x7F) return static_cast<std::uint8_t>(c);
  }
}

// ================================== shared-exponent rules ======================================

TEST_CASE("mx_floor_log2 reads floor(log2|x|) from the bits, subnormals included", "[mx]") {
  std::mt19937_64 gen(next_seed());
  for (int i = 0; i < 200000; ++i) {
    const float a = random_positive_float(gen);
    int e2 = 0;
    std::frexp(a, &e2);
    REQUIRE(mx_floor_log2(a) == e2 - 1);
    REQUIRE(mx_floor_log2(-a) == e2 - 1);
  }
  CHECK(mx_floor_log2(std::numeric_limits<float>::denorm_min()) == -149);
  CHECK(mx_floor_log2(std::numeric_limits<float>::min()) == -126);
  CHECK(mx_floor_log2(std::numeric_limits<float>::max()) == 127);
  CHECK(mx_floor_log2(448.0f) == 8);
  CHECK(mx_floor_log2(std::nextafter(512.0f, 0.0f)) == 8);
  CHECK(mx_floor_log2(512.0f) == 9);
}

TEST_CASE("mx_scale_code floor_ocp: floor(log2 amax) - 8, clamped to [-127, 127]", "[mx]") {
  std::mt19937_64 gen(next_seed());
  int clamped = 0;
  for (int i = 0; i < 200000; ++i) {
    const float a = random_positive_float(gen);
    const int code = mx_scale_code(a, MxExponentRule::floor_ocp);
    REQUIRE(code <= 254);
    const int e = code - 127;
    if (e > -127) {
      REQUIRE(std::ldexp(1.0, e + 8) <= double(a));  // exact comparisons in float64
      REQUIRE(double(a) < std::ldexp(1.0, e + 9));
    } else {
      ++clamped;
      REQUIRE(double(a) < std::ldexp(1.0, -118));  // floor(log2 a) - 8 <= -127
    }
    // The same as quantize<Mx1x32>'s expression in quantize.hpp.
    const int q = std::clamp(int(ue8m0_encode(a, Ue8m0Rounding::toward_zero)) - 8, 0, 254);
    REQUIRE(code == q);
  }
  CHECK(clamped > 0);
  CHECK(mx_scale_code(std::numeric_limits<float>::max(), MxExponentRule::floor_ocp) == 246);
}

TEST_CASE("mx_scale_code rceil: the smallest 2^e with amax / 2^e <= 448, exactly", "[mx]") {
  std::mt19937_64 gen(next_seed());
  int clamped = 0, differs = 0, same = 0;
  for (int i = 0; i < 200000; ++i) {
    const float a = random_positive_float(gen);
    const int code = mx_scale_code(a, MxExponentRule::rceil);
    REQUIRE(code <= 254);
    const int e = code - 127;
    REQUIRE(double(a) <= 448.0 * std::ldexp(1.0, e));  // nothing saturates
    if (e > -127) {
      REQUIRE(double(a) > 448.0 * std::ldexp(1.0, e - 1));  // and 2^(e-1) would not do
      // Chapter 7's pow2 scales follow the same rule (without the UE8M0 clamp).
      REQUIRE(scale_from_amax(a, true) == std::ldexp(1.0f, e));
    } else {
      ++clamped;
    }
    const int f = mx_scale_code(a, MxExponentRule::floor_ocp);
    REQUIRE((code - f == 0 || code - f == 1));
    (code == f ? same : differs) += 1;
  }
  CHECK(clamped > 0);
  // rceil is one binade above floor_ocp exactly when amax's significand is above 1.75.
  CHECK(differs > 0);
  CHECK(same > 0);
  CHECK(mx_scale_code(std::numeric_limits<float>::max(), MxExponentRule::rceil) == 247);
}

TEST_CASE("mx_scale_code: zero, NaN and Inf", "[mx]") {
  for (MxExponentRule rule : kRules) {
    CHECK(mx_scale_code(0.0f, rule) == 127);
    CHECK(mx_scale_code(kNaN, rule) == 0xFF);
    CHECK(mx_scale_code(kInf, rule) == 0xFF);
  }
  CHECK(std::string(to_string(MxExponentRule::floor_ocp)) == "floor_ocp");
  CHECK(std::string(to_string(MxExponentRule::rceil)) == "rceil");
}

TEST_CASE("Power-of-two boundaries: 448 * 2^k, just above it, 512 * 2^k and just below", "[mx]") {
  std::mt19937_64 gen(next_seed());
  std::normal_distribution<float> normal(0.0f, 0.2f);
  for (int k = -110; k <= 118; ++k) {
    const float at = std::ldexp(448.0f, k);
    const float above = std::nextafter(at, kInf);
    const float literal = float(448.0 * std::ldexp(1.0, k) * (1.0 + std::ldexp(1.0, -23)));
    const float p2 = std::ldexp(512.0f, k);
    const float below = std::nextafter(p2, 0.0f);
    INFO("k = " << k);
    // amax = 448 * 2^k: both rules give 2^k and amax encodes as 448 exactly.
    CHECK(mx_scale_code(at, MxExponentRule::floor_ocp) == 127 + k);
    CHECK(mx_scale_code(at, MxExponentRule::rceil) == 127 + k);
    // One ulp above: floor keeps 2^k (amax / s rounds back to 448), rceil moves up a binade.
    CHECK(mx_scale_code(above, MxExponentRule::floor_ocp) == 127 + k);
    CHECK(mx_scale_code(above, MxExponentRule::rceil) == 128 + k);
    CHECK(literal > at);
    CHECK(mx_scale_code(literal, MxExponentRule::floor_ocp) == 127 + k);
    CHECK(mx_scale_code(literal, MxExponentRule::rceil) == 128 + k);
    // 512 * 2^k: both give 2^(k+1); one ulp below: floor 2^k (saturates), rceil 2^(k+1).
    CHECK(mx_scale_code(p2, MxExponentRule::floor_ocp) == 128 + k);
    CHECK(mx_scale_code(p2, MxExponentRule::rceil) == 128 + k);
    CHECK(mx_scale_code(below, MxExponentRule::floor_ocp) == 127 + k);
    CHECK(mx_scale_code(below, MxExponentRule::rceil) == 128 + k);

    // The same through the quantiser, with random other elements in the block.
    for (float amax : {at, above, below}) {
      std::vector<float> x(32);
      for (float& v : x) v = std::clamp(normal(gen), -0.9f, 0.9f) * amax;
      const int pos = int(gen() % 32);
      x[pos] = (gen() & 1) ? amax : -amax;
      const auto f = quantize_mx(x.data(), 1, 32, MxExponentRule::floor_ocp);
      const auto c = quantize_mx(x.data(), 1, 32, MxExponentRule::rceil);
      const double sf = ue8m0_decode(f.scales[0]), sc = ue8m0_decode(c.scales[0]);
      const double qf = std::fabs(e4m3_decode(f.values[pos])) * sf;
      const double qc = std::fabs(e4m3_decode(c.values[pos])) * sc;
      if (amax == below) {
        CHECK((f.values[pos] & 0x7F) == 0x7E);           // floor_ocp saturates to 448 * 2^k
        CHECK(qf == 448.0 * std::ldexp(1.0, k));         // 12.5 % below amax
        CHECK(qc == 512.0 * std::ldexp(1.0, k));         // rceil: 256 * 2^(k+1), nearest
      } else {
        CHECK(qf == 448.0 * std::ldexp(1.0, k));
        CHECK(std::fabs(qc - double(amax)) <= double(amax) / 16);
      }
    }
  }
}

// ========================================= the quantiser =======================================

TEST_CASE("floor_ocp equals quantize<Mx1x32> bit for bit; rceil differs from it", "[mx]") {
  int rceil_differs = 0;
  for (auto [rows, cols] : std::vector<std::pair<std::int64_t, std::int64_t>>{
           {1, 32}, {33, 96}, {200, 672}, {129, 160}}) {
    auto x = random_blocks(rows, cols, next_seed());
    // A zero block, a tiny block (clamped exponent, subnormal-range values) and a huge block.
    for (int c = 0; c < 32; ++c) {
      x[static_cast<std::size_t>(c)] = 0.0f;
      if (rows * cols >= 128) {
        x[static_cast<std::size_t>(32 + c)] *= 1e-38f;
        x[static_cast<std::size_t>(64 + c)] *= 1e30f;
      }
    }
    const auto ref = quantize<Mx1x32>(x.data(), rows, cols);
    const auto q = quantize_mx(x.data(), rows, cols, MxExponentRule::floor_ocp);
    INFO(rows << " x " << cols);
    REQUIRE(q.rows == rows);
    REQUIRE(q.cols == cols);
    CHECK(q.values == ref.values);
    CHECK(q.scales == ref.scales);
    const auto r = quantize_mx(x.data(), rows, cols, MxExponentRule::rceil);
    rceil_differs += r.scales != ref.scales;
  }
  CHECK(rceil_differs > 0);
}

TEST_CASE("The bf16 overload equals the float one on the converted values", "[mx]") {
  const std::int64_t rows = 37, cols = 224;
  const auto xf = random_blocks(rows, cols, next_seed());
  std::vector<std::uint16_t> xb(xf.size());
  std::vector<float> back(xf.size());
  for (std::size_t i = 0; i < xf.size(); ++i) {
    xb[i] = float_to_bf16(xf[i]);
    back[i] = bf16_to_float(xb[i]);
  }
  for (MxExponentRule rule : kRules) {
    const auto a = quantize_mx(xb.data(), rows, cols, rule);
    const auto b = quantize_mx(back.data(), rows, cols, rule);
    CHECK(a.values == b.values);
    CHECK(a.scales == b.scales);
    CHECK(a.rule == rule);
  }
}

TEST_CASE("Random N(0,1) data: codes, saturation only under floor_ocp, error bounds", "[mx]") {
  const std::int64_t rows = 64, cols = 1024;
  const auto x = random_blocks(rows, cols, next_seed(), 0, 0);  // plain N(0, 1)
  std::int64_t saturated[2] = {0, 0};
  for (int ri = 0; ri < 2; ++ri) {
    const MxExponentRule rule = kRules[ri];
    const auto q = quantize_mx(x.data(), rows, cols, rule);
    const auto deq = dequantize_mx(q);
    for (std::int64_t r = 0; r < rows; ++r)
      for (std::int64_t j = 0; j < cols / 32; ++j) {
        const float* blk = x.data() + r * cols + j * 32;
        const std::uint8_t code = q.scale(r, j);
        REQUIRE(code == mx_scale_code(amax_of(blk, 32), rule));
        const double s = ue8m0_decode(code);
        for (int i = 0; i < 32; ++i) {
          const std::size_t idx = static_cast<std::size_t>(r * cols + j * 32 + i);
          const double y = double(blk[i]) / s;  // exact (power of two)
          REQUIRE(q.values[idx] == e4m3_encode(float(y)));
          if (std::fabs(y) > 464.0) {  // past 448's rounding interval: clamped
            ++saturated[ri];
            REQUIRE((q.values[idx] & 0x7F) == 0x7E);
          } else {
            // Round to nearest: half a step, 2^-4 relative for e4m3 normals (y >= 2^-6),
            // 2^-10 absolute below.
            REQUIRE(std::fabs(deq[idx] - double(blk[i])) <=
                    std::max(std::fabs(double(blk[i])) / 16, s * std::ldexp(1.0, -10)));
          }
          if (rule == MxExponentRule::rceil) {
            // Nothing saturates: encoding without saturation gives the same code, never NaN.
            REQUIRE(e4m3_encode(float(y), Saturation::none) == q.values[idx]);
          }
        }
      }
  }
  CHECK(saturated[0] > 0);   // floor_ocp saturates some elements of N(0, 1) data ...
  CHECK(saturated[1] == 0);  // ... rceil none
}

TEST_CASE("All-zero, tiny (1e-30, subnormal range) and huge (1e30) blocks", "[mx]") {
  std::mt19937_64 gen(next_seed());
  std::normal_distribution<float> normal(0.0f, 1.0f);
  const std::int64_t cols = 32 * 6;
  std::vector<float> x(static_cast<std::size_t>(2 * cols));
  for (float& v : x) v = normal(gen);
  const float sgn[2] = {1.0f, -1.0f};
  for (int i = 0; i < 32; ++i) {
    x[static_cast<std::size_t>(i)] = 0.0f;                     // block 0: zeros
    x[static_cast<std::size_t>(32 + i)] = sgn[gen() & 1] * 1e-30f;  // block 1: +-1e-30
    x[static_cast<std::size_t>(64 + i)] = sgn[gen() & 1] * 1e30f;   // block 2: +-1e30
    x[static_cast<std::size_t>(96 + i)] *= 1e-40f;             // block 3: subnormal floats
    x[static_cast<std::size_t>(128 + i)] *= 1e-38f;            // block 4: near FLT_MIN
    x[static_cast<std::size_t>(cols + i)] = -0.0f;             // row 1, block 0: negative zeros
  }
  for (MxExponentRule rule : kRules) {
    INFO(to_string(rule));
    const auto q = quantize_mx(x.data(), 2, cols, rule);
    const auto deq = dequantize_mx(q);
    CHECK(q.scale(0, 0) == 127);
    CHECK(q.scale(1, 0) == 127);
    for (int i = 0; i < 32; ++i) {
      CHECK(q.values[static_cast<std::size_t>(i)] == 0x00);
      CHECK(q.values[static_cast<std::size_t>(cols + i)] == 0x80);  // -0 keeps its sign
    }
    // 1e-30: floor(log2) = -100 -> -108; ceil(log2(1e-30 / 448)) = ceil(-108.47) = -108.
    CHECK(q.scale(0, 1) == 127 - 108);
    // 1e30: floor(log2) = 99 -> 91; ceil(log2(1e30 / 448)) = ceil(90.85) = 91.
    CHECK(q.scale(0, 2) == 127 + 91);
    // Subnormal-range and near-FLT_MIN blocks: the exponent clamps to -127 (code 0).
    CHECK(q.scale(0, 3) == 0);
    CHECK(q.scale(0, 4) == 0);
    for (int j = 1; j <= 5; ++j)
      for (int i = 0; i < 32; ++i) {
        const std::size_t idx = static_cast<std::size_t>(j * 32 + i);
        const double s = ue8m0_decode(q.scale(0, j));
        // No saturation happens in these blocks: +-1e-30 / 2^-108 = 324.5 and 1e30 / 2^91 = 404
        // are below 448, and the others are N(0, 1) (clamped blocks: far below 448).
        REQUIRE(std::fabs(deq[idx] - double(x[idx])) <=
                std::max(std::fabs(double(x[idx])) / 16, s * std::ldexp(1.0, -10)));
        REQUIRE(std::isfinite(deq[idx]));
      }
    // The subnormal block still has non-zero codes (x / 2^-127 is up to ~0.04, above 2^-10).
    int nonzero = 0;
    for (int i = 0; i < 32; ++i) nonzero += (q.values[static_cast<std::size_t>(96 + i)] & 0x7F) != 0;
    CHECK(nonzero > 0);
  }
}

TEST_CASE("NaN / Inf blocks: scale 0xFF, all codes 0x7F, other blocks unaffected", "[mx]") {
  std::mt19937_64 gen(next_seed());
  const std::int64_t rows = 5, cols = 32 * 7;
  for (float bad : {kNaN, kInf, -kInf}) {
    for (MxExponentRule rule : kRules) {
      auto x = random_blocks(rows, cols, next_seed());
      const auto clean = quantize_mx(x.data(), rows, cols, rule);
      const std::int64_t br = std::int64_t(gen() % rows), bj = std::int64_t(gen() % 7);
      x[static_cast<std::size_t>(br * cols + bj * 32 + std::int64_t(gen() % 32))] = bad;
      const auto q = quantize_mx(x.data(), rows, cols, rule);
      INFO(bad << " " << to_string(rule) << " at block (" << br << ", " << bj << ")");
      for (std::int64_t r = 0; r < rows; ++r)
        for (std::int64_t j = 0; j < 7; ++j) {
          const bool hit = r == br && j == bj;
          CHECK(q.scale(r, j) == (hit ? 0xFF : clean.scale(r, j)));
          for (int i = 0; i < 32; ++i) {
            const std::size_t idx = static_cast<std::size_t>(r * cols + j * 32 + i);
            REQUIRE(q.values[idx] == (hit ? 0x7F : clean.values[idx]));
          }
        }
      // Dequantised: NaN exactly in that block. GEMM: NaN exactly in the row that uses it.
      const auto deq = dequantize_mx(q);
      for (std::int64_t r = 0; r < rows; ++r)
        for (std::int64_t c = 0; c < cols; ++c)
          REQUIRE(std::isnan(deq[static_cast<std::size_t>(r * cols + c)]) ==
                  (r == br && c / 32 == bj));
      const auto b = quantize_mx(random_blocks(3, cols, next_seed()).data(), 3, cols, rule);
      const auto d = mx_gemm_reference(q, b);
      const auto d64 = mx_gemm_reference_f64(q, b);
      for (std::int64_t r = 0; r < rows; ++r)
        for (std::int64_t n = 0; n < 3; ++n) {
          CHECK(std::isnan(d[static_cast<std::size_t>(r * 3 + n)]) == (r == br));
          CHECK(std::isnan(d64[static_cast<std::size_t>(r * 3 + n)]) == (r == br));
        }
    }
  }
}

// ================================ the swizzled scale layout =====================================

TEST_CASE("Swizzled scale layout against the formula, odd rows and column-block counts", "[mx]") {
  std::mt19937_64 gen(next_seed());
  std::uniform_int_distribution<int> code(1, 254);
  for (std::int64_t rows : {1, 31, 33, 127, 129, 200}) {
    for (std::int64_t cb : {1, 3, 5, 9}) {
      INFO(rows << " rows x " << cb << " column blocks");
      const std::int64_t bytes = ((rows + 127) / 128) * 128 * ((cb + 3) / 4) * 4;
      CHECK(mx_scale_bytes(rows, cb) == bytes);
      CHECK(Mx1x32(rows, cb * 32).size() == bytes);
      std::vector<std::uint8_t> plain(static_cast<std::size_t>(rows * cb));
      for (auto& p : plain) p = static_cast<std::uint8_t>(code(gen));  // never 0: padding is
      const auto sw = mx_swizzle_scales(plain.data(), rows, cb);
      REQUIRE(std::int64_t(sw.size()) == bytes);
      std::vector<bool> used(static_cast<std::size_t>(bytes), false);
      for (std::int64_t r = 0; r < rows; ++r)
        for (std::int64_t j = 0; j < cb; ++j) {
          const std::int64_t o = direct_offset(r, j, cb);
          REQUIRE(mx_scale_offset(r, j, rows, cb) == o);
          REQUIRE(o < bytes);
          REQUIRE(!used[static_cast<std::size_t>(o)]);  // a bijection onto the used bytes
          used[static_cast<std::size_t>(o)] = true;
          REQUIRE(sw[static_cast<std::size_t>(o)] == plain[static_cast<std::size_t>(r * cb + j)]);
        }
      for (std::int64_t o = 0; o < bytes; ++o)
        if (!used[static_cast<std::size_t>(o)]) REQUIRE(sw[static_cast<std::size_t>(o)] == 0);
      CHECK(mx_unswizzle_scales(sw.data(), rows, cb) == plain);

      // The quantiser writes the same layout: each block's code at the formula's offset,
      // zero padding.
      const auto x = random_blocks(rows, cb * 32, next_seed());
      for (MxExponentRule rule : kRules) {
        const auto q = quantize_mx(x.data(), rows, cb * 32, rule);
        REQUIRE(std::int64_t(q.scales.size()) == bytes);
        const auto qp = q.plain_scales();
        for (std::int64_t r = 0; r < rows; ++r)
          for (std::int64_t j = 0; j < cb; ++j) {
            const std::uint8_t expect = mx_scale_code(amax_of(x.data() + r * cb * 32 + j * 32, 32), rule);
            REQUIRE(q.scales[static_cast<std::size_t>(direct_offset(r, j, cb))] == expect);
            REQUIRE(qp[static_cast<std::size_t>(r * cb + j)] == expect);
          }
        for (std::int64_t o = 0; o < bytes; ++o)
          if (!used[static_cast<std::size_t>(o)]) REQUIRE(q.scales[static_cast<std::size_t>(o)] == 0);
        CHECK(mx_swizzle_scales(qp.data(), rows, cb) == q.scales);
      }
    }
  }
  // Two hand-computed offsets: row 32 is the second 4-byte group of the first 16-byte line,
  // row 128 / column block 4 of a 5-column grid is in tile (1, 1) = tile 3 of 2 per row.
  CHECK(mx_scale_offset(32, 0, 200, 5) == 4);
  CHECK(mx_scale_offset(1, 2, 200, 5) == 18);
  CHECK(mx_scale_offset(128, 4, 200, 5) == 3 * 512);
}

TEST_CASE("Bad arguments are refused with std::invalid_argument naming the rule", "[mx]") {
  const std::vector<float> x(64 * 4, 1.0f);
  const std::vector<std::uint16_t> xb(64 * 4, 0x3F80);
  for (std::int64_t cols : {0, 16, 33, 40, 48, 100}) {
    INFO("cols = " << cols);
    try {
      (void)quantize_mx(x.data(), 1, cols, MxExponentRule::floor_ocp);
      FAIL("not refused");
    } catch (const std::invalid_argument& e) {
      const std::string m = e.what();
      CHECK(m.find("cols = " + std::to_string(cols)) != std::string::npos);
      CHECK(m.find("multiple of 32") != std::string::npos);
    }
    CHECK_THROWS_AS(quantize_mx(xb.data(), 1, cols, MxExponentRule::rceil), std::invalid_argument);
  }
  CHECK_THROWS_AS(quantize_mx(x.data(), 0, 32, MxExponentRule::rceil), std::invalid_argument);
  CHECK_THROWS_AS(quantize_mx(static_cast<const float*>(nullptr), 1, 32, MxExponentRule::rceil),
                  std::invalid_argument);
  const std::vector<std::uint8_t> q(64 * 48, 0x38), s(256 * 4, 127);
  try {
    (void)mx_gemm_reference(q.data(), s.data(), q.data(), s.data(), 4, 4, 48);
    FAIL("not refused");
  } catch (const std::invalid_argument& e) {
    CHECK(std::string(e.what()).find("K = 48 is not a positive multiple of 32") != std::string::npos);
  }
  CHECK_THROWS_AS(mx_gemm_reference_f64(q.data(), s.data(), q.data(), nullptr, 4, 4, 32),
                  std::invalid_argument);
  const auto a = quantize_mx(x.data(), 2, 64, MxExponentRule::rceil);
  const auto b = quantize_mx(x.data(), 2, 96, MxExponentRule::rceil);
  CHECK_THROWS_AS(mx_gemm_reference(a, b), std::invalid_argument);
}

TEST_CASE("mx_scale_code_bf16 equals mx_scale_code on every bf16 bit pattern", "[mx]") {
  // The GPU quantisers' integer rule against the CPU ground truth: all 2^16 patterns, both rules
  // (signs, zeros, subnormals, the 1.75 significand boundary of rceil, Inf, every NaN).
  int differing = 0, checked = 0;
  for (const MxExponentRule rule : {MxExponentRule::floor_ocp, MxExponentRule::rceil})
    for (std::uint32_t b = 0; b < 0x10000u; ++b) {
      const std::uint32_t u = b << 16;
      float f;
      std::memcpy(&f, &u, sizeof f);
      const std::uint8_t want = mx_scale_code(std::fabs(f), rule);
      const std::uint8_t got = mx_scale_code_bf16(std::uint16_t(b), rule);
      if (got != want && differing++ < 5)
        FAIL_CHECK("bits 0x" << std::hex << b << std::dec << " rule " << to_string(rule) << ": got "
                             << int(got) << ", want " << int(want));
      ++checked;
    }
  CHECK(differing == 0);
  CHECK(checked == 2 * 65536);
  // Spot values, so that a shared mistake in both would still show: 1.0 -> 2^-8 (floor_ocp),
  // 448 -> 2^0 and 449 (bf16 450) -> 2^1 under rceil; 0 -> 127; Inf -> 0xFF.
  CHECK(mx_scale_code_bf16(0x3F80, MxExponentRule::floor_ocp) == 127 - 8);
  CHECK(mx_scale_code_bf16(float_to_bf16(448.0f), MxExponentRule::rceil) == 127);
  CHECK(mx_scale_code_bf16(float_to_bf16(450.0f), MxExponentRule::rceil) == 128);
  CHECK(mx_scale_code_bf16(float_to_bf16(448.0f), MxExponentRule::floor_ocp) == 127);
  CHECK(mx_scale_code_bf16(0x8000, MxExponentRule::rceil) == 127);
  CHECK(mx_scale_code_bf16(0xFF80, MxExponentRule::floor_ocp) == kUe8m0Nan);
  CHECK(mx_scale_code_bf16(0x0001, MxExponentRule::rceil) == 0);
}

TEST_CASE("mx_tuning::scale_code_select equals mx_scale_code_bf16 on every |x| pattern", "[mx]") {
  // The GPU kernels' branch-free rule (adding 31 to the 7-bit fraction carries into the exponent
  // exactly when rceil rounds up) against the reference integer rule: all 2^15 magnitudes.
  int differing = 0;
  for (const MxExponentRule rule : {MxExponentRule::floor_ocp, MxExponentRule::rceil})
    for (unsigned a = 0; a < 0x8000u; ++a) {
      const unsigned want = mx_scale_code_bf16(std::uint16_t(a), rule);
      const unsigned got = mx_tuning::scale_code_select(a, rule == MxExponentRule::rceil);
      if (got != want && differing++ < 5)
        FAIL_CHECK("bits 0x" << std::hex << a << std::dec << " rule " << to_string(rule) << ": got "
                             << got << ", want " << want);
    }
  CHECK(differing == 0);
}

TEST_CASE("mx_1x32_scale_bytes: whole 128 x 4 tiles", "[mx]") {
  CHECK(mx_1x32_scale_bytes(1, 32) == 512);
  CHECK(mx_1x32_scale_bytes(128, 128) == 512);
  CHECK(mx_1x32_scale_bytes(129, 160) == 256 * 8);
  CHECK(mx_1x32_scale_bytes(8192, 7168) == 8192 * 224);
  CHECK(mx_1x32_scale_bytes(200, 96) ==
        static_cast<std::int64_t>(quantize_mx(std::vector<float>(200 * 96, 1.0f).data(), 200, 96,
                                              MxExponentRule::rceil)
                                      .scales.size()));
}

namespace {
// Fake, far-apart device addresses: the refusals happen before anything is dereferenced or any
// CUDA call is made (so these run without a GPU).
template <class T>
T* fake(std::uintptr_t a) {
  return reinterpret_cast<T*>(a);
}
struct MxCall {
  const std::uint16_t* x = fake<const std::uint16_t>(0x100000000000);
  std::int64_t M = 192, K = 96, ldx = 96;
  std::uint8_t* q = fake<std::uint8_t>(0x200000000000);
  std::int64_t ldq = 96;
  std::uint8_t* scales = fake<std::uint8_t>(0x300000000000);
  std::uint8_t* q_t = fake<std::uint8_t>(0x400000000000);
  std::int64_t ldq_t = 192;
  std::uint8_t* scales_t = fake<std::uint8_t>(0x500000000000);
  MxExponentRule rule = MxExponentRule::floor_ocp;
};
std::string refuse_single(const MxCall& c) {
  return test::refusal_of([&] {
    quantize_mx_1x32(c.x, c.M, c.K, c.ldx, c.q, c.ldq, c.scales, c.rule);
  });
}
std::string refuse_dual(const MxCall& c) {
  return test::refusal_of([&] {
    quantize_mx_1x32_dual(c.x, c.M, c.K, c.ldx, c.q, c.ldq, c.scales, c.q_t, c.ldq_t, c.scales_t,
                          c.rule);
  });
}
}  // namespace

TEST_CASE("quantize_mx_1x32 / _dual refuse bad arguments before any CUDA call", "[mx][gpu_args]") {
  using test::has;
  struct Bad {
    const char* what;
    void (*edit)(MxCall&);
    const char* message;  // a piece the message must hold
  };
  const Bad bads[] = {
      {"null x", [](MxCall& c) { c.x = nullptr; }, "x is a null pointer"},
      {"odd x", [](MxCall& c) { c.x = fake<const std::uint16_t>(0x100000000001); },
       "must be 2-byte aligned (bf16)"},
      {"null q", [](MxCall& c) { c.q = nullptr; }, "q is a null pointer"},
      {"null scales", [](MxCall& c) { c.scales = nullptr; }, "scales is a null pointer"},
      {"M = 0", [](MxCall& c) { c.M = 0; }, "M = 0 must be >= 1"},
      {"K = 0", [](MxCall& c) { c.K = 0; c.ldx = c.ldq = 96; }, "K = 0 must be >= 1"},
      {"K = 100", [](MxCall& c) { c.K = 100; c.ldx = c.ldq = 128; },
       "K = 100 must be a multiple of 32"},
      {"K = 48", [](MxCall& c) { c.K = 48; }, "K = 48 must be a multiple of 32"},
      {"ldx < K", [](MxCall& c) { c.ldx = 95; }, "ldx = 95 must be >= K = 96"},
      {"ldq < K", [](MxCall& c) { c.ldq = 64; }, "ldq = 64 must be >= K = 96"},
      {"rule", [](MxCall& c) { c.rule = static_cast<MxExponentRule>(7); },
       "rule = 7 is not an MxExponentRule"},
      {"q overlaps x", [](MxCall& c) { c.q = fake<std::uint8_t>(0x100000000000 + 64); },
       "q overlaps x"},
      {"scales overlaps q", [](MxCall& c) { c.scales = c.q + c.M * 96 - 1; },
       "q overlaps scales"},
  };
  for (const Bad& b : bads) {
    MxCall c;
    b.edit(c);
    INFO(b.what);
    const std::string single = refuse_single(c), dual = refuse_dual(c);
    INFO("single: " << single << "\ndual: " << dual);
    CHECK(has(single, "fp8gemm::quantize_mx_1x32: "));
    CHECK(has(single, b.message));
    CHECK(has(dual, "fp8gemm::quantize_mx_1x32_dual: "));
    CHECK(has(dual, b.message));
  }
  // The scale buffer ends exactly at mx_1x32_scale_bytes: the byte after it may be anything.
  {
    MxCall c;
    c.q = c.scales + mx_1x32_scale_bytes(c.M, c.K);
    CHECK_NOTHROW(validate_quantize_mx_1x32(c.x, c.M, c.K, c.ldx, c.q, c.ldq, c.scales, c.rule));
    c.q -= 1;
    CHECK(has(refuse_single(c), "q overlaps scales"));
  }
  // Only the dual's own arguments.
  const Bad dual_bads[] = {
      {"null q_t", [](MxCall& c) { c.q_t = nullptr; }, "q_t is a null pointer"},
      {"null scales_t", [](MxCall& c) { c.scales_t = nullptr; }, "scales_t is a null pointer"},
      {"M = 200", [](MxCall& c) { c.M = 200 + 1; c.ldq_t = 256; },
       "M = 201 must be a multiple of 32 (x^T"},
      {"ldq_t < M", [](MxCall& c) { c.M = 192; c.ldq_t = 160; }, "ldq_t = 160 must be >= M = 192"},
      {"q_t overlaps scales_t",
       [](MxCall& c) { c.M = 192; c.ldq_t = 192; c.scales_t = c.q_t + 95 * 192 + 191; },
       "overlaps"},
      {"scales_t overlaps scales",
       [](MxCall& c) { c.M = 192; c.ldq_t = 192; c.scales_t = c.scales + 100; },
       "scales overlaps scales_t"},
  };
  for (const Bad& b : dual_bads) {
    MxCall c;
    c.M = 192;
    c.ldq_t = 192;
    b.edit(c);
    INFO(b.what);
    const std::string dual = refuse_dual(c);
    INFO("dual: " << dual);
    CHECK(has(dual, "fp8gemm::quantize_mx_1x32_dual: "));
    CHECK(has(dual, b.message));
  }
  // The benchmark / test hook refuses a variant or CTA cap it does not have, before any CUDA call.
  {
    const MxCall c;
    for (const int v : {-1, mx_tuning::kVariants}) {
      const std::string single = test::refusal_of([&] {
        mx_tuning::quantize_mx_1x32(v, 0, c.x, c.M, c.K, c.ldx, c.q, c.ldq, c.scales, c.rule);
      });
      CHECK(has(single, "fp8gemm::quantize_mx_1x32: variant = " + std::to_string(v)));
      const std::string dual = test::refusal_of([&] {
        mx_tuning::quantize_mx_1x32_dual(v, 0, c.x, 192, c.K, c.ldx, c.q, c.ldq, c.scales, c.q_t,
                                         192, c.scales_t, c.rule);
      });
      CHECK(has(dual, "fp8gemm::quantize_mx_1x32_dual: variant = " + std::to_string(v)));
    }
    CHECK(has(test::refusal_of([&] {
                mx_tuning::quantize_mx_1x32(1, -2, c.x, c.M, c.K, c.ldx, c.q, c.ldq, c.scales,
                                            c.rule);
              }),
              "max_ctas = -2 must be >= 0"));
    for (const bool dual : {false, true}) {
      CHECK(mx_tuning::default_variant(dual) >= 0);
      CHECK(mx_tuning::default_variant(dual) < mx_tuning::kVariants);
    }
  }
  // M = 200 is fine for the single quantiser (only the dual needs M % 32 == 0), and valid
  // arguments pass validation (the tests above are not refusing everything).
  MxCall ok;
  CHECK_NOTHROW(validate_quantize_mx_1x32(ok.x, 200, 96, 96, ok.q, 96, ok.scales, ok.rule));
  CHECK_NOTHROW(validate_quantize_mx_1x32_dual(ok.x, 192, 96, 100, ok.q, 97, ok.scales, ok.q_t,
                                               192, ok.scales_t, MxExponentRule::rceil));
  CHECK_THROWS_AS(validate_quantize_mx_1x32_dual(ok.x, 200, 96, 96, ok.q, 96, ok.scales, ok.q_t,
                                                 200, ok.scales_t, ok.rule),
                  std::invalid_argument);
}

// ================================== the block-scaled MMA model ==================================

TEST_CASE("The 32-element block dot product is exact in float64, not in FP32", "[mx]") {
  std::mt19937_64 gen(next_seed());
  for (int t = 0; t < 20000; ++t) {
    std::uint8_t a[32], b[32];
    for (int i = 0; i < 32; ++i) {
      // Mix extremes (+-448, the smallest subnormal 2^-9) with random codes.
      const int kind = int(gen() % 4);
      a[i] = kind == 0 ? std::uint8_t(0x7E | (gen() & 0x80)) : kind == 1 ? std::uint8_t(0x01) : random_finite_e4m3(gen);
      b[i] = kind == 0 ? std::uint8_t(0x7E) : kind == 1 ? std::uint8_t(0x81) : random_finite_e4m3(gen);
    }
    // Fixed point: each e4m3 value is an integer times 2^-9, each product an integer times 2^-18.
    std::int64_t exact = 0;
    double fwd = 0.0, rev = 0.0;
    for (int i = 0; i < 32; ++i) {
      const std::int64_t ia = std::llround(std::ldexp(double(e4m3_decode(a[i])), 9));
      const std::int64_t ib = std::llround(std::ldexp(double(e4m3_decode(b[i])), 9));
      REQUIRE(std::ldexp(double(ia), -9) == double(e4m3_decode(a[i])));
      exact += ia * ib;
      fwd += double(e4m3_decode(a[i])) * double(e4m3_decode(b[i]));
      rev += double(e4m3_decode(a[31 - i])) * double(e4m3_decode(b[31 - i]));
      // A single product is exact in FP32.
      REQUIRE(double(e4m3_decode(a[i]) * e4m3_decode(b[i])) ==
              double(e4m3_decode(a[i])) * double(e4m3_decode(b[i])));
    }
    REQUIRE(std::llabs(exact) < (std::int64_t(1) << 41));
    const double e = std::ldexp(double(exact), -18);
    REQUIRE(mx_block_dot_exact(a, b) == e);
    REQUIRE(fwd == e);
    REQUIRE(rev == e);
  }
  // FP32 cannot hold it in general: 448 * 448 + 2^-9 * 2^-9.
  std::uint8_t a[32] = {}, b[32] = {};
  a[0] = b[0] = 0x7E;
  a[1] = b[1] = 0x01;
  const double e = 448.0 * 448.0 + std::ldexp(1.0, -18);
  CHECK(mx_block_dot_exact(a, b) == e);
  CHECK(double(448.0f * 448.0f + std::ldexp(1.0f, -18)) != e);
}

TEST_CASE("The model sums each block exactly, then rounds once (not FP32 step by step)", "[mx]") {
  // Block: 256 * 256 = 2^16, then 31 products 2^-4 * 2^-4 = 2^-8, half an FP32 ulp of 2^16 each.
  // In-order FP32 adds round every one of them away (ties to even); the exact block sum is
  // 65536 + 31 * 2^-8 = 65536 + 15.5 ulp, which rounds (to even) to 65536 + 16 ulp = 65536.125.
  std::uint8_t a[32], b[32];
  a[0] = b[0] = e4m3_encode(256.0f);
  for (int i = 1; i < 32; ++i) a[i] = b[i] = e4m3_encode(0.0625f);
  std::vector<std::uint8_t> sa_v(512, 0), sb_v(512, 0);  // one 128 x 4 tile; (0, 0) at offset 0
  sa_v[0] = sb_v[0] = 127;
  const auto d = mx_gemm_reference(a, sa_v.data(), b, sb_v.data(), 1, 1, 32);
  float naive = 0.0f;
  for (int i = 0; i < 32; ++i) naive += e4m3_decode(a[i]) * e4m3_decode(b[i]);
  CHECK(naive == 65536.0f);
  CHECK(d[0] == 65536.125f);
  // The scale is an exponent add: 2^(ea + eb - 254).
  sa_v[0] = 127 + 3;
  sb_v[0] = 127 - 10;
  CHECK(mx_gemm_reference(a, sa_v.data(), b, sb_v.data(), 1, 1, 32)[0] == std::ldexp(65536.125f, -7));
}

TEST_CASE("Integer data: the model equals the float64 reference exactly", "[mx]") {
  // Integers in [-4, 4] are exact in e4m3, scales 2^0 / 2^1: every block sum and every partial
  // sum is an integer far below 2^24, so both computations are exact.
  std::mt19937_64 gen(next_seed());
  std::uniform_int_distribution<int> v(-4, 4);
  const std::int64_t M = 9, N = 13, K = 2048;
  std::vector<float> a(static_cast<std::size_t>(M * K)), b(static_cast<std::size_t>(N * K));
  for (float& x : a) x = float(v(gen));
  for (float& x : b) x = float(v(gen));
  a[0] = 4.0f;  // never all zero
  for (MxExponentRule rule : kRules) {
    const auto qa = quantize_mx(a.data(), M, K, rule);
    const auto qb = quantize_mx(b.data(), N, K, rule);
    const auto d = mx_gemm_reference(qa, qb);
    const auto d64 = mx_gemm_reference_f64(qa, qb);
    for (std::size_t i = 0; i < d.size(); ++i) REQUIRE(double(d[i]) == d64[i]);
    // And the data survived quantisation exactly (amax 1 .. 4: x / s <= 448 has at most 2
    // significant bits, exact in e4m3).
    CHECK(dequantize_mx(qa) == std::vector<double>(a.begin(), a.end()));
  }
}

TEST_CASE("The model against the float64 reference: within the derived bound", "[mx]") {
  for (auto [M, N, K] : std::vector<std::array<std::int64_t, 3>>{
           {1, 1, 32}, {33, 17, 96}, {70, 40, 1024}, {5, 3, 4096}, {130, 6, 160}}) {
    for (MxExponentRule rule : kRules) {
      INFO(M << " x " << N << " x " << K << ", " << to_string(rule));
      const auto xa = random_blocks(M, K, next_seed());
      const auto xb = random_blocks(N, K, next_seed());
      const auto qa = quantize_mx(xa.data(), M, K, rule);
      const auto qb = quantize_mx(xb.data(), N, K, rule);
      const auto d = mx_gemm_reference(qa, qb);
      const auto d64 = mx_gemm_reference_f64(qa, qb);
      const auto mag = mx_gemm_abs_f64(qa, qb);
      // The f64 model is the project's float64 reference on the dequantised operands.
      const auto da = dequantize_mx(qa), db = dequantize_mx(qb);
      CHECK(reference_gemm(M, N, K, da.data(), db.data()) == d64);
      const double tol = mx_gemm_model_tolerance(K), slack = mx_gemm_model_abs_slack(K);
      double worst = 0.0;  // error / bound
      for (std::size_t i = 0; i < d.size(); ++i) {
        REQUIRE(std::isfinite(d[i]));
        const double err = std::fabs(double(d[i]) - d64[i]);
        REQUIRE(err <= tol * mag[i] + slack);
        worst = std::max(worst, err / (tol * mag[i] + slack));
      }
      INFO("worst error / bound = " << worst);
      CHECK(worst < 1.0);

      // The bound is tight enough to catch a wrong scale or a wrong layout.
      {
        auto bad = qa;  // every scale of A's last row one binade too high
        for (std::int64_t j = 0; j < K / 32; ++j)
          bad.scales[static_cast<std::size_t>(mx_scale_offset(M - 1, j, M, K / 32))] += 1;
        const auto dbad = mx_gemm_reference(bad, qb);
        int violations = 0;
        for (std::size_t i = 0; i < d.size(); ++i)
          violations += std::fabs(double(dbad[i]) - d64[i]) > tol * mag[i] + slack;
        CHECK(violations > 0);
      }
      if (M > 1 && K / 32 > 1) {
        // Plain row-major scales passed where the swizzled layout is expected.
        auto plain = qa;
        const auto p = qa.plain_scales();
        std::fill(plain.scales.begin(), plain.scales.end(), 0);
        std::copy(p.begin(), p.end(), plain.scales.begin());
        const auto dbad = mx_gemm_reference(plain, qb);
        int violations = 0;
        for (std::size_t i = 0; i < d.size(); ++i)
          violations += std::fabs(double(dbad[i]) - d64[i]) > tol * mag[i] + slack;
        CHECK(violations > 0);
      }
    }
  }
  // The tolerance grows with K: about (K/32) * 2^-24.
  CHECK(mx_gemm_model_tolerance(1024) == Approx(32 * std::ldexp(1.0, -24)).epsilon(1e-3));
  CHECK(mx_gemm_model_tolerance(16384) == Approx(512 * std::ldexp(1.0, -24)).epsilon(1e-3));
}

}  // namespace

TEST_CASE("mx_dequantize_bf16: exact wherever bf16 holds the value, every element and code",
          "[mx]") {
  // All 256 x 256 pairs: the value e4m3 x 2^(code - 127) in float64 (exact), against the bf16.
  std::int64_t exact = 0, rounded_small = 0, infinite = 0;
  for (int e = 0; e < 256; ++e)
    for (int c = 0; c < 256; ++c) {
      const std::uint16_t got = mx_dequantize_bf16(std::uint8_t(e), std::uint8_t(c));
      const double v = double(e4m3_decode(std::uint8_t(e))) * std::ldexp(1.0, c - 127);
      INFO("e4m3 0x" << std::hex << e << ", code " << std::dec << c);
      if (std::isnan(v) || c == 0xFF) {
        CHECK(got == 0x7FC0);
      } else if (v == 0.0 || (std::fabs(v) >= std::ldexp(1.0, -130) &&
                              std::fabs(v) < std::ldexp(1.0, 128))) {
        // 4 significant bits from 2^-130 up: the lowest at 2^-133 or above, on bf16's grid.
        CHECK(double(bf16_to_float(got)) == v);
        ++exact;
      } else if (std::fabs(v) >= std::ldexp(1.0, 128)) {
        CHECK(std::isinf(bf16_to_float(got)));
        CHECK(std::signbit(bf16_to_float(got)) == std::signbit(v));
        ++infinite;
      } else {
        // Below 2^-130 a value's last bits may fall under bf16's grid there (2^-133 apart, its
        // subnormals): the nearest point of it.
        CHECK(std::fabs(double(bf16_to_float(got)) - v) <= std::ldexp(1.0, -134));
        ++rounded_small;
      }
    }
  CHECK(exact > 50000);  // nearly all of the 65280 non-NaN pairs
  CHECK(rounded_small > 0);
  CHECK(infinite > 0);
  // The operand form applies the block's code to each element (a random operand, codes 100..154).
  std::mt19937_64 rng(next_seed());
  MxQuantized q;
  q.rows = 3;
  q.cols = 96;
  q.values.resize(std::size_t(q.rows * q.cols));
  for (auto& v : q.values) v = std::uint8_t(rng() & 0x7E);  // no NaN code
  std::vector<std::uint8_t> plain(std::size_t(q.rows * 3));
  for (auto& s : plain) s = std::uint8_t(100 + rng() % 55);
  q.scales = mx_swizzle_scales(plain.data(), q.rows, 3);
  const std::vector<std::uint16_t> y = dequantize_mx_bf16(q);
  const std::vector<double> ref = dequantize_mx(q);
  for (std::size_t i = 0; i < y.size(); ++i) CHECK(double(bf16_to_float(y[i])) == ref[i]);
}

TEST_CASE("dequantize_mx_1x32_bf16 refuses bad arguments before any CUDA call", "[mx][gpu_args]") {
  // Fake device addresses: every refusal below comes from the pure checks, which run before the
  // first CUDA call (the pointer attribute queries).
  const MxDequantOperand good{fake<std::uint8_t>(0x100000000000), 256, 512, 512,
                              fake<std::uint8_t>(0x200000000000),
                              fake<std::uint16_t>(0x300000000000), 512};
  auto refuse = [](MxDequantOperand a, const MxDequantOperand* b = nullptr) {
    return test::refusal_of([&] { dequantize_mx_1x32_bf16(a, b); });
  };
  MxDequantOperand o = good;
  o.K = 48;
  CHECK(test::has(refuse(o), "fp8gemm::dequantize_mx_1x32_bf16: "));
  CHECK(test::has(refuse(o), "K = 48 must be a multiple of 32"));
  o = good;
  o.y = nullptr;
  CHECK(test::has(refuse(o), "y"));
  o = good;
  o.ldy = 100;
  CHECK(test::has(refuse(o), "ldy"));
  o = good;  // y over q
  o.y = reinterpret_cast<std::uint16_t*>(const_cast<std::uint8_t*>(good.q) + 64);
  CHECK(test::has(refuse(o), "y overlaps q"));
  // The second operand: its own checks, named, and its y may overlap nothing of the first's.
  MxDequantOperand b = good;
  b.q = fake<std::uint8_t>(0x400000000000);
  b.scales = fake<std::uint8_t>(0x500000000000);
  b.y = fake<std::uint16_t>(0x600000000000);
  b.K = 40;
  CHECK(test::has(refuse(good, &b), "K = 40"));
  b.K = 512;
  b.y = good.y;
  CHECK(test::has(refuse(good, &b), "second y"));
}

TEST_CASE("requantize_mx refuses bad arguments before any CUDA call", "[mx][gpu_args]") {
  // Fake device addresses, as above: every refusal comes from the pure checks.
  const MxRequantOperand good{fake<std::uint8_t>(0x100000000000), 256, 512, 512,
                              fake<std::uint8_t>(0x200000000000),
                              fake<std::uint8_t>(0x300000000000), 512,
                              fake<float>(0x400000000000)};
  const GroupScaleLayout la = GroupScaleLayout::mn_major_tma_aligned(256);
  const BlockScaleLayout lb = BlockScaleLayout::padded(512);
  auto refuse = [&](const MxRequantOperand* a, const MxRequantOperand* b,
                    GroupScaleLayout layout_a, BlockScaleLayout layout_b) {
    return test::refusal_of([&] { requantize_mx(a, layout_a, b, layout_b); });
  };
  auto refuse_a = [&](MxRequantOperand a) { return refuse(&a, nullptr, la, lb); };
  CHECK(test::has(refuse(nullptr, nullptr, la, lb),
                  "fp8gemm::requantize_mx: a and b are both null"));
  MxRequantOperand o = good;
  o.K = 48;
  CHECK(test::has(refuse_a(o), "a.K = 48 must be a multiple of 32 (MXFP8 has one UE8M0 scale"));
  o = good;
  o.q = fake<std::uint8_t>(0x100000000008);
  CHECK(test::has(refuse_a(o), "a.q = 0x100000000008 must be 16-byte aligned"));
  o = good;
  o.out = nullptr;
  CHECK(test::has(refuse_a(o), "a.out is a null pointer"));
  o = good;
  o.ldo = 520;
  CHECK(test::has(refuse_a(o), "ldo = 520 must be multiples of 16"));
  o = good;
  o.ldq = 256;
  CHECK(test::has(refuse_a(o), "a.ldq = 256 must be >= K = 512"));
  o = good;
  o.rows = 0;
  CHECK(test::has(refuse_a(o), "a.rows = 0 must be >= 1"));
  CHECK(test::has(refuse(&good, nullptr, GroupScaleLayout::mn_major_packed(100), lb),
                  "layout_a (mn-major, ld 100): ld must be >= a.rows = 256"));
  o = good;  // out over q
  o.out = const_cast<std::uint8_t*>(good.q) + 64;
  CHECK(test::has(refuse_a(o), "a.out overlaps a.q"));
  // B: its own names, its layout, and its outputs may overlap nothing of A's.
  MxRequantOperand b{fake<std::uint8_t>(0x500000000000), 300, 512, 512,
                     fake<std::uint8_t>(0x600000000000), fake<std::uint8_t>(0x700000000000), 512,
                     fake<float>(0x800000000000)};
  CHECK(test::has(refuse(nullptr, &b, la, BlockScaleLayout{3}),
                  "layout_b.ld = 3 must be >= ceil(b.K / 128) = 4"));
  // An ld whose span passes 64-bit byte offsets (the byte count would wrap, and with it the
  // overlap and memory checks, while the kernel writes padding up to ld): refused, either layout.
  const std::int64_t huge = std::int64_t(1) << 61;
  CHECK(test::has(refuse(nullptr, &b, la, BlockScaleLayout{huge}),
                  "layout_b: ld = 2305843009213693952 makes the scale buffer's span overflow"));
  CHECK(test::has(refuse(&good, nullptr, GroupScaleLayout{ScaleMajor::k, huge}, lb),
                  "layout_a: ld = 2305843009213693952 makes the scale buffer's span overflow"));
  b.K = 40;
  CHECK(test::has(refuse(&good, &b, la, lb), "b.K = 40"));
  b.K = 512;
  b.out_scales = good.out_scales;
  CHECK(test::has(refuse(&good, &b, la, lb), "overlaps"));
  // The kernel variants' entry (requant_tuning, for the bench and tests): its own arguments
  // first, then the same checks.
  for (const int v : {-1, requant_tuning::kVariants})
    CHECK(test::has(test::refusal_of([&] {
                      requant_tuning::requantize_mx(v, 0, &good, la, nullptr, lb);
                    }),
                    "fp8gemm::requantize_mx: variant = " + std::to_string(v) + " must be in [0, " +
                        std::to_string(requant_tuning::kVariants) + ")"));
  CHECK(test::has(test::refusal_of([&] {
                    requant_tuning::requantize_mx(1, -1, &good, la, nullptr, lb);
                  }),
                  "fp8gemm::requantize_mx: max_ctas = -1 must be >= 0"));
  CHECK(test::has(test::refusal_of([&] {
                    requant_tuning::requantize_mx(1, 0, nullptr, la, nullptr, lb);
                  }),
                  "fp8gemm::requantize_mx: a and b are both null"));
  CHECK(test::has(test::refusal_of([&] { requant_tuning::variant_run(-1, &good, nullptr); }),
                  "fp8gemm::requantize_mx: variant = -1 must be in [0, "));
  // The fallback needs no GPU: the good operand's scales are 16-byte aligned, these are not.
  MxRequantOperand odd = good;
  odd.scales = fake<std::uint8_t>(0x200000000001);
  for (int v = 0; v < requant_tuning::kVariants; ++v) {
    CHECK(requant_tuning::variant_run(v, &good, nullptr) == v);
    CHECK(requant_tuning::variant_run(v, &good, &odd) == 0);
    CHECK(requant_tuning::variant_run(v, nullptr, &odd) == 0);
  }
  CHECK(std::string(requant_tuning::variant_name(0)) == "v1_tiles");
  CHECK(std::string(requant_tuning::variant_name(requant_tuning::kVariants)) == "?");
  CHECK(requant_tuning::default_variant() >= 0);
  CHECK(requant_tuning::default_variant() < requant_tuning::kVariants);
}

// ============ re-quantising MXFP8 into chapter 7's 1 x 128 / 128 x 128 format (mx.hpp) ===========

namespace {

/// The float64 definition of one re-quantised VALUE, written independently of fp8.hpp: x (an MX
/// element's value) over 2^E (E: its group's exponent) is put on e4m3's grid (spacing 2^-9 below
/// 2^-6, 2^(floor(log2|y|) - 3) above) by `round` (std::nearbyint: to nearest, ties to even, in
/// the default rounding mode) and scaled back. |y| <= 448 always (E is the largest exponent).
double requant_value_f64(double x, int E, double (*round)(double)) {
  if (std::isnan(x)) return x;
  const double y = std::ldexp(x, -E);  // exact in double
  if (y == 0) return std::ldexp(y, E);
  const int e = std::max(std::ilogb(y), -6);
  const double step = std::ldexp(1.0, e - 3);
  return std::ldexp(round(y / step) * step, E);
}

/// A re-implementation of mx_requantize_1x128 (block_rows 1) / _128x128 (128) on float64 values,
/// from the plain scale grid: the dequantised values it should give (NaN in NaN groups). `round`
/// and `subnormals` let a test break the rule on purpose.
std::vector<double> requant_reference(const MxQuantized& q, std::int64_t block_rows,
                                      double (*round)(double), bool subnormals = true) {
  const std::vector<std::uint8_t> sc = q.plain_scales();
  const std::int64_t cb = q.cols / 32;
  auto elem = [&](std::int64_t r, std::int64_t c) {
    return double(e4m3_decode(q.values[std::size_t(r * q.cols + c)]));
  };
  std::vector<double> out(q.values.size());
  for (std::int64_t r0 = 0; r0 < q.rows; r0 += block_rows)
    for (std::int64_t c0 = 0; c0 < q.cols; c0 += 128) {
      const std::int64_t r1 = std::min(q.rows, r0 + block_rows), c1 = std::min(q.cols, c0 + 128);
      bool nan = false, any = false;
      int E = 0;
      for (std::int64_t r = r0; r < r1; ++r)
        for (std::int64_t c = c0; c < c1; ++c) {
          const std::uint8_t code = sc[std::size_t(r * cb + c / 32)];
          nan = nan || code == 0xFF || std::isnan(elem(r, c));
          if (elem(r, c) != 0 && code != 0xFF) {
            E = any ? std::max(E, code - 127) : code - 127;
            any = true;
          }
        }
      for (std::int64_t r = r0; r < r1; ++r)
        for (std::int64_t c = c0; c < c1; ++c) {
          const int eb = sc[std::size_t(r * cb + c / 32)] - 127;
          double v = nan ? std::nan("") : requant_value_f64(std::ldexp(elem(r, c), eb), E, round);
          if (!subnormals && std::fabs(std::ldexp(v, -E)) < std::ldexp(1.0, -6)) v = 0 * v;
          out[std::size_t(r * q.cols + c)] = v;
        }
    }
  return out;
}

/// Entries where got and want differ (NaN equals NaN; +0 equals -0 only in value).
std::int64_t mismatches(const std::vector<double>& got, const std::vector<double>& want) {
  REQUIRE(got.size() == want.size());
  std::int64_t n = 0;
  for (std::size_t i = 0; i < got.size(); ++i)
    if (!(got[i] == want[i] || (std::isnan(got[i]) && std::isnan(want[i])))) ++n;
  return n;
}

double nearest_even(double x) { return std::nearbyint(x); }
double toward_zero(double x) { return std::trunc(x); }
double ties_away(double x) { return std::round(x); }

bool same_bits(double a, double b) { return std::memcmp(&a, &b, sizeof a) == 0; }
bool same_bits(float a, float b) { return std::memcmp(&a, &b, sizeof a) == 0; }

}  // namespace

TEST_CASE("MX re-quantised: an element that stays an e4m3 normal keeps its value exactly",
          "[mx][requant]") {
  // Every code, every shift that keeps the value >= 2^-6 (and zeros at any shift).
  int kept = 0;
  for (int c = 0; c < 256; ++c) {
    const float v = e4m3_decode(std::uint8_t(c));
    if (std::isnan(v)) {
      CHECK(mx_requantize_code(std::uint8_t(c), 3) == 0x7F);
      continue;
    }
    for (int d = 0; d <= 20; ++d) {
      const float y = std::ldexp(v, -d);
      if (y != 0 && std::fabs(y) < std::ldexp(1.0f, -6)) continue;
      INFO("code " << c << " shift " << d);
      REQUIRE(same_bits(e4m3_decode(mx_requantize_code(std::uint8_t(c), d)), y));
      ++kept;
    }
  }
  CHECK(kept > 1000);
  CHECK_THROWS_AS(mx_requantize_code(0x38, -1), std::invalid_argument);
  // A whole operand: every element whose shifted value is a normal dequantises to the same bits
  // as dequantize_mx; only the others may move.
  const std::int64_t rows = 130, cols = 32 * 13;  // a partial 128 x 128 block and 1 x 128 group
  for (MxExponentRule rule : kRules) {
    const auto q = quantize_mx(random_blocks(rows, cols, next_seed(), -6, 6).data(), rows, cols,
                               rule);
    const auto mx = dequantize_mx(q);
    for (std::int64_t br : {1, 128}) {
      const auto got = br == 1 ? dequantize(mx_requantize_1x128(q))
                               : dequantize(mx_requantize_128x128(q));
      std::int64_t same = 0, moved = 0;
      for (std::int64_t r = 0; r < rows; ++r)
        for (std::int64_t c = 0; c < cols; ++c) {
          const std::size_t i = std::size_t(r * cols + c);
          // The group's exponent, here from the MX scales (no zero blocks in this data).
          int E = -1000;
          for (std::int64_t rr = r / br * br; rr < std::min(rows, r / br * br + br); ++rr)
            for (std::int64_t b = c / 128 * 4; b < std::min(cols / 32, c / 128 * 4 + 4); ++b)
              E = std::max(E, q.scale(rr, b) - 127);
          const double y = std::ldexp(mx[i], -E);
          if (y == 0 || std::fabs(y) >= std::ldexp(1.0, -6)) {
            INFO(to_string(rule) << " block rows " << br << " at (" << r << ", " << c << ")");
            REQUIRE(same_bits(got[i], mx[i]));
            ++same;
          } else if (got[i] != mx[i]) {
            ++moved;
          }
        }
      CHECK(same > rows * cols / 2);
      CHECK(moved > 0);  // the spread of 12 binades pushes some into the subnormals
    }
  }
}

TEST_CASE("MX re-quantised: a hand-made group spread over d = 1..12 binades, against float64",
          "[mx][requant]") {
  // One row, 4 groups of 4 blocks; block 0 of every group has code 132 (2^5), block k = 1..3 of
  // group g has code 132 - (3g + k): shifts d = 1 .. 12 by the group's exponent E = 5. Each
  // block holds the same 32 codes: zeros, subnormals, normals, the largest, both signs.
  const std::uint8_t codes[32] = {0x00, 0x80, 0x01, 0x02, 0x03, 0x07, 0x08, 0x09,
                                  0x0F, 0x10, 0x11, 0x18, 0x20, 0x28, 0x30, 0x38,
                                  0x39, 0x3A, 0x3B, 0x3C, 0x3D, 0x3F, 0x48, 0x58,
                                  0x68, 0x78, 0x7D, 0x7E, 0xB8, 0xB9, 0xBB, 0xFE};
  const std::int64_t cols = 512;
  std::vector<std::uint8_t> plain(16);
  MxQuantized q;
  q.rows = 1;
  q.cols = cols;
  for (std::int64_t b = 0; b < 16; ++b) {
    plain[std::size_t(b)] = std::uint8_t(b % 4 == 0 ? 132 : 132 - (3 * (b / 4) + b % 4));
    for (int i = 0; i < 32; ++i) q.values.push_back(codes[i]);
  }
  q.scales = mx_swizzle_scales(plain.data(), 1, 16);
  const auto rq = mx_requantize_1x128(q);
  const auto got = dequantize(rq);
  const auto mx = dequantize_mx(q);
  int flushed = 0, subnormal = 0, inexact = 0;
  for (std::int64_t g = 0; g < 4; ++g) CHECK(rq.scales[std::size_t(g)] == 32.0f);  // 2^E, E = 5
  for (std::int64_t c = 0; c < cols; ++c) {
    const std::size_t i = std::size_t(c);
    const int d = c % 128 < 32 ? 0 : 3 * int(c / 128) + int(c % 128 / 32);
    INFO("column " << c << ", shift " << d << ", code " << int(q.values[i]));
    // The float64 definition: round mx / 2^5 to e4m3's grid, ties to even.
    REQUIRE(same_bits(got[i], requant_value_f64(mx[i], 5, nearest_even)));
    if (d == 0) REQUIRE(rq.values[i] == q.values[i]);
    flushed += mx[i] != 0 && got[i] == 0;
    subnormal += (rq.values[i] & 0x78) == 0 && (rq.values[i] & 0x07) != 0;
    inexact += got[i] != mx[i];
  }
  CHECK(flushed > 20);
  CHECK(subnormal > 20);
  CHECK(inexact > flushed);  // some lost low bits without reaching zero
  // The rule on single elements, by hand (1 = 0x38, 1.125 = 0x39, 1.375 = 0x3B, 1.5 = 0x3C):
  CHECK(mx_requantize_code(0x38, 7) == 0x04);  // 2^-7 = 4 * 2^-9, a subnormal, exact
  CHECK(mx_requantize_code(0x39, 7) == 0x04);  // 4.5 * 2^-9: tie, to even 4
  CHECK(mx_requantize_code(0x3B, 7) == 0x06);  // 5.5 * 2^-9: tie, to even 6
  CHECK(mx_requantize_code(0x38, 9) == 0x01);  // 2^-9: the smallest subnormal
  CHECK(mx_requantize_code(0x38, 10) == 0x00);  // 2^-10: tie between 0 and 2^-9, to even 0
  CHECK(mx_requantize_code(0x3C, 10) == 0x01);  // 0.75 * 2^-9 rounds up
  CHECK(mx_requantize_code(0xB8, 11) == 0x80);  // -2^-11 flushes to -0
  CHECK(mx_requantize_code(0x7E, 12) == 0x1E);  // 448 / 2^12 = 1.75 * 2^-4, a normal, exact
  CHECK(mx_requantize_code(0x7E, 250) == 0x00);
}

TEST_CASE("MX re-quantised: NaN groups, zero blocks, code 0, sizes", "[mx][requant]") {
  const std::int64_t rows = 130, cols = 512;
  for (MxExponentRule rule : kRules)
    for (float bad : {kNaN, kInf}) {
      auto x = random_blocks(rows, cols, next_seed(), -3, 3);
      const auto clean = quantize_mx(x.data(), rows, cols, rule);
      x[std::size_t(3 * cols + 200)] = bad;  // row 3, column 200: group 1, 128 x 128 block (0, 1)
      const auto q = quantize_mx(x.data(), rows, cols, rule);
      REQUIRE(q.scale(3, 6) == kUe8m0Nan);
      INFO(to_string(rule) << " " << bad);
      const auto a = mx_requantize_1x128(q), a0 = mx_requantize_1x128(clean);
      const auto b = mx_requantize_128x128(q), b0 = mx_requantize_128x128(clean);
      for (std::int64_t r = 0; r < rows; ++r)
        for (std::int64_t g = 0; g < 4; ++g) {
          const bool hit_a = r == 3 && g == 1, hit_b = r < 128 && g == 1;
          const float sa = a.scales[std::size_t(a.layout.index(r, g * 128))];
          const float sb = b.scales[std::size_t(b.layout.index(r, g * 128))];
          CHECK(std::isnan(sa) == hit_a);
          CHECK(std::isnan(sb) == hit_b);
          if (!hit_a) CHECK(sa == a0.scales[std::size_t(a0.layout.index(r, g * 128))]);
          if (!hit_b) CHECK(sb == b0.scales[std::size_t(b0.layout.index(r, g * 128))]);
          for (std::int64_t c = g * 128; c < g * 128 + 128; ++c) {
            const std::size_t i = std::size_t(r * cols + c);
            REQUIRE(a.values[i] == (hit_a ? 0x7F : a0.values[i]));
            REQUIRE(b.values[i] == (hit_b ? 0x7F : b0.values[i]));
          }
        }
    }
  // An e4m3 NaN element under a finite scale (a hand-made operand) also makes its group NaN.
  auto q = quantize_mx(random_blocks(1, 256, next_seed()).data(), 1, 256, MxExponentRule::rceil);
  q.values[130] = 0xFF;
  const auto n = mx_requantize_1x128(q);
  CHECK(!std::isnan(n.scales[0]));
  CHECK(std::isnan(n.scales[1]));
  CHECK(n.values[255] == 0x7F);
  // A block of zeros (code 127 = scale 1) does not set the group's exponent: its neighbours at
  // code 100 keep every value. An all-zero group gets scale 1. Code 0 is 2^-127.
  std::vector<float> z(512, 0.0f);
  for (int c = 32; c < 128; ++c) z[std::size_t(c)] = std::ldexp(float(c % 17 + 1), -30);
  for (int c = 256; c < 384; ++c) z[std::size_t(c)] = std::ldexp(float(c % 5 + 1), -138);
  const auto qz = quantize_mx(z.data(), 1, 512, MxExponentRule::floor_ocp);
  REQUIRE(qz.scale(0, 0) == 127);  // the zero block
  REQUIRE(qz.scale(0, 1) < 127);
  REQUIRE(qz.scale(0, 8) == 0);  // amax 5 * 2^-138: the lower clamp, 2^-127
  const auto rz = mx_requantize_1x128(qz);
  CHECK(rz.scales[0] == std::ldexp(1.0f, int(qz.scale(0, 1)) - 127));
  CHECK(rz.scales[1] == 1.0f);
  CHECK(rz.scales[2] == std::ldexp(1.0f, -127));
  CHECK(rz.scales[2] > 0.0f);
  CHECK(mismatches(dequantize(rz), dequantize_mx(qz)) == 0);
  // Sizes.
  MxQuantized bad = qz;
  bad.values.pop_back();
  CHECK_THROWS_AS(mx_requantize_1x128(bad), std::invalid_argument);
  bad = qz;
  bad.scales.resize(4);
  CHECK_THROWS_AS(mx_requantize_128x128(bad), std::invalid_argument);
}

TEST_CASE("MX re-quantised: random operands against a float64 re-implementation; a broken rule "
          "is caught", "[mx][requant]") {
  // Wide exponent spread between blocks (2^-20 .. 2^20): many elements shift into e4m3's
  // subnormals or flush. Ragged edges: 130 rows (a partial 128-row block), 13 MX blocks (a
  // partial last group of one block).
  const std::int64_t rows = 130, cols = 32 * 13;
  for (MxExponentRule rule : kRules) {
    const auto q = quantize_mx(random_blocks(rows, cols, next_seed()).data(), rows, cols, rule);
    for (std::int64_t br : {1, 128}) {
      INFO(to_string(rule) << ", block rows " << br);
      const auto got = br == 1 ? dequantize(mx_requantize_1x128(q))
                               : dequantize(mx_requantize_128x128(q));
      CHECK(mismatches(got, requant_reference(q, br, nearest_even)) == 0);
      // The same check fails for the rule broken on purpose: rounding toward zero, ties away
      // from zero, no e4m3 subnormals (flush below 2^-6), the 1 x 128 rule applied to B.
      CHECK(mismatches(got, requant_reference(q, br, toward_zero)) > 0);
      CHECK(mismatches(got, requant_reference(q, br, ties_away)) > 0);
      CHECK(mismatches(got, requant_reference(q, br, nearest_even, false)) > 0);
      CHECK(mismatches(got, requant_reference(q, br == 1 ? 128 : 1, nearest_even)) > 0);
    }
  }
}
