// The accumulation-accuracy experiment of chapter 6 (README "Accuracy"; test "promoted stays
// accurate at K = 65536"): with same-sign data every product pushes the sum the same way, and
// Hopper's FP8 tensor-core accumulation (reduced alignment, truncating) loses precision as K
// grows; random-normal data hides this because the errors cancel.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>
#include <functional>
#include <string>

#include "common/gemm.hpp"

namespace fp8gemm::ch06 {

struct Options;  // ws_gemm.hpp

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

struct SampledCheck {
  bool ok = false;
  std::string describe;  ///< "rel 1.7e-03, worst tile 1.8e-03, 8 rows (kernel name)"
};

/// Checks a call on operands that already live on the device (e.g. a benchmark's): runs the plan
/// chosen by `options` once with D poisoned, downloads `rows` sampled rows of A (first and last
/// included) and all of B, computes those rows of D in float64 on the host (one thread per row)
/// and compares: the global and worst-128x128-tile relative errors within
/// per_tensor_tolerance(K), every entry of those rows finite. The scales are read back from the
/// device. Packed or strided (the call's lda, ldb, ldd; until session 66 it refused strided
/// calls): only the N entries of each row of D are poisoned, its row padding left as it was.
SampledCheck sampled_check(const PerTensorGemm& gemm, const Options& options,
                           std::int64_t rows, std::uint64_t seed);

}  // namespace fp8gemm::ch06
