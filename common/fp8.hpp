// FP8 formats: e4m3 ("fn"), e5m2 and the MX scale format ue8m0, encode and decode for host and
// device from one implementation.
//
// Bit-exact with the OCP 8-bit floating point specification (v1.0) and with cuda_fp8.h's
// __nv_cvt_float_to_fp8 / __nv_cvt_float_to_e8m0 (the CPU tests check every case against them):
//  - e4m3: bias 7, no infinities, NaN = S.1111.111, max finite 448 (0x7E), min normal 2^-6,
//    min subnormal 2^-9.
//  - e5m2: bias 15, IEEE-like, +-inf = 0x7C / 0xFC, NaNs above, max finite 57344 (0x7B).
//  - ue8m0: 8 exponent bits, bias 127, value 2^(e - 127), 0xFF = NaN, no zero, no sign.
// Rounding is to nearest, ties to even. Saturation::finite clamps overflow (and infinities) to
// +-max finite; Saturation::none turns overflow into NaN (e4m3) or infinity (e5m2). Any NaN input
// encodes as 0x7F, as cuda_fp8.h does.
#pragma once

#include <cmath>
#include <cstdint>

#if defined(__CUDACC__)
#define FP8GEMM_HD __host__ __device__
#else
#define FP8GEMM_HD
#endif

