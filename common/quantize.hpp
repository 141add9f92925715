// CPU quantisers for every scaling recipe, the inverse (dequantisation to float64), and host-side
// random data. These are the ground truth the GPU kernels are checked against.
//
// Float recipes (per-tensor, rowwise, 1x128, 128x128): scale = amax(block) / 448, stored as
// float; q = e4m3(x / scale) with saturation (x / scale can round past 448 by one ulp). A block
// whose amax is 0 gets scale 1; a subnormal amax / 448 is rounded up to a multiple of the smallest
// subnormal float (never 0, so tiny blocks give finite codes).
// MX 1x32: the OCP MX v1.0 recipe: shared exponent = floor(log2(amax)) - 8 (8 = emax of e4m3),
// stored as UE8M0, clamped to the representable range; q = e4m3(x / 2^exponent) with saturation
// (values that land above 448 saturate, as the spec says). amax = 0 gives exponent 0 (scale 1).
// Padding entries of the scale tensor are zero (cuBLASLt and tcgen05 expect zero-filled padding).
#pragma once

#include <cstdint>
#include <algorithm>
#include <cmath>
#include <limits>
#include <type_traits>
#include <vector>

#include "common/fp8.hpp"
#include "common/scale_layout.hpp"
#include "common/scaling.hpp"

