// GPU tests of the MXFP8 quantisers (common/quantize_gpu.hpp, "MXFP8"): quantize_mx_1x32 and
// quantize_mx_1x32_dual against the CPU ground truth quantize_mx (common/mx.hpp) byte for byte:
// every e4m3 code and the WHOLE swizzled scale buffer, padding included, plus the bytes the
// kernels must not write (q between K and ldq, slack after the scale buffer): outputs are poisoned
// with 0xAB first and the expected buffers start from the same poison. Fresh random data per check
// (blocks of very different magnitude), with all-zero blocks, tiny blocks (1e-30, and bf16
// subnormals), huge blocks (1e30, 3e38: floor_ocp saturates), one NaN block and one Inf block;
// shapes with M not a multiple of 128 and K / 32 not a multiple of 4; the scalar paths (odd ldx,
// x, q, q_t and scale pointers off alignment); both exponent rules; every kernel variant behind the
// public functions (mx_tuning: v1 .. v4, each with its own grid and with a grid of 3 CTAs). The
// data checks guard against vacuous comparisons (the expected output must hold 0xFF scales,
// saturated codes, code-0 scales, zero padding). And requantize_mx (MXFP8 -> chapter 7's format)
// against mx_requantize_1x128 / _128x128 byte for byte (its section below). Without a GPU,
// gpu_main.cpp exits 77 (skipped).
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "catch.hpp"
#include "common/cuda.hpp"
#include "common/mx.hpp"
#include "common/quantize_gpu.hpp"
#include "common/reference.hpp"

