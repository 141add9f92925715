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
// saturated codes, code-0 scales, zero padding). Without a GPU, gpu_main.cpp exits 77 (skipped).
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

/// Byte equality, reporting the first difference.
void require_same(const std::vector<std::uint8_t>& got, const std::vector<std::uint8_t>& want,
                  const char* what) {
  REQUIRE(got.size() == want.size());
  std::size_t i = 0;
  while (i < got.size() && got[i] == want[i]) ++i;
  INFO(what << ": first differing byte " << i << " of " << got.size()
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
