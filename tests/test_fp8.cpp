// CPU tests of common/fp8.hpp: every code of e4m3, e5m2 and ue8m0 decoded against the OCP 8-bit
// floating point spec (v1.0) written out independently here, and against cuda_fp8.h's host path;
// encode round trips, ties to even, saturation, NaN handling, and a broad bit-exact sweep against
// __nv_cvt_float_to_fp8 / __nv_cvt_float_to_e8m0.
#include <cuda_fp8.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <sstream>
#include <string>
#include <vector>

#include "catch.hpp"
#include "common/fp8.hpp"

namespace {

using fp8gemm::Fp8Format;
using fp8gemm::Saturation;
using fp8gemm::Ue8m0Rounding;

constexpr Fp8Format kFormats[] = {Fp8Format::e4m3, Fp8Format::e5m2};
constexpr Saturation kSaturations[] = {Saturation::finite, Saturation::none};
constexpr Ue8m0Rounding kRoundings[] = {Ue8m0Rounding::toward_zero, Ue8m0Rounding::toward_pos_inf};

const char* name(Fp8Format f) { return f == Fp8Format::e4m3 ? "e4m3" : "e5m2"; }
const char* name(Saturation s) { return s == Saturation::finite ? "finite" : "none"; }
const char* name(Ue8m0Rounding r) {
  return r == Ue8m0Rounding::toward_zero ? "toward_zero" : "toward_pos_inf";
}

std::uint32_t bits_of(float x) { return std::bit_cast<std::uint32_t>(x); }
float float_of(std::uint32_t bits) { return std::bit_cast<float>(bits); }

std::string hex(std::uint32_t v) {
  std::ostringstream s;
  s << "0x" << std::hex << v;
  return s.str();
}

/// Same value and same sign (so -0 != +0), or both NaN (NaN payloads and signs are not part of
/// any of these formats' contracts).
bool same(double a, double b) {
  if (std::isnan(a) || std::isnan(b)) return std::isnan(a) && std::isnan(b);
  return a == b && std::signbit(a) == std::signbit(b);
}

// ---- The OCP spec, written out without reference to common/fp8.hpp ----------------------------

/// Decodes per the OCP table: sign S, exponent field E (bias b), mantissa field M of m bits.
/// Normal: (-1)^S 2^(E-b) (1 + M/2^m); subnormal (E = 0): (-1)^S 2^(1-b) (M/2^m).
/// e4m3: only S.1111.111 is NaN (no infinities, so E = 15 is otherwise normal).
/// e5m2: E = 31 is inf (M = 0) or NaN (M != 0), as IEEE.
double spec_decode(std::uint8_t code, Fp8Format f) {
  const int ebits = f == Fp8Format::e4m3 ? 4 : 5;
  const int mbits = f == Fp8Format::e4m3 ? 3 : 2;
  const int bias = f == Fp8Format::e4m3 ? 7 : 15;
  const int S = code >> 7, E = (code >> mbits) & ((1 << ebits) - 1), M = code & ((1 << mbits) - 1);
  const double sign = S ? -1.0 : 1.0;
  if (f == Fp8Format::e4m3 && (code & 0x7F) == 0x7F) return std::nan("");
  if (f == Fp8Format::e5m2 && E == 31)
    return M == 0 ? sign * std::numeric_limits<double>::infinity() : std::nan("");
  const double frac = double(M) / double(1 << mbits);
  if (E == 0) return sign * std::pow(2.0, 1 - bias) * frac;
  return sign * std::pow(2.0, E - bias) * (1.0 + frac);
}

/// UE8M0: 2^(E - 127), 0xFF is NaN.
double spec_decode_ue8m0(std::uint8_t code) {
  return code == 0xFF ? std::nan("") : std::pow(2.0, int(code) - 127);
}

// ---- cuda_fp8.h's host path ---------------------------------------------------------------------

__nv_fp8_interpretation_t nv(Fp8Format f) { return f == Fp8Format::e4m3 ? __NV_E4M3 : __NV_E5M2; }
__nv_saturation_t nv(Saturation s) { return s == Saturation::finite ? __NV_SATFINITE : __NV_NOSAT; }
cudaRoundMode nv(Ue8m0Rounding r) {
  return r == Ue8m0Rounding::toward_zero ? cudaRoundZero : cudaRoundPosInf;
}

float cuda_decode(std::uint8_t code, Fp8Format f) {
  return __half2float(__half(__nv_cvt_fp8_to_halfraw(code, nv(f))));
}
float cuda_decode_ue8m0(std::uint8_t code) {
  return float_of(std::uint32_t(__nv_cvt_e8m0_to_bf16raw(code).x) << 16);
}
std::uint8_t cuda_encode(float x, Fp8Format f, Saturation s) {
  return __nv_cvt_float_to_fp8(x, nv(s), nv(f));
}
std::uint8_t cuda_encode_ue8m0(float x, Ue8m0Rounding r, Saturation s) {
  return __nv_cvt_float_to_e8m0(x, nv(s), nv(r));
}

bool is_nan_code(std::uint8_t c, Fp8Format f) {
  return f == Fp8Format::e4m3 ? (c & 0x7F) == 0x7F : (c & 0x7F) > 0x7C;
}
bool is_inf_code(std::uint8_t c, Fp8Format f) { return f == Fp8Format::e5m2 && (c & 0x7F) == 0x7C; }
std::uint8_t max_code(Fp8Format f) { return f == Fp8Format::e4m3 ? 0x7E : 0x7B; }

// ---- Sweeps: compare two encoders over many float bit patterns, counting mismatches ----------

struct Mismatches {
  std::uint64_t checked = 0, count = 0;
  std::uint32_t first_bits = 0;
  unsigned first_ours = 0, first_theirs = 0;
  void add(std::uint32_t bits, unsigned ours, unsigned theirs) {
    ++checked;
    if (ours == theirs) return;
    if (count++ == 0) {
      first_bits = bits;
      first_ours = ours;
      first_theirs = theirs;
    }
  }
  std::string describe() const {
    std::ostringstream s;
    s << count << " mismatches in " << checked << " inputs";
    if (count)
      s << "; first: input bits " << hex(first_bits) << " (" << float_of(first_bits)
        << ") ours " << hex(first_ours) << " cuda_fp8.h " << hex(first_theirs);
    return s.str();
  }
};

/// The float patterns of the sweep: every 61st bit pattern (61 is prime, so the low bits cycle
/// through every residue and all exponents, signs, NaNs and subnormals are hit), plus every
/// pattern within +-radius of each given boundary value (both signs).
void for_each_pattern(const std::vector<float>& boundaries, std::uint32_t radius,
                      const std::function<void(std::uint32_t)>& visit) {
  for (std::uint64_t b = 0; b <= 0xFFFFFFFFull; b += 61) visit(std::uint32_t(b));
  for (float v : boundaries) {
    const std::uint32_t center = bits_of(std::fabs(v));
    for (std::uint32_t d = 0; d <= 2 * radius; ++d) {
      const std::uint32_t b = center - radius + d;  // wraps only near 0: more NaN patterns
      visit(b);
      visit(b | 0x80000000u);
    }
  }
}

/// Every finite non-negative value of a format, in increasing order (codes 0x00 up to max).
std::vector<float> positive_values(Fp8Format f) {
  std::vector<float> v;
  for (unsigned c = 0; c <= max_code(f); ++c) v.push_back(fp8gemm::fp8_decode(std::uint8_t(c), f));
  return v;
}

/// The values where an fp8 encoder's result changes: each code, each midpoint between adjacent
/// codes, the overflow threshold max + half an ulp, and half the smallest subnormal.
std::vector<float> fp8_boundaries(Fp8Format f) {
  const std::vector<float> v = positive_values(f);
  std::vector<float> out(v.begin() + 1, v.end());
  for (std::size_t i = 0; i + 1 < v.size(); ++i) out.push_back((v[i] + v[i + 1]) / 2);
  const float max = v.back(), ulp_at_max = v.back() - v[v.size() - 2];
  out.push_back(max + ulp_at_max / 2);
  out.push_back(max + ulp_at_max);
  return out;
}

/// UE8M0 boundaries: every power of two a float can hold (normals and subnormals).
std::vector<float> ue8m0_boundaries() {
  std::vector<float> out;
  for (int e = -149; e <= 127; ++e) out.push_back(std::ldexp(1.0f, e));
  return out;
}

}  // namespace

