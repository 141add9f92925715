// GPU tests of the DeepSeek-V3 quantisers (common/quantize_gpu.hpp): every kernel against the
// CPU ground truth (common/quantize.hpp) byte for byte and scale bit for scale bit, including
// the bytes it must NOT write (q between K and ldq, scale entries past required_elements()):
// outputs are poisoned with 0xAB before each call and the expected buffers start from the same
// poison. Fresh random inputs per check (never all zero; groups of very different magnitude,
// zero, tiny and huge groups), shapes that are not multiples of 128, both 1x128 layouts with
// packed and padded leading dimensions, the scalar (unaligned) paths, NaN and Inf, pow2 scales,
// the dual variant, the expert-token variant of chapter 8 (awkward expert sizes, 1 to 64 experts,
// a CUDA graph replayed with other offsets, offsets that break the rules), the converters,
// determinism. Without a GPU, gpu_main.cpp exits 77 (skipped).
#include <cuda_runtime.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "catch.hpp"
#include "common/cuda.hpp"
#include "common/fp8.hpp"
#include "common/quantize.hpp"
#include "common/quantize_gpu.hpp"
#include "common/reference.hpp"
#include "common/scale_layout.hpp"
#include "common/src/quantize_kernels.cuh"  // the lean arithmetic, swept below
#include "refusal.hpp"

namespace {

using namespace fp8gemm;

constexpr std::uint8_t kPoison = 0xAB;

std::uint64_t g_seed = 20261201;  // every check draws fresh data

/// rows x K bf16 bits with leading dimension ld (the gaps hold NaN, which no kernel may read):
/// N(0, 1) times 2^e, e random per 128-group in [-30, 30]; with enough groups: one all zero,
/// one tiny (1e-30), one whose amax / 448 is a subnormal float (1e-38), one huge (1e30).
std::vector<std::uint16_t> random_bf16(std::int64_t rows, std::int64_t K, std::int64_t ld) {
  std::mt19937_64 gen(g_seed++);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::uniform_int_distribution<int> expo(-30, 30);
  std::vector<std::uint16_t> x(static_cast<std::size_t>((rows - 1) * ld + K), 0x7FC1);
  const std::int64_t groups = ceil_div(K, 128);
  const std::int64_t n = rows * groups;
  std::uniform_int_distribution<std::int64_t> pick(0, n - 1);
  const std::int64_t zero = pick(gen), tiny = pick(gen), subn = pick(gen), huge = pick(gen);
  for (std::int64_t r = 0; r < rows; ++r)
    for (std::int64_t g = 0; g < groups; ++g) {
      const std::int64_t id = r * groups + g;
      float f = std::ldexp(1.0f, expo(gen));
      if (n >= 8) {
        if (id == zero) f = 0.0f;
        else if (id == tiny) f = 1e-30f;
        else if (id == subn) f = 1e-38f;
        else if (id == huge) f = 1e30f;
      }
      for (std::int64_t c = g * 128; c < std::min(K, g * 128 + 128); ++c)
        x[static_cast<std::size_t>(r * ld + c)] = float_to_bf16(normal(gen) * f);
    }
  return x;
}

template <class T>
DeviceBuffer<T> poisoned(std::size_t count) {
  DeviceBuffer<T> b(count);
  FP8GEMM_CUDA_CHECK(cudaMemset(b.data(), kPoison, b.bytes()));
  return b;
}
template <class T>
std::vector<T> poisoned_host(std::size_t count) {
  std::vector<T> v(count);
  std::memset(v.data(), kPoison, count * sizeof(T));
  return v;
}

/// Byte equality, reporting the first difference.
template <class T>
void require_same_bytes(const std::vector<T>& got, const std::vector<T>& want, const char* what) {
  REQUIRE(got.size() == want.size());
  const auto* a = reinterpret_cast<const unsigned char*>(got.data());
  const auto* b = reinterpret_cast<const unsigned char*>(want.data());
  const std::size_t n = got.size() * sizeof(T);
  std::size_t i = 0;
  while (i < n && a[i] == b[i]) ++i;
  INFO(what << ": first differing byte " << i << " of " << n
            << (i < n ? (" (got " + std::to_string(a[i]) + ", want " + std::to_string(b[i]) + ")")
                      : std::string()));
  REQUIRE(i == n);
}

std::int64_t scale_buffer(const GroupScaleLayout& L, std::int64_t rows, std::int64_t K) {
  return L.required_elements(rows, K) + 8;  // 8 slack floats that must stay poisoned
}

struct Case1x128 {
  std::int64_t M, K, ldx, ldq;
  GroupScaleLayout layout;
  std::size_t q_offset = 0;  // bytes: a non-zero offset forces the scalar store path
  bool pow2 = false;
};

/// Runs quantize_1x128 on x (host data) and compares every output byte with the CPU: the public
/// function, then every kernel variant (tuning_1x128) with its own grid and with at most 3 CTAs
/// (each CTA then walks several tiles), each on freshly poisoned outputs.
void check_1x128(const Case1x128& c, const std::vector<std::uint16_t>& x) {
  CAPTURE(c.M, c.K, c.ldx, c.ldq, to_string(c.layout.major), c.layout.ld, c.q_offset, c.pow2);
  const std::size_t q_count = static_cast<std::size_t>((c.M - 1) * c.ldq + c.K) + c.q_offset + 16;
  const std::size_t s_count = static_cast<std::size_t>(scale_buffer(c.layout, c.M, c.K));
  DeviceBuffer<std::uint16_t> dx(x);
  auto dq = poisoned<std::uint8_t>(q_count);
  auto ds = poisoned<float>(s_count);
  const QuantizeOptions opt{c.pow2};
  quantize_1x128(dx.data(), c.M, c.K, c.ldx, dq.data() + c.q_offset, c.ldq, ds.data(), c.layout, opt);
  FP8GEMM_CUDA_CHECK(cudaDeviceSynchronize());
  auto q = poisoned_host<std::uint8_t>(q_count);
  auto s = poisoned_host<float>(s_count);
  quantize_1x128_cpu(x.data(), c.M, c.K, c.ldx, q.data() + c.q_offset, c.ldq, s.data(), c.layout, opt);
  const auto got_q = dq.download();
  require_same_bytes(got_q, q, "q");
  require_same_bytes(ds.download(), s, "scales");
  // Deterministic: a second run, on re-poisoned outputs, gives the same bytes.
  FP8GEMM_CUDA_CHECK(cudaMemset(dq.data(), kPoison, dq.bytes()));
  FP8GEMM_CUDA_CHECK(cudaMemset(ds.data(), kPoison, ds.bytes()));
  quantize_1x128(dx.data(), c.M, c.K, c.ldx, dq.data() + c.q_offset, c.ldq, ds.data(), c.layout, opt);
  FP8GEMM_CUDA_CHECK(cudaDeviceSynchronize());
  require_same_bytes(dq.download(), got_q, "q, second run");
  require_same_bytes(ds.download(), s, "scales, second run");
  for (int v = 0; v < tuning_1x128::kVariants; ++v)
    for (int max_ctas : {0, 3}) {
      CAPTURE(v, tuning_1x128::variant_name(v), max_ctas);
      FP8GEMM_CUDA_CHECK(cudaMemset(dq.data(), kPoison, dq.bytes()));
      FP8GEMM_CUDA_CHECK(cudaMemset(ds.data(), kPoison, ds.bytes()));
      tuning_1x128::quantize_1x128(v, max_ctas, dx.data(), c.M, c.K, c.ldx, dq.data() + c.q_offset,
                                   c.ldq, ds.data(), c.layout, opt);
      FP8GEMM_CUDA_CHECK(cudaDeviceSynchronize());
      require_same_bytes(dq.download(), q, "q (variant)");
      require_same_bytes(ds.download(), s, "scales (variant)");
    }
}

/// rows x K bf16 bits (gaps NaN), adversarial for the division, the scale rules and the zero
/// signs: each 128 x 128 block of x gets a bound drawn from the whole bf16 range (uniform bit
/// patterns 0 .. 0x7F7F, huge ones included) or, for half of the blocks, from the tiny range
/// 0 .. 0x0C00 (amax <= 2^-104: subnormal scales, the lean kernels' prescaled groups); each row's
/// 1 x 128 group a bound up to the block's (every third row: the block's own), reached at a random
/// place; the other elements uniform bit patterns of magnitude <= the group's bound, both signs
/// (+-0 and bf16 subnormals included). The blocks' columns (the dual's transposed groups) then
/// cover the same ranges.
std::vector<std::uint16_t> adversarial_bf16(std::int64_t rows, std::int64_t K, std::int64_t ld) {
  std::mt19937_64 gen(g_seed++);
  std::uniform_int_distribution<std::uint32_t> amax_bits(0, 0x7F7F), tiny_bits(0, 0x0C00),
      bit(0, 1);
  std::vector<std::uint16_t> x(static_cast<std::size_t>((rows - 1) * ld + K), 0x7FC1);
  const std::int64_t groups = ceil_div(K, 128);
  std::vector<std::uint32_t> block(static_cast<std::size_t>(ceil_div(rows, 128) * groups));
  for (auto& m : block) m = bit(gen) ? tiny_bits(gen) : amax_bits(gen);
  for (std::int64_t r = 0; r < rows; ++r)
    for (std::int64_t g = 0; g < groups; ++g) {
      const std::uint32_t mb = block[static_cast<std::size_t>((r / 128) * groups + g)];
      const std::uint32_t m =
          r % 3 == 0 ? mb : std::uniform_int_distribution<std::uint32_t>(0, mb)(gen);
      std::uniform_int_distribution<std::uint32_t> mag(0, m);
      const std::int64_t n = std::min<std::int64_t>(128, K - g * 128);
      const std::int64_t at = std::uniform_int_distribution<std::int64_t>(0, n - 1)(gen);
      for (std::int64_t c = 0; c < n; ++c)
        x[static_cast<std::size_t>(r * ld + g * 128 + c)] =
            std::uint16_t((c == at ? m : mag(gen)) | (bit(gen) ? 0x8000u : 0u));
    }
  return x;
}

const std::int64_t kRows[] = {1, 3, 127, 129, 200};
const std::int64_t kCols[] = {16, 112, 144, 640, 7168 + 16};

}  // namespace

