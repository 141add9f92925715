// Applying the per-tensor scales to an FP32 accumulator without a spurious overflow:
//   D = acc * scale_a * scale_b.
//
// Forming scale_a * scale_b first in FP32 (one multiply per output element afterwards) is what
// every fast kernel wants, but the product can overflow or underflow where the true result is
// finite: scale_a = 1e30, scale_b = 1e10 gives Inf, and an all-zero row of A then becomes
// 0 * Inf = NaN instead of 0. The rule (docs/fp8_numerics.md, "Scales"):
//   - when scale_a * scale_b is a normal FP32 number (or one scale is exactly 0), D = acc * p with
//     p = fl(scale_a * scale_b): one FMUL per element, as before;
//   - otherwise, with both scales finite (the product overflowed, underflowed or is subnormal),
//     D = double(acc) * (double(scale_a) * double(scale_b)) rounded to FP32: the double product
//     of two floats is exact, so nothing overflows that the true result does not;
//   - Inf or NaN scales propagate by IEEE arithmetic: a NaN scale gives NaN everywhere, an Inf
//     scale gives +-Inf where acc != 0 and NaN where acc == 0 (0 * Inf), as the exact product
//     would.
// The choice is made once per thread block from the two scales, so the branch is uniform.
#pragma once

#include <cstdint>
#include <cstring>

namespace fp8gemm {

namespace detail {
__host__ __device__ inline std::uint32_t float_bits(float x) {
  std::uint32_t u;
  memcpy(&u, &x, sizeof u);
  return u;
}
/// Not Inf or NaN (exponent field not all ones).
__host__ __device__ inline bool finite_f32(float x) { return (float_bits(x) & 0x7F800000u) != 0x7F800000u; }
/// A normal number (not zero, subnormal, Inf or NaN).
__host__ __device__ inline bool normal_f32(float x) {
  const std::uint32_t e = float_bits(x) & 0x7F800000u;
  return e != 0 && e != 0x7F800000u;
}
}  // namespace detail

struct OutputScale {
  float product = 1.0f;    ///< fl(scale_a * scale_b)
  double exact = 1.0;      ///< double(scale_a) * double(scale_b), exact
  bool use_float = true;   ///< product is safe to use

  __host__ __device__ static OutputScale from(float scale_a, float scale_b) {
    OutputScale s;
    s.product = scale_a * scale_b;
    s.exact = double(scale_a) * double(scale_b);
    const bool finite_inputs = detail::finite_f32(scale_a) && detail::finite_f32(scale_b);
    const bool zero_input = scale_a == 0.0f || scale_b == 0.0f;
    // Normal, or exactly zero because a scale is zero: the float product is the exact product
    // rounded once. Non-finite inputs: IEEE propagation is the same either way.
    s.use_float = !finite_inputs || zero_input || detail::normal_f32(s.product);
    return s;
  }

  /// The scaled value of one FP32 accumulator.
  __host__ __device__ float apply(float acc) const {
    return use_float ? acc * product : float(double(acc) * exact);
  }
};

/// The two ways OutputScale applies, as separate types, so that a kernel can branch once per
/// tile (uniformly) and compile each epilogue without the other path's registers.
/// No scale: the main loop has already applied the scales (chapter 7's block scaling multiplies
/// every 128-K partial sum by its own scale_a x scale_b while promoting it).
struct IdentityOutputScale {
  __host__ __device__ float apply(float acc) const { return acc; }
};

struct FloatOutputScale {
  float product;
  __host__ __device__ float apply(float acc) const { return acc * product; }
};
struct ExactOutputScale {
  double exact;
  __host__ __device__ float apply(float acc) const { return float(double(acc) * exact); }
};

#ifdef __CUDACC__
/// Reads the two device scalars (per-tensor scales) and builds the OutputScale.
__device__ __forceinline__ OutputScale load_output_scale(const float* __restrict__ scale_a,
                                                         const float* __restrict__ scale_b) {
  return OutputScale::from(*scale_a, *scale_b);
}
#endif

}  // namespace fp8gemm