namespace {

using namespace fp8gemm;

constexpr std::uint8_t kPoison = 0xAB;
constexpr std::size_t kSlack = 16;  // bytes after each output that must stay poisoned
std::uint64_t g_seed = 20270301;

/// rows x K bf16 bits, leading dimension ld (the gaps hold NaN, which the kernels must not read):
/// N(0, 1) times 2^e per 32-block, e in [-30, 30]; with enough blocks, one each of: all zero,
/// 1e-30, bf16 subnormals (~2^-130), 1e30, 3e38, one NaN element, one -Inf element.
struct Data {
  std::vector<std::uint16_t> x;
  bool specials = false;
};
Data random_x(std::int64_t rows, std::int64_t K, std::int64_t ld) {
  std::mt19937_64 gen(g_seed++);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::uniform_int_distribution<int> expo(-30, 30);
  Data d;
  d.x.assign(static_cast<std::size_t>((rows - 1) * ld + K), 0x7FC1);
  const std::int64_t cb = K / 32, n = rows * cb;
  d.specials = n >= 16;
  std::vector<std::int64_t> ids(static_cast<std::size_t>(std::min<std::int64_t>(n, 1 << 20)));
  for (std::size_t i = 0; i < ids.size(); ++i) ids[i] = std::int64_t(i);
  std::shuffle(ids.begin(), ids.end(), gen);  // distinct special blocks
  const auto special = [&](int i) { return d.specials ? ids[std::size_t(i)] : -1; };
  for (std::int64_t r = 0; r < rows; ++r)
    for (std::int64_t j = 0; j < cb; ++j) {
      const std::int64_t id = r * cb + j;
      float f = std::ldexp(1.0f, expo(gen));
      if (id == special(0)) f = 0.0f;
      else if (id == special(1)) f = 1e-30f;
      else if (id == special(2)) f = 0x1p-130f;
      else if (id == special(3)) f = 1e30f;
      else if (id == special(4)) f = 1e38f;  // N(0,1) * 1e38 may round to Inf: clamped below
      std::uint16_t* row = d.x.data() + r * ld + j * 32;
      for (int i = 0; i < 32; ++i) {
        float v = normal(gen) * f;
        if (id == special(4)) v = std::clamp(v, -3e38f, 3e38f);
        row[i] = float_to_bf16(v);
      }
      if (id == special(5)) row[7] = 0x7FC0;   // NaN
      if (id == special(6)) row[31] = 0xFF80;  // -Inf
    }
  return d;
}

template <class T>
DeviceBuffer<T> poisoned(std::size_t count) {
  DeviceBuffer<T> b(count);
  FP8GEMM_CUDA_CHECK(cudaMemset(b.data(), kPoison, b.bytes()));
  return b;
}

/// Element equality (bytes, or a float's bits), reporting the first difference.
template <class T>
void require_same(const std::vector<T>& got, const std::vector<T>& want, const char* what) {
  REQUIRE(got.size() == want.size());
  std::size_t i = 0;
  while (i < got.size() && got[i] == want[i]) ++i;
  INFO(what << ": first differing element " << i << " of " << got.size()
            << (i < got.size() ? " (got " + std::to_string(got[i]) + ", want " +
                                     std::to_string(want[i]) + ")"
                               : std::string()));
  REQUIRE(i == got.size());
}

/// The expected q buffer (ld, offset, poison around) and scale buffer (+ slack) of quantize_mx.
struct Expected {
  std::vector<std::uint8_t> q, s;
};
Expected expected(const MxQuantized& ref, std::int64_t ld, std::size_t q_off, std::size_t q_bytes,
                  std::size_t s_off) {
  Expected e;
  e.q.assign(q_bytes, kPoison);
  for (std::int64_t r = 0; r < ref.rows; ++r)
    std::memcpy(e.q.data() + q_off + r * ld, ref.values.data() + r * ref.cols,
                static_cast<std::size_t>(ref.cols));
  e.s.assign(s_off + ref.scales.size() + kSlack, kPoison);
  std::memcpy(e.s.data() + s_off, ref.scales.data(), ref.scales.size());
  return e;
}

struct Case {
  std::int64_t M, K, ldx, ldq, ldq_t;
  MxExponentRule rule;
  std::size_t x_off = 0, q_off = 0, s_off = 0;  // elements / bytes: non-zero forces scalar paths
};

/// What the data checks saw, summed over the cases of a test (so that they are not vacuous).
struct Seen {
  int nan_scales = 0, zero_code_scales = 0, saturated = 0, zero_blocks = 0, padding_bytes = 0;
  void add(const MxQuantized& ref, std::int64_t padded_bytes) {
    for (std::int64_t r = 0; r < ref.rows; ++r)
      for (std::int64_t j = 0; j < ref.col_blocks(); ++j) {
        const std::uint8_t c = ref.scale(r, j);
        nan_scales += c == kUe8m0Nan;
        zero_code_scales += c == 0;
        if (c == 127) {
          bool all0 = true;
          for (int i = 0; i < 32; ++i) all0 = all0 && (ref.values[std::size_t(r * ref.cols + j * 32 + i)] & 0x7F) == 0;  // +-0
          zero_blocks += all0;
        }
      }
    for (std::uint8_t v : ref.values) saturated += (v & 0x7F) == 0x7E;
    padding_bytes += int(padded_bytes - ref.rows * ref.col_blocks());
  }
};

/// Runs the single (dual = false) or fused quantiser on fresh data and compares every byte.
void check(const Case& c, bool dual, Seen& seen) {
  CAPTURE(c.M, c.K, c.ldx, c.ldq, c.ldq_t, to_string(c.rule), c.x_off, c.q_off, c.s_off, dual);
  const Data d = random_x(c.M, c.K, c.ldx);
  std::vector<std::uint16_t> xh(c.x_off, 0x7FC1);
  xh.insert(xh.end(), d.x.begin(), d.x.end());
  // The CPU ground truth on the packed rows (and on x^T for the dual).
  std::vector<std::uint16_t> packed(static_cast<std::size_t>(c.M * c.K));
  for (std::int64_t r = 0; r < c.M; ++r)
    std::copy_n(d.x.begin() + r * c.ldx, c.K, packed.begin() + r * c.K);
  const MxQuantized ref = quantize_mx(packed.data(), c.M, c.K, c.rule);
  seen.add(ref, mx_1x32_scale_bytes(c.M, c.K));
  const std::size_t q_bytes = c.q_off + static_cast<std::size_t>((c.M - 1) * c.ldq + c.K) + kSlack;
  const Expected e = expected(ref, c.ldq, c.q_off, q_bytes, c.s_off);

  DeviceBuffer<std::uint16_t> dx(xh);
  std::vector<std::uint16_t> xt;
  Expected et;
  if (dual) {
    xt.resize(static_cast<std::size_t>(c.K * c.M));
    for (std::int64_t m = 0; m < c.M; ++m)
      for (std::int64_t k = 0; k < c.K; ++k)
        xt[std::size_t(k * c.M + m)] = packed[std::size_t(m * c.K + k)];
    const MxQuantized ref_t = quantize_mx(xt.data(), c.K, c.M, c.rule);
    seen.add(ref_t, mx_1x32_scale_bytes(c.K, c.M));
    const std::size_t qt_bytes =
        c.q_off + static_cast<std::size_t>((c.K - 1) * c.ldq_t + c.M) + kSlack;
    et = expected(ref_t, c.ldq_t, c.q_off, qt_bytes, c.s_off);
  }
  // Every kernel variant (mx_tuning), with its own grid and with at most 3 CTAs (so that each CTA
  // walks many tiles: grid-stride loops, cp.async rings wrapping around, cursor carries), on
  // freshly poisoned outputs.
  for (int v = 0; v < mx_tuning::kVariants; ++v)
    for (const int max_ctas : {0, 3}) {
      CAPTURE(v, mx_tuning::variant_name(v, dual), max_ctas);
      auto dq = poisoned<std::uint8_t>(e.q.size());
      auto ds = poisoned<std::uint8_t>(e.s.size());
      if (!dual) {
        mx_tuning::quantize_mx_1x32(v, max_ctas, dx.data() + c.x_off, c.M, c.K, c.ldx,
                                    dq.data() + c.q_off, c.ldq, ds.data() + c.s_off, c.rule);
        FP8GEMM_CUDA_CHECK(cudaDeviceSynchronize());
        require_same(dq.download(), e.q, "q");
        require_same(ds.download(), e.s, "scales");
        continue;
      }
      auto dqt = poisoned<std::uint8_t>(et.q.size());
      auto dst = poisoned<std::uint8_t>(et.s.size());
      mx_tuning::quantize_mx_1x32_dual(v, max_ctas, dx.data() + c.x_off, c.M, c.K, c.ldx,
                                       dq.data() + c.q_off, c.ldq, ds.data() + c.s_off,
                                       dqt.data() + c.q_off, c.ldq_t, dst.data() + c.s_off, c.rule);
      FP8GEMM_CUDA_CHECK(cudaDeviceSynchronize());
      require_same(dq.download(), e.q, "q");
      require_same(ds.download(), e.s, "scales");
      require_same(dqt.download(), et.q, "q_t");
      require_same(dst.download(), et.s, "scales_t");
    }
  // The public functions run one of them (mx_tuning::default_variant(dual)).
  auto dq = poisoned<std::uint8_t>(e.q.size());
  auto ds = poisoned<std::uint8_t>(e.s.size());
  if (!dual) {
    quantize_mx_1x32(dx.data() + c.x_off, c.M, c.K, c.ldx, dq.data() + c.q_off, c.ldq,
                     ds.data() + c.s_off, c.rule);
    FP8GEMM_CUDA_CHECK(cudaDeviceSynchronize());
    require_same(dq.download(), e.q, "q");
    require_same(ds.download(), e.s, "scales");
    return;
  }
  auto dqt = poisoned<std::uint8_t>(et.q.size());
  auto dst = poisoned<std::uint8_t>(et.s.size());
  quantize_mx_1x32_dual(dx.data() + c.x_off, c.M, c.K, c.ldx, dq.data() + c.q_off, c.ldq,
                        ds.data() + c.s_off, dqt.data() + c.q_off, c.ldq_t, dst.data() + c.s_off,
                        c.rule);
  FP8GEMM_CUDA_CHECK(cudaDeviceSynchronize());
  require_same(dq.download(), e.q, "q");
  require_same(ds.download(), e.s, "scales");
  require_same(dqt.download(), et.q, "q_t");
  require_same(dst.download(), et.s, "scales_t");
}

void require_not_vacuous(const Seen& s) {
  INFO("NaN scales " << s.nan_scales << ", code-0 scales " << s.zero_code_scales << ", saturated "
                     << s.saturated << ", zero blocks " << s.zero_blocks << ", padding bytes "
                     << s.padding_bytes);
  CHECK(s.nan_scales > 0);
  CHECK(s.zero_code_scales > 0);
  CHECK(s.saturated > 0);
  CHECK(s.zero_blocks > 0);
  CHECK(s.padding_bytes > 0);
}

const MxExponentRule kRules[] = {MxExponentRule::floor_ocp, MxExponentRule::rceil};

}  // namespace