TEST_CASE("quantize_1x128 equals the CPU quantiser byte for byte", "[quantize_gpu]") {
  for (std::int64_t M : kRows)
    for (std::int64_t K : kCols) {
      const GroupScaleLayout layouts[] = {GroupScaleLayout::mn_major_tma_aligned(M),
                                          GroupScaleLayout::mn_major_packed(M),
                                          GroupScaleLayout::k_major_packed(K),
                                          GroupScaleLayout{ScaleMajor::k, ceil_div(K, 128) + 3},
                                          GroupScaleLayout{ScaleMajor::mn, M + 9}};
      int variant = 0;
      for (const auto& L : layouts) {
        // Leading dimensions: packed; padded and vector-friendly; odd (scalar loads); plus a
        // misaligned q (scalar stores); pow2 on every other case.
        const std::int64_t ldx = variant % 3 == 0 ? K : variant % 3 == 1 ? K + 24 : K + 3;
        const std::int64_t ldq = variant % 2 == 0 ? K : K + 40;
        const std::size_t qoff = variant == 4 ? 3 : 0;
        check_1x128({M, K, ldx, ldq, L, qoff, variant % 2 == 1}, random_bf16(M, K, ldx));
        ++variant;
      }
    }
}

TEST_CASE("quantize_1x128: adversarial groups (every amax range, tiny scales, signed zeros)",
          "[quantize_gpu]") {
  int variant = 0;
  for (std::int64_t M : {5, 130, 257})
    for (std::int64_t K : {128, 200, 1024 + 8}) {
      const GroupScaleLayout L = variant % 2 == 0 ? GroupScaleLayout::mn_major_tma_aligned(M)
                                                  : GroupScaleLayout::k_major_packed(K);
      const std::int64_t ldx = variant % 3 == 2 ? K + 1 : K;  // every third: scalar loads
      for (bool pow2 : {false, true})
        check_1x128({M, K, ldx, K, L, 0, pow2}, adversarial_bf16(M, K, ldx));
      ++variant;
    }
}

TEST_CASE("quantize_1x128 at a large shape (M = 4096, K = 7168), both options", "[quantize_gpu]") {
  for (bool pow2 : {false, true})
    check_1x128({4096, 7168, 7168, 7168, GroupScaleLayout::mn_major_tma_aligned(4096), 0, pow2},
                random_bf16(4096, 7168, 7168));
}

TEST_CASE("quantize_1x128: NaN and Inf poison their own group only", "[quantize_gpu]") {
  const std::int64_t M = 129, K = 640;
  auto x = random_bf16(M, K, K);
  const float nan = std::numeric_limits<float>::quiet_NaN(), inf = std::numeric_limits<float>::infinity();
  x[0 * K + 5] = float_to_bf16(nan);             // row 0, group 0
  x[0 * K + 128 + 127] = float_to_bf16(-nan);    // row 0, group 1 (negative NaN)
  x[7 * K + 256] = float_to_bf16(inf);           // row 7, group 2
  x[128 * K + 639] = float_to_bf16(-inf);        // last row, last group
  x[64 * K + 300] = 0xFF80;                      // -Inf as bits
  for (const auto& L : {GroupScaleLayout::mn_major_tma_aligned(M), GroupScaleLayout::k_major_packed(K)})
    check_1x128({M, K, K, K, L}, x);
  // And the rule itself, on the GPU's output.
  DeviceBuffer<std::uint16_t> dx(x);
  auto dq = poisoned<std::uint8_t>(M * K);
  const auto L = GroupScaleLayout::k_major_packed(K);
  auto ds = poisoned<float>(L.required_elements(M, K));
  quantize_1x128(dx.data(), M, K, K, dq.data(), K, ds.data(), L);
  const auto q = dq.download();
  const auto s = ds.download();
  for (auto [r, g] : {std::pair<int, int>{0, 0}, {0, 1}, {7, 2}, {128, 4}, {64, 2}}) {
    std::uint32_t b;
    std::memcpy(&b, &s[L.offset(r, g)], 4);
    CHECK(b == 0x7FC00000u);
    for (int c = 0; c < 128; ++c) REQUIRE(q[r * K + g * 128 + c] == 0x7F);
  }
  CHECK(std::isfinite(s[L.offset(1, 0)]));
}

TEST_CASE("quantize_128x128 equals the CPU quantiser byte for byte", "[quantize_gpu]") {
  for (std::int64_t N : kRows)
    for (std::int64_t K : kCols) {
      int variant = 0;
      for (const auto& L : {BlockScaleLayout::padded(K), BlockScaleLayout::packed(K),
                            BlockScaleLayout{ceil_div(K, 128) + 5}}) {
        const std::int64_t ldw = variant == 0 ? K : variant == 1 ? K + 8 : K + 1;
        const std::int64_t ldq = variant == 2 ? K + 5 : K;
        const bool pow2 = variant == 1;
        CAPTURE(N, K, ldw, ldq, L.ld, pow2);
        auto w = random_bf16(N, K, ldw);
        if (variant == 2 && N > 100) w[100 * ldw + K - 1] = float_to_bf16(std::numeric_limits<float>::infinity());
        const std::size_t q_count = static_cast<std::size_t>((N - 1) * ldq + K) + 16;
        const std::size_t s_count = static_cast<std::size_t>(L.required_elements(N, K)) + 8;
        DeviceBuffer<std::uint16_t> dw(w);
        auto dq = poisoned<std::uint8_t>(q_count);
        auto ds = poisoned<float>(s_count);
        quantize_128x128(dw.data(), N, K, ldw, dq.data(), ldq, ds.data(), L, {pow2});
        FP8GEMM_CUDA_CHECK(cudaDeviceSynchronize());
        auto q = poisoned_host<std::uint8_t>(q_count);
        auto s = poisoned_host<float>(s_count);
        quantize_128x128_cpu(w.data(), N, K, ldw, q.data(), ldq, s.data(), L, {pow2});
        require_same_bytes(dq.download(), q, "q");
        require_same_bytes(ds.download(), s, "scales");
        ++variant;
      }
    }
  // A large one, twice (deterministic).
  const std::int64_t N = 7168, K = 2048 + 64;
  const auto w = random_bf16(N, K, K);
  DeviceBuffer<std::uint16_t> dw(w);
  const auto L = BlockScaleLayout::padded(K);
  auto dq = poisoned<std::uint8_t>(N * K);
  auto ds = poisoned<float>(L.required_elements(N, K));
  quantize_128x128(dw.data(), N, K, K, dq.data(), K, ds.data(), L);
  FP8GEMM_CUDA_CHECK(cudaDeviceSynchronize());
  auto q = poisoned_host<std::uint8_t>(N * K);
  auto s = poisoned_host<float>(L.required_elements(N, K));
  quantize_128x128_cpu(w.data(), N, K, K, q.data(), K, s.data(), L);
  require_same_bytes(dq.download(), q, "q (7168 x 2112)");
  require_same_bytes(ds.download(), s, "scales (7168 x 2112)");
}

