// The accumulation-accuracy experiment of chapter 6 (README "Accuracy"; test "promoted stays
// accurate at K = 65536"): with same-sign data every product pushes the sum the same way, and
// Hopper's FP8 tensor-core accumulation (reduced alignment, truncating) loses precision as K
// grows; random-normal data hides this because the errors cancel.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>
#include <functional>

#include "common/gemm.hpp"

namespace fp8gemm::ch06 {

struct AccuracyResult {
  double rel_frobenius = 0;  ///< against the float64 reference on the sampled rows
  double worst_tile = 0;     ///< worst 128 x 128 tile (reference.hpp worst_tile_error)
  std::int64_t rows = 0;     ///< rows compared
  std::int64_t non_finite = 0;
};

/// Runs `launch` once on A (M x K) and B (N x K) = e4m3 of U[lo, hi] (RN, seeded), scales 1,
/// D poisoned first, and compares `sample_rows` rows of D (first and last included) with the
/// float64 reference.
AccuracyResult uniform_data_error(const std::function<void(const PerTensorGemm&, cudaStream_t)>& launch,
                                  std::int64_t M, std::int64_t N, std::int64_t K, float lo,
                                  float hi, std::uint64_t seed, std::int64_t sample_rows = 32);

}  // namespace fp8gemm::ch06