TEST_CASE("quantize_mx_1x32 equals quantize_mx byte for byte, padding included", "[mx_gpu]") {
  Seen seen;
  for (const MxExponentRule rule : kRules)
    for (std::int64_t M : {1, 3, 127, 129, 200, 300})
      for (std::int64_t K : {32, 96, 160, 256, 7168 + 32}) {
        check({M, K, K, K, 0, rule}, false, seen);                        // vector paths
        check({M, K, K + 3, K + 5, 0, rule, 1, 3, 1}, false, seen);      // scalar paths
        check({M, K, K + 8, K + 16, 0, rule, 8, 8, 16}, false, seen);   // vector, padded lds
      }
  require_not_vacuous(seen);
}

TEST_CASE("quantize_mx_1x32_dual: q equals quantize_mx(x), q_t quantize_mx(x^T)", "[mx_gpu]") {
  Seen seen;
  for (const MxExponentRule rule : kRules)
    for (std::int64_t M : {32, 96, 160, 288})
      for (std::int64_t K : {32, 96, 224, 1056}) {
        check({M, K, K, K, M, rule}, true, seen);
        check({M, K, K + 1, K + 3, M + 16, rule, 1, 1, 1}, true, seen);   // all scalar
        check({M, K, K, K, M + 7, rule}, true, seen);                     // only q_t scalar
        check({M, K, K + 9, K, M + 32, rule, 3, 16, 16}, true, seen);     // only x scalar
      }
  require_not_vacuous(seen);
}