// ================================ decode ===========================================================

TEST_CASE("fp8_decode matches the OCP spec formula on all 256 codes", "[fp8][decode]") {
  for (Fp8Format f : kFormats) {
    for (unsigned c = 0; c < 256; ++c) {
      INFO(name(f) << " code " << hex(c));
      CHECK(same(fp8gemm::fp8_decode(std::uint8_t(c), f), spec_decode(std::uint8_t(c), f)));
    }
  }
}

TEST_CASE("fp8_decode matches cuda_fp8.h's host conversion on all 256 codes", "[fp8][decode]") {
  for (Fp8Format f : kFormats) {
    for (unsigned c = 0; c < 256; ++c) {
      INFO(name(f) << " code " << hex(c));
      CHECK(same(fp8gemm::fp8_decode(std::uint8_t(c), f), cuda_decode(std::uint8_t(c), f)));
    }
  }
}

TEST_CASE("fp8 format landmarks", "[fp8][decode]") {
  using fp8gemm::e4m3_decode;
  using fp8gemm::e5m2_decode;
  // e4m3: max 448 = 0x7E, NaN only S.1111.111, min normal 2^-6, min subnormal 2^-9.
  CHECK(e4m3_decode(0x7E) == 448.0f);
  CHECK(e4m3_decode(0xFE) == -448.0f);
  CHECK(fp8gemm::kE4m3Max == 448.0f);
  CHECK(std::isnan(e4m3_decode(0x7F)));
  CHECK(std::isnan(e4m3_decode(0xFF)));
  CHECK(e4m3_decode(0x78) == 256.0f);  // E = 15 is an ordinary binade in e4m3
  CHECK(e4m3_decode(0x08) == std::ldexp(1.0f, -6));
  CHECK(e4m3_decode(0x01) == std::ldexp(1.0f, -9));
  CHECK(std::signbit(e4m3_decode(0x80)));
  int nan_codes = 0;
  for (unsigned c = 0; c < 256; ++c) nan_codes += std::isnan(e4m3_decode(std::uint8_t(c)));
  CHECK(nan_codes == 2);
  // e5m2: max 57344 = 0x7B, inf 0x7C / 0xFC, NaN above.
  CHECK(e5m2_decode(0x7B) == 57344.0f);
  CHECK(fp8gemm::kE5m2Max == 57344.0f);
  CHECK(e5m2_decode(0x7C) == std::numeric_limits<float>::infinity());
  CHECK(e5m2_decode(0xFC) == -std::numeric_limits<float>::infinity());
  for (unsigned c : {0x7Du, 0x7Eu, 0x7Fu, 0xFDu, 0xFEu, 0xFFu}) CHECK(std::isnan(e5m2_decode(std::uint8_t(c))));
  CHECK(e5m2_decode(0x01) == std::ldexp(1.0f, -16));
  CHECK(e5m2_decode(0x04) == std::ldexp(1.0f, -14));
}