namespace fp8gemm {

/// Which 8-bit floating-point format a byte holds.
enum class Fp8Format : int { e4m3, e5m2 };

/// What an out-of-range value becomes when encoded.
enum class Saturation : int {
  finite,  ///< clamp to +-max finite (CUDA's __NV_SATFINITE, PTX .satfinite)
  none     ///< overflow becomes NaN (e4m3) or +-infinity (e5m2) (CUDA's __NV_NOSAT)
};

/// Rounding of a positive value to a power of two, for UE8M0 scales.
enum class Ue8m0Rounding : int {
  toward_zero,     ///< floor(log2|x|): the OCP MX reference recipe
  toward_pos_inf   ///< ceil(log2|x|) ("RCEIL"): what cuBLAS's own MX quantiser does
};

/// Largest finite e4m3 value.
inline constexpr float kE4m3Max = 448.0f;
/// Largest finite e5m2 value.
inline constexpr float kE5m2Max = 57344.0f;

namespace detail {
struct Fp8Params {
  int exponent_bits, mantissa_bits, bias;
  bool has_infinity;  // e5m2: exponent field all ones is inf/NaN; e4m3: only S.1111.111 is NaN
  float max_finite;
};
FP8GEMM_HD constexpr Fp8Params params(Fp8Format f) {
  return f == Fp8Format::e4m3 ? Fp8Params{4, 3, 7, false, kE4m3Max}
                              : Fp8Params{5, 2, 15, true, kE5m2Max};
}
}  // namespace detail

/// Decodes one FP8 byte to float (exact: every FP8 value is a float).
FP8GEMM_HD inline float fp8_decode(std::uint8_t bits, Fp8Format format) {
  const detail::Fp8Params p = detail::params(format);
  const bool negative = (bits & 0x80) != 0;
  const int exponent = (bits >> p.mantissa_bits) & ((1 << p.exponent_bits) - 1);
  const int mantissa = bits & ((1 << p.mantissa_bits) - 1);
  const int exponent_all_ones = (1 << p.exponent_bits) - 1;
  float magnitude;
  if (p.has_infinity && exponent == exponent_all_ones) {
    magnitude = mantissa == 0 ? INFINITY : NAN;
  } else if (!p.has_infinity && exponent == exponent_all_ones &&
             mantissa == (1 << p.mantissa_bits) - 1) {
    magnitude = NAN;
  } else if (exponent == 0) {
    // subnormal: mantissa * 2^(1 - bias - mantissa_bits)
    magnitude = std::ldexp(static_cast<float>(mantissa), 1 - p.bias - p.mantissa_bits);
  } else {
    // normal: (2^m + mantissa) * 2^(exponent - bias - m)
    magnitude = std::ldexp(static_cast<float>((1 << p.mantissa_bits) + mantissa),
                       exponent - p.bias - p.mantissa_bits);
  }
  return negative ? -magnitude : magnitude;
}

/// Encodes a float as FP8, round to nearest even.
FP8GEMM_HD inline std::uint8_t fp8_encode(float x, Fp8Format format, Saturation saturation) {
  const detail::Fp8Params p = detail::params(format);
  if (std::isnan(x)) return 0x7F;
  const std::uint8_t sign = std::signbit(x) ? 0x80 : 0x00;
  const std::uint8_t max_code = format == Fp8Format::e4m3 ? 0x7E : 0x7B;
  const std::uint8_t overflow_code = format == Fp8Format::e4m3 ? 0x7F : 0x7C;  // NaN or inf
  const float a = std::fabs(x);
  if (std::isinf(a)) {
    return saturation == Saturation::finite ? static_cast<std::uint8_t>(sign | max_code)
                                            : static_cast<std::uint8_t>(sign | overflow_code);
  }
  const int min_normal_exponent = 1 - p.bias;
  // Quantum (spacing of representable values) at |x|: 2^(e - m) for normals, fixed below.
  int e2 = 0;
  std::frexp(a, &e2);  // a = f * 2^e2, f in [0.5, 1): floor(log2 a) = e2 - 1
  int exponent = e2 - 1;
  if (a == 0.0f || exponent < min_normal_exponent) exponent = min_normal_exponent;
  const int quantum_exp = exponent - p.mantissa_bits;
  // a / quantum and the rounding are exact in float: a has 24 significant bits, quantum is a
  // power of two, and rintf rounds half to even in the default rounding mode.
  const float steps = std::rint(std::ldexp(a, -quantum_exp));
  const float q = std::ldexp(steps, quantum_exp);
  if (q > p.max_finite) {
    return saturation == Saturation::finite ? static_cast<std::uint8_t>(sign | max_code)
                                            : static_cast<std::uint8_t>(sign | overflow_code);
  }
  if (q == 0.0f) return sign;
  int q_e2 = 0;
  std::frexp(q, &q_e2);
  const int q_exponent = q_e2 - 1;
  int exponent_field, mantissa_field;
  if (q_exponent < min_normal_exponent) {  // subnormal
    exponent_field = 0;
    mantissa_field = static_cast<int>(std::ldexp(q, -(min_normal_exponent - p.mantissa_bits)));
  } else {
    exponent_field = q_exponent + p.bias;
    mantissa_field =
        static_cast<int>(std::ldexp(q, -(q_exponent - p.mantissa_bits))) - (1 << p.mantissa_bits);
  }
  return static_cast<std::uint8_t>(sign | (exponent_field << p.mantissa_bits) | mantissa_field);
}

FP8GEMM_HD inline float e4m3_decode(std::uint8_t bits) { return fp8_decode(bits, Fp8Format::e4m3); }
FP8GEMM_HD inline float e5m2_decode(std::uint8_t bits) { return fp8_decode(bits, Fp8Format::e5m2); }
FP8GEMM_HD inline std::uint8_t e4m3_encode(float x, Saturation s = Saturation::finite) {
  return fp8_encode(x, Fp8Format::e4m3, s);
}
FP8GEMM_HD inline std::uint8_t e5m2_encode(float x, Saturation s = Saturation::finite) {
  return fp8_encode(x, Fp8Format::e5m2, s);
}

/// The bits of the float 2^(code - 127) for a UE8M0 code, without libm (the GPU kernels' decode):
/// code 0 is the float subnormal 2^-127, 0xFF the quiet NaN 0x7FC00000; ue8m0_decode's value.
FP8GEMM_HD constexpr std::uint32_t ue8m0_float_bits(std::uint32_t code) {
  return code == 0u ? 0x00400000u : code == 0xFFu ? 0x7FC00000u : code << 23;
}

/// UE8M0 decode: 2^(bits - 127); 0xFF is NaN.
FP8GEMM_HD inline float ue8m0_decode(std::uint8_t bits) {
  return bits == 0xFF ? NAN : std::ldexp(1.0f, static_cast<int>(bits) - 127);
}

/// UE8M0 encode of |x| (the sign is ignored, as in cuda_fp8.h): round to a power of two in the
/// given direction, clip below at 2^-127 (so 0 encodes as 0x00), clip above at 2^127 with
/// Saturation::finite or give NaN (0xFF) otherwise. NaN gives 0xFF.
FP8GEMM_HD inline std::uint8_t ue8m0_encode(float x, Ue8m0Rounding rounding,
                                            Saturation saturation = Saturation::finite) {
  if (std::isnan(x)) return 0xFF;
  const float a = std::fabs(x);
  if (std::isinf(a)) return saturation == Saturation::finite ? 0xFE : 0xFF;
  if (a == 0.0f) return 0x00;
  int e2 = 0;
  const float f = std::frexp(a, &e2);  // a = f * 2^e2, f in [0.5, 1)
  int exponent = e2 - 1;           // floor(log2 a)
  if (rounding == Ue8m0Rounding::toward_pos_inf && f != 0.5f) exponent += 1;
  if (exponent < -127) exponent = -127;
  if (exponent > 127) return saturation == Saturation::finite ? 0xFE : 0xFF;
  return static_cast<std::uint8_t>(exponent + 127);
}

}  // namespace fp8gemm
