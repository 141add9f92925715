// The CPU reference GEMM (float64 accumulation over dequantised operands) and error metrics.
//
// reference: D[m][n] = sum_k A[m][k] * B[n][k], A row-major M x K, B row-major N x K ("NT"),
// both already dequantised to float64 (see quantize.hpp), so the only error left in a kernel's
// result is its accumulation order/precision and the bf16 rounding of D.
#pragma once

#include <cstdint>
#include <vector>

namespace fp8gemm {

/// Full reference: returns M x N row-major float64.
std::vector<double> reference_gemm(std::int64_t M, std::int64_t N, std::int64_t K,
                                   const double* A, const double* B);

/// Reference for a subset of rows of D (for shapes too large for a full CPU product):
/// returns rows.size() x N, row i being D[rows[i]][:].
std::vector<double> reference_gemm_rows(std::int64_t M, std::int64_t N, std::int64_t K,
                                        const double* A, const double* B,
                                        const std::vector<std::int64_t>& rows);

/// Decodes bf16 bits (as stored in D) to float.
float bf16_to_float(std::uint16_t bits);
/// Round-to-nearest-even float -> bf16 bits (NaN stays NaN).
std::uint16_t float_to_bf16(float x);

/// Error of a result against a float64 reference.
struct ErrorStats {
  double rel_frobenius = 0;   ///< ||got - ref||_F / ||ref||_F (infinity if got has a non-finite)
  double deepgemm_diff = 0;   ///< 1 - 2<x,y> / (<x,x> + <y,y>) (DeepGEMM's calc_diff)
  double max_abs = 0;         ///< max |got - ref|
  std::int64_t non_finite = 0;  ///< entries of got that are NaN or inf (unwritten if poisoned)
  /// True when every entry is finite and rel_frobenius <= tol.
  bool ok(double tol) const { return non_finite == 0 && rel_frobenius <= tol; }
};

ErrorStats compare(const float* got, const double* ref, std::int64_t count);
/// Same, for bf16 results as stored on the device.
ErrorStats compare_bf16(const std::uint16_t* got, const double* ref, std::int64_t count);
/// Same, for a subset of rows of an M x N bf16 result (rows as given to reference_gemm_rows).
ErrorStats compare_bf16_rows(const std::uint16_t* got, std::int64_t N,
                             const std::vector<std::int64_t>& rows, const double* ref_rows);

}  // namespace fp8gemm