TEST_CASE("ue8m0_decode matches 2^(e-127) and cuda_fp8.h on all 256 codes", "[fp8][ue8m0]") {
  for (unsigned c = 0; c < 256; ++c) {
    INFO("code " << hex(c));
    const float ours = fp8gemm::ue8m0_decode(std::uint8_t(c));
    CHECK(same(ours, spec_decode_ue8m0(std::uint8_t(c))));
    CHECK(same(ours, cuda_decode_ue8m0(std::uint8_t(c))));
  }
  CHECK(fp8gemm::ue8m0_decode(127) == 1.0f);
  CHECK(fp8gemm::ue8m0_decode(0) == std::ldexp(1.0f, -127));
  CHECK(fp8gemm::ue8m0_decode(254) == std::ldexp(1.0f, 127));
  CHECK(std::isnan(fp8gemm::ue8m0_decode(0xFF)));
}

// ================================ encode ===========================================================

TEST_CASE("fp8_encode round-trips every finite code", "[fp8][encode]") {
  for (Fp8Format f : kFormats) {
    for (Saturation s : kSaturations) {
      for (unsigned c = 0; c < 256; ++c) {
        if (is_nan_code(std::uint8_t(c), f) || is_inf_code(std::uint8_t(c), f)) continue;
        INFO(name(f) << " saturation " << name(s) << " code " << hex(c));
        CHECK(fp8gemm::fp8_encode(fp8gemm::fp8_decode(std::uint8_t(c), f), f, s) == c);
      }
    }
  }
}

