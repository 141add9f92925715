// Correctness checks shared by the chapter executables and the GPU tests: fresh random operands,
// poisoned output, the kernel, and the float64 CPU reference on the dequantised operands.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "common/gemm.hpp"
#include "common/reference.hpp"

namespace fp8gemm {

/// Tolerance on the relative Frobenius error of a bf16 D computed with FP32 accumulation.
/// The reference is exact on the dequantised operands, so what is left is (a) the rounding of D
/// to bf16: at most 2^-9 relative per element, about 2^-9 / sqrt(3) = 1.1e-3 in Frobenius norm
/// for values spread over a binade, and (b) FP32 (on Hopper's FP8 tensor cores, ~14-bit
/// aligned) accumulation of up to 16384 products of random-sign data, well under 1e-3. 4e-3
/// leaves room for both and still fails on any indexing, tiling or scale bug (those give O(1)).
inline constexpr double kPerTensorTolerance = 4e-3;

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
  std::string describe() const;           ///< "rel 1.1e-03, diff 3e-07, 48 rows"
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