/// Runs quantize_128x128_dual (variant < 0: the public function; else that tuning_128x128 kernel,
/// its grid capped at max_ctas when > 0) on w with every output poisoned first, and requires q,
/// scales, q_t and scales_t, slack past their extents included, byte for byte equal to the CPU
/// ground truth's.
void require_dual_128x128_matches_cpu(int variant, int max_ctas,
                                      const std::vector<std::uint16_t>& w,
                                      std::int64_t N, std::int64_t K, std::int64_t ldw,
                                      std::int64_t ldq, std::int64_t ldq_t,
                                      const BlockScaleLayout& L, const BlockScaleLayout& Lt,
                                      bool pow2) {
  const std::size_t q_count = static_cast<std::size_t>((N - 1) * ldq + K) + 16;
  const std::size_t s_count = static_cast<std::size_t>(L.required_elements(N, K)) + 8;
  const std::size_t qt_count = static_cast<std::size_t>((K - 1) * ldq_t + N) + 16;
  const std::size_t st_count = static_cast<std::size_t>(Lt.required_elements(K, N)) + 8;
  DeviceBuffer<std::uint16_t> dw(w);
  auto dq = poisoned<std::uint8_t>(q_count);
  auto ds = poisoned<float>(s_count);
  auto dqt = poisoned<std::uint8_t>(qt_count);
  auto dst = poisoned<float>(st_count);
  if (variant < 0)
    quantize_128x128_dual(dw.data(), N, K, ldw, dq.data(), ldq, ds.data(), L, dqt.data(), ldq_t,
                          dst.data(), Lt, {pow2});
  else
    tuning_128x128::quantize_128x128_dual(variant, max_ctas, dw.data(), N, K, ldw, dq.data(), ldq,
                                          ds.data(), L, dqt.data(), ldq_t, dst.data(), Lt, {pow2});
  FP8GEMM_CUDA_CHECK(cudaDeviceSynchronize());
  auto q = poisoned_host<std::uint8_t>(q_count);
  auto s = poisoned_host<float>(s_count);
  auto qt = poisoned_host<std::uint8_t>(qt_count);
  auto st = poisoned_host<float>(st_count);
  quantize_128x128_dual_cpu(w.data(), N, K, ldw, q.data(), ldq, s.data(), L, qt.data(), ldq_t,
                            st.data(), Lt, {pow2});
  require_same_bytes(dq.download(), q, "q");
  require_same_bytes(ds.download(), s, "scales");
  require_same_bytes(dqt.download(), qt, "q_t");
  require_same_bytes(dst.download(), st, "scales_t");
}

TEST_CASE("quantize_128x128_dual equals the CPU for q and q_t", "[quantize_gpu]") {
  // Every row and column count of kRows / kCols (partial blocks both ways), both scale layouts
  // and an over-padded one, each leading dimension case (vector and scalar paths of q and of
  // q_t: ldq_t a multiple of 16 or not), pow2, and an Inf.
  for (std::int64_t N : kRows)
    for (std::int64_t K : kCols) {
      int variant = 0;
      for (const auto& L : {BlockScaleLayout::padded(K), BlockScaleLayout::packed(K),
                            BlockScaleLayout{ceil_div(K, 128) + 5}}) {
        const std::int64_t ldw = variant == 0 ? K : variant == 1 ? K + 8 : K + 1;
        const std::int64_t ldq = variant == 2 ? K + 5 : K;
        const std::int64_t ldq_t = variant == 0 ? N : variant == 1 ? round_up(N, 16) + 16 : N + 3;
        const BlockScaleLayout Lt = variant == 0   ? BlockScaleLayout::packed(N)
                                    : variant == 1 ? BlockScaleLayout::padded(N)
                                                   : BlockScaleLayout{ceil_div(N, 128) + 3};
        const bool pow2 = variant == 1;
        CAPTURE(N, K, ldw, ldq, ldq_t, L.ld, Lt.ld, pow2);
        auto w = random_bf16(N, K, ldw);
        if (variant == 2 && N > 100)
          w[100 * ldw + K - 1] = float_to_bf16(std::numeric_limits<float>::infinity());
        require_dual_128x128_matches_cpu(-1, 0, w, N, K, ldw, ldq, ldq_t, L, Lt, pow2);
        ++variant;
      }
    }
}

TEST_CASE("quantize_128x128_dual: every kernel variant equals the CPU", "[quantize_gpu]") {
  // tuning_128x128's variants (exact and lean arithmetic, 3 and 4 CTAs per SM, cp.async loads,
  // persistent), each with its own grid and with at most 3 CTAs (every CTA then walks several
  // blocks: the cp.async kernels' next-block copies), on partial-block shapes with vector loads
  // and K % 8 == 0 (the cp.async kernels run; in the second, ldw > K and adversarial_bf16 fills
  // the gaps with NaN, which a read past K would carry into the codes) and one with scalar loads
  // (they fall back to the lean kernel): random data, and adversarial data (every amax range,
  // tiny blocks: the lean prescaled path, signed zeros) with a NaN and an Inf, under both rules.
  for (int v = 0; v < tuning_128x128::kVariants; ++v)
    for (int max_ctas : {0, 3})
      for (auto [N, K, ldw, ldq_t] :
           {std::array<std::int64_t, 4>{300, 7168 + 16, 7168 + 16, 304},
            {200, 1024 + 16, 1024 + 24, 208},
            {257, 1040, 1041, 259}})
        for (int data = 0; data < 3; ++data) {
          const bool adversarial = data > 0, pow2 = data == 2;
          CAPTURE(v, tuning_128x128::variant_name(v), max_ctas, N, K, ldw, ldq_t, adversarial,
                  pow2);
          auto w = adversarial ? adversarial_bf16(N, K, ldw) : random_bf16(N, K, ldw);
          if (adversarial) {
            w[130 * ldw + 5] = float_to_bf16(std::numeric_limits<float>::quiet_NaN());
            w[3 * ldw + K - 1] = float_to_bf16(-std::numeric_limits<float>::infinity());
          }
          require_dual_128x128_matches_cpu(v, max_ctas, w, N, K, ldw, K, ldq_t,
                                           BlockScaleLayout::packed(K), BlockScaleLayout::padded(N),
                                           pow2);
        }
}

TEST_CASE("quantize_128x128_dual at a layer's shape equals quantize_128x128 and its transpose",
          "[quantize_gpu]") {
  // 7168 x 2112 (a partial block column) and 2112 x 7168, as Fp8Linear calls it: packed grids,
  // contiguous codes. Against the CPU (the dual's definition) and against quantize_128x128's own
  // q and scales from the same w (the forward pass must not change).
  for (auto [N, K] : {std::pair<std::int64_t, std::int64_t>{7168, 2112}, {2112, 7168}}) {
    CAPTURE(N, K);
    const auto w = random_bf16(N, K, K);
    DeviceBuffer<std::uint16_t> dw(w);
    const auto L = BlockScaleLayout::packed(K), Lt = BlockScaleLayout::packed(N);
    auto dq = poisoned<std::uint8_t>(N * K), dqt = poisoned<std::uint8_t>(N * K);
    auto dq1 = poisoned<std::uint8_t>(N * K);
    auto ds = poisoned<float>(L.required_elements(N, K)), ds1 = poisoned<float>(L.required_elements(N, K));
    auto dst = poisoned<float>(Lt.required_elements(K, N));
    quantize_128x128_dual(dw.data(), N, K, K, dq.data(), K, ds.data(), L, dqt.data(), N, dst.data(), Lt);
    quantize_128x128(dw.data(), N, K, K, dq1.data(), K, ds1.data(), L);
    FP8GEMM_CUDA_CHECK(cudaDeviceSynchronize());
    auto q = poisoned_host<std::uint8_t>(N * K), qt = poisoned_host<std::uint8_t>(N * K);
    auto s = poisoned_host<float>(L.required_elements(N, K));
    auto st = poisoned_host<float>(Lt.required_elements(K, N));
    quantize_128x128_dual_cpu(w.data(), N, K, K, q.data(), K, s.data(), L, qt.data(), N, st.data(), Lt);
    const auto gq = dq.download();
    const auto gs = ds.download();
    require_same_bytes(gq, q, "q");
    require_same_bytes(gs, s, "scales");
    require_same_bytes(dqt.download(), qt, "q_t");
    require_same_bytes(dst.download(), st, "scales_t");
    require_same_bytes(gq, dq1.download(), "q against quantize_128x128");
    require_same_bytes(gs, ds1.download(), "scales against quantize_128x128");
  }
}

