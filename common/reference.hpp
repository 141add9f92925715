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

/// Rows to compare when a full reference is too costly: the first and the last row and random
/// ones (seeded) up to `count` in all (at most M), sorted, without repeats.
std::vector<std::int64_t> sample_rows(std::int64_t M, std::int64_t count, std::uint64_t seed);

/// The root mean square of `values` (0 for none). An accumulate test (D = A.B^T + D) draws D's
/// earlier values at this scale of its product, so that a kernel that skipped the add, or added
/// twice, fails it (session 65: values of N(0, 4) beside MXFP8 products of rms 1e4-2e8 made such a
/// kernel pass at 2e-8 to 3e-4 of the result).
double rms(const std::vector<double>& values);

/// The accumulate checks' guard (D = A.B^T + D): how large D's earlier values are beside the
/// expected result. A check whose earlier values are a tiny share of the result cannot see a
/// skipped add (session 65: chapter 9's could not), so each accumulate test refuses to pass
/// below its own minimum share. Build each compared entry's expected result through it:
/// add_to(product, earlier value) adds the earlier value into the product and records both.
struct EarlierShare {
  double before_sq = 0;  ///< sum of the earlier values' squares
  double want_sq = 0;    ///< sum of the expected results' squares (earlier value included)
  void add_to(double& want, double before) {
    want += before;
    before_sq += before * before;
    want_sq += want * want;
  }
  /// ||earlier values|| / ||expected result|| (0 for none).
  double share() const;
  /// True when share() >= min_share (false for no entries or a NaN).
  bool visible(double min_share) const { return share() >= min_share; }
};

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
/// Same, for a float result.
ErrorStats compare_f32_rows(const float* got, std::int64_t N, const std::vector<std::int64_t>& rows,
                            const double* ref_rows);

/// The worst relative error of one output tile, for the same rows as compare_bf16_rows(): D is
/// cut into tile_m x tile_n tiles (by row and column index of D) and each tile t with compared
/// entries gets
///     ||got_t - ref_t|| / max(||ref_t||, rms(ref) * sqrt(n_t)),
/// rms(ref) = ||ref|| / sqrt(n) over all compared entries, n_t the compared entries in t (the
/// max keeps a tile whose reference happens to be small from dividing by almost nothing). The
/// global relative Frobenius error dilutes one bad tile among all the others (one tile of a
/// 4096 x 4096 D that lost 1 of its 32 K blocks moves it by only ~6e-3, one with a 3% scale error
/// by ~1e-3); this does not. Infinity if any compared entry is non-finite; 0 for no entries.
double worst_tile_error(const std::uint16_t* got, std::int64_t N,
                        const std::vector<std::int64_t>& rows, const double* ref_rows,
                        std::int64_t tile_m = 128, std::int64_t tile_n = 128);
/// Same, for a float result.
double worst_tile_error(const float* got, std::int64_t N, const std::vector<std::int64_t>& rows,
                        const double* ref_rows, std::int64_t tile_m = 128,
                        std::int64_t tile_n = 128);

}  // namespace fp8gemm
