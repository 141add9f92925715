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

}  // namespace fp8gemm