TEST_CASE("quantize_1x128_dual equals the CPU for q and q_t", "[quantize_gpu]") {
  struct Dual {
    std::int64_t M, K, ldx, ldq, ldq_t;
    GroupScaleLayout L, Lt;
    bool pow2;
    bool adversarial = false;
  };
  std::vector<Dual> cases;
  for (std::int64_t M : kRows)
    for (std::int64_t K : kCols) {
      cases.push_back({M, K, K, K, M, GroupScaleLayout::mn_major_tma_aligned(M),
                       GroupScaleLayout::mn_major_tma_aligned(K), false});
      cases.push_back({M, K, K + 8, K + 8, round_up(M, 16), GroupScaleLayout::k_major_packed(K),
                       GroupScaleLayout::k_major_packed(M), true});
      cases.push_back({M, K, K + 1, K + 3, M + 5, GroupScaleLayout{ScaleMajor::mn, M + 2},
                       GroupScaleLayout{ScaleMajor::k, ceil_div(M, 128) + 1}, false});
    }
  cases.push_back({1024 + 64, 4096 + 128, 4096 + 128, 4096 + 128, 1024 + 64,
                   GroupScaleLayout::mn_major_tma_aligned(1088),
                   GroupScaleLayout::mn_major_tma_aligned(4224), false});
  // Adversarial groups (adversarial_bf16: every amax range, tiny scales, signed zeros), both rules.
  for (std::int64_t M : {130, 256})
    for (bool pow2 : {false, true})
      cases.push_back({M, 1024 + 8, 1024 + 8, 1024 + 8, M,
                       GroupScaleLayout::mn_major_tma_aligned(M),
                       GroupScaleLayout::mn_major_tma_aligned(1032), pow2, true});
  for (const auto& c : cases) {
    CAPTURE(c.M, c.K, c.ldx, c.ldq, c.ldq_t, to_string(c.L.major), c.L.ld, to_string(c.Lt.major),
            c.Lt.ld, c.pow2, c.adversarial);
    auto x = c.adversarial ? adversarial_bf16(c.M, c.K, c.ldx) : random_bf16(c.M, c.K, c.ldx);
    if (c.M > 100 && c.K > 100) {
      x[100 * c.ldx + 37] = float_to_bf16(std::numeric_limits<float>::quiet_NaN());
      x[2 * c.ldx + c.K - 1] = float_to_bf16(-std::numeric_limits<float>::infinity());
    }
    const std::size_t q_count = static_cast<std::size_t>((c.M - 1) * c.ldq + c.K) + 16;
    const std::size_t qt_count = static_cast<std::size_t>((c.K - 1) * c.ldq_t + c.M) + 16;
    const std::size_t s_count = static_cast<std::size_t>(scale_buffer(c.L, c.M, c.K));
    const std::size_t st_count = static_cast<std::size_t>(scale_buffer(c.Lt, c.K, c.M));
    DeviceBuffer<std::uint16_t> dx(x);
    auto dq = poisoned<std::uint8_t>(q_count);
    auto dqt = poisoned<std::uint8_t>(qt_count);
    auto ds = poisoned<float>(s_count);
    auto dst = poisoned<float>(st_count);
    quantize_1x128_dual(dx.data(), c.M, c.K, c.ldx, dq.data(), c.ldq, ds.data(), c.L, dqt.data(),
                        c.ldq_t, dst.data(), c.Lt, {c.pow2});
    FP8GEMM_CUDA_CHECK(cudaDeviceSynchronize());
    auto q = poisoned_host<std::uint8_t>(q_count);
    auto qt = poisoned_host<std::uint8_t>(qt_count);
    auto s = poisoned_host<float>(s_count);
    auto st = poisoned_host<float>(st_count);
    quantize_1x128_dual_cpu(x.data(), c.M, c.K, c.ldx, q.data(), c.ldq, s.data(), c.L, qt.data(),
                            c.ldq_t, st.data(), c.Lt, {c.pow2});
    require_same_bytes(dq.download(), q, "q");
    require_same_bytes(ds.download(), s, "scales");
    const auto got_qt = dqt.download();
    require_same_bytes(got_qt, qt, "q_t");
    require_same_bytes(dst.download(), st, "scales_t");
    // Deterministic: a second run, on re-poisoned outputs, gives the same bytes.
    FP8GEMM_CUDA_CHECK(cudaMemset(dq.data(), kPoison, dq.bytes()));
    FP8GEMM_CUDA_CHECK(cudaMemset(ds.data(), kPoison, ds.bytes()));
    FP8GEMM_CUDA_CHECK(cudaMemset(dqt.data(), kPoison, dqt.bytes()));
    FP8GEMM_CUDA_CHECK(cudaMemset(dst.data(), kPoison, dst.bytes()));
    quantize_1x128_dual(dx.data(), c.M, c.K, c.ldx, dq.data(), c.ldq, ds.data(), c.L, dqt.data(),
                        c.ldq_t, dst.data(), c.Lt, {c.pow2});
    FP8GEMM_CUDA_CHECK(cudaDeviceSynchronize());
    require_same_bytes(dq.download(), q, "q, second run");
    require_same_bytes(ds.download(), s, "scales, second run");
    require_same_bytes(dqt.download(), got_qt, "q_t, second run");
    require_same_bytes(dst.download(), st, "scales_t, second run");
    // Every kernel variant (tuning_1x128), with its own grid and with at most 3 CTAs.
    for (int v = 0; v < tuning_1x128::kVariants; ++v)
      for (int max_ctas : {0, 3}) {
        CAPTURE(v, tuning_1x128::variant_name(v), max_ctas);
        for (auto* b : {dq.data(), dqt.data()})
          FP8GEMM_CUDA_CHECK(cudaMemset(b, kPoison, b == dq.data() ? dq.bytes() : dqt.bytes()));
        FP8GEMM_CUDA_CHECK(cudaMemset(ds.data(), kPoison, ds.bytes()));
        FP8GEMM_CUDA_CHECK(cudaMemset(dst.data(), kPoison, dst.bytes()));
        tuning_1x128::quantize_1x128_dual(v, max_ctas, dx.data(), c.M, c.K, c.ldx, dq.data(), c.ldq,
                                          ds.data(), c.L, dqt.data(), c.ldq_t, dst.data(), c.Lt,
                                          {c.pow2});
        FP8GEMM_CUDA_CHECK(cudaDeviceSynchronize());
        require_same_bytes(dq.download(), q, "q (variant)");
        require_same_bytes(ds.download(), s, "scales (variant)");
        require_same_bytes(dqt.download(), qt, "q_t (variant)");
        require_same_bytes(dst.download(), st, "scales_t (variant)");
      }
  }
}

TEST_CASE("The dual's q equals quantize_1x128's", "[quantize_gpu]") {
  const std::int64_t M = 300, K = 1000;
  const auto x = random_bf16(M, K, K);
  const auto L = GroupScaleLayout::mn_major_tma_aligned(M);
  DeviceBuffer<std::uint16_t> dx(x);
  auto q1 = poisoned<std::uint8_t>(M * K), q2 = poisoned<std::uint8_t>(M * K);
  auto s1 = poisoned<float>(L.required_elements(M, K)), s2 = poisoned<float>(L.required_elements(M, K));
  DeviceBuffer<std::uint8_t> qt(K * M);
  const auto Lt = GroupScaleLayout::k_major_packed(M);
  DeviceBuffer<float> st(Lt.required_elements(K, M));
  quantize_1x128(dx.data(), M, K, K, q1.data(), K, s1.data(), L);
  quantize_1x128_dual(dx.data(), M, K, K, q2.data(), K, s2.data(), L, qt.data(), M, st.data(), Lt);
  require_same_bytes(q1.download(), q2.download(), "q");
  require_same_bytes(s1.download(), s2.download(), "scales");
  // And both equal the CPU quantiser's (two outputs left poisoned would equal each other).
  auto q_cpu = poisoned_host<std::uint8_t>(M * K);
  auto s_cpu = poisoned_host<float>(L.required_elements(M, K));
  quantize_1x128_cpu(x.data(), M, K, K, q_cpu.data(), K, s_cpu.data(), L);
  require_same_bytes(q1.download(), q_cpu, "q (CPU)");
  require_same_bytes(s1.download(), s_cpu, "scales (CPU)");
}

