// CPU tests of the DeepSeek-V3 quantisers' rules (common/quantize.hpp, the ground truth of the
// GPU kernels in common/quantize_gpu.hpp), including the expert-token layout of chapter 8's
// weight gradient, and of the GPU entry points' argument validation, which throws before any
// CUDA call and so runs on machines without a GPU.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "catch.hpp"
#include "common/fp8.hpp"
#include "common/quantize.hpp"
#include "common/quantize_gpu.hpp"
#include "common/reference.hpp"
#include "common/scale_layout.hpp"
#include "common/scaling.hpp"

namespace {

using namespace fp8gemm;

std::uint32_t bits(float f) {
  std::uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}

/// rows x K bf16 bits, row-major with ld: N(0, 1) times 2^e with e random per 128-group in
/// [-20, 20] (so neighbouring groups have different scales), with a zero group, a tiny group
/// (amax / 448 subnormal) and a huge one when there are enough groups.
std::vector<std::uint16_t> random_bf16(std::int64_t rows, std::int64_t K, std::int64_t ld,
                                       std::uint64_t seed) {
  std::mt19937_64 gen(seed);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::uniform_int_distribution<int> expo(-20, 20);
  std::vector<std::uint16_t> x(static_cast<std::size_t>((rows - 1) * ld + K), 0x7FC1);  // NaN gaps
  const std::int64_t groups = ceil_div(K, 128);
  for (std::int64_t r = 0; r < rows; ++r)
    for (std::int64_t g = 0; g < groups; ++g) {
      const std::int64_t id = r * groups + g;
      const float f = id == 1 ? 0.0f : id == 2 ? 1e-38f : id == 3 ? 1e30f : std::ldexp(1.0f, expo(gen));
      for (std::int64_t c = g * 128; c < std::min(K, g * 128 + 128); ++c)
        x[static_cast<std::size_t>(r * ld + c)] = float_to_bf16(normal(gen) * f);
    }
  return x;
}

std::vector<float> to_float(const std::vector<std::uint16_t>& x, std::int64_t rows,
                            std::int64_t K, std::int64_t ld) {
  std::vector<float> f(static_cast<std::size_t>(rows * K));
  for (std::int64_t r = 0; r < rows; ++r)
    for (std::int64_t c = 0; c < K; ++c)
      f[static_cast<std::size_t>(r * K + c)] = bf16_bits_to_float(x[static_cast<std::size_t>(r * ld + c)]);
  return f;
}

TEST_CASE("scale_from_amax: amax / 448, amax = 0, subnormal quotients, non-finite", "[quantize]") {
  CHECK(scale_from_amax(0.0f, false) == 1.0f);
  CHECK(scale_from_amax(0.0f, true) == 1.0f);
  CHECK(scale_from_amax(448.0f, false) == 1.0f);
  CHECK(bits(scale_from_amax(3.0f, false)) == bits(3.0f / 448.0f));
  CHECK(std::isnan(scale_from_amax(std::numeric_limits<float>::infinity(), false)));
  CHECK(std::isnan(scale_from_amax(std::numeric_limits<float>::quiet_NaN(), true)));
  CHECK(bits(scale_from_amax(std::numeric_limits<float>::infinity(), false)) == 0x7FC00000u);
  // Subnormal quotient: rounded up to a multiple of 2^-149, never 0, amax / scale <= 448.
  for (float amax : {1e-37f, 1e-40f, std::numeric_limits<float>::denorm_min(), 5e-36f}) {
    const float s = scale_from_amax(amax, false);
    CHECK(s > 0.0f);
    CHECK(double(amax) / s <= 448.0);
  }
}

TEST_CASE("scale_from_amax: pow2 scales are 2^ceil(log2(amax / 448))", "[quantize]") {
  CHECK(scale_from_amax(448.0f, true) == 1.0f);
  CHECK(scale_from_amax(std::nextafter(448.0f, 1e9f), true) == 2.0f);
  CHECK(scale_from_amax(224.0f, true) == 0.5f);
  CHECK(scale_from_amax(1.0f, true) == std::ldexp(1.0f, -8));
  CHECK(scale_from_amax(std::numeric_limits<float>::max(), true) == std::ldexp(1.0f, 120));
  CHECK(scale_from_amax(std::numeric_limits<float>::denorm_min(), true) == std::ldexp(1.0f, -149));
  std::mt19937_64 gen(7);
  std::uniform_int_distribution<std::uint32_t> pattern(1, 0x7F7FFFFFu);  // positive finite floats
  for (int i = 0; i < 200000; ++i) {
    const std::uint32_t u = pattern(gen);
    float amax;
    std::memcpy(&amax, &u, 4);
    const float s = scale_from_amax(amax, true);
    int e = 0;
    REQUIRE(std::frexp(s, &e) == 0.5f);  // a power of two
    const double ratio = double(amax) / double(s);  // exact enough in double
    REQUIRE(ratio <= 448.0);
    if (s > std::ldexp(1.0f, -149)) REQUIRE(ratio > 224.0);  // not rounded up more than needed
    // x / s is exact for every bf16 x of the group: the quotient equals the double one.
    REQUIRE(double(amax / s) == ratio);
  }
}

// The lean kernels' arithmetic (tuning_1x128 "v2_lean", common/src/quantize_kernels.cuh): its
// scale rule and its division, on every value they can meet. The GPU test runs the same sweep
// through the kernels' own device code (rcp.approx included).
TEST_CASE("tuning_1x128::lean_scale_value is scale_from_amax on every bf16 amax, both rules",
          "[quantize][lean]") {
  for (bool pow2 : {false, true})
    for (std::uint32_t m = 0; m < 0x8000u; ++m) {
      CAPTURE(pow2, m);
      REQUIRE(bits(tuning_1x128::lean_scale_value(m, pow2)) ==
              bits(scale_from_amax(bf16_bits_to_float(std::uint16_t(m)), pow2)));
    }
}

namespace {
/// The lean division of every bf16 x with |x| <= amax (both signs, +-0 included) by the scale of
/// amax (bits m), with y = RN(1 / s) moved by `nudge` floats (-1, 0, 1: the kernels' reciprocal
/// is faithful, one of RN(1 / s) and its neighbours): returns the number of x whose e4m3 code
/// differs from e4m3(x / s), the CPU quantiser's. Tiny groups are prescaled as the kernels do.
std::int64_t lean_mismatches(std::uint32_t m, bool pow2, int nudge) {
  const float scale = scale_from_amax(bf16_bits_to_float(std::uint16_t(m)), pow2);
  const bool tiny = m != 0 && m < tuning_1x128::kLeanTinyAmax;
  const float pre = tiny ? tuning_1x128::kLeanPrescale : 1.0f;
  const float s = scale * pre;
  float y = 1.0f / s;
  if (nudge != 0) y = std::nextafter(y, nudge < 0 ? 0.0f : 1e30f);
  std::int64_t bad = 0;
  for (std::uint32_t xb = 0; xb <= m; ++xb)
    for (std::uint32_t sign : {0u, 0x8000u}) {
      const float x = bf16_bits_to_float(std::uint16_t(xb | sign));
      const float got = tuning_1x128::lean_div(x * pre, s, y), want = x / scale;
      if (bits(got) != bits(want)) bad += e4m3_encode(got) != e4m3_encode(want);
    }
  return bad;
}
}  // namespace

TEST_CASE("tuning_1x128::lean_div: e4m3(x / scale) for every bf16 amax and every |x| <= amax",
          "[quantize][lean]") {
  // y = RN(1 / s): all 2^15 amax values x all their x (~1.1e9 divisions per rule, a few seconds);
  // the neighbours of RN(1 / s) on every 61st amax (all would take as long again, twice).
  for (bool pow2 : {false, true}) {
    std::int64_t bad = 0, bad_nudged = 0;
    for (std::uint32_t m = 0; m < 0x7F80u; ++m) {
      bad += lean_mismatches(m, pow2, 0);
      if (m % 61 == 0) bad_nudged += lean_mismatches(m, pow2, -1) + lean_mismatches(m, pow2, 1);
    }
    CAPTURE(pow2);
    CHECK(bad == 0);
    CHECK(bad_nudged == 0);
  }
  // Not vacuous: without the correction step (q0 = RN(x y) alone) codes differ.
  std::int64_t bad_q0 = 0;
  for (std::uint32_t m = 0x3F80; m < 0x4000; ++m) {
    const float s = scale_from_amax(bf16_bits_to_float(std::uint16_t(m)), false), y = 1.0f / s;
    for (std::uint32_t xb = 0; xb <= m; ++xb) {
      const float x = bf16_bits_to_float(std::uint16_t(xb));
      bad_q0 += e4m3_encode(x * y) != e4m3_encode(x / s);
    }
  }
  CHECK(bad_q0 > 0);
}

TEST_CASE("quantize_1x128_cpu / quantize_128x128_cpu equal quantize<> on finite data",
          "[quantize]") {
  for (std::int64_t rows : {1, 3, 129, 200})
    for (std::int64_t K : {16, 144, 640}) {
      CAPTURE(rows, K);
      const auto x = random_bf16(rows, K, K, std::uint64_t(rows * 1000 + K));
      const auto xf = to_float(x, rows, K, K);
      {
        const auto ref = quantize<Group1x128>(xf.data(), rows, K);
        std::vector<std::uint8_t> q(static_cast<std::size_t>(rows * K));
        std::vector<float> s(ref.scales.size(), 0.0f);
        quantize_1x128_cpu(x.data(), rows, K, K, q.data(), K, s.data(),
                           GroupScaleLayout::mn_major_packed(rows));
        CHECK(q == ref.values);
        CHECK(std::memcmp(s.data(), ref.scales.data(), s.size() * 4) == 0);
      }
      {
        const auto ref = quantize<Block128x128>(xf.data(), rows, K);
        std::vector<std::uint8_t> q(static_cast<std::size_t>(rows * K));
        std::vector<float> s(ref.scales.size(), 0.0f);
        quantize_128x128_cpu(x.data(), rows, K, K, q.data(), K, s.data(),
                             BlockScaleLayout::padded(K));
        CHECK(q == ref.values);
        CHECK(std::memcmp(s.data(), ref.scales.data(), s.size() * 4) == 0);
      }
    }
}

TEST_CASE("1x128 layouts hold the same scales; padding is 0; nothing past the extent is written",
          "[quantize]") {
  const std::int64_t M = 130, K = 7168 + 16, G = ceil_div(K, 128);
  const auto x = random_bf16(M, K, K + 8, 11);
  const GroupScaleLayout layouts[] = {GroupScaleLayout::mn_major_tma_aligned(M),
                                      GroupScaleLayout::mn_major_packed(M),
                                      GroupScaleLayout::k_major_packed(K),
                                      GroupScaleLayout{ScaleMajor::k, G + 3},
                                      GroupScaleLayout{ScaleMajor::mn, M + 7}};
  std::vector<std::uint8_t> q0;
  std::vector<float> s0;
  for (const auto& L : layouts) {
    CAPTURE(to_string(L.major), L.ld);
    const std::int64_t need = L.required_elements(M, K);
    std::vector<float> s(static_cast<std::size_t>(need + 5), -7.0f);  // sentinel
    std::vector<std::uint8_t> q(static_cast<std::size_t>(M * (K + 4)), 0xAB);
    quantize_1x128_cpu(x.data(), M, K, K + 8, q.data(), K + 4, s.data(), L);
    std::vector<float> logical;
    for (std::int64_t r = 0; r < M; ++r)
      for (std::int64_t g = 0; g < G; ++g) logical.push_back(s[static_cast<std::size_t>(L.offset(r, g))]);
    for (std::int64_t o = 0; o < need; ++o) {
      const std::int64_t inner = o % L.ld;
      if (inner >= (L.major == ScaleMajor::mn ? M : G)) REQUIRE(s[static_cast<std::size_t>(o)] == 0.0f);
    }
    for (std::int64_t o = need; o < need + 5; ++o) REQUIRE(s[static_cast<std::size_t>(o)] == -7.0f);
    for (std::int64_t r = 0; r < M; ++r)
      for (std::int64_t c = K; c < K + 4; ++c) REQUIRE(q[static_cast<std::size_t>(r * (K + 4) + c)] == 0xAB);
    if (s0.empty()) {
      s0 = logical;
      q0 = q;
    } else {
      CHECK(std::memcmp(s0.data(), logical.data(), s0.size() * 4) == 0);
      CHECK(q0 == q);
    }
  }
}

TEST_CASE("NaN or Inf in a group: scale NaN, codes 0x7F, other groups unaffected", "[quantize]") {
  const std::int64_t M = 3, K = 384;
  const float specials[] = {std::numeric_limits<float>::quiet_NaN(),
                            std::numeric_limits<float>::infinity(),
                            -std::numeric_limits<float>::infinity()};
  for (float special : specials) {
    CAPTURE(special);
    auto x = random_bf16(M, K, K, 5);
    const auto L = GroupScaleLayout::mn_major_packed(M);
    std::vector<std::uint8_t> q_clean(M * K), q(M * K);
    std::vector<float> s_clean(L.required_elements(M, K)), s(s_clean.size());
    quantize_1x128_cpu(x.data(), M, K, K, q_clean.data(), K, s_clean.data(), L);
    x[1 * K + 128 + 17] = float_to_bf16(special);  // row 1, group 1
    quantize_1x128_cpu(x.data(), M, K, K, q.data(), K, s.data(), L);
    for (std::int64_t r = 0; r < M; ++r)
      for (std::int64_t g = 0; g < 3; ++g) {
        const bool hit = r == 1 && g == 1;
        const float sc = s[static_cast<std::size_t>(L.offset(r, g))];
        if (hit) CHECK(bits(sc) == 0x7FC00000u);
        else CHECK(bits(sc) == bits(s_clean[static_cast<std::size_t>(L.offset(r, g))]));
        for (std::int64_t c = g * 128; c < g * 128 + 128; ++c) {
          const auto i = static_cast<std::size_t>(r * K + c);
          if (hit) REQUIRE(q[i] == 0x7F);
          else REQUIRE(q[i] == q_clean[i]);
        }
      }
    // The same rule for a 128 x 128 block.
    std::vector<std::uint8_t> qb(M * K);
    std::vector<float> sb(BlockScaleLayout::packed(K).required_elements(M, K));
    quantize_128x128_cpu(x.data(), M, K, K, qb.data(), K, sb.data(), BlockScaleLayout::packed(K));
    CHECK(std::isnan(sb[1]));
    CHECK(!std::isnan(sb[0]));
    CHECK(!std::isnan(sb[2]));
    for (std::int64_t r = 0; r < M; ++r)
      for (std::int64_t c = 128; c < 256; ++c) REQUIRE(qb[static_cast<std::size_t>(r * K + c)] == 0x7F);
  }
}

TEST_CASE("Saturation: codes never exceed 448 and each group's amax encodes as +-448",
          "[quantize]") {
  const std::int64_t M = 64, K = 1024;
  const auto x = random_bf16(M, K, K, 99);
  const auto L = GroupScaleLayout::k_major_packed(K);
  std::vector<std::uint8_t> q(M * K);
  std::vector<float> s(L.required_elements(M, K));
  quantize_1x128_cpu(x.data(), M, K, K, q.data(), K, s.data(), L);
  int past_448 = 0;
  for (std::int64_t r = 0; r < M; ++r)
    for (std::int64_t g = 0; g < K / 128; ++g) {
      float amax = 0;
      for (std::int64_t c = g * 128; c < g * 128 + 128; ++c)
        amax = std::max(amax, std::fabs(bf16_bits_to_float(x[r * K + c])));
      const float sc = s[static_cast<std::size_t>(L.offset(r, g))];
      if (amax == 0.0f) continue;
      past_448 += amax / sc > 448.0f;
      for (std::int64_t c = g * 128; c < g * 128 + 128; ++c) {
        const std::uint8_t code = q[static_cast<std::size_t>(r * K + c)];
        REQUIRE((code & 0x7F) <= 0x7E);
        if (std::fabs(bf16_bits_to_float(x[r * K + c])) == amax) REQUIRE((code & 0x7F) == 0x7E);
      }
    }
  INFO("groups whose amax / scale rounded past 448: " << past_448);
  SUCCEED();
}

TEST_CASE("Dual CPU quantiser: q_t is the 1x128 quantisation of x^T", "[quantize]") {
  const std::int64_t M = 200, K = 144;
  const auto x = random_bf16(M, K, K, 3);
  const auto L = GroupScaleLayout::mn_major_tma_aligned(M);
  const auto Lt = GroupScaleLayout::k_major_packed(M);
  std::vector<std::uint8_t> q(M * K), qt(K * M);
  std::vector<float> s(L.required_elements(M, K)), st(Lt.required_elements(K, M));
  quantize_1x128_dual_cpu(x.data(), M, K, K, q.data(), K, s.data(), L, qt.data(), M, st.data(), Lt);
  // Column k, rows 128 j .. 128 j + 127 of x form one group of q_t.
  for (std::int64_t k = 0; k < K; ++k)
    for (std::int64_t j = 0; j < ceil_div(M, 128); ++j) {
      float amax = 0;
      for (std::int64_t m = j * 128; m < std::min(M, j * 128 + 128); ++m)
        amax = std::max(amax, std::fabs(bf16_bits_to_float(x[m * K + k])));
      const float sc = st[static_cast<std::size_t>(Lt.offset(k, j))];
      REQUIRE(bits(sc) == bits(scale_from_amax(amax, false)));
      for (std::int64_t m = j * 128; m < std::min(M, j * 128 + 128); ++m)
        REQUIRE(qt[static_cast<std::size_t>(k * M + m)] == e4m3_encode(bf16_bits_to_float(x[m * K + k]) / sc));
    }
}

TEST_CASE("Scale converters round-trip and zero the padding", "[quantize]") {
  const std::int64_t rows = 301, K = 640 + 16, G = ceil_div(K, 128);
  std::mt19937_64 gen(1);
  std::uniform_real_distribution<float> u(0.5f, 2.0f);
  const auto a = GroupScaleLayout::k_major_packed(K), b = GroupScaleLayout::mn_major_tma_aligned(rows);
  std::vector<float> sa(a.required_elements(rows, K)), sb(b.required_elements(rows, K), -1.0f),
      sa2(sa.size(), -1.0f);
  for (auto& v : sa) v = u(gen);
  convert_group_scales_cpu(sa.data(), a, sb.data(), b, rows, K);
  convert_group_scales_cpu(sb.data(), b, sa2.data(), a, rows, K);
  CHECK(sa == sa2);
  for (std::int64_t g = 0; g + 1 < G; ++g)
    for (std::int64_t r = rows; r < b.ld; ++r) CHECK(sb[static_cast<std::size_t>(g * b.ld + r)] == 0.0f);
  const auto p = BlockScaleLayout::packed(K), d = BlockScaleLayout::padded(K);
  std::vector<float> bp(p.required_elements(rows, K)), bd(d.required_elements(rows, K), -1.0f),
      bp2(bp.size(), -1.0f);
  for (auto& v : bp) v = u(gen);
  convert_block_scales_cpu(bp.data(), p, bd.data(), d, rows, K);
  convert_block_scales_cpu(bd.data(), d, bp2.data(), p, rows, K);
  CHECK(bp == bp2);
  CHECK(bd[static_cast<std::size_t>(d.ld - 1)] == 0.0f);  // padding column of block row 0
}

// ============================ expert tokens, transposed and padded ===============================

/// Expert offsets (G + 1) from counts.
std::vector<int> offsets_of(const std::vector<int>& counts) {
  std::vector<int> o(counts.size() + 1, 0);
  for (std::size_t g = 0; g < counts.size(); ++g) o[g + 1] = o[g] + counts[g];
  return o;
}

/// The padded size of a split of the tokens, summed the obvious way.
std::int64_t padded_sum(const std::vector<int>& counts) {
  std::int64_t s = 0;
  for (int c : counts) s += (c + 127) / 128 * 128;
  return s;
}

TEST_CASE("max_padded_tokens is the largest padded size of any split of T tokens into G experts",
          "[quantize][tokens]") {
  CHECK(max_padded_tokens(1, 1) == 128);
  CHECK(max_padded_tokens(128, 1) == 128);
  CHECK(max_padded_tokens(129, 1) == 256);
  CHECK(max_padded_tokens(129, 2) == 256);
  CHECK(max_padded_tokens(3, 64) == 384);  // only 3 experts can hold a token
  CHECK(max_padded_tokens(0, 8) == 0);
  CHECK(max_padded_tokens(65536, 32) == 69504);  // round_up(T + 127 G, 128) would be 69632
  // Every split, by brute force: the largest padded size equals the bound.
  for (int G = 1; G <= 3; ++G)
    for (int T = 0; T <= (G == 3 ? 260 : 700); ++T) {
      std::int64_t best = G == 1 ? padded_sum({T}) : 0;
      for (int a = 0; G >= 2 && a <= T; ++a) {
        if (G == 2) best = std::max(best, padded_sum({a, T - a}));
        for (int b = 0; G == 3 && a + b <= T; ++b)
          best = std::max(best, padded_sum({a, b, T - a - b}));
      }
      CAPTURE(G, T);
      REQUIRE(best == max_padded_tokens(T, G));
    }
  // Larger G: random splits stay within the bound; n - 1 single tokens and the rest reach it.
  std::mt19937_64 gen(17);
  for (int G : {8, 32, 64, 256}) {
    for (int trial = 0; trial < 200; ++trial) {
      std::vector<int> counts(static_cast<std::size_t>(G));
      std::uniform_int_distribution<int> u(0, trial % 2 ? 3 : 700);
      for (int& c : counts) c = u(gen);
      std::int64_t T = 0;
      for (int c : counts) T += c;
      REQUIRE(padded_sum(counts) <= max_padded_tokens(T, G));
    }
    for (int T : {G - 1, G, G + 1, 1000, 65536}) {
      const int n = std::min(G, T);
      std::vector<int> counts(static_cast<std::size_t>(G), 0);
      for (int g = 0; g + 1 < n; ++g) counts[static_cast<std::size_t>(g)] = 1;
      counts.back() = T - (n - 1);
      CAPTURE(G, T);
      CHECK(padded_sum(counts) == max_padded_tokens(T, G));
    }
  }
}

TEST_CASE("padded_token_offsets_cpu: P_g, and the clamping of offsets that break the rules",
          "[quantize][tokens]") {
  const auto o = offsets_of({0, 1, 127, 128, 129, 300, 0});
  CHECK(padded_token_offsets_cpu(o.data(), 7, o.back()) ==
        std::vector<int>{0, 0, 128, 256, 384, 640, 1024, 1024});
  // T = 250: a decreasing offset gives an empty expert; offsets past T or below 0 are clamped
  // to [0, T] (expert 2: [100, 250), expert 3: [250, 250), expert 4: [0, 50)); P is clamped to
  // the capacity.
  const std::vector<int> bad = {0, 200, 100, 300, -5, 50};
  CHECK(padded_token_offsets_cpu(bad.data(), 5, 250) ==
        std::vector<int>{0, 256, 256, 512, 512, 640});
  CHECK(padded_token_offsets_cpu(bad.data(), 5, 250, 300) ==
        std::vector<int>{0, 256, 256, 300, 300, 300});
}

/// Runs the CPU token quantiser into sentinel-filled buffers (q_t 0xAB, scales -7), 16 bytes and
/// 5 floats longer than the extents, and padded offsets -1.
struct TokenRun {
  std::vector<std::uint8_t> q;
  std::vector<float> s;
  std::vector<int> P;
};
TokenRun run_tokens_cpu(const std::vector<std::uint16_t>& x, std::int64_t T, std::int64_t C,
                        std::int64_t ldx, const std::vector<int>& offsets, std::int64_t ldq_t,
                        std::int64_t capacity, const GroupScaleLayout& L, bool pow2 = false) {
  TokenRun r;
  r.q.assign(static_cast<std::size_t>((C - 1) * ldq_t + capacity + 16), 0xAB);
  r.s.assign(static_cast<std::size_t>(L.required_elements(C, capacity) + 5), -7.0f);
  r.P.assign(offsets.size(), -1);
  quantize_tokens_transposed_1x128_cpu(x.data(), T, C, ldx, offsets.data(), int(offsets.size()) - 1,
                                       r.q.data(), ldq_t, capacity, r.s.data(), L, r.P.data(),
                                       {pow2});
  return r;
}

TEST_CASE(
    "Token quantiser (CPU): each expert's blocks are the 1x128 quantisation of its tokens; "
    "padding is zero; nothing past the extents is written",
    "[quantize][tokens]") {
  const std::vector<int> counts = {0, 1, 127, 128, 129, 300, 0, 5};
  const int G = int(counts.size());
  const auto offsets = offsets_of(counts);
  const std::int64_t T = offsets.back(), C = 264, ldx = C + 3;
  const std::int64_t capacity = max_padded_tokens(T, G) + 77;  // an extra, partial block
  const std::int64_t ldq_t = capacity + 5, nb = ceil_div(capacity, 128);
  const auto x = random_bf16(T, C, ldx, 23);
  const GroupScaleLayout layouts[] = {
      GroupScaleLayout::mn_major_tma_aligned(C), GroupScaleLayout::k_major_packed(capacity),
      GroupScaleLayout{ScaleMajor::mn, C + 3}, GroupScaleLayout{ScaleMajor::k, nb + 2}};
  // The padded offsets, summed the obvious way.
  std::vector<int> P(1, 0);
  for (int c : counts) P.push_back(P.back() + (c + 127) / 128 * 128);
  const std::int64_t t_pad = P.back();
  for (const auto& L : layouts)
    for (bool pow2 : {false, true}) {
      CAPTURE(to_string(L.major), L.ld, pow2);
      const TokenRun r = run_tokens_cpu(x, T, C, ldx, offsets, ldq_t, capacity, L, pow2);
      REQUIRE(r.P == P);
      const auto q_at = [&](std::int64_t c, std::int64_t col) {
        return r.q[static_cast<std::size_t>(c * ldq_t + col)];
      };
      const auto s_at = [&](std::int64_t c, std::int64_t tb) {
        return r.s[static_cast<std::size_t>(L.offset(c, tb))];
      };
      for (int g = 0; g < G; ++g) {
        const std::int64_t n = counts[static_cast<std::size_t>(g)],
                           p0 = P[static_cast<std::size_t>(g)];
        if (n == 0) continue;
        // Expert g's tokens, transposed by hand (C x n), through the plain 1 x 128 quantiser.
        std::vector<std::uint16_t> xt(static_cast<std::size_t>(C * n));
        for (std::int64_t c = 0; c < C; ++c)
          for (std::int64_t i = 0; i < n; ++i)
            xt[static_cast<std::size_t>(c * n + i)] =
                x[static_cast<std::size_t>((offsets[static_cast<std::size_t>(g)] + i) * ldx + c)];
        const auto Lg = GroupScaleLayout::k_major_packed(n);
        std::vector<std::uint8_t> qg(static_cast<std::size_t>(C * n));
        std::vector<float> sg(static_cast<std::size_t>(Lg.required_elements(C, n)));
        quantize_1x128_cpu(xt.data(), C, n, n, qg.data(), n, sg.data(), Lg, {pow2});
        for (std::int64_t c = 0; c < C; ++c) {
          for (std::int64_t i = 0; i < n; ++i)
            REQUIRE(q_at(c, p0 + i) == qg[static_cast<std::size_t>(c * n + i)]);
          for (std::int64_t col = p0 + n; col < P[static_cast<std::size_t>(g) + 1]; ++col)
            REQUIRE(q_at(c, col) == 0x00);  // the expert's padding
          for (std::int64_t j = 0; j < ceil_div(n, 128); ++j)
            REQUIRE(bits(s_at(c, p0 / 128 + j)) ==
                    bits(sg[static_cast<std::size_t>(Lg.offset(c, j))]));
        }
      }
      for (std::int64_t c = 0; c < C; ++c) {
        for (std::int64_t col = t_pad; col < capacity; ++col) REQUIRE(q_at(c, col) == 0x00);
        for (std::int64_t col = capacity; col < ldq_t && c + 1 < C; ++col)
          REQUIRE(q_at(c, col) == 0xAB);  // between the capacity and ldq_t: untouched
        for (std::int64_t tb = t_pad / 128; tb < nb; ++tb) REQUIRE(s_at(c, tb) == 0.0f);
      }
      for (std::size_t i = static_cast<std::size_t>((C - 1) * ldq_t + capacity); i < r.q.size();
           ++i)
        REQUIRE(r.q[i] == 0xAB);
      const std::int64_t need = L.required_elements(C, capacity);
      for (std::int64_t o = 0; o < need; ++o)  // the layout's own padding
        if (o % L.ld >= (L.major == ScaleMajor::mn ? C : nb))
          REQUIRE(r.s[static_cast<std::size_t>(o)] == 0.0f);
      for (std::int64_t o = need; o < need + 5; ++o)
        REQUIRE(r.s[static_cast<std::size_t>(o)] == -7.0f);
    }
}

TEST_CASE("Token quantiser (CPU): dequantised codes are the tokens within e4m3 rounding",
          "[quantize][tokens]") {
  const std::vector<int> counts = {300, 0, 129, 1, 127, 128, 40};
  const auto offsets = offsets_of(counts);
  const std::int64_t T = offsets.back(), C = 200, capacity = max_padded_tokens(T, 7);
  const auto x = random_bf16(T, C, C, 31);
  const auto L = GroupScaleLayout::mn_major_tma_aligned(C);
  const TokenRun r = run_tokens_cpu(x, T, C, C, offsets, capacity, capacity, L);
  std::int64_t checked = 0;
  for (std::size_t g = 0; g < counts.size(); ++g)
    for (std::int64_t i = 0; i < counts[g]; ++i)
      for (std::int64_t c = 0; c < C; ++c) {
        const std::int64_t col = r.P[g] + i;
        const double scale = r.s[static_cast<std::size_t>(L.offset(c, col / 128))];
        const double v = bf16_bits_to_float(x[static_cast<std::size_t>((offsets[g] + i) * C + c)]);
        const double deq =
            double(e4m3_decode(r.q[static_cast<std::size_t>(c * capacity + col)])) * scale;
        // Half an e4m3 ulp: 2^-4 relative for normal codes, 2^-10 scale below 2^-6 (subnormal).
        const double tol = std::max(std::fabs(v) * 0x1p-4, 0x1p-10 * scale) * (1 + 1e-6);
        CAPTURE(g, i, c, v, deq, scale);
        REQUIRE(std::fabs(deq - v) <= tol);
        ++checked;
      }
  CHECK(checked == T * C);
}

TEST_CASE(
    "Token quantiser (CPU): NaN or Inf poisons its (channel, token block) only; padding "
    "stays zero",
    "[quantize][tokens]") {
  const std::vector<int> counts = {5, 130};
  const auto offsets = offsets_of(counts);
  const std::int64_t T = 135, C = 130, capacity = max_padded_tokens(T, 2);
  auto x = random_bf16(T, C, C, 41);
  const auto L = GroupScaleLayout::k_major_packed(capacity);
  const TokenRun clean = run_tokens_cpu(x, T, C, C, offsets, capacity, capacity, L);
  x[3 * C + 7] = float_to_bf16(std::numeric_limits<float>::quiet_NaN());      // expert 0, channel 7
  x[134 * C + 129] = float_to_bf16(-std::numeric_limits<float>::infinity());  // expert 1, 2nd block
  const TokenRun r = run_tokens_cpu(x, T, C, C, offsets, capacity, capacity, L);
  for (std::int64_t c = 0; c < C; ++c)
    for (std::int64_t tb = 0; tb < capacity / 128; ++tb) {
      const bool hit = (c == 7 && tb == 0) || (c == 129 && tb == 2);
      const float sc = r.s[static_cast<std::size_t>(L.offset(c, tb))];
      CAPTURE(c, tb);
      if (hit)
        REQUIRE(bits(sc) == 0x7FC00000u);
      else
        REQUIRE(bits(sc) == bits(clean.s[static_cast<std::size_t>(L.offset(c, tb))]));
      for (std::int64_t col = tb * 128; col < tb * 128 + 128; ++col) {
        const std::uint8_t code = r.q[static_cast<std::size_t>(c * capacity + col)];
        const bool real = col < 5 || (col >= 128 && col < 128 + 130);
        if (!real)
          REQUIRE(code == 0x00);
        else if (hit)
          REQUIRE(code == 0x7F);
        else
          REQUIRE(code == clean.q[static_cast<std::size_t>(c * capacity + col)]);
      }
    }
}

TEST_CASE("Token quantiser (CPU) with one expert is the dual quantiser's transposed half",
          "[quantize][tokens]") {
  for (std::int64_t T : {1, 127, 128, 300}) {
    const std::int64_t C = 144, capacity = max_padded_tokens(T, 1);
    CAPTURE(T);
    const auto x = random_bf16(T, C, C, std::uint64_t(T));
    const std::vector<int> offsets = {0, int(T)};
    const auto Lt = GroupScaleLayout::mn_major_tma_aligned(C);
    const TokenRun r = run_tokens_cpu(x, T, C, C, offsets, capacity, capacity, Lt);
    const auto L = GroupScaleLayout::k_major_packed(C);
    std::vector<std::uint8_t> q(static_cast<std::size_t>(T * C)),
        qt(static_cast<std::size_t>(C * T));
    std::vector<float> s(static_cast<std::size_t>(L.required_elements(T, C))),
        st(static_cast<std::size_t>(Lt.required_elements(C, T)));
    quantize_1x128_dual_cpu(x.data(), T, C, C, q.data(), C, s.data(), L, qt.data(), T, st.data(),
                            Lt);
    for (std::int64_t c = 0; c < C; ++c) {
      for (std::int64_t i = 0; i < T; ++i)
        REQUIRE(r.q[static_cast<std::size_t>(c * capacity + i)] ==
                qt[static_cast<std::size_t>(c * T + i)]);
      for (std::int64_t tb = 0; tb < ceil_div(T, 128); ++tb)
        REQUIRE(bits(r.s[static_cast<std::size_t>(Lt.offset(c, tb))]) ==
                bits(st[static_cast<std::size_t>(Lt.offset(c, tb))]));
    }
  }
}

// ============================ argument validation (no CUDA call) ===================================

/// Runs f, expects std::invalid_argument whose message contains every fragment.
template <class F>
void expect_refusal(F f, std::initializer_list<const char*> fragments) {
  try {
    f();
    FAIL("no exception");
  } catch (const std::invalid_argument& e) {
    const std::string msg = e.what();
    INFO(msg);
    for (const char* frag : fragments) CHECK(msg.find(frag) != std::string::npos);
  }
}

// Fake, never dereferenced addresses far apart (validation throws before any access).
const auto* X = reinterpret_cast<const std::uint16_t*>(std::uintptr_t(0x10000000000));
auto* Q = reinterpret_cast<std::uint8_t*>(std::uintptr_t(0x20000000000));
auto* S = reinterpret_cast<float*>(std::uintptr_t(0x30000000000));
auto* QT = reinterpret_cast<std::uint8_t*>(std::uintptr_t(0x40000000000));
auto* ST = reinterpret_cast<float*>(std::uintptr_t(0x50000000000));

TEST_CASE("quantize_1x128 refuses bad arguments before any GPU work", "[quantize][args]") {
  const auto L = GroupScaleLayout::mn_major_tma_aligned(200);
  CHECK_NOTHROW(validate_quantize_1x128(X, 200, 640, 640, Q, 640, S, L));
  auto call = [&](const std::uint16_t* x, std::int64_t M, std::int64_t K, std::int64_t ldx,
                  std::uint8_t* q, std::int64_t ldq, float* s, GroupScaleLayout l) {
    return [=] { quantize_1x128(x, M, K, ldx, q, ldq, s, l); };
  };
  expect_refusal(call(nullptr, 200, 640, 640, Q, 640, S, L), {"quantize_1x128", "x", "null"});
  expect_refusal(call(X, 200, 640, 640, nullptr, 640, S, L), {"quantize_1x128", "q", "null"});
  expect_refusal(call(X, 200, 640, 640, Q, 640, nullptr, L), {"scales", "null"});
  expect_refusal(call(X, 0, 640, 640, Q, 640, S, L), {"M = 0", ">= 1"});
  expect_refusal(call(X, 200, -1, 640, Q, 640, S, L), {"K = -1", ">= 1"});
  expect_refusal(call(X, 200, 640, 600, Q, 640, S, L), {"ldx = 600", "K = 640"});
  expect_refusal(call(X, 200, 640, 640, Q, 639, S, L), {"ldq = 639", "K = 640"});
  expect_refusal(call(X + 1 - 1, 200, 640, 640, Q, 640, S, {ScaleMajor::mn, 199}),
                 {"layout", "mn-major", "ld must be >= M = 200"});
  expect_refusal(call(X, 200, 640, 640, Q, 640, S, {ScaleMajor::k, 4}),
                 {"layout", "k-major", "ceil(K / 128) = 5"});
  expect_refusal(call(reinterpret_cast<const std::uint16_t*>(std::uintptr_t(0x10000000001)), 200,
                      640, 640, Q, 640, S, L),
                 {"x = 0x10000000001", "2-byte aligned"});
  expect_refusal(call(X, 200, 640, 640, Q, 640, reinterpret_cast<float*>(std::uintptr_t(0x30000000002)), L),
                 {"scales", "4-byte aligned"});
  // q inside x's bytes, scales inside q's.
  expect_refusal(call(X, 200, 640, 640, reinterpret_cast<std::uint8_t*>(const_cast<std::uint16_t*>(X)) + 1000,
                      640, S, L),
                 {"q overlaps x"});
  expect_refusal(call(X, 200, 640, 640, Q, 640, reinterpret_cast<float*>(Q + 4096), L),
                 {"overlaps"});
  expect_refusal(call(X, std::int64_t(1) << 40, 640, std::int64_t(1) << 40, Q, 640, S,
                      {ScaleMajor::mn, std::int64_t(1) << 40}),
                 {"overflows"});
}

TEST_CASE("quantize_128x128 refuses bad arguments before any GPU work", "[quantize][args]") {
  CHECK_NOTHROW(validate_quantize_128x128(X, 300, 640, 640, Q, 640, S, BlockScaleLayout::padded(640)));
  auto call = [&](std::int64_t N, std::int64_t K, std::int64_t ldw, std::int64_t ldq,
                  BlockScaleLayout l) {
    return [=] { quantize_128x128(X, N, K, ldw, Q, ldq, S, l); };
  };
  expect_refusal([] { quantize_128x128(nullptr, 1, 1, 1, Q, 1, S, {1}); }, {"quantize_128x128", "w", "null"});
  expect_refusal(call(0, 640, 640, 640, {5}), {"N = 0"});
  expect_refusal(call(300, 640, 639, 640, {5}), {"ldw = 639"});
  expect_refusal(call(300, 640, 640, 100, {5}), {"ldq = 100"});
  expect_refusal(call(300, 640, 640, 640, {4}), {"layout.ld = 4", "ceil(K / 128) = 5"});
  expect_refusal([] { quantize_128x128(X, 300, 640, 640, Q, 640, reinterpret_cast<float*>(Q + 8), {5}); },
                 {"overlaps", "scales"});
}

TEST_CASE("quantize_128x128_dual refuses bad arguments before any GPU work", "[quantize][args]") {
  const std::int64_t N = 300, K = 640;
  const auto L = BlockScaleLayout::packed(K), Lt = BlockScaleLayout::packed(N);
  CHECK_NOTHROW(validate_quantize_128x128_dual(X, N, K, K, Q, K, S, L, QT, N, ST, Lt));
  expect_refusal([&] { quantize_128x128_dual(nullptr, N, K, K, Q, K, S, L, QT, N, ST, Lt); },
                 {"quantize_128x128_dual", "w", "null"});
  expect_refusal([&] { quantize_128x128_dual(X, N, K, K, Q, K, S, L, nullptr, N, ST, Lt); },
                 {"quantize_128x128_dual", "q_t", "null"});
  expect_refusal([&] { quantize_128x128_dual(X, N, K, K, Q, K, S, L, QT, N, nullptr, Lt); },
                 {"quantize_128x128_dual", "scales_t", "null"});
  expect_refusal([&] { quantize_128x128_dual(X, N, K, K, Q, K, S, L, QT, N - 1, ST, Lt); },
                 {"ldq_t = 299", "N = 300"});
  expect_refusal([&] { quantize_128x128_dual(X, N, K, K, Q, K, S, {4}, QT, N, ST, Lt); },
                 {"layout.ld = 4", "ceil(K / 128) = 5"});
  expect_refusal([&] { quantize_128x128_dual(X, N, K, K, Q, K, S, L, QT, N, ST, {2}); },
                 {"layout_t.ld = 2", "ceil(N / 128) = 3"});
  expect_refusal([&] { quantize_128x128_dual(X, N, K, K, Q, K, S, L, Q + 7, N, ST, Lt); },
                 {"overlaps"});
  expect_refusal([&] { quantize_128x128_dual(X, N, K, K, Q, K, S, L, QT, N, S, Lt); },
                 {"overlaps"});
  expect_refusal([&] {
    quantize_128x128_dual(X, N, K, K, Q, K, S, L,
                          reinterpret_cast<std::uint8_t*>(const_cast<std::uint16_t*>(X)) + 64, N, ST, Lt);
  }, {"overlaps"});
}

TEST_CASE("quantize_1x128_dual refuses bad arguments before any GPU work", "[quantize][args]") {
  const std::int64_t M = 200, K = 640;
  const auto L = GroupScaleLayout::mn_major_tma_aligned(M);
  const auto Lt = GroupScaleLayout::mn_major_tma_aligned(K);
  CHECK_NOTHROW(validate_quantize_1x128_dual(X, M, K, K, Q, K, S, L, QT, M, ST, Lt));
  expect_refusal([&] { quantize_1x128_dual(X, M, K, K, Q, K, S, L, nullptr, M, ST, Lt); },
                 {"quantize_1x128_dual", "q_t", "null"});
  expect_refusal([&] { quantize_1x128_dual(X, M, K, K, Q, K, S, L, QT, M - 1, ST, Lt); },
                 {"ldq_t = 199", "M = 200"});
  expect_refusal([&] { quantize_1x128_dual(X, M, K, K, Q, K, S, L, QT, M, ST, {ScaleMajor::mn, K - 1}); },
                 {"layout_t", "ld must be >= K = 640"});
  expect_refusal([&] { quantize_1x128_dual(X, M, K, K, Q, K, S, L, QT, M, ST, {ScaleMajor::k, 1}); },
                 {"layout_t", "ceil(M / 128) = 2"});
  expect_refusal([&] { quantize_1x128_dual(X, M, K, K, Q, K, S, L, Q + 7, M, ST, Lt); },
                 {"overlaps"});
  expect_refusal([&] { quantize_1x128_dual(X, M, K, K, Q, K, S, L, QT, M, S, Lt); },
                 {"overlaps"});
}

TEST_CASE("The tuning hooks refuse a variant or CTA cap they do not have, before any GPU work",
          "[quantize][args]") {
  // Valid arguments otherwise (the fake addresses are never touched): the variant and max_ctas
  // checks come before the device-memory checks, so a refusal here names them, not a pointer.
  const std::int64_t M = 200, K = 640;
  const auto L = GroupScaleLayout::mn_major_tma_aligned(M);
  const auto Lt = GroupScaleLayout::mn_major_tma_aligned(K);
  for (const int v : {-1, tuning_1x128::kVariants}) {
    const std::string named = "variant = " + std::to_string(v);
    const std::string range = "must be in [0, " + std::to_string(tuning_1x128::kVariants) + ")";
    expect_refusal([&] { tuning_1x128::quantize_1x128(v, 0, X, M, K, K, Q, K, S, L); },
                   {"quantize_1x128", named.c_str(), range.c_str()});
    expect_refusal(
        [&] { tuning_1x128::quantize_1x128_dual(v, 0, X, M, K, K, Q, K, S, L, QT, M, ST, Lt); },
        {"quantize_1x128_dual", named.c_str()});
  }
  expect_refusal([&] { tuning_1x128::quantize_1x128(1, -2, X, M, K, K, Q, K, S, L); },
                 {"max_ctas = -2", "must be >= 0"});
  expect_refusal(
      [&] { tuning_1x128::quantize_1x128_dual(1, -1, X, M, K, K, Q, K, S, L, QT, M, ST, Lt); },
      {"max_ctas = -1", "must be >= 0"});
  const std::int64_t N = 300;
  const auto B = BlockScaleLayout::packed(K), Bt = BlockScaleLayout::packed(N);
  for (const int v : {-1, tuning_128x128::kVariants}) {
    const std::string named = "variant = " + std::to_string(v);
    const std::string range = "must be in [0, " + std::to_string(tuning_128x128::kVariants) + ")";
    expect_refusal(
        [&] {
          tuning_128x128::quantize_128x128_dual(v, 0, X, N, K, K, Q, K, S, B, QT, N, ST, Bt);
        },
        {"quantize_128x128_dual", named.c_str(), range.c_str()});
  }
  expect_refusal(
      [&] {
        tuning_128x128::quantize_128x128_dual(tuning_128x128::kDefaultVariant, -3, X, N, K, K, Q,
                                              K, S, B, QT, N, ST, Bt);
      },
      {"quantize_128x128_dual", "max_ctas = -3", "must be >= 0"});
  CHECK(tuning_128x128::kDefaultVariant >= 0);
  CHECK(tuning_128x128::kDefaultVariant < tuning_128x128::kVariants);
  for (const auto kind :
       {tuning_1x128::Kind::single, tuning_1x128::Kind::dual, tuning_1x128::Kind::tokens}) {
    CHECK(tuning_1x128::default_variant(kind) >= 0);
    CHECK(tuning_1x128::default_variant(kind) < tuning_1x128::kVariants);
  }
}

TEST_CASE("Scale converters refuse bad arguments before any GPU work", "[quantize][args]") {
  const auto a = GroupScaleLayout::k_major_packed(640), b = GroupScaleLayout::mn_major_tma_aligned(10);
  CHECK_NOTHROW(validate_convert_group_scales(S, a, ST, b, 10, 640));
  expect_refusal([&] { convert_group_scales(nullptr, a, ST, b, 10, 640); }, {"convert_group_scales", "src", "null"});
  expect_refusal([&] { convert_group_scales(S, a, ST, b, 0, 640); }, {"rows = 0"});
  expect_refusal([&] { convert_group_scales(S, a, ST, {ScaleMajor::mn, 9}, 10, 640); }, {"dst_layout"});
  expect_refusal([&] { convert_group_scales(S, a, S + 3, b, 10, 640); }, {"dst overlaps src"});
  CHECK_NOTHROW(validate_convert_block_scales(S, BlockScaleLayout::packed(640), ST,
                                              BlockScaleLayout::padded(640), 300, 640));
  expect_refusal([&] { convert_block_scales(S, {4}, ST, {8}, 300, 640); }, {"convert_block_scales", "src_layout.ld = 4"});
  expect_refusal([&] { convert_block_scales(S, {5}, ST, {8}, 300, 0); }, {"K = 0"});
  expect_refusal([&] { convert_block_scales(S, {5}, S + 1, {8}, 300, 640); }, {"overlaps"});
}

TEST_CASE("quantize_tokens_transposed_1x128 refuses bad arguments before any GPU work",
          "[quantize][tokens][args]") {
  // A valid call (T = 1000 tokens, C = 264 channels, G = 8 experts, capacity 1920), then one
  // argument changed at a time. The addresses are fake and far apart: nothing is dereferenced.
  struct Call {
    const std::uint16_t* x = X;
    std::int64_t T = 1000, C = 264, ldx = 264;
    const int* offsets = reinterpret_cast<const int*>(std::uintptr_t(0x60000000000));
    int G = 8;
    std::uint8_t* q_t = QT;
    std::int64_t ldq_t = 1920, cap = 1920;
    float* s = ST;
    GroupScaleLayout L = GroupScaleLayout::mn_major_tma_aligned(264);
    int* po = reinterpret_cast<int*>(std::uintptr_t(0x70000000000));
    void operator()() const {
      quantize_tokens_transposed_1x128(x, T, C, ldx, offsets, G, q_t, ldq_t, cap, s, L, po);
    }
    void validate() const {
      validate_quantize_tokens_transposed_1x128(x, T, C, ldx, offsets, G, q_t, ldq_t, cap, s, L,
                                                po);
    }
  };
  const auto with = [](auto edit) {
    Call c;
    edit(c);
    return c;
  };
  REQUIRE(max_padded_tokens(1000, 8) == 1920);
  CHECK_NOTHROW(Call{}.validate());
  CHECK_NOTHROW(with([](Call& c) { c.po = nullptr; }).validate());  // padded_offsets is optional
  CHECK_NOTHROW(with([](Call& c) {  // a larger, unaligned capacity; k-major scales
                  c.cap = c.ldq_t = 1920 + 77;
                  c.L = GroupScaleLayout::k_major_packed(c.cap);
                })
                    .validate());
  const char* fn = "quantize_tokens_transposed_1x128";
  expect_refusal(with([](Call& c) { c.x = nullptr; }), {fn, "x is a null pointer"});
  expect_refusal(with([](Call& c) { c.offsets = nullptr; }), {fn, "offsets is a null pointer"});
  expect_refusal(with([](Call& c) { c.q_t = nullptr; }), {fn, "q_t is a null pointer"});
  expect_refusal(with([](Call& c) { c.s = nullptr; }), {fn, "scales_t is a null pointer"});
  expect_refusal(with([](Call& c) {
                   c.x = reinterpret_cast<const std::uint16_t*>(std::uintptr_t(0x10000000001));
                 }),
                 {"x = 0x10000000001", "2-byte aligned (bf16)"});
  expect_refusal(with([](Call& c) {
                   c.offsets = reinterpret_cast<const int*>(std::uintptr_t(0x60000000002));
                 }),
                 {"offsets = 0x60000000002", "4-byte aligned (int32)"});
  expect_refusal(
      with([](Call& c) { c.po = reinterpret_cast<int*>(std::uintptr_t(0x70000000001)); }),
      {"padded_offsets = 0x70000000001", "4-byte aligned (int32)"});
  expect_refusal(
      with([](Call& c) { c.s = reinterpret_cast<float*>(std::uintptr_t(0x50000000002)); }),
      {"scales_t", "4-byte aligned (float)"});
  expect_refusal(with([](Call& c) { c.T = 0; }), {fn, "T = 0", ">= 1"});
  expect_refusal(with([](Call& c) { c.T = std::int64_t(1) << 31; }),
                 {"T = 2147483648", "offsets are int32"});
  expect_refusal(with([](Call& c) { c.C = -3; }), {"C = -3", ">= 1"});
  expect_refusal(with([](Call& c) { c.G = 0; }), {"G = 0", ">= 1"});
  expect_refusal(with([](Call& c) { c.G = kMaxTokenGroups + 1; }),
                 {"G = 8193", "kMaxTokenGroups = 8192"});
  expect_refusal(with([](Call& c) { c.ldx = 263; }), {"ldx = 263", "C = 264"});
  expect_refusal(with([](Call& c) { c.cap = 1919; }),
                 {"t_pad_capacity = 1919", "max_padded_tokens(T = 1000, G = 8) = 1920"});
  expect_refusal(with([](Call& c) { c.G = 9; }),  // one more expert may need one more block
                 {"t_pad_capacity = 1920", "max_padded_tokens(T = 1000, G = 9) = 2048"});
  expect_refusal(with([](Call& c) { c.cap = c.ldq_t = std::int64_t(1) << 31; }),
                 {"t_pad_capacity = 2147483648", "padded offsets are int32"});
  expect_refusal(with([](Call& c) { c.ldq_t = 1919; }), {"ldq_t = 1919", "t_pad_capacity = 1920"});
  expect_refusal(with([](Call& c) {
                   c.L = {ScaleMajor::mn, 263};
                 }),
                 {"layout_t", "mn-major", "ld must be >= C = 264"});
  expect_refusal(with([](Call& c) {
                   c.L = {ScaleMajor::k, 14};
                 }),
                 {"layout_t", "k-major", "ceil(t_pad_capacity / 128) = 15"});
  expect_refusal(with([](Call& c) { c.L = {ScaleMajor(7), 300}; }), {"layout_t.major = 7"});
  // Overlaps: every output against every argument.
  expect_refusal(with([](Call& c) {
                   c.q_t = reinterpret_cast<std::uint8_t*>(const_cast<std::uint16_t*>(X)) + 4096;
                 }),
                 {"q_t overlaps x"});
  expect_refusal(with([](Call& c) { c.s = reinterpret_cast<float*>(QT + 100000); }), {"overlaps"});
  expect_refusal(with([](Call& c) { c.po = const_cast<int*>(c.offsets); }),
                 {"padded_offsets overlaps offsets"});
  expect_refusal(with([](Call& c) { c.po = reinterpret_cast<int*>(ST) + 8; }),
                 {"overlaps", "padded_offsets"});
  expect_refusal(with([](Call& c) {
                   c.q_t = reinterpret_cast<std::uint8_t*>(const_cast<int*>(c.offsets)) - 64;
                 }),
                 {"q_t overlaps offsets"});
  expect_refusal(with([](Call& c) { c.ldq_t = std::int64_t(1) << 62; }), {"q_t", "overflows"});
}

}  // namespace