TEST_CASE("fp8_encode rounds to nearest, ties to even", "[fp8][encode]") {
  for (Fp8Format f : kFormats) {
    for (Saturation s : kSaturations) {
      const std::vector<float> v = positive_values(f);
      // Adjacent codes c, c+1 differ in the mantissa's last bit, so the even one is the even code.
      for (unsigned c = 0; c + 1 < v.size(); ++c) {
        const float lo = v[c], hi = v[c + 1], mid = (lo + hi) / 2;  // exact: one more bit
        REQUIRE(mid - lo == hi - mid);
        const unsigned even = c % 2 == 0 ? c : c + 1;
        for (unsigned sign : {0x00u, 0x80u}) {
          const float m = sign ? -mid : mid;
          INFO(name(f) << " saturation " << name(s) << " between codes " << hex(c | sign)
                       << " and " << hex((c + 1) | sign) << ", midpoint " << m);
          CHECK(fp8gemm::fp8_encode(m, f, s) == (even | sign));
          CHECK(fp8gemm::fp8_encode(std::nextafter(m, 0.0f), f, s) == (c | sign));
          CHECK(fp8gemm::fp8_encode(std::nextafter(m, 2 * m), f, s) == ((c + 1) | sign));
        }
      }
    }
  }
  // The examples worth naming: 464 is the midpoint of 448 (0x7E, even) and 480 (which would be
  // 0x7F, NaN), so it rounds to 448 even without saturation; the e4m3 midpoint 2^-10 between 0
  // and the smallest subnormal rounds to 0.
  for (Saturation s : kSaturations) {
    CHECK(fp8gemm::e4m3_encode(464.0f, s) == 0x7E);
    CHECK(fp8gemm::e4m3_encode(-464.0f, s) == 0xFE);
    CHECK(fp8gemm::e4m3_encode(std::ldexp(1.0f, -10), s) == 0x00);
    CHECK(fp8gemm::e4m3_encode(std::nextafter(std::ldexp(1.0f, -10), 1.0f), s) == 0x01);
    CHECK(fp8gemm::e4m3_encode(std::ldexp(3.0f, -10), s) == 0x02);  // 1.5 subnormal ulps -> 2
    CHECK(fp8gemm::e4m3_encode(std::ldexp(5.0f, -10), s) == 0x02);  // 2.5 subnormal ulps -> 2
  }
  CHECK(fp8gemm::e4m3_encode(std::nextafter(464.0f, 0.0f), Saturation::none) == 0x7E);
}

TEST_CASE("fp8_encode saturation", "[fp8][encode]") {
  const float inf = std::numeric_limits<float>::infinity();
  const float big[] = {inf, std::numeric_limits<float>::max(), 1e30f, 65536.0f, 61440.0f};
  SECTION("e4m3: finite clamps to +-448, none gives NaN (0x7F / 0xFF)") {
    for (float x : {std::nextafter(464.0f, inf), 480.0f, 500.0f, 1e4f, 57344.0f}) {
      INFO("x = " << x);
      CHECK(fp8gemm::e4m3_encode(x, Saturation::finite) == 0x7E);
      CHECK(fp8gemm::e4m3_encode(-x, Saturation::finite) == 0xFE);
      CHECK(fp8gemm::e4m3_encode(x, Saturation::none) == 0x7F);
      CHECK(fp8gemm::e4m3_encode(-x, Saturation::none) == 0xFF);
    }
    for (float x : big) {
      INFO("x = " << x);
      CHECK(fp8gemm::e4m3_encode(x, Saturation::finite) == 0x7E);
      CHECK(fp8gemm::e4m3_encode(-x, Saturation::finite) == 0xFE);
      CHECK(fp8gemm::e4m3_encode(x, Saturation::none) == 0x7F);
      CHECK(fp8gemm::e4m3_encode(-x, Saturation::none) == 0xFF);
    }
  }
  SECTION("e5m2: finite clamps to +-57344, none gives +-inf (0x7C / 0xFC)") {
    // 61440 is the midpoint of 57344 (0x7B, odd) and 65536 (0x7C): ties to even overflow.
    CHECK(fp8gemm::e5m2_encode(std::nextafter(61440.0f, 0.0f), Saturation::none) == 0x7B);
    for (float x : big) {
      INFO("x = " << x);
      CHECK(fp8gemm::e5m2_encode(x, Saturation::finite) == 0x7B);
      CHECK(fp8gemm::e5m2_encode(-x, Saturation::finite) == 0xFB);
      CHECK(fp8gemm::e5m2_encode(x, Saturation::none) == 0x7C);
      CHECK(fp8gemm::e5m2_encode(-x, Saturation::none) == 0xFC);
    }
  }
}

TEST_CASE("fp8_encode turns every NaN into 0x7F", "[fp8][encode]") {
  for (std::uint32_t b : {0x7FC00000u, 0xFFC00000u, 0x7F800001u, 0xFF800001u, 0x7FFFFFFFu}) {
    for (Fp8Format f : kFormats)
      for (Saturation s : kSaturations) {
        INFO(name(f) << " saturation " << name(s) << " NaN bits " << hex(b));
        CHECK(fp8gemm::fp8_encode(float_of(b), f, s) == 0x7F);
      }
  }
}