TEST_CASE("MX quantisers: large shape and determinism", "[mx_gpu]") {
  Seen seen;
  check({1000, 4096 + 96, 4096 + 96, 4096 + 96, 0, MxExponentRule::rceil}, false, seen);
  check({1024 + 32, 2048 + 32, 2048 + 32, 2048 + 32, 1024 + 32, MxExponentRule::floor_ocp}, true,
        seen);
  // Deterministic: a second run gives the same bytes.
  const std::int64_t M = 256, K = 512;
  const Data d = random_x(M, K, K);
  DeviceBuffer<std::uint16_t> dx(d.x);
  auto q = poisoned<std::uint8_t>(std::size_t(M * K));
  auto s = poisoned<std::uint8_t>(std::size_t(mx_1x32_scale_bytes(M, K)));
  quantize_mx_1x32(dx.data(), M, K, K, q.data(), K, s.data(), MxExponentRule::floor_ocp);
  FP8GEMM_CUDA_CHECK(cudaDeviceSynchronize());
  const auto q1 = q.download(), s1 = s.download();
  // The first run is the CPU's (two untouched, poisoned outputs would equal each other), and the
  // second runs on re-poisoned buffers.
  const MxQuantized ref = quantize_mx(d.x.data(), M, K, MxExponentRule::floor_ocp);
  require_same(q1, ref.values, "q, first run (CPU)");
  require_same(s1, ref.scales, "scales, first run (CPU)");
  FP8GEMM_CUDA_CHECK(cudaMemset(q.data(), kPoison, q.bytes()));
  FP8GEMM_CUDA_CHECK(cudaMemset(s.data(), kPoison, s.bytes()));
  quantize_mx_1x32(dx.data(), M, K, K, q.data(), K, s.data(), MxExponentRule::floor_ocp);
  FP8GEMM_CUDA_CHECK(cudaDeviceSynchronize());
  require_same(q.download(), q1, "q, second run");
  require_same(s.download(), s1, "scales, second run");
}