TEST_CASE("Scale converters equal the CPU and round-trip", "[quantize_gpu]") {
  std::mt19937_64 gen(g_seed++);
  std::uniform_real_distribution<float> u(0.001f, 100.0f);
  for (std::int64_t rows : kRows)
    for (std::int64_t K : kCols) {
      const GroupScaleLayout Ls[] = {GroupScaleLayout::k_major_packed(K),
                                     GroupScaleLayout::mn_major_tma_aligned(rows),
                                     GroupScaleLayout::mn_major_packed(rows),
                                     GroupScaleLayout{ScaleMajor::k, ceil_div(K, 128) + 2}};
      for (const auto& a : Ls)
        for (const auto& b : Ls) {
          CAPTURE(rows, K, to_string(a.major), a.ld, to_string(b.major), b.ld);
          std::vector<float> src(a.required_elements(rows, K));
          for (auto& v : src) v = u(gen);
          DeviceBuffer<float> dsrc(src);
          auto ddst = poisoned<float>(b.required_elements(rows, K) + 8);
          auto dback = poisoned<float>(src.size());
          convert_group_scales(dsrc.data(), a, ddst.data(), b, rows, K);
          convert_group_scales(ddst.data(), b, dback.data(), a, rows, K);
          FP8GEMM_CUDA_CHECK(cudaDeviceSynchronize());
          auto want = poisoned_host<float>(ddst.size());
          convert_group_scales_cpu(src.data(), a, want.data(), b, rows, K);
          require_same_bytes(ddst.download(), want, "dst");
          auto back = dback.download();
          // Every scale comes back; padding of a comes back as 0.
          for (std::int64_t r = 0; r < rows; ++r)
            for (std::int64_t g = 0; g < ceil_div(K, 128); ++g)
              REQUIRE(back[a.offset(r, g)] == src[a.offset(r, g)]);
        }
      const BlockScaleLayout Bs[] = {BlockScaleLayout::packed(K), BlockScaleLayout::padded(K)};
      for (const auto& a : Bs)
        for (const auto& b : Bs) {
          std::vector<float> src(a.required_elements(rows, K));
          for (auto& v : src) v = u(gen);
          DeviceBuffer<float> dsrc(src);
          auto ddst = poisoned<float>(b.required_elements(rows, K) + 8);
          convert_block_scales(dsrc.data(), a, ddst.data(), b, rows, K);
          FP8GEMM_CUDA_CHECK(cudaDeviceSynchronize());
          auto want = poisoned_host<float>(ddst.size());
          convert_block_scales_cpu(src.data(), a, want.data(), b, rows, K);
          require_same_bytes(ddst.download(), want, "block dst");
        }
    }
}

// The kernels convert with cvt.rn.satfinite.e4m3x2.f32. For every finite float it must be
// fp8.hpp's encoder with Saturation::finite (the kernels never pass it NaN: a non-finite group
// writes 0x7F directly); NaN is checked too, to document what the instruction does.
namespace quantize_gpu_test {
__global__ void cvt_sweep_kernel(std::uint32_t hi_bits, unsigned long long* mismatches,
                                 unsigned* nan_codes) {
  const std::uint32_t u = (hi_bits << 24) | (blockIdx.x * blockDim.x + threadIdx.x);
  const float f = __uint_as_float(u);
  unsigned short r;
  asm("cvt.rn.satfinite.e4m3x2.f32 %0, %1, %2;" : "=h"(r) : "f"(0.0f), "f"(f));
  const std::uint8_t got = std::uint8_t(r & 0xFF);
  if (f != f) {
    atomicOr(&nan_codes[got >> 5], 1u << (got & 31));
  } else if (got != e4m3_encode(f, Saturation::finite)) {
    atomicAdd(mismatches, 1ull);
  }
}

// detail::ExactDivider against __fdiv_rn: s = every float mantissa at exponent e_s, x = every
// bf16 mantissa (both signs, and +-0) at every exponent that gives a quotient in [2^-40, 2^10]
// (floats equal from 2^-37 up, e4m3 codes equal below).
__global__ void divider_sweep_kernel(int e_s, unsigned long long* mismatches) {
  const std::uint32_t mant = blockIdx.x * blockDim.x + threadIdx.x;  // < 2^23
  const float s = __uint_as_float(std::uint32_t(e_s + 127) << 23 | mant);
  const fp8gemm::detail::ExactDivider d(s);
  unsigned long long bad = 0;
  for (int ex = e_s - 40; ex <= e_s + 10; ++ex) {
    if (ex + 127 < 1 || ex + 127 > 254) continue;
    for (std::uint32_t xm = 0; xm < 128; ++xm) {
      const float x = __uint_as_float(std::uint32_t(ex + 127) << 23 | xm << 16);
      for (float v : {x, -x}) {
        const float a = d(v), b = __fdiv_rn(v, s);
        if (ex >= e_s - 36) {  // quotients >= 2^-37: the float itself
          bad += __float_as_uint(a) != __float_as_uint(b);
        } else {  // below: the e4m3 code (+-0) is what the kernels keep
          unsigned short ca, cb;
          asm("cvt.rn.satfinite.e4m3x2.f32 %0, %1, %2;" : "=h"(ca) : "f"(0.0f), "f"(a));
          asm("cvt.rn.satfinite.e4m3x2.f32 %0, %1, %2;" : "=h"(cb) : "f"(0.0f), "f"(b));
          bad += ca != cb;
        }
      }
    }
  }
  for (float v : {0.0f, -0.0f}) bad += __float_as_uint(d(v)) != __float_as_uint(__fdiv_rn(v, s));
  if (bad) atomicAdd(mismatches, bad);
}
}  // namespace quantize_gpu_test

// The lean kernels' device arithmetic (quantize_kernels.cuh: lean_scale with its rcp.approx,
// lean_codes2, both tiny and normal paths) on every (amax, x) pair they can meet: block m = amax
// bits (< 0x7F80), threads over every |x| bits <= m, x and -x in one word, against
// e4m3(__fdiv_rn(x, scale_from_amax(amax))); the scale itself too.
namespace quantize_gpu_test {
template <bool Pow2>
__global__ void lean_sweep_kernel(unsigned long long* mismatches) {
  using namespace fp8gemm::quantize_detail;
  const unsigned m = blockIdx.x;
  const LeanScale g = lean_scale(m, Pow2);
  const float scale = scale_from_amax(__uint_as_float(m << 16), Pow2);
  unsigned long long bad = threadIdx.x == 0 && __float_as_uint(g.scale) != __float_as_uint(scale);
  for (unsigned xb = threadIdx.x; xb <= m; xb += blockDim.x) {
    const unsigned w = xb | (xb | 0x8000u) << 16;  // x in the low half, -x in the high half
    const unsigned got = g.tiny ? lean_codes2<true>(w, g.s, g.y) : lean_codes2<false>(w, g.s, g.y);
    const float x = __uint_as_float(xb << 16);
    unsigned short want;
    asm("cvt.rn.satfinite.e4m3x2.f32 %0, %1, %2;"
        : "=h"(want)
        : "f"(__fdiv_rn(-x, scale)), "f"(__fdiv_rn(x, scale)));
    bad += got != want;
  }
  if (bad) atomicAdd(mismatches, bad);
}

/// For both scale rules (pow2 false, true): zeroes a mismatch counter, runs `launch(pow2,
/// counter)` (kernels that add their mismatches to it) and expects the count to stay 0.
template <class Launch>
void expect_no_mismatches_both_rules(const Launch& launch) {
  DeviceBuffer<unsigned long long> mism(1);
  for (bool pow2 : {false, true}) {
    CAPTURE(pow2);
    FP8GEMM_CUDA_CHECK(cudaMemset(mism.data(), 0, 8));
    launch(pow2, mism.data());
    FP8GEMM_CUDA_CHECK(cudaGetLastError());
    FP8GEMM_CUDA_CHECK(cudaDeviceSynchronize());
    CHECK(mism.download()[0] == 0);
  }
}
}  // namespace quantize_gpu_test