TEST_CASE("fp8_encode keeps the sign of zero and of values that round to zero", "[fp8][encode]") {
  for (Fp8Format f : kFormats) {
    CHECK(fp8gemm::fp8_encode(0.0f, f, Saturation::finite) == 0x00);
    CHECK(fp8gemm::fp8_encode(-0.0f, f, Saturation::finite) == 0x80);
    CHECK(fp8gemm::fp8_encode(-1e-30f, f, Saturation::finite) == 0x80);
    CHECK(fp8gemm::fp8_encode(std::numeric_limits<float>::denorm_min(), f, Saturation::none) == 0);
  }
}

TEST_CASE("ue8m0_encode landmarks", "[fp8][ue8m0]") {
  using fp8gemm::ue8m0_encode;
  for (int e = -127; e <= 127; ++e)
    for (Ue8m0Rounding r : kRoundings) {
      INFO("2^" << e << " rounding " << name(r));
      CHECK(ue8m0_encode(std::ldexp(1.0f, e), r) == e + 127);
    }
  CHECK(ue8m0_encode(1.5f, Ue8m0Rounding::toward_zero) == 127);
  CHECK(ue8m0_encode(1.5f, Ue8m0Rounding::toward_pos_inf) == 128);
  CHECK(ue8m0_encode(-1.5f, Ue8m0Rounding::toward_pos_inf) == 128);  // the sign is ignored
  CHECK(ue8m0_encode(0.0f, Ue8m0Rounding::toward_pos_inf) == 0x00);
  CHECK(ue8m0_encode(std::ldexp(1.0f, -140), Ue8m0Rounding::toward_zero) == 0x00);
  const float inf = std::numeric_limits<float>::infinity();
  for (Ue8m0Rounding r : kRoundings) {
    CHECK(ue8m0_encode(inf, r, Saturation::finite) == 0xFE);
    CHECK(ue8m0_encode(inf, r, Saturation::none) == 0xFF);
    CHECK(ue8m0_encode(std::nanf(""), r, Saturation::finite) == 0xFF);
  }
  // 1.5 * 2^127 rounds up past the largest code.
  CHECK(ue8m0_encode(std::ldexp(1.5f, 127), Ue8m0Rounding::toward_pos_inf, Saturation::finite) == 0xFE);
  CHECK(ue8m0_encode(std::ldexp(1.5f, 127), Ue8m0Rounding::toward_pos_inf, Saturation::none) == 0xFF);
  CHECK(ue8m0_encode(std::ldexp(1.5f, 127), Ue8m0Rounding::toward_zero, Saturation::none) == 0xFE);
}

// ================================ sweeps against cuda_fp8.h ========================================

TEST_CASE("fp8_encode is bit-exact with __nv_cvt_float_to_fp8", "[fp8][encode][sweep]") {
  for (Fp8Format f : kFormats) {
    Mismatches mm[2];
    for_each_pattern(fp8_boundaries(f), 64, [&](std::uint32_t b) {
      const float x = float_of(b);
      for (int s = 0; s < 2; ++s)
        mm[s].add(b, fp8gemm::fp8_encode(x, f, kSaturations[s]),
                  cuda_encode(x, f, kSaturations[s]));
    });
    for (int s = 0; s < 2; ++s) {
      INFO(name(f) << " saturation " << name(kSaturations[s]) << ": " << mm[s].describe());
      CHECK(mm[s].checked > 70'000'000u);
      CHECK(mm[s].count == 0);
    }
  }
}

TEST_CASE("ue8m0_encode is bit-exact with __nv_cvt_float_to_e8m0", "[fp8][ue8m0][sweep]") {
  Mismatches mm[2][2];
  for_each_pattern(ue8m0_boundaries(), 64, [&](std::uint32_t b) {
    const float x = float_of(b);
    for (int r = 0; r < 2; ++r)
      for (int s = 0; s < 2; ++s)
        mm[r][s].add(b, fp8gemm::ue8m0_encode(x, kRoundings[r], kSaturations[s]),
                     cuda_encode_ue8m0(x, kRoundings[r], kSaturations[s]));
  });
  for (int r = 0; r < 2; ++r)
    for (int s = 0; s < 2; ++s) {
      INFO("rounding " << name(kRoundings[r]) << " saturation " << name(kSaturations[s]) << ": "
                       << mm[r][s].describe());
      CHECK(mm[r][s].checked > 70'000'000u);
      CHECK(mm[r][s].count == 0);
    }
}