// ==================== requantize_mx: MXFP8 -> chapter 7's format, on the GPU =====================
// Against the CPU rule (mx_requantize_1x128 / mx_requantize_128x128, common/mx.hpp; test_mx_cpu
// checks that rule against float64) byte for byte: every code, every scale's bits, the scale
// buffers' padding (0.0f inside required_elements()), and the bytes nothing may write (poison
// between K and ldo, after each buffer). Operands made to reach every branch: block exponents
// spread over 127 +- 12 (shifts into e4m3's subnormals and to zero), zero blocks (+0 and -0),
// and, where there are enough blocks, a UE8M0 NaN code, an e4m3 NaN element, a zero block above
// its group's exponent (kept as is), a block 40 binades below its neighbours (flushed), code 254,
// and a group whose only non-zero block has code 0 (scale 2^-127, an FP32 subnormal).

namespace {

/// A random MXFP8 operand (rows x K) with the cases above.
MxQuantized random_mx_operand(std::int64_t rows, std::int64_t K) {
  std::mt19937_64 rng(g_seed++);
  MxQuantized q;
  q.rows = rows;
  q.cols = K;
  q.values.resize(std::size_t(rows * K));
  q.scales.assign(std::size_t(mx_scale_bytes(rows, K / 32)), 0);
  const std::int64_t cb = K / 32;
  auto set_code = [&](std::int64_t r, std::int64_t b, int code) {
    q.scales[std::size_t(mx_scale_offset(r, b, rows, cb))] = std::uint8_t(code);
  };
  auto fill = [&](std::int64_t r, std::int64_t b, bool zero) {
    for (std::int64_t c = b * 32; c < b * 32 + 32; ++c) {
      std::uint8_t v = std::uint8_t(rng());
      while ((v & 0x7F) == 0x7F) v = std::uint8_t(rng());
      q.values[std::size_t(r * K + c)] = zero ? std::uint8_t(v & 0x80) : v;
    }
  };
  std::uniform_int_distribution<int> code(127 - 12, 127 + 12);
  for (std::int64_t r = 0; r < rows; ++r)
    for (std::int64_t b = 0; b < cb; ++b) {
      fill(r, b, rng() % 16 == 0);
      set_code(r, b, code(rng));
    }
  if (rows * cb >= 64) {
    std::vector<std::int64_t> ids(std::size_t(rows * cb));
    for (std::size_t i = 0; i < ids.size(); ++i) ids[i] = std::int64_t(i);
    std::shuffle(ids.begin(), ids.end(), rng);
    auto rb = [&](int i) { return std::pair{ids[std::size_t(i)] / cb, ids[std::size_t(i)] % cb}; };
    set_code(rb(0).first, rb(0).second, 0xFF);                                     // NaN code
    fill(rb(1).first, rb(1).second, false);
    q.values[std::size_t(rb(1).first * K + rb(1).second * 32 + 5)] = 0xFF;        // NaN element
    fill(rb(2).first, rb(2).second, true);
    set_code(rb(2).first, rb(2).second, 127 + 40);                 // zero block above E: kept
    fill(rb(3).first, rb(3).second, false);
    set_code(rb(3).first, rb(3).second, 127 - 40);                                 // flushed
    set_code(rb(4).first, rb(4).second, 254);
    // A 1 x 128 group (row r, group g) whose only non-zero block has code 0.
    const auto [r, b] = rb(5);
    const std::int64_t g0 = b / 4 * 4;
    for (std::int64_t x = g0; x < std::min(cb, g0 + 4); ++x) fill(r, x, x != b);
    set_code(r, b, 0);
  }
  return q;
}

/// The output layouts a check writes: A's 1 x 128 scales and B's 128 x 128 scales.
struct RequantLayouts {
  GroupScaleLayout a;
  BlockScaleLayout b;
};

/// What the CPU rule gives, in the GPU call's buffers: codes at ld with poison in the gaps (and
/// kSlack bytes after), scales at the layout's offsets with 0.0f in the padding inside
/// required_elements() (and 4 poisoned floats after).
struct RequantExpected {
  std::vector<std::uint8_t> q;
  std::vector<std::uint32_t> s;
};
constexpr std::uint32_t kPoisonFloat = 0xABABABABu;
std::uint32_t bits(float f) {
  std::uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}
template <class Recipe, class Layout>
RequantExpected expected_requant(const Quantized<Recipe>& cpu, std::int64_t rows, std::int64_t K,
                                 std::int64_t ldo, const Layout& L, bool group_1x128) {
  RequantExpected e;
  e.q.assign(std::size_t((rows - 1) * ldo + K) + kSlack, kPoison);
  for (std::int64_t r = 0; r < rows; ++r)
    std::copy_n(cpu.values.begin() + r * K, K, e.q.begin() + r * ldo);
  const std::int64_t groups = ceil_div(K, 128), need = L.required_elements(rows, K);
  e.s.assign(std::size_t(need + 4), kPoisonFloat);
  for (std::int64_t i = 0; i < need; ++i) e.s[std::size_t(i)] = 0;  // padding: 0.0f
  const std::int64_t lines = group_1x128 ? rows : ceil_div(rows, 128);
  for (std::int64_t i = 0; i < lines; ++i)
    for (std::int64_t g = 0; g < groups; ++g)
      e.s[std::size_t(L.offset(i, g))] =
          bits(cpu.scales[std::size_t(cpu.layout.block_index(i, g))]);
  return e;
}

struct RequantSeen {
  std::int64_t moved = 0, flushed = 0, nan_groups = 0, tiny_scale = 0, padding = 0;
};

/// Which scale buffers a check puts at an odd address (the pipelined variants then run v1).
enum class OddScales { none, both, b_only };
/// How a check calls the re-quantiser: variant -1 is the public requantize_mx, else
/// requant_tuning's kernel variant with the grid capped at max_ctas (0: its own).
struct RequantCall {
  int variant = -1, max_ctas = 0;
  OddScales odd = OddScales::none;
};
/// The calls the byte-for-byte case cycles through, one per check: every variant, capped grids
/// small enough that CTAs walk many tiles and wrap their rings, and unaligned scales. 11 of them,
/// prime to the 4 checks per shape, so each kind of check meets every call.
constexpr auto kOddBoth = OddScales::both, kOddB = OddScales::b_only;
const RequantCall kRequantCalls[] = {{-1, 0}, {0, 0},           {1, 0},          {2, 0},
                                     {3, 0},  {1, 1},           {2, 3},          {3, 5},
                                     {1, 7, kOddB}, {-1, 0, kOddBoth}, {3, 2, kOddBoth}};

/// One call of requantize_mx on fresh operands: a (rows_a x K) and b (rows_b x K), either
/// skipped when its rows are 0; ldq = K + pad_q, ldo = K + pad_o.
void check_requant(std::int64_t rows_a, std::int64_t rows_b, std::int64_t K, std::int64_t pad_q,
                   std::int64_t pad_o, const RequantLayouts& L, RequantSeen& seen,
                   RequantCall call = {}) {
  INFO("rows_a " << rows_a << ", rows_b " << rows_b << ", K " << K << ", pad_q " << pad_q
                 << ", pad_o " << pad_o << ", layout_a " << to_string(L.a.major) << " ld "
                 << L.a.ld << ", layout_b ld " << L.b.ld << ", variant " << call.variant
                 << ", max_ctas " << call.max_ctas << ", odd scales " << int(call.odd));
  struct Side {
    std::int64_t rows;
    MxQuantized q;
    DeviceBuffer<std::uint8_t> dq, ds, out;
    DeviceBuffer<std::uint32_t> out_s;
    RequantExpected want;
    MxRequantOperand op;
  };
  const std::int64_t ldq = K + pad_q, ldo = K + pad_o;
  auto make = [&](std::int64_t rows, bool is_a) {
    Side s;
    s.rows = rows;
    s.q = random_mx_operand(rows, K);
    std::vector<std::uint8_t> strided(std::size_t((rows - 1) * ldq + K), 0x7F);  // NaN gaps
    for (std::int64_t r = 0; r < rows; ++r)
      std::copy_n(s.q.values.begin() + r * K, K, strided.begin() + r * ldq);
    s.dq = DeviceBuffer<std::uint8_t>(strided);
    const bool odd = call.odd == OddScales::both || (call.odd == OddScales::b_only && !is_a);
    std::vector<std::uint8_t> scales(s.q.scales.size() + 1, 0xFF);  // NaN codes before
    std::copy(s.q.scales.begin(), s.q.scales.end(), scales.begin() + (odd ? 1 : 0));
    s.ds = DeviceBuffer<std::uint8_t>(scales);
    if (is_a) {
      const auto cpu = mx_requantize_1x128(s.q);
      s.want = expected_requant(cpu, rows, K, ldo, L.a, true);
      for (float f : cpu.scales) seen.nan_groups += std::isnan(f);
      for (float f : cpu.scales) seen.tiny_scale += f == std::ldexp(1.0f, -127);
      for (std::size_t i = 0; i < cpu.values.size(); ++i) {
        seen.moved += cpu.values[i] != s.q.values[i];
        seen.flushed += (s.q.values[i] & 0x7F) != 0 && (cpu.values[i] & 0x7F) == 0;
      }
    } else {
      const auto cpu = mx_requantize_128x128(s.q);
      s.want = expected_requant(cpu, rows, K, ldo, L.b, false);
      for (float f : cpu.scales) seen.nan_groups += std::isnan(f);
    }
    for (std::size_t i = 0; i + 4 < s.want.s.size(); ++i) seen.padding += s.want.s[i] == 0;
    s.out = poisoned<std::uint8_t>(s.want.q.size());
    s.out_s = poisoned<std::uint32_t>(s.want.s.size());
    s.op = {s.dq.data(), rows, K, ldq, s.ds.data() + (odd ? 1 : 0), s.out.data(), ldo,
            reinterpret_cast<float*>(s.out_s.data())};
    return s;
  };
  Side a, b;
  if (rows_a > 0) a = make(rows_a, true);
  if (rows_b > 0) b = make(rows_b, false);
  const MxRequantOperand* pa = rows_a > 0 ? &a.op : nullptr;
  const MxRequantOperand* pb = rows_b > 0 ? &b.op : nullptr;
  if (call.variant < 0)
    requantize_mx(pa, L.a, pb, L.b);
  else
    requant_tuning::requantize_mx(call.variant, call.max_ctas, pa, L.a, pb, L.b);
  // The variant that ran: the one asked for, v1 wherever a scale buffer is at an odd address.
  const int asked = call.variant < 0 ? requant_tuning::default_variant() : call.variant;
  const bool any_odd = (pa != nullptr && reinterpret_cast<std::uintptr_t>(pa->scales) % 16 != 0) ||
                       (pb != nullptr && reinterpret_cast<std::uintptr_t>(pb->scales) % 16 != 0);
  CHECK(requant_tuning::variant_run(asked, pa, pb) == (any_odd ? 0 : asked));
  FP8GEMM_CUDA_CHECK(cudaDeviceSynchronize());
  if (rows_a > 0) {
    require_same(a.out.download(), a.want.q, "A's codes");
    require_same(a.out_s.download(), a.want.s, "A's scales");
  }
  if (rows_b > 0) {
    require_same(b.out.download(), b.want.q, "B's codes");
    require_same(b.out_s.download(), b.want.s, "B's scales");
  }
}

}  // namespace