TEST_CASE("The lean kernels' division and scale equal the CPU rule on every (amax, x) bf16 pair",
          "[quantize_gpu]") {
  quantize_gpu_test::expect_no_mismatches_both_rules([](bool pow2, unsigned long long* mism) {
    if (pow2)
      quantize_gpu_test::lean_sweep_kernel<true><<<0x7F80, 256>>>(mism);
    else
      quantize_gpu_test::lean_sweep_kernel<false><<<0x7F80, 256>>>(mism);
  });
}

// v3_shared's scale sharing (quantize_kernels.cuh: lean_scale_pair, each pair's two LeanScales
// computed by the even and the odd lanes of an aligned set of Width lanes and fetched by shuffles)
// gives every lane exactly lean_scale's values for both groups: set P holds the amax bits
// a = P % 2^15 and b = (40503 P + 12345) % 2^15 (a bijection: every a and every b over the 2^15
// sets, non-finite ones included).
namespace quantize_gpu_test {
template <int Width, bool Pow2>
__global__ void scale_pair_kernel(unsigned long long* mismatches) {
  using namespace fp8gemm::quantize_detail;
  const unsigned P = (blockIdx.x * blockDim.x + threadIdx.x) / Width;
  const unsigned ma = P & 0x7FFFu, mb = (P * 40503u + 12345u) & 0x7FFFu;
  LeanScale a, b;
  lean_scale_pair<Width>(ma, mb, Pow2, a, b);
  const auto same = [](const LeanScale& x, const LeanScale& y) {
    return __float_as_uint(x.scale) == __float_as_uint(y.scale) &&
           __float_as_uint(x.s) == __float_as_uint(y.s) &&
           __float_as_uint(x.y) == __float_as_uint(y.y) && x.nan == y.nan && x.tiny == y.tiny;
  };
  const unsigned long long bad = !same(a, lean_scale(ma, Pow2)) + !same(b, lean_scale(mb, Pow2));
  if (bad) atomicAdd(mismatches, bad);
}
}  // namespace quantize_gpu_test

TEST_CASE("v3_shared: the scales shared by shuffles equal lean_scale on every amax, both rules",
          "[quantize_gpu]") {
  quantize_gpu_test::expect_no_mismatches_both_rules([](bool pow2, unsigned long long* mism) {
    using quantize_gpu_test::scale_pair_kernel;
    const unsigned blocks4 = (1u << 15) * 4 / 256, blocks8 = (1u << 15) * 8 / 256;
    if (pow2) {
      scale_pair_kernel<4, true><<<blocks4, 256>>>(mism);
      scale_pair_kernel<8, true><<<blocks8, 256>>>(mism);
    } else {
      scale_pair_kernel<4, false><<<blocks4, 256>>>(mism);
      scale_pair_kernel<8, false><<<blocks8, 256>>>(mism);
    }
  });
}

TEST_CASE("PTX cvt.rn.satfinite.e4m3x2 equals fp8.hpp's encoder on all 2^32 floats", "[quantize_gpu]") {
  DeviceBuffer<unsigned long long> mism(1);
  DeviceBuffer<unsigned> nan_codes(8);
  FP8GEMM_CUDA_CHECK(cudaMemset(mism.data(), 0, 8));
  FP8GEMM_CUDA_CHECK(cudaMemset(nan_codes.data(), 0, 32));
  for (std::uint32_t hi = 0; hi < 256; ++hi) quantize_gpu_test::cvt_sweep_kernel<<<(1u << 24) / 256, 256>>>(hi, mism.data(), nan_codes.data());
  FP8GEMM_CUDA_CHECK(cudaGetLastError());
  FP8GEMM_CUDA_CHECK(cudaDeviceSynchronize());
  CHECK(mism.download()[0] == 0);
  const auto codes = nan_codes.download();
  std::string seen;
  for (int c = 0; c < 256; ++c)
    if (codes[c >> 5] >> (c & 31) & 1) seen += " " + std::to_string(c);
  INFO("e4m3 codes the instruction gives for NaN inputs:" << seen);
  // cuda_fp8.h and fp8.hpp give 0x7F for every NaN; the instruction may keep the sign (0xFF).
  for (int c = 0; c < 256; ++c)
    if (codes[c >> 5] >> (c & 31) & 1) CHECK((c == 0x7F || c == 0xFF));
}

TEST_CASE("The hoisted-reciprocal division equals __fdiv_rn bit for bit", "[quantize_gpu]") {
  DeviceBuffer<unsigned long long> mism(1);
  // Both ends of the fast range, the middle, and the __fdiv_rn ranges beyond it.
  for (int e_s : {-126, -65, -64, -63, -20, -1, 0, 1, 30, 99, 100, 101, 119}) {
    CAPTURE(e_s);
    FP8GEMM_CUDA_CHECK(cudaMemset(mism.data(), 0, 8));
    quantize_gpu_test::divider_sweep_kernel<<<(1u << 23) / 256, 256>>>(e_s, mism.data());
    FP8GEMM_CUDA_CHECK(cudaGetLastError());
    FP8GEMM_CUDA_CHECK(cudaDeviceSynchronize());
    CHECK(mism.download()[0] == 0);
  }
}

TEST_CASE("Memory the GPU cannot access is refused", "[quantize_gpu]") {
  const std::int64_t M = 4, K = 256;  // two groups: scale ld 400 needs 404 floats
  std::vector<std::uint16_t> host(M * K, 0x3F80);  // 1.0
  // x first: the too-small scale layout below claims 404 floats from s on, and a buffer allocated
  // after s can lie there, so that the call is refused for the overlap before its size (the H100
  // run of session 45: "scales overlaps x"). Checked below, so the case cannot test the wrong rule.
  DeviceBuffer<std::uint16_t> x(host);
  auto q = poisoned<std::uint8_t>(M * K);
  auto s = poisoned<float>(2 * M);
  const auto q_poison = poisoned_host<std::uint8_t>(M * K);
  const auto s_poison = poisoned_host<float>(2 * M);
  // Refused before any launch: the message names the argument and why; q and s untouched.
  auto refusal = [&](auto&& call) {
    const std::string why = test::refusal_of(call);
    FP8GEMM_CUDA_CHECK(cudaDeviceSynchronize());
    require_same_bytes(q.download(), q_poison, "q after a refused call");
    require_same_bytes(s.download(), s_poison, "scales after a refused call");
    return why;
  };
  std::string why = refusal([&] {
    quantize_1x128(host.data(), M, K, K, q.data(), K, s.data(),
                   GroupScaleLayout::mn_major_packed(M));
  });
  INFO(why);
  CHECK(why.find("x = ") != std::string::npos);
  CHECK(why.find("is host memory") != std::string::npos);
  // A scale buffer too small for the layout (the allocation is known to the driver).
  const auto claimed_begin = reinterpret_cast<std::uintptr_t>(s.data());
  const auto claimed_end = claimed_begin + 404 * sizeof(float);
  const auto apart = [&](const void* p, std::size_t bytes) {  // no overlap to be refused first
    const auto a = reinterpret_cast<std::uintptr_t>(p);
    return a + bytes <= claimed_begin || a >= claimed_end;
  };
  REQUIRE(apart(x.data(), x.bytes()));
  REQUIRE(apart(q.data(), q.bytes()));
  why = refusal([&] {
    quantize_1x128(x.data(), M, K, K, q.data(), K, s.data(), GroupScaleLayout{ScaleMajor::mn, 400});
  });
  INFO(why);
  CHECK(why.find("scales = ") != std::string::npos);
  CHECK(why.find("bytes left in its allocation") != std::string::npos);
  // Nothing sticky: a good call still works, every byte as the CPU quantiser's.
  const auto L = GroupScaleLayout::mn_major_packed(M);
  quantize_1x128(x.data(), M, K, K, q.data(), K, s.data(), L);
  FP8GEMM_CUDA_CHECK(cudaDeviceSynchronize());
  auto q_cpu = poisoned_host<std::uint8_t>(M * K);
  auto s_cpu = poisoned_host<float>(2 * M);
  quantize_1x128_cpu(host.data(), M, K, K, q_cpu.data(), K, s_cpu.data(), L);
  require_same_bytes(q.download(), q_cpu, "q (CPU)");
  require_same_bytes(s.download(), s_cpu, "scales (CPU)");
  CHECK(s.download()[0] == 1.0f / 448.0f);
}