namespace fp8gemm {

/// An operand quantised with a recipe: e4m3 bytes (rows x cols, row-major) and its scale tensor
/// in the recipe's storage layout.
template <class Recipe>
struct Quantized {
  Recipe layout;
  std::vector<std::uint8_t> values;                    ///< rows x cols e4m3 bytes
  std::vector<typename Recipe::scale_type> scales;     ///< layout.size() entries
  Quantized(std::int64_t rows, std::int64_t cols)
      : layout(rows, cols), values(static_cast<size_t>(rows * cols)),
        scales(static_cast<size_t>(layout.size()), typename Recipe::scale_type{0}) {}
};

/// The float a stored scale stands for (UE8M0 bytes are decoded).
inline double scale_value(float s) { return s; }
inline double scale_value(std::uint8_t ue8m0) { return ue8m0_decode(ue8m0); }

/// Quantises a rows x cols row-major float matrix with the given recipe.
template <class Recipe>
Quantized<Recipe> quantize(const float* x, std::int64_t rows, std::int64_t cols) {
  Quantized<Recipe> q(rows, cols);
  const Recipe& L = q.layout;
  const std::int64_t br = Recipe::block_rows() == 0 ? rows : Recipe::block_rows();
  const std::int64_t bc = Recipe::block_cols() == 0 ? cols : Recipe::block_cols();
  for (std::int64_t i = 0; i < L.scale_rows(); ++i) {
    for (std::int64_t j = 0; j < L.scale_cols(); ++j) {
      const std::int64_t r0 = i * br, r1 = std::min(rows, r0 + br);
      const std::int64_t c0 = j * bc, c1 = std::min(cols, c0 + bc);
      float amax = 0.0f;
      for (std::int64_t r = r0; r < r1; ++r)
        for (std::int64_t c = c0; c < c1; ++c) amax = std::max(amax, std::fabs(x[r * cols + c]));
      float scale;
      if constexpr (std::is_same_v<typename Recipe::scale_type, std::uint8_t>) {
        // floor(log2(amax)) - 8, as a UE8M0 code; amax = 0 -> 2^0.
        int code = amax == 0.0f ? 127 : int(ue8m0_encode(amax, Ue8m0Rounding::toward_zero)) - 8;
        code = std::clamp(code, 0, 254);
        q.scales[static_cast<size_t>(L.block_index(i, j))] = static_cast<std::uint8_t>(code);
        scale = ue8m0_decode(static_cast<std::uint8_t>(code));
      } else {
        scale = amax == 0.0f ? 1.0f : amax / kE4m3Max;
        // For amax < 448 * 2^-126 the quotient is subnormal: it loses precision or underflows
        // to 0 (then x / scale is inf or NaN and the codes become 0x7F). Round such scales up
        // to a multiple of the smallest subnormal, so amax / scale <= 448 still holds.
        if (scale < std::numeric_limits<float>::min() && amax > 0.0f) {
          const double tiny = std::numeric_limits<float>::denorm_min();
          scale = float(std::ceil(double(amax) / kE4m3Max / tiny) * tiny);
        }
        q.scales[static_cast<size_t>(L.block_index(i, j))] = scale;
      }
      for (std::int64_t r = r0; r < r1; ++r)
        for (std::int64_t c = c0; c < c1; ++c)
          q.values[static_cast<size_t>(r * cols + c)] = e4m3_encode(x[r * cols + c] / scale);
    }
  }
  return q;
}

/// float64 values of a quantised operand: e4m3 value times its block's scale.
template <class Recipe>
std::vector<double> dequantize(const Quantized<Recipe>& q) {
  const Recipe& L = q.layout;
  std::vector<double> out(q.values.size());
  for (std::int64_t r = 0; r < L.rows; ++r)
    for (std::int64_t c = 0; c < L.cols; ++c)
      out[static_cast<size_t>(r * L.cols + c)] =
          double(e4m3_decode(q.values[static_cast<size_t>(r * L.cols + c)])) *
          scale_value(q.scales[static_cast<size_t>(L.index(r, c))]);
  return out;
}

/// Per-tensor dequantisation of raw e4m3 bytes.
std::vector<double> dequantize_e4m3(const std::vector<std::uint8_t>& bits, double scale);

/// count floats drawn from N(mean, stddev) with a seeded generator (reproducible on one
/// standard library).
std::vector<float> random_normal(std::size_t count, std::uint64_t seed, float mean = 0.0f,
                                 float stddev = 1.0f);

/// count random e4m3 bytes: N(0, stddev) values encoded with saturation. Never all zero.
std::vector<std::uint8_t> random_e4m3(std::size_t count, std::uint64_t seed, float stddev = 1.0f);

// ================== DeepSeek-V3 quantisers with strided layouts (chapter 7) ======================
// The CPU ground truth of common/quantize_gpu.hpp: bf16 input (bits as std::uint16_t; bf16 ->
// float is exact), strided operands, the 1x128 scale tensor in either major order
// (scale_layout.hpp), the 128x128 one padded or packed, the power-of-two option, the fused
// "dual" variant of backward passes, and the scale-layout converters. On finite data the
// scales and codes equal quantize<Group1x128> / quantize<Block128x128> bit for bit
// (tests/test_quantize_cpu.cpp checks it). The rules, shared with the GPU kernels:
//  - scale = amax / 448 (IEEE division), amax = max |x| over the group or block;
//    amax = 0 -> scale 1; a subnormal quotient is rounded up to a multiple of the smallest
//    subnormal float (as in quantize<> above), so amax / scale <= 448 always.
//  - QuantizeOptions::pow2_scales: scale = 2^ceil(log2(amax / 448)) computed exactly from amax's
//    exponent and mantissa (no rounded quotient in between), at least 2^-149; dividing by it is
//    exact, and amax / scale lies in (224, 448].
//  - q = e4m3(x / scale), round to nearest even, saturated to +-448.
//  - Non-finite input: a group (block) holding any NaN or +-Inf gets scale NaN (0x7FC00000) and
//    ALL its codes are 0x7F (e4m3 NaN), so every GEMM output that uses the group is NaN, as a
//    bf16 GEMM would propagate; other groups are unaffected. (quantize<> above, kept as it was,
//    ignores NaN in amax and lets Inf give scale Inf: use these functions for such data.)
//  - Padding: scale-buffer entries inside layout.required_elements() that hold no scale (mn-major
//    ld > rows, k-major ld > ceil(K/128), padded 128x128 ld) are written 0.0f; nothing past
//    required_elements() is written, and q between K and ldq is not written.

/// Options of the DeepSeek-V3 quantisers (here and in quantize_gpu.hpp).
struct QuantizeOptions {
  /// Round every scale up to a power of two, 2^ceil(log2(amax / 448)): x / scale is then exact
  /// (an exponent shift) and the scale can be folded into an exponent (UE8M0-like) downstream.
  /// Costs up to one bit of the e4m3 range (amax maps into (224, 448] instead of 448).
  bool pow2_scales = false;
};

/// The scale of a group or block from its amax (>= 0 or NaN / Inf), by the rules above.
FP8GEMM_HD inline float scale_from_amax(float amax, bool pow2_scales) {
  if (!(amax <= 3.40282347e38f)) {  // NaN or +Inf in the group: the canonical quiet NaN
#if defined(__CUDA_ARCH__)
    return __uint_as_float(0x7FC00000u);
#else
    return std::numeric_limits<float>::quiet_NaN();
#endif
  }
  if (amax == 0.0f) return 1.0f;
  if (pow2_scales) {
    // amax = f * 2^e2, f in [0.5, 1): amax / 448 = (2f / 1.75) * 2^(e2 - 9), and 2f / 1.75 is in
    // (1, 8/7) exactly when f > 0.875: ceil(log2(amax / 448)) = e2 - 9 + (f > 0.875).
    int e2 = 0;
    const float f = std::frexp(amax, &e2);
    int e = e2 - 9 + (f > 0.875f ? 1 : 0);
    if (e < -149) e = -149;  // the smallest subnormal float: a larger scale is still safe
    return std::ldexp(1.0f, e);
  }
#if defined(__CUDA_ARCH__)
  float scale = __fdiv_rn(amax, kE4m3Max);
#else
  float scale = amax / kE4m3Max;
#endif
  if (scale < 1.17549435e-38f) {  // subnormal quotient (see quantize<> above)
    const double tiny = 1.4012984643248171e-45;  // 2^-149
    scale = float(std::ceil(double(amax) / double(kE4m3Max) / tiny) * tiny);
  }
  return scale;
}

/// float -> bf16 bits, round to nearest even; NaN gives the quiet NaN 0x7FC0, Inf stays Inf. The
/// host's rounding (reference.hpp's float_to_bf16 and mx.hpp's mx_dequantize_bf16 call it).
inline std::uint16_t float_to_bf16_bits(float x) {
  if (std::isnan(x)) return 0x7FC0;
  std::uint32_t u;
  __builtin_memcpy(&u, &x, sizeof u);
  u += 0x7FFFu + ((u >> 16) & 1u);
  return static_cast<std::uint16_t>(u >> 16);
}

/// bf16 bits -> float (exact).
FP8GEMM_HD inline float bf16_bits_to_float(std::uint16_t bits) {
#if defined(__CUDA_ARCH__)
  return __uint_as_float(std::uint32_t(bits) << 16);
#else
  const std::uint32_t u = std::uint32_t(bits) << 16;
  float f;
  __builtin_memcpy(&f, &u, sizeof f);
  return f;
#endif
}

namespace detail {
/// Quantises rows x cols elements at(r, c) as one group: writes its codes through put(r, c, code)
/// and returns the scale. amax: max |x|; any NaN / Inf makes the group non-finite.
template <class At, class Put>
float quantize_group_cpu(std::int64_t rows, std::int64_t cols, At at, Put put,
                         const QuantizeOptions& opt) {
  float amax = 0.0f;
  bool finite = true;
  for (std::int64_t r = 0; r < rows; ++r)
    for (std::int64_t c = 0; c < cols; ++c) {
      const float v = std::fabs(at(r, c));
      finite = finite && std::isfinite(v);
      amax = std::max(amax, v);
    }
  const float scale = scale_from_amax(finite ? amax : std::numeric_limits<float>::infinity(),
                                      opt.pow2_scales);
  for (std::int64_t r = 0; r < rows; ++r)
    for (std::int64_t c = 0; c < cols; ++c)
      put(r, c, finite ? e4m3_encode(at(r, c) / scale) : std::uint8_t(0x7F));
  return scale;
}

/// Writes 0 to every entry inside layout.required_elements(rows, K) that holds no scale.
inline void zero_group_padding_cpu(float* scales, const GroupScaleLayout& L, std::int64_t rows,
                                   std::int64_t K) {
  const std::int64_t groups = ceil_div(K, 128);
  for (std::int64_t o = 0; o < L.required_elements(rows, K); ++o) {
    const std::int64_t inner = o % L.ld;  // r (mn-major) or g (k-major)
    if (inner >= (L.major == ScaleMajor::mn ? rows : groups)) scales[o] = 0.0f;
  }
}
inline void zero_block_padding_cpu(float* scales, const BlockScaleLayout& L, std::int64_t rows,
                                   std::int64_t K) {
  const std::int64_t kb = ceil_div(K, 128);
  for (std::int64_t o = 0; o < L.required_elements(rows, K); ++o)
    if (o % L.ld >= kb) scales[o] = 0.0f;
}
}  // namespace detail

/// CPU 1 x 128 quantiser. x: M x K bf16 bits, row-major, leading dimension ldx (elements).
/// q: M x K e4m3, leading dimension ldq. scales: layout.required_elements(M, K) floats, the scale
/// of row r and K-group g = k / 128 at layout.offset(r, g). Host pointers; no validation beyond
/// what the GPU version checks (call that for argument errors).
inline void quantize_1x128_cpu(const std::uint16_t* x, std::int64_t M, std::int64_t K,
                               std::int64_t ldx, std::uint8_t* q, std::int64_t ldq, float* scales,
                               const GroupScaleLayout& layout, const QuantizeOptions& opt = {}) {
  detail::zero_group_padding_cpu(scales, layout, M, K);
  for (std::int64_t r = 0; r < M; ++r)
    for (std::int64_t g = 0; g < ceil_div(K, 128); ++g) {
      const std::int64_t c0 = g * 128, n = std::min<std::int64_t>(128, K - c0);
      scales[layout.offset(r, g)] = detail::quantize_group_cpu(
          1, n, [&](std::int64_t, std::int64_t c) { return bf16_bits_to_float(x[r * ldx + c0 + c]); },
          [&](std::int64_t, std::int64_t c, std::uint8_t v) { q[r * ldq + c0 + c] = v; }, opt);
    }
}

/// CPU 128 x 128 quantiser. w: N x K bf16 bits, row-major, ldw; q: N x K e4m3, ldq; scales:
/// layout.required_elements(N, K) floats, block (i, j) = (n / 128, k / 128) at layout.offset(i, j).
inline void quantize_128x128_cpu(const std::uint16_t* w, std::int64_t N, std::int64_t K,
                                 std::int64_t ldw, std::uint8_t* q, std::int64_t ldq,
                                 float* scales, const BlockScaleLayout& layout,
                                 const QuantizeOptions& opt = {}) {
  detail::zero_block_padding_cpu(scales, layout, N, K);
  for (std::int64_t i = 0; i < ceil_div(N, 128); ++i)
    for (std::int64_t j = 0; j < ceil_div(K, 128); ++j) {
      const std::int64_t r0 = i * 128, c0 = j * 128;
      scales[layout.offset(i, j)] = detail::quantize_group_cpu(
          std::min<std::int64_t>(128, N - r0), std::min<std::int64_t>(128, K - c0),
          [&](std::int64_t r, std::int64_t c) { return bf16_bits_to_float(w[(r0 + r) * ldw + c0 + c]); },
          [&](std::int64_t r, std::int64_t c, std::uint8_t v) { q[(r0 + r) * ldq + c0 + c] = v; },
          opt);
    }
}

/// CPU 128 x 128 dual quantiser (a layer's weight for its forward and input-gradient GEMMs):
/// q / scales exactly as quantize_128x128_cpu, plus q_t = q^T (K x N e4m3, row-major, ldq_t >= N)
/// and the scale grid transposed, block (j, i) = (k / 128, n / 128) at layout_t.offset(j, i)
/// (layout_t.ld >= ceil(N / 128); layout_t.required_elements(K, N) floats). Exact: W^T's 128 x 128
/// blocks are W's blocks transposed, so quantising W^T gives the same codes and scales.
inline void quantize_128x128_dual_cpu(const std::uint16_t* w, std::int64_t N, std::int64_t K,
                                      std::int64_t ldw, std::uint8_t* q, std::int64_t ldq,
                                      float* scales, const BlockScaleLayout& layout,
                                      std::uint8_t* q_t, std::int64_t ldq_t, float* scales_t,
                                      const BlockScaleLayout& layout_t,
                                      const QuantizeOptions& opt = {}) {
  quantize_128x128_cpu(w, N, K, ldw, q, ldq, scales, layout, opt);
  detail::zero_block_padding_cpu(scales_t, layout_t, K, N);
  for (std::int64_t n = 0; n < N; ++n)
    for (std::int64_t k = 0; k < K; ++k) q_t[k * ldq_t + n] = q[n * ldq + k];
  for (std::int64_t i = 0; i < ceil_div(N, 128); ++i)
    for (std::int64_t j = 0; j < ceil_div(K, 128); ++j)
      scales_t[layout_t.offset(j, i)] = scales[layout.offset(i, j)];
}

/// CPU dual quantiser (backward passes): q / scales exactly as quantize_1x128_cpu, plus
/// q_t = x^T (K x M e4m3, row-major, ldq_t) quantised in 1 x 128 groups along its rows (128
/// consecutive m of one column k of x), scale of (k, m / 128) at layout_t.offset(k, m / 128)
/// (rows = K, "K" = M).
inline void quantize_1x128_dual_cpu(const std::uint16_t* x, std::int64_t M, std::int64_t K,
                                    std::int64_t ldx, std::uint8_t* q, std::int64_t ldq,
                                    float* scales, const GroupScaleLayout& layout,
                                    std::uint8_t* q_t, std::int64_t ldq_t, float* scales_t,
                                    const GroupScaleLayout& layout_t,
                                    const QuantizeOptions& opt = {}) {
  quantize_1x128_cpu(x, M, K, ldx, q, ldq, scales, layout, opt);
  std::vector<std::uint16_t> xt(static_cast<std::size_t>(M * K));
  for (std::int64_t m = 0; m < M; ++m)
    for (std::int64_t k = 0; k < K; ++k) xt[static_cast<std::size_t>(k * M + m)] = x[m * ldx + k];
  quantize_1x128_cpu(xt.data(), K, M, M, q_t, ldq_t, scales_t, layout_t, opt);
}

/// Copies a rows x ceil(K/128) group-scale tensor between layouts; padding of dst (inside its
/// required_elements) is written 0.
inline void convert_group_scales_cpu(const float* src, const GroupScaleLayout& src_layout,
                                     float* dst, const GroupScaleLayout& dst_layout,
                                     std::int64_t rows, std::int64_t K) {
  detail::zero_group_padding_cpu(dst, dst_layout, rows, K);
  for (std::int64_t r = 0; r < rows; ++r)
    for (std::int64_t g = 0; g < ceil_div(K, 128); ++g)
      dst[dst_layout.offset(r, g)] = src[src_layout.offset(r, g)];
}

/// Copies a ceil(rows/128) x ceil(K/128) block-scale tensor between layouts (e.g. packed ->
/// padded); padding of dst (inside its required_elements) is written 0.
inline void convert_block_scales_cpu(const float* src, const BlockScaleLayout& src_layout,
                                     float* dst, const BlockScaleLayout& dst_layout,
                                     std::int64_t rows, std::int64_t K) {
  detail::zero_block_padding_cpu(dst, dst_layout, rows, K);
  for (std::int64_t i = 0; i < ceil_div(rows, 128); ++i)
    for (std::int64_t j = 0; j < ceil_div(K, 128); ++j)
      dst[dst_layout.offset(i, j)] = src[src_layout.offset(i, j)];
}

// ============ Expert tokens, transposed and padded per expert (chapter 8's weight gradient) ======
// The tokens of a mixture-of-experts layer are sorted by expert: X [T, C] bf16 (C = K for the
// activations A, = N for the output gradient dD), expert g owns rows offsets[g] .. offsets[g+1]-1
// (offsets: G + 1 int32, offsets[0] = 0, monotone, offsets[G] = T; any count_g >= 0). The weight
// gradient dB_g = dD_g^T . A_g reduces over an expert's tokens, so it reads X^T with 1 x 128
// scales along the tokens, each expert's tokens starting on a 128-token block:
//   P_g = sum over j < g of round_up(count_j, 128)            (P_0 = 0; T_pad = P_G)
//   q_t [C, ldq_t] e4m3: q_t[c][P_g + i] = e4m3(X[offsets[g] + i][c] / scale) for i < count_g;
//       columns P_g + count_g .. P_{g+1} - 1 are e4m3 zeros (0x00), so a 128-token block never
//       mixes experts and the padding adds nothing to a sum;
//   scale of channel c and token block tb = column / 128 at layout_t.offset(c, tb) (rows = C,
//       "K" = the token capacity): the 1 x 128 rules above over the block's REAL tokens (the
//       padding zeros do not change amax); a non-finite block gets scale NaN and codes 0x7F on
//       its real tokens, its padding columns stay 0x00.
// T_pad is device data (the host never reads the offsets, so the call can be captured in a CUDA
// graph): the caller sizes the buffers for t_pad_capacity >= max_padded_tokens(T, G) columns;
// columns P_G .. t_pad_capacity - 1 are written 0x00 and the scales of blocks at or past P_G are
// written 0.0f (deterministic output up to the capacity). Nothing between t_pad_capacity and
// ldq_t is written; scale-buffer padding inside layout_t.required_elements(C, t_pad_capacity)
// is written 0.0f.
// Offsets that break the preconditions (decreasing, outside [0, T], offsets[G] != T) give wrong
// tokens but no access outside the buffers: each offset is clamped to [0, T], an expert's range
// is [O_g, max(O_g, O_{g+1})), and the P_g are clamped to t_pad_capacity (columns past the
// capacity are dropped).

/// The most columns the padded token layout can need: only the (at most min(G, T)) experts with
/// tokens pad, each by at most 127, and T_pad is a multiple of 128, so
/// T_pad <= floor((T + 127 min(G, T)) / 128) * 128. Attained (n - 1 experts with one token and one
/// with the rest, n = min(G, T)), so no smaller bound holds for every count. T, G >= 0.
FP8GEMM_HD constexpr std::int64_t max_padded_tokens(std::int64_t T, std::int64_t G) {
  return (T + 127 * (G < T ? G : T)) / 128 * 128;
}

/// Expert g's token rows [begin, end) from its two offsets, with the clamping rule above (on
/// valid offsets: [offsets[g], offsets[g+1])).
struct TokenRange {
  std::int64_t begin, end;
};
FP8GEMM_HD constexpr TokenRange expert_token_range(std::int64_t offset_g, std::int64_t offset_g1,
                                                   std::int64_t T) {
  const std::int64_t b = offset_g < 0 ? 0 : offset_g > T ? T : offset_g;
  const std::int64_t e = offset_g1 < b ? b : offset_g1 > T ? T : offset_g1;
  return {b, e};
}

/// P_0 .. P_G (G + 1 values) of the padded token layout, from the G + 1 host offsets, each
/// clamped to t_pad_capacity (which valid offsets never reach).
inline std::vector<int> padded_token_offsets_cpu(
    const int* offsets, int G, std::int64_t T,
    std::int64_t t_pad_capacity = std::numeric_limits<int>::max()) {
  std::vector<int> P(static_cast<std::size_t>(G) + 1, 0);
  std::int64_t sum = 0;
  for (int g = 0; g < G; ++g) {
    const TokenRange r = expert_token_range(offsets[g], offsets[g + 1], T);
    sum += round_up(r.end - r.begin, 128);
    P[static_cast<std::size_t>(g) + 1] = int(std::min(sum, t_pad_capacity));
  }
  return P;
}

/// CPU token quantiser (the ground truth of quantize_tokens_transposed_1x128): x [T, C] bf16 bits,
/// row-major, leading dimension ldx; offsets: G + 1 host int32; q_t [C, ldq_t] e4m3 with
/// ldq_t >= t_pad_capacity; scales_t: layout_t.required_elements(C, t_pad_capacity) floats;
/// padded_offsets: G + 1 ints (P_0 .. P_G) or null. Layout and rules: see above.
inline void quantize_tokens_transposed_1x128_cpu(
    const std::uint16_t* x, std::int64_t T, std::int64_t C, std::int64_t ldx, const int* offsets,
    int G, std::uint8_t* q_t, std::int64_t ldq_t, std::int64_t t_pad_capacity, float* scales_t,
    const GroupScaleLayout& layout_t, int* padded_offsets, const QuantizeOptions& opt = {}) {
  const std::vector<int> P = padded_token_offsets_cpu(offsets, G, T, t_pad_capacity);
  if (padded_offsets != nullptr) std::copy(P.begin(), P.end(), padded_offsets);
  detail::zero_group_padding_cpu(scales_t, layout_t, C, t_pad_capacity);
  int g = 0;  // the expert whose padded range holds the block (P_g <= s < P_{g+1}), or G
  for (std::int64_t tb = 0; tb < ceil_div(t_pad_capacity, 128); ++tb) {
    const std::int64_t s = tb * 128, width = std::min<std::int64_t>(128, t_pad_capacity - s);
    while (g < G && P[static_cast<std::size_t>(g) + 1] <= s) ++g;
    std::int64_t row0 = 0, n = 0;  // the block's real tokens: rows row0 .. row0 + n - 1 of x
    if (g < G) {
      const TokenRange r = expert_token_range(offsets[g], offsets[g + 1], T);
      row0 = r.begin + (s - P[static_cast<std::size_t>(g)]);
      n = std::min<std::int64_t>(128, r.end - row0);
    }
    for (std::int64_t c = 0; c < C; ++c) {
      std::uint8_t* out = q_t + c * ldq_t + s;
      float scale = 0.0f;  // a block past the padded tokens
      if (n > 0)
        scale = detail::quantize_group_cpu(
            1, n,
            [&](std::int64_t, std::int64_t i) {
              return bf16_bits_to_float(x[(row0 + i) * ldx + c]);
            },
            [&](std::int64_t, std::int64_t i, std::uint8_t v) {
              if (i < width) out[i] = v;
            },
            opt);
      for (std::int64_t i = n; i < width; ++i) out[i] = 0x00;
      scales_t[layout_t.offset(c, tb)] = scale;
    }
  }
}

}  // namespace fp8gemm
