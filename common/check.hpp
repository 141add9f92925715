// Correctness checks shared by the chapter executables and the GPU tests: fresh random operands,
// poisoned output, the kernel, and the float64 CPU reference on the dequantised operands.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "common/gemm.hpp"
#include "common/reference.hpp"

namespace fp8gemm {

/// Tolerance on the relative Frobenius error of a bf16 D computed with FP32 accumulation, as a
/// function of K. The reference is exact on the dequantised operands, so what is left is
///  (a) the rounding of D to bf16: at most 2^-8 = 3.9e-3 relative for one element (half an ulp
///      of a 7-bit mantissa; a 1 x 1 D can hit it: 3.3e-3 was seen on the H200), about 1.66e-3 in
///      Frobenius norm over many elements (measured on every standard shape);
///  (b) the accumulation: Hopper's FP8 tensor cores add products into an FP32 accumulator with
///      reduced (~14-bit, truncating) alignment unless the kernel promotes partial sums. Measured
///      on the H200 with cuBLASLt fast accumulation on N(0,1) e4m3 data, in Frobenius norm:
///      1.70e-3 at K = 512, 2.11e-3 at 4096, 2.67e-3 at 8192, 3.55e-3 at 16384
///      (plots/data/h200/baseline_cublaslt.json); chapter 5 (wgmma) measured the same.
/// 2^-8 + 2.5e-7 K covers (a) for any output size plus (b) with margin (6.0e-3 at K = 8192,
/// 8.0e-3 at 16384) and still fails on any indexing, tiling or scale bug: those give errors of
/// order 1, and even one missing 128-wide K slice at K = 16384 gives about
/// sqrt(128 / 16384) = 9e-2.
inline double per_tensor_tolerance(std::int64_t K) { return 0x1p-8 + 2.5e-7 * double(K); }
/// The tolerance at the largest K we test (16384): an upper bound for any shape.
inline const double kPerTensorTolerance = per_tensor_tolerance(16384);

struct CheckOptions {
  std::uint64_t seed = 1;
  /// Compare every row of D when M <= this; otherwise `sample_rows` rows drawn at random
  /// (the first and last row always among them).
  std::int64_t full_reference_max_m = 1024;
  std::int64_t sample_rows = 48;
  bool skip_reference_if_large = false;
};

struct CheckResult {
  ErrorStats error;                       ///< against the float64 reference
  std::vector<std::uint16_t> d;           ///< the kernel's D, downloaded (M x N bf16 bits)
  std::int64_t rows_checked = 0;
  float scale_a = 0, scale_b = 0;
  double tolerance = 0;                   ///< per_tensor_tolerance(K)
  std::string describe() const;           ///< "rel 1.1e-03, diff 3e-07, 48 rows"
  /// Every entry of D finite and the error within per_tensor_tolerance(K).
  bool ok() const { return error.ok(tolerance); }
};

/// Runs `kernel` once on fresh random e4m3 operands (seeded by opt.seed; per-tensor scales drawn
/// from [0.25, 2)) with D poisoned to NaN first, and compares with the float64 reference.
CheckResult check_per_tensor(const PerTensorKernel& kernel, std::int64_t M, std::int64_t N,
                             std::int64_t K, const CheckOptions& opt = {});

/// Runs `kernel` `runs` times on one set of random inputs (poisoning D before each run) and
/// returns true if every run's D is bitwise identical to the first.
bool check_deterministic(const PerTensorKernel& kernel, std::int64_t M, std::int64_t N,
                         std::int64_t K, int runs, std::uint64_t seed);

}  // namespace fp8gemm