// ============================ expert tokens, transposed and padded ===============================
// quantize_tokens_transposed_1x128 (chapter 8's weight gradient) against
// quantize_tokens_transposed_1x128_cpu: every byte of q_t up to its allocation (the real columns,
// each expert's padding, the columns from P_G to the capacity, and the untouched bytes between the
// capacity and ldq_t), every scale-buffer float (with 8 slack floats that must stay poisoned) and
// the padded offsets (with a slack int).

namespace {

std::vector<int> token_offsets(const std::vector<int>& counts) {
  std::vector<int> o(counts.size() + 1, 0);
  for (std::size_t g = 0; g < counts.size(); ++g) o[g + 1] = o[g] + counts[g];
  return o;
}

struct TokenCase {
  std::vector<int> counts;     // tokens per expert
  std::int64_t C = 264;        // channels
  std::int64_t ldx_pad = 0;    // ldx = C + ldx_pad (3: scalar loads)
  std::int64_t cap_extra = 0;  // capacity = max_padded_tokens(T, G) + cap_extra
  std::int64_t ldq_pad = 0;    // ldq_t = capacity + ldq_pad (5: scalar stores)
  int layout = 0;              // 0 mn-major TMA-aligned, 1 k-major packed, 2 mn padded, 3 k padded
  bool pow2 = false;
  bool with_padded_offsets = true;
  std::size_t q_offset = 0;  // bytes: non-zero misaligns q_t (scalar stores)
  bool specials = false;     // NaN / Inf in a few tokens
};

/// Device buffers of one token-quantiser call, poisoned, and the CPU's expected bytes.
struct TokenBuffers {
  std::int64_t T, C, ldx, cap, ldq_t;
  int G;
  GroupScaleLayout L;
  std::vector<std::uint16_t> x;
  DeviceBuffer<std::uint16_t> dx;
  DeviceBuffer<int> doffsets;
  DeviceBuffer<std::uint8_t> dq;
  DeviceBuffer<float> ds;
  DeviceBuffer<int> dp;
  std::size_t q_offset;

  TokenBuffers(const TokenCase& c, const std::vector<int>& offsets)
      : T(offsets.back()), C(c.C), ldx(c.C + c.ldx_pad), G(int(offsets.size()) - 1),
        q_offset(c.q_offset) {
    cap = max_padded_tokens(T, G) + c.cap_extra;
    ldq_t = cap + c.ldq_pad;
    const std::int64_t nb = ceil_div(cap, 128);
    const GroupScaleLayout layouts[] = {
        GroupScaleLayout::mn_major_tma_aligned(C), GroupScaleLayout::k_major_packed(cap),
        GroupScaleLayout{ScaleMajor::mn, C + 5}, GroupScaleLayout{ScaleMajor::k, nb + 3}};
    L = layouts[c.layout];
    x = random_bf16(T, C, ldx);
    if (c.specials && T > 200 && C > 100) {
      x[static_cast<std::size_t>(7 * ldx + 3)] =
          float_to_bf16(std::numeric_limits<float>::quiet_NaN());
      x[static_cast<std::size_t>(200 * ldx + C - 1)] =
          float_to_bf16(std::numeric_limits<float>::infinity());
      x[static_cast<std::size_t>((T - 1) * ldx + 64)] =
          float_to_bf16(-std::numeric_limits<float>::infinity());
    }
    dx = DeviceBuffer<std::uint16_t>(x);
    doffsets = DeviceBuffer<int>(offsets);
    dq = poisoned<std::uint8_t>(q_count());
    ds = poisoned<float>(s_count());
    dp = poisoned<int>(std::size_t(G) + 2);
  }
  std::size_t q_count() const {
    return static_cast<std::size_t>((C - 1) * ldq_t + cap) + q_offset + 16;
  }
  std::size_t s_count() const { return static_cast<std::size_t>(L.required_elements(C, cap)) + 8; }
  void poison() {
    FP8GEMM_CUDA_CHECK(cudaMemset(dq.data(), kPoison, dq.bytes()));
    FP8GEMM_CUDA_CHECK(cudaMemset(ds.data(), kPoison, ds.bytes()));
    FP8GEMM_CUDA_CHECK(cudaMemset(dp.data(), kPoison, dp.bytes()));
  }
  /// variant < 0: the public function; else that kernel variant (tuning_1x128) with max_ctas.
  void run(bool with_padded_offsets, bool pow2, cudaStream_t stream = nullptr, int variant = -1,
           int max_ctas = 0) {
    if (variant < 0)
      quantize_tokens_transposed_1x128(dx.data(), T, C, ldx, doffsets.data(), G,
                                       dq.data() + q_offset, ldq_t, cap, ds.data(), L,
                                       with_padded_offsets ? dp.data() : nullptr, {pow2}, stream);
    else
      tuning_1x128::quantize_tokens_transposed_1x128(
          variant, max_ctas, dx.data(), T, C, ldx, doffsets.data(), G, dq.data() + q_offset, ldq_t,
          cap, ds.data(), L, with_padded_offsets ? dp.data() : nullptr, {pow2}, stream);
  }
  /// Every output byte against the CPU quantiser given the offsets the device holds now.
  void check(const std::vector<int>& offsets, bool with_padded_offsets, bool pow2) const {
    auto q = poisoned_host<std::uint8_t>(q_count());
    auto s = poisoned_host<float>(s_count());
    auto p = poisoned_host<int>(std::size_t(G) + 2);
    quantize_tokens_transposed_1x128_cpu(x.data(), T, C, ldx, offsets.data(), G,
                                         q.data() + q_offset, ldq_t, cap, s.data(), L,
                                         with_padded_offsets ? p.data() : nullptr, {pow2});
    // Not vacuous: most real tokens have non-zero codes (not only padding is compared).
    std::int64_t nonzero = 0;
    for (std::uint8_t v : q) nonzero += v != 0 && v != kPoison;
    REQUIRE(nonzero >= T * C / 2);
    require_same_bytes(dp.download(), p, "padded_offsets");
    require_same_bytes(dq.download(), q, "q_t");
    require_same_bytes(ds.download(), s, "scales_t");
  }
};

void check_tokens(const TokenCase& c) {
  const auto offsets = token_offsets(c.counts);
  CAPTURE(c.counts.size(), offsets.back(), c.C, c.ldx_pad, c.cap_extra, c.ldq_pad, c.layout, c.pow2,
          c.with_padded_offsets, c.q_offset, c.specials);
  TokenBuffers b(c, offsets);
  b.run(c.with_padded_offsets, c.pow2);
  FP8GEMM_CUDA_CHECK(cudaDeviceSynchronize());
  b.check(offsets, c.with_padded_offsets, c.pow2);
  // Deterministic: a second run, on re-poisoned buffers, passes the same check.
  const auto q1 = b.dq.download();
  b.poison();
  b.run(c.with_padded_offsets, c.pow2);
  FP8GEMM_CUDA_CHECK(cudaDeviceSynchronize());
  require_same_bytes(b.dq.download(), q1, "q_t, second run");
  b.check(offsets, c.with_padded_offsets, c.pow2);
  // Every kernel variant (tuning_1x128), with its own grid and with at most 3 CTAs.
  for (int v = 0; v < tuning_1x128::kVariants; ++v)
    for (int max_ctas : {0, 3}) {
      CAPTURE(v, tuning_1x128::variant_name(v), max_ctas);
      b.poison();
      b.run(c.with_padded_offsets, c.pow2, nullptr, v, max_ctas);
      FP8GEMM_CUDA_CHECK(cudaDeviceSynchronize());
      b.check(offsets, c.with_padded_offsets, c.pow2);
    }
}

/// G counts from a seeded generator, with 0, 1, 127, 128, 129 and 300 among them (G >= 6).
std::vector<int> random_counts(int G, int max_count) {
  std::mt19937_64 gen(g_seed++);
  std::uniform_int_distribution<int> u(0, max_count);
  std::vector<int> counts(static_cast<std::size_t>(G));
  for (int& c : counts) c = u(gen);
  const int special[] = {0, 1, 127, 128, 129, 300};
  std::vector<int> slots(static_cast<std::size_t>(G));
  for (int g = 0; g < G; ++g) slots[static_cast<std::size_t>(g)] = g;
  std::shuffle(slots.begin(), slots.end(), gen);
  for (int i = 0; i < 6; ++i)
    counts[static_cast<std::size_t>(slots[static_cast<std::size_t>(i)])] = special[i];
  return counts;
}

}  // namespace

