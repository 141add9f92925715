// The per-tensor FP8 GEMM that chapters 1-6 implement, as one argument struct:
//   D (M x N, bf16, row-major) = scale_a * scale_b * A (M x K, e4m3, row-major)
//                                                  . B (N x K, e4m3, row-major)^T
// with FP32 accumulation, on the device. Leading dimensions in elements, 0 meaning packed (lda =
// ldb = K, ldd = N): chapters 1-5 take packed tensors only (their requirements() say
// packed_only and refuse any other), chapter 6's engine and the library's PerTensorPlan take row
// strides >= the row (TMA: lda, ldb multiples of 16; ldd any, the TMA-store kernels needing it a
// multiple of 8).
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
  // Last, so that the positional form {M, N, K, A, B, D, scale_a, scale_b} stays packed.
  std::int64_t lda = 0;             ///< row stride of A in elements; 0: K
  std::int64_t ldb = 0;             ///< row stride of B in elements; 0: K
  std::int64_t ldd = 0;             ///< row stride of D in elements; 0: N

  /// The same call as GemmArgs (the leading dimensions filled in), for validate_gemm().
  GemmArgs args() const {
    GemmArgs a = packed_per_tensor(M, N, K, A, B, D, scale_a, scale_b);
    if (lda != 0) a.lda = lda;
    if (ldb != 0) a.ldb = ldb;
    if (ldd != 0) a.ldd = ldd;
    return a;
  }
};

/// A kernel entry point: validates, launches on the stream, checks the launch; throws
/// std::invalid_argument / std::runtime_error.
using PerTensorKernel = std::function<void(const PerTensorGemm&, cudaStream_t)>;

}  // namespace fp8gemm
