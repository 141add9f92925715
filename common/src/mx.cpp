// MXFP8 on the CPU: see common/mx.hpp.
#include "common/mx.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <limits>
#include <sstream>
#include <stdexcept>
#include <string>

#include "common/quantize.hpp"

namespace fp8gemm {

namespace {

std::uint32_t float_bits(float f) {
  std::uint32_t u;
  std::memcpy(&u, &f, sizeof u);
  return u;
}

/// |x| as significand * 2^(top - p) with the significand's leading 1 at bit p: returns p and the
/// significand (24 bits for normals, fewer for subnormals). x finite, non-zero.
struct Significand {
  std::uint32_t sig;  ///< integer significand, leading 1 at bit `top`
  int top;            ///< position of the leading 1
  int floor_log2;     ///< floor(log2 |x|)
};
Significand significand(float x) {
  const std::uint32_t u = float_bits(x) & 0x7FFFFFFFu;
  const int biased = static_cast<int>(u >> 23);
  const std::uint32_t mant = u & 0x7FFFFFu;
  if (biased != 0) return {mant | 0x800000u, 23, biased - 127};
  // Subnormal: |x| = mant * 2^-149.
  int top = 31;
  while (((mant >> top) & 1u) == 0) --top;
  return {mant, top, top - 149};
}

const std::array<float, 256>& e4m3_table() {
  static const std::array<float, 256> t = [] {
    std::array<float, 256> a{};
    for (int i = 0; i < 256; ++i) a[static_cast<std::size_t>(i)] = e4m3_decode(std::uint8_t(i));
    return a;
  }();
  return t;
}

void check_operand(const char* fn, const void* p, const char* p_name, std::int64_t rows,
                   const char* rows_name, std::int64_t cols, const char* cols_name) {
  if (p == nullptr) {
    throw std::invalid_argument(std::string(fn) + ": " + p_name + " is null");
  }
  if (rows < 1) {
    std::ostringstream s;
    s << fn << ": " << rows_name << " = " << rows << " must be >= 1";
    throw std::invalid_argument(s.str());
  }
  if (cols < 1 || cols % kMxBlock != 0) {
    std::ostringstream s;
    s << fn << ": " << cols_name << " = " << cols
      << " is not a positive multiple of 32 (MXFP8 has one UE8M0 scale per block of 32 elements "
         "along K, so "
      << cols_name << " must be a multiple of 32)";
    throw std::invalid_argument(s.str());
  }
}

template <class Load>
MxQuantized quantize_mx_impl(const char* fn, const void* x, std::int64_t rows, std::int64_t cols,
                             MxExponentRule rule, Load load) {
  check_operand(fn, x, "x", rows, "rows", cols, "cols");
  MxQuantized q;
  q.rows = rows;
  q.cols = cols;
  q.rule = rule;
  q.values.assign(static_cast<std::size_t>(rows * cols), 0);
  const std::int64_t cb = cols / kMxBlock;
  q.scales.assign(static_cast<std::size_t>(mx_scale_bytes(rows, cb)), 0);  // padding stays 0
  float v[kMxBlock];
  for (std::int64_t r = 0; r < rows; ++r)
    for (std::int64_t j = 0; j < cb; ++j) {
      const std::int64_t base = r * cols + j * kMxBlock;
      float amax = 0.0f;
      bool finite = true;
      for (int i = 0; i < kMxBlock; ++i) {
        v[i] = load(base + i);
        const float a = std::fabs(v[i]);
        finite = finite && std::isfinite(a);
        if (a > amax) amax = a;
      }
      const std::uint8_t code =
          mx_scale_code(finite ? amax : std::numeric_limits<float>::infinity(), rule);
      q.scales[static_cast<std::size_t>(mx_scale_offset(r, j, rows, cb))] = code;
      std::uint8_t* out = q.values.data() + base;
      if (code == kUe8m0Nan) {
        for (int i = 0; i < kMxBlock; ++i) out[i] = 0x7F;
        continue;
      }
      // The same expression as quantize<Mx1x32> (bit-for-bit agreement for floor_ocp).
      const float scale = ue8m0_decode(code);
      for (int i = 0; i < kMxBlock; ++i) out[i] = e4m3_encode(v[i] / scale);
    }
  return q;
}

void check_gemm(const char* fn, const void* A, const void* sa, const void* B, const void* sb,
                std::int64_t M, std::int64_t N, std::int64_t K) {
  check_operand(fn, A, "A", M, "M", K, "K");
  check_operand(fn, B, "B", N, "N", K, "K");
  if (sa == nullptr) throw std::invalid_argument(std::string(fn) + ": scale_a is null");
  if (sb == nullptr) throw std::invalid_argument(std::string(fn) + ": scale_b is null");
}

void check_pair(const char* fn, const MxQuantized& A, const MxQuantized& B) {
  if (A.cols != B.cols) {
    std::ostringstream s;
    s << fn << ": A has K = " << A.cols << " but B has K = " << B.cols
      << " (A is M x K, B is N x K)";
    throw std::invalid_argument(s.str());
  }
}

}  // namespace

const char* to_string(MxExponentRule rule) {
  switch (rule) {
    case MxExponentRule::floor_ocp: return "floor_ocp";
    case MxExponentRule::rceil: return "rceil";
  }
  return "unknown";
}

int mx_floor_log2(float x) { return significand(x).floor_log2; }

std::uint8_t mx_scale_code(float amax, MxExponentRule rule) {
  if (!(amax <= std::numeric_limits<float>::max())) return kUe8m0Nan;  // NaN or +Inf
  if (amax == 0.0f) return 127;                                        // 2^0
  const Significand s = significand(amax);
  int e;
  if (rule == MxExponentRule::floor_ocp) {
    e = s.floor_log2 - 8;
  } else {
    // amax = (sig / 2^top) * 2^E with sig / 2^top in [1, 2), E = floor_log2; 448 = 1.75 * 2^8, so
    // amax / 448 = (sig / (1.75 * 2^top)) * 2^(E - 8) and the first factor is in (4/7, 8/7):
    // ceil(log2(amax / 448)) = E - 8 + (sig > 1.75 * 2^top), i.e. + (4 sig > 7 * 2^top).
    const std::uint64_t sig4 = std::uint64_t(s.sig) * 4;
    const std::uint64_t lim = std::uint64_t(7) << s.top;
    e = s.floor_log2 - 8 + (sig4 > lim ? 1 : 0);
  }
  if (e < -127) e = -127;
  if (e > 127) e = 127;  // unreachable for e4m3 and finite floats (see mx.hpp)
  return static_cast<std::uint8_t>(e + 127);
}

std::vector<std::uint8_t> mx_swizzle_scales(const std::uint8_t* plain, std::int64_t rows,
                                            std::int64_t col_blocks) {
  std::vector<std::uint8_t> out(static_cast<std::size_t>(mx_scale_bytes(rows, col_blocks)), 0);
  for (std::int64_t r = 0; r < rows; ++r)
    for (std::int64_t j = 0; j < col_blocks; ++j)
      out[static_cast<std::size_t>(mx_scale_offset(r, j, rows, col_blocks))] =
          plain[r * col_blocks + j];
  return out;
}

std::vector<std::uint8_t> mx_unswizzle_scales(const std::uint8_t* swizzled, std::int64_t rows,
                                              std::int64_t col_blocks) {
  std::vector<std::uint8_t> out(static_cast<std::size_t>(rows * col_blocks));
  for (std::int64_t r = 0; r < rows; ++r)
    for (std::int64_t j = 0; j < col_blocks; ++j)
      out[static_cast<std::size_t>(r * col_blocks + j)] =
          swizzled[mx_scale_offset(r, j, rows, col_blocks)];
  return out;
}

MxQuantized quantize_mx(const float* x, std::int64_t rows, std::int64_t cols,
                        MxExponentRule rule) {
  return quantize_mx_impl("quantize_mx", x, rows, cols, rule,
                          [x](std::int64_t i) { return x[i]; });
}

MxQuantized quantize_mx(const std::uint16_t* x_bf16, std::int64_t rows, std::int64_t cols,
                        MxExponentRule rule) {
  return quantize_mx_impl("quantize_mx (bf16)", x_bf16, rows, cols, rule,
                          [x_bf16](std::int64_t i) {
                            const std::uint32_t u = std::uint32_t(x_bf16[i]) << 16;
                            float f;
                            std::memcpy(&f, &u, sizeof f);
                            return f;
                          });
}

std::vector<double> dequantize_mx(const MxQuantized& q) {
  const auto& t = e4m3_table();
  std::vector<double> out(q.values.size());
  for (std::int64_t r = 0; r < q.rows; ++r)
    for (std::int64_t c = 0; c < q.cols; ++c) {
      const std::size_t i = static_cast<std::size_t>(r * q.cols + c);
      out[i] = double(t[q.values[i]]) * double(ue8m0_decode(q.scale(r, c / kMxBlock)));
    }
  return out;
}

std::uint16_t mx_dequantize_bf16(std::uint8_t e4m3, std::uint8_t code) {
  return float_to_bf16_bits(e4m3_table()[e4m3] * ue8m0_decode(code));  // one float product
}

std::vector<std::uint16_t> dequantize_mx_bf16(const MxQuantized& q) {
  std::vector<std::uint16_t> out(q.values.size());
  for (std::int64_t r = 0; r < q.rows; ++r)
    for (std::int64_t c = 0; c < q.cols; ++c) {
      const std::size_t i = static_cast<std::size_t>(r * q.cols + c);
      out[i] = mx_dequantize_bf16(q.values[i], q.scale(r, c / kMxBlock));
    }
  return out;
}

std::uint8_t mx_requantize_code(std::uint8_t e4m3, int shift) {
  if (shift < 0) {
    throw std::invalid_argument("mx_requantize_code: shift = " + std::to_string(shift) +
                                " must be >= 0 (the group's exponent is its largest block's)");
  }
  // An e4m3 value times 2^-shift is exact in float wherever the result is >= 2^-149; anything
  // smaller lies far below 2^-10, where e4m3_encode gives a (signed) zero either way. The cap
  // only keeps ldexp's argument small.
  return e4m3_encode(std::ldexp(e4m3_table()[e4m3], -std::min(shift, 200)));
}

namespace {

bool is_e4m3_nan(std::uint8_t c) { return (c & 0x7Fu) == 0x7Fu; }

/// mx_requantize_1x128 / _128x128: groups of block_rows rows x 128 columns (mx.hpp's rule).
template <class Recipe>
Quantized<Recipe> mx_requantize_impl(const char* fn, const MxQuantized& q,
                                     std::int64_t block_rows) {
  check_operand(fn, q.values.data(), "q.values", q.rows, "q.rows", q.cols, "q.cols");
  if (std::int64_t(q.values.size()) != q.rows * q.cols ||
      std::int64_t(q.scales.size()) != mx_scale_bytes(q.rows, q.col_blocks())) {
    std::ostringstream s;
    s << fn << ": the operand holds " << q.values.size() << " codes and " << q.scales.size()
      << " scale bytes; rows x cols = " << q.rows << " x " << q.cols << " needs "
      << q.rows * q.cols << " and " << mx_scale_bytes(q.rows, q.col_blocks());
    throw std::invalid_argument(s.str());
  }
  Quantized<Recipe> out(q.rows, q.cols);  // scales (padding included) start at 0.0f
  const Recipe& L = out.layout;
  const std::int64_t cb = q.col_blocks();
  constexpr std::int64_t kBlocksPerGroup = 128 / kMxBlock;
  for (std::int64_t i = 0; i < L.scale_rows(); ++i)
    for (std::int64_t j = 0; j < L.scale_cols(); ++j) {
      const std::int64_t r0 = i * block_rows, r1 = std::min(q.rows, r0 + block_rows);
      const std::int64_t b0 = j * kBlocksPerGroup, b1 = std::min(cb, b0 + kBlocksPerGroup);
      bool nan = false, any = false;
      int E = 0;
      for (std::int64_t r = r0; r < r1; ++r)
        for (std::int64_t b = b0; b < b1; ++b) {
          const std::uint8_t code = q.scale(r, b);
          nan = nan || code == kUe8m0Nan;
          bool nonzero = false;
          for (std::int64_t c = b * kMxBlock; c < (b + 1) * kMxBlock; ++c) {
            const std::uint8_t v = q.values[static_cast<std::size_t>(r * q.cols + c)];
            nan = nan || is_e4m3_nan(v);
            nonzero = nonzero || (v & 0x7Fu) != 0;
          }
          if (nonzero && code != kUe8m0Nan) {
            E = any ? std::max(E, int(code) - 127) : int(code) - 127;
            any = true;
          }
        }
      const std::int64_t s = L.block_index(i, j);
      if (nan) {
        out.scales[static_cast<std::size_t>(s)] = std::numeric_limits<float>::quiet_NaN();
        for (std::int64_t r = r0; r < r1; ++r)
          for (std::int64_t c = b0 * kMxBlock; c < b1 * kMxBlock; ++c)
            out.values[static_cast<std::size_t>(r * q.cols + c)] = 0x7F;
        continue;
      }
      out.scales[static_cast<std::size_t>(s)] = std::ldexp(1.0f, E);  // 2^-127 .. 2^127, exact
      for (std::int64_t r = r0; r < r1; ++r)
        for (std::int64_t b = b0; b < b1; ++b) {
          const int shift = E - (int(q.scale(r, b)) - 127);
          for (std::int64_t c = b * kMxBlock; c < (b + 1) * kMxBlock; ++c) {
            const std::size_t k = static_cast<std::size_t>(r * q.cols + c);
            // A zero block may sit above E (it did not count); its codes are zeros either way.
            out.values[k] = shift <= 0 ? q.values[k] : mx_requantize_code(q.values[k], shift);
          }
        }
    }
  return out;
}

}  // namespace

Quantized<Group1x128> mx_requantize_1x128(const MxQuantized& q) {
  return mx_requantize_impl<Group1x128>("mx_requantize_1x128", q, 1);
}

Quantized<Block128x128> mx_requantize_128x128(const MxQuantized& q) {
  return mx_requantize_impl<Block128x128>("mx_requantize_128x128", q, 128);
}

double mx_block_dot_exact(const std::uint8_t* a, const std::uint8_t* b) {
  const auto& t = e4m3_table();
  double s = 0.0;  // every partial sum is exact (mx.hpp), so the order does not matter
  for (int i = 0; i < kMxBlock; ++i) s += double(t[a[i]]) * double(t[b[i]]);
  return s;
}

std::vector<float> mx_gemm_reference(const std::uint8_t* A, const std::uint8_t* scale_a,
                                     const std::uint8_t* B, const std::uint8_t* scale_b,
                                     std::int64_t M, std::int64_t N, std::int64_t K) {
  check_gemm("mx_gemm_reference", A, scale_a, B, scale_b, M, N, K);
  const std::int64_t kb = K / kMxBlock;
  std::vector<float> D(static_cast<std::size_t>(M * N));
  for (std::int64_t m = 0; m < M; ++m)
    for (std::int64_t n = 0; n < N; ++n) {
      float acc = 0.0f;
      for (std::int64_t j = 0; j < kb; ++j) {
        const std::uint8_t ea = scale_a[mx_scale_offset(m, j, M, kb)];
        const std::uint8_t eb = scale_b[mx_scale_offset(n, j, N, kb)];
        const double S = mx_block_dot_exact(A + m * K + j * kMxBlock, B + n * K + j * kMxBlock);
        float term;
        if (ea == kUe8m0Nan || eb == kUe8m0Nan) {
          term = std::numeric_limits<float>::quiet_NaN();
        } else {
          // Exact in float64 (2^-272 .. 2^277), then one rounding to FP32.
          term = static_cast<float>(std::ldexp(S, int(ea) + int(eb) - 254));
        }
        acc += term;  // FP32 add, block order
      }
      D[static_cast<std::size_t>(m * N + n)] = acc;
    }
  return D;
}

std::vector<float> mx_gemm_reference(const MxQuantized& A, const MxQuantized& B) {
  check_pair("mx_gemm_reference", A, B);
  return mx_gemm_reference(A.values.data(), A.scales.data(), B.values.data(), B.scales.data(),
                           A.rows, B.rows, A.cols);
}

std::vector<double> mx_gemm_reference_f64(const std::uint8_t* A, const std::uint8_t* scale_a,
                                          const std::uint8_t* B, const std::uint8_t* scale_b,
                                          std::int64_t M, std::int64_t N, std::int64_t K) {
  check_gemm("mx_gemm_reference_f64", A, scale_a, B, scale_b, M, N, K);
  const auto& t = e4m3_table();
  const std::int64_t kb = K / kMxBlock;
  // Dequantise once (exact), then the plain float64 dot product in k order, like reference_gemm.
  auto deq = [&](const std::uint8_t* X, const std::uint8_t* sx, std::int64_t rows) {
    std::vector<double> d(static_cast<std::size_t>(rows * K));
    for (std::int64_t r = 0; r < rows; ++r)
      for (std::int64_t k = 0; k < K; ++k)
        d[static_cast<std::size_t>(r * K + k)] =
            double(t[X[r * K + k]]) * double(ue8m0_decode(sx[mx_scale_offset(r, k / 32, rows, kb)]));
    return d;
  };
  const std::vector<double> a = deq(A, scale_a, M), b = deq(B, scale_b, N);
  std::vector<double> D(static_cast<std::size_t>(M * N));
  for (std::int64_t m = 0; m < M; ++m)
    for (std::int64_t n = 0; n < N; ++n) {
      double acc = 0.0;
      for (std::int64_t k = 0; k < K; ++k)
        acc += a[static_cast<std::size_t>(m * K + k)] * b[static_cast<std::size_t>(n * K + k)];
      D[static_cast<std::size_t>(m * N + n)] = acc;
    }
  return D;
}

std::vector<double> mx_gemm_reference_f64(const MxQuantized& A, const MxQuantized& B) {
  check_pair("mx_gemm_reference_f64", A, B);
  return mx_gemm_reference_f64(A.values.data(), A.scales.data(), B.values.data(), B.scales.data(),
                               A.rows, B.rows, A.cols);
}

std::vector<double> mx_gemm_abs_f64(const MxQuantized& A, const MxQuantized& B) {
  check_pair("mx_gemm_abs_f64", A, B);
  const std::vector<double> a = dequantize_mx(A), b = dequantize_mx(B);
  const std::int64_t M = A.rows, N = B.rows, K = A.cols;
  std::vector<double> D(static_cast<std::size_t>(M * N));
  for (std::int64_t m = 0; m < M; ++m)
    for (std::int64_t n = 0; n < N; ++n) {
      double acc = 0.0;
      for (std::int64_t k = 0; k < K; ++k)
        acc += std::fabs(a[static_cast<std::size_t>(m * K + k)] * b[static_cast<std::size_t>(n * K + k)]);
      D[static_cast<std::size_t>(m * N + n)] = acc;
    }
  return D;
}

double mx_gemm_model_tolerance(std::int64_t K) {
  // gamma_n(u) = n u / (1 - n u): the model's K/32 FP32 roundings per term (u = 2^-24) plus the
  // float64 reference's K roundings (u = 2^-53).
  const double nb = double(K / kMxBlock), k = double(K);
  const double u32 = std::ldexp(1.0, -24), u64 = std::ldexp(1.0, -53);
  return nb * u32 / (1.0 - nb * u32) + k * u64 / (1.0 - k * u64);
}

double mx_gemm_model_abs_slack(std::int64_t K) {
  return 2.0 * double(K / kMxBlock + 1) * std::ldexp(1.0, -150);
}

}  // namespace fp8gemm