TEST_CASE("requantize_mx equals mx_requantize_1x128 / _128x128 byte for byte", "[mx_gpu]") {
  RequantSeen seen;
  // Each check takes the next of kRequantCalls (the public function, every kernel variant,
  // capped grids, odd scale addresses), so every variant meets every kind of shape and layout.
  std::size_t next_call = 0;
  const auto call = [&] {
    return kRequantCalls[next_call++ % (sizeof kRequantCalls / sizeof kRequantCalls[0])];
  };
  // K and rows both ragged and whole multiples of 128 (a full last group, a full last row tile,
  // B's padding row guard at an exact multiple).
  for (const std::int64_t K : {32, 96, 128, 160, 512, 544, 1056, 4096 + 96})
    for (const std::int64_t rows : {1, 3, 127, 128, 129, 200, 256, 300}) {
      const std::int64_t groups = ceil_div(K, 128);
      // Both operands in one launch, the default layouts chapter 7 reads (A mn-major
      // TMA-aligned, B padded), packed leading dimensions.
      check_requant(rows, rows + 37, K, 0, 0,
                    {GroupScaleLayout::mn_major_tma_aligned(rows), BlockScaleLayout::padded(K)},
                    seen, call());
      // Each alone; strided operands; other layouts (k-major A with padding, packed B, B with a
      // wide ld).
      check_requant(rows, 0, K, 16, 32, {GroupScaleLayout{ScaleMajor::k, groups + 3}, {}}, seen,
                    call());
      check_requant(0, rows, K, 32, 16, {{}, BlockScaleLayout::packed(K)}, seen, call());
      check_requant(rows + 5, 2 * rows + 1, K, 0, 16,
                    {GroupScaleLayout::mn_major_packed(rows + 5), BlockScaleLayout{groups + 5}},
                    seen, call());
    }
  CHECK(next_call == 256);  // 23 or 24 checks of each call
  // Not vacuous: elements moved and flushed, NaN groups, the subnormal scale 2^-127, padding.
  CHECK(seen.moved > 1000);
  CHECK(seen.flushed > 100);
  CHECK(seen.nan_groups > 10);
  CHECK(seen.tiny_scale > 0);
  CHECK(seen.padding > 0);
}

