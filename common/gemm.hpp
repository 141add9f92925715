// The per-tensor FP8 GEMM that chapters 1-6 implement, as one argument struct:
//   D (M x N, bf16, row-major) = scale_a * scale_b * A (M x K, e4m3, row-major)
//                                                  . B (N x K, e4m3, row-major)^T
// with FP32 accumulation. All tensors are packed (lda = ldb = K, ldd = N) and live on the device.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>
#include <functional>

#include "common/validate.hpp"

namespace fp8gemm {

struct PerTensorGemm {
  std::int64_t M = 0, N = 0, K = 0;
  const std::uint8_t* A = nullptr;  ///< M x K e4m3 bytes, row-major
  const std::uint8_t* B = nullptr;  ///< N x K e4m3 bytes, row-major
  std::uint16_t* D = nullptr;       ///< M x N bf16 bits, row-major
  const float* scale_a = nullptr;   ///< device pointer to 1 float (dequantisation scale of A)
  const float* scale_b = nullptr;   ///< device pointer to 1 float (dequantisation scale of B)

  /// The same call as GemmArgs, for validate_gemm().
  GemmArgs args() const { return packed_per_tensor(M, N, K, A, B, D, scale_a, scale_b); }
};

/// A kernel entry point: validates, launches on the stream, checks the launch; throws
/// std::invalid_argument / std::runtime_error.
using PerTensorKernel = std::function<void(const PerTensorGemm&, cudaStream_t)>;

}  // namespace fp8gemm