TEST_CASE("quantize_tokens_transposed_1x128 equals the CPU byte for byte",
          "[quantize_gpu][tokens]") {
  std::vector<TokenCase> cases;
  // One expert: the dual's transposed half with the padding.
  for (int T : {1, 127, 128, 129, 300}) cases.push_back({{T}});
  // Six experts with the awkward counts, both orders; every layout; vector and scalar paths.
  const std::vector<int> awkward = {0, 1, 127, 128, 129, 300};
  const std::vector<int> reversed(awkward.rbegin(), awkward.rend());
  int v = 0;
  for (std::int64_t C : {264, 16, 1000, 7})
    for (const auto* counts : {&awkward, &reversed}) {
      TokenCase c{*counts, C};
      c.ldx_pad = v % 3 == 0 ? 0 : v % 3 == 1 ? 8 : 3;
      c.cap_extra = v % 4 == 3 ? 77 : 0;
      c.ldq_pad = v % 2 == 0 ? 0 : v % 4 == 1 ? 16 : 5;
      c.layout = v % 4;
      c.pow2 = v % 3 == 2;
      c.with_padded_offsets = v % 5 != 4;
      c.q_offset = v == 5 ? 3 : 0;
      c.specials = v % 2 == 1;
      cases.push_back(c);
      ++v;
    }
  // 64 experts, the awkward counts among random ones; C not a multiple of 128.
  for (int layout = 0; layout < 4; ++layout) {
    TokenCase c{random_counts(64, 400), 264};
    c.layout = layout;
    c.ldx_pad = layout == 3 ? 3 : 0;
    c.specials = layout == 1;
    c.pow2 = layout == 2;
    cases.push_back(c);
  }
  // Mostly tiny experts: most columns are padding.
  cases.push_back({random_counts(64, 3), 264});
  for (const auto& c : cases) check_tokens(c);
}

TEST_CASE("quantize_tokens_transposed_1x128 at a large skewed shape (T = 8192, C = 4160, G = 32)",
          "[quantize_gpu][tokens]") {
  // Skewed counts: 1000 halving every 4 experts, two experts empty, the rest (801) to the last;
  // none a multiple of 128.
  std::vector<int> counts;
  int left = 8192;
  for (int g = 0; g < 31; ++g) {
    counts.push_back(g == 5 || g == 17 ? 0 : 1000 >> (g / 4));
    left -= counts.back();
  }
  counts.push_back(left);
  REQUIRE(left == 801);
  check_tokens({counts, 4160});
}

TEST_CASE("quantize_tokens_transposed_1x128 in a CUDA graph, replayed with other offsets",
          "[quantize_gpu][tokens]") {
  // The same T = 1000 tokens split three ways; the graph is captured once (with split A on the
  // device) and replayed after the offsets are overwritten: the host never reads them.
  const std::vector<int> a = {0, 300, 129, 1, 0, 570}, b = {1, 1, 1, 1, 1, 995},
                         c = {1000, 0, 0, 0, 0, 0};
  const std::vector<std::vector<int>> splits = {token_offsets(a), token_offsets(b),
                                                token_offsets(c)};
  TokenCase tc{a, 264};
  TokenBuffers buf(tc, splits[0]);
  // The padded sizes differ (so stale output of an earlier replay would show).
  const auto pa = padded_token_offsets_cpu(splits[0].data(), 6, 1000);
  const auto pb = padded_token_offsets_cpu(splits[1].data(), 6, 1000);
  const auto pc = padded_token_offsets_cpu(splits[2].data(), 6, 1000);
  REQUIRE(pa.back() != pb.back());
  REQUIRE(pb.back() != pc.back());
  REQUIRE(pb.back() == buf.cap);  // split b needs the whole capacity
  cudaStream_t stream = nullptr;
  FP8GEMM_CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  buf.run(true, false, stream);  // the first call prepares the kernel outside the capture
  FP8GEMM_CUDA_CHECK(cudaStreamSynchronize(stream));
  cudaGraph_t graph = nullptr;
  cudaGraphExec_t exec = nullptr;
  FP8GEMM_CUDA_CHECK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeGlobal));
  try {
    buf.run(true, false, stream);
  } catch (...) {
    cudaStreamEndCapture(stream, &graph);
    throw;
  }
  FP8GEMM_CUDA_CHECK(cudaStreamEndCapture(stream, &graph));
  FP8GEMM_CUDA_CHECK(cudaGraphInstantiate(&exec, graph, 0));
  for (int replay = 0; replay < 4; ++replay) {
    const auto& offsets = splits[static_cast<std::size_t>(replay % 3)];
    CAPTURE(replay);
    buf.doffsets.upload(offsets);
    buf.poison();
    // The upload and the memsets ran on the legacy stream, which the non-blocking `stream` does
    // not wait for (cudaMemset and a pageable cudaMemcpy may return before the device is done):
    // without this the replay raced the poison, which landed on its output (session 43: replay 0's
    // padded_offsets read 0xAB).
    FP8GEMM_CUDA_CHECK(cudaDeviceSynchronize());
    FP8GEMM_CUDA_CHECK(cudaGraphLaunch(exec, stream));
    FP8GEMM_CUDA_CHECK(cudaStreamSynchronize(stream));
    buf.check(offsets, true, false);
  }
  FP8GEMM_CUDA_CHECK(cudaGraphExecDestroy(exec));
  FP8GEMM_CUDA_CHECK(cudaGraphDestroy(graph));
  FP8GEMM_CUDA_CHECK(cudaStreamDestroy(stream));
}

TEST_CASE("quantize_tokens_transposed_1x128: offsets that break the rules stay inside the buffers",
          "[quantize_gpu][tokens]") {
  // Decreasing, negative, past T, and a sum of padded sizes above the capacity: the device clamps
  // as the CPU does (quantize.hpp), and the slack past every buffer stays poisoned.
  TokenCase tc{{300, 300, 300, 100}, 264};
  const std::vector<int> valid = token_offsets(tc.counts);  // T = 1000
  TokenBuffers buf(tc, valid);
  const std::vector<std::vector<int>> bad = {{0, 900, 100, 1000, 1000},  // padded sum 2048 > 1408
                                             {0, -50, 2000, 500, 1000},
                                             {5, 1000, 0, 1000, 999},
                                             {0, 1000, 0, 1000, 0}};
  REQUIRE(buf.cap == 1408);
  for (const auto& offsets : bad)
    for (int v = -1; v < tuning_1x128::kVariants; ++v) {  // -1: the public function
      CAPTURE(offsets[0], offsets[1], offsets[2], offsets[3], offsets[4], v);
      buf.doffsets.upload(offsets);
      buf.poison();
      buf.run(true, false, nullptr, v);
      FP8GEMM_CUDA_CHECK(cudaDeviceSynchronize());
      buf.check(offsets, true, false);
    }
}

TEST_CASE("quantize_tokens_transposed_1x128 refuses offsets the GPU cannot read",
          "[quantize_gpu][tokens]") {
  TokenCase tc{{100, 28}, 128};
  const auto offsets = token_offsets(tc.counts);
  TokenBuffers buf(tc, offsets);
  buf.poison();
  FP8GEMM_CUDA_CHECK(cudaDeviceSynchronize());
  // The offsets in host memory: a likely mistake (they are often computed on the host first).
  try {
    quantize_tokens_transposed_1x128(buf.dx.data(), buf.T, buf.C, buf.ldx, offsets.data(), buf.G,
                                     buf.dq.data(), buf.ldq_t, buf.cap, buf.ds.data(), buf.L);
    FAIL("host offsets were accepted");
  } catch (const std::invalid_argument& e) {
    INFO(e.what());
    CHECK(std::string(e.what()).find("offsets") != std::string::npos);
    CHECK(std::string(e.what()).find("host memory") != std::string::npos);
  }
  // Refused before any launch: q_t and the scales still all poison.
  FP8GEMM_CUDA_CHECK(cudaDeviceSynchronize());
  require_same_bytes(buf.dq.download(), poisoned_host<std::uint8_t>(buf.dq.size()),
                     "q_t after a refused call");
  require_same_bytes(buf.ds.download(), poisoned_host<float>(buf.ds.size()),
                     "scales after a refused call");
  // Nothing sticky: a good call still works.
  buf.run(true, false);
  FP8GEMM_CUDA_CHECK(cudaDeviceSynchronize());
  buf.check(offsets, true, false);
}