TEST_CASE("requantize_mx: a large operand pair, deterministic", "[mx_gpu]") {
  RequantSeen seen;
  const std::int64_t M = 1024, N = 2100, K = 7168 + 32;
  const RequantLayouts L{GroupScaleLayout::mn_major_tma_aligned(M), BlockScaleLayout::padded(K)};
  check_requant(M, N, K, 0, 0, L, seen);  // the CPU's bytes
  // Every kernel variant on its own grid and on capped ones (CTAs walking hundreds of tiles and
  // wrapping their rings; 132 is one CTA per SM of the H200), each on fresh operands.
  for (int v = 0; v < requant_tuning::kVariants; ++v)
    for (const int ctas : {0, 132, 7}) {
      INFO("variant " << requant_tuning::variant_name(v) << ", max_ctas " << ctas);
      check_requant(M, N, K, 0, 0, L, seen, {v, ctas});
    }
  // Twice on the same input: the same bytes (the first run equals the CPU's, checked above on
  // other data; here the second equals the first, on re-poisoned outputs).
  const MxQuantized q = random_mx_operand(N, K);
  DeviceBuffer<std::uint8_t> dq(q.values), ds(q.scales);
  auto out = poisoned<std::uint8_t>(std::size_t(N * K));
  auto out_s = poisoned<float>(std::size_t(L.b.required_elements(N, K)));
  const MxRequantOperand b{dq.data(), N, K, K, ds.data(), out.data(), K, out_s.data()};
  requantize_mx(nullptr, L.a, &b, L.b);
  FP8GEMM_CUDA_CHECK(cudaDeviceSynchronize());
  const auto q1 = out.download();
  const auto s1 = out_s.download();
  REQUIRE(q1 == mx_requantize_128x128(q).values);
  FP8GEMM_CUDA_CHECK(cudaMemset(out.data(), kPoison, out.bytes()));
  FP8GEMM_CUDA_CHECK(cudaMemset(out_s.data(), kPoison, out_s.bytes()));
  requantize_mx(nullptr, L.a, &b, L.b);
  FP8GEMM_CUDA_CHECK(cudaDeviceSynchronize());
  CHECK(out.download() == q1);
  const auto s2 = out_s.download();
  CHECK(std::memcmp(s2.data(), s1.data(), s1.size() * 4) == 0);
}
