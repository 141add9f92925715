// The cuBLASLt baseline: FP8 e4m3 x e4m3 -> bf16, D = A . B^T with our row-major layouts (and bf16
// x bf16 for chapter 9)
// (A M x K, B N x K, D M x N), either with per-tensor scales or with the DeepSeek-V3 block scales
// (A 1x128 as VEC128_32F, B 128x128 as BLK128x128_32F; layouts in scaling.hpp).
//
// cuBLAS is column-major, so we ask it for D^T = B . A^T: cuBLAS's "A" is our B (K x N
// column-major = N x K row-major, op T), its "B" is our A (op N), its D is N x M column-major,
// which is our M x N row-major D. FP8 needs exactly this "TN" form. The scales swap slots too.
// It is the speed reference in every chapter and a second correctness oracle on the GPU.
#pragma once

#include <cublasLt.h>
#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <string>

namespace fp8gemm {

/// Throws std::runtime_error naming the call, status, file and line.
[[noreturn]] void throw_cublas_error(cublasStatus_t status, const char* call, const char* file,
                                     int line);
#define FP8GEMM_CUBLAS_CHECK(call)                                                 \
  do {                                                                             \
    const cublasStatus_t fp8gemm_st_ = (call);                                     \
    if (fp8gemm_st_ != CUBLAS_STATUS_SUCCESS)                                      \
      ::fp8gemm::throw_cublas_error(fp8gemm_st_, #call, __FILE__, __LINE__);       \
  } while (0)

/// Thread safety: the plan cache shared by all objects is guarded by a mutex, so objects may be
/// used from several threads at once; one object's workspace is shared by its calls, so give
/// each thread (or stream) its own object.
class CublasLtGemm {
 public:
  /// workspace_bytes: cuBLASLt's scratch (32 MiB, as cuBLAS uses on Hopper).
  explicit CublasLtGemm(std::size_t workspace_bytes = std::size_t(32) << 20);
  ~CublasLtGemm();
  CublasLtGemm(const CublasLtGemm&) = delete;
  CublasLtGemm& operator=(const CublasLtGemm&) = delete;

  /// D (bf16, M x N) = scale_a * scale_b * A . B^T; scale_a, scale_b: device pointers to one float.
  /// fast_accum: cuBLASLt's CUBLASLT_MATMUL_DESC_FAST_ACCUM (no periodic FP32 promotion: the
  /// FP8 tensor cores' reduced-precision accumulation, as chapter 5's wgmma kernel does; chapters
  /// 1-4 accumulate in full FP32). Throws std::invalid_argument for shapes cuBLASLt rejects (N % 8 != 0 for a
  /// bf16 D, K % 16 != 0, scale pointers not 16-byte aligned: cuBLASLt answers NOT_SUPPORTED for
  /// those), std::runtime_error when cuBLASLt finds no algorithm.
  void per_tensor(std::int64_t M, std::int64_t N, std::int64_t K, const std::uint8_t* A,
                  const std::uint8_t* B, std::uint16_t* D, const float* scale_a,
                  const float* scale_b, bool fast_accum, cudaStream_t stream);

  /// Block-scaled: scale_a in Group1x128 layout ([ceil(K/128)][M]), scale_b in Block128x128
  /// layout ([ceil(N/128)][round_up(ceil(K/128), 4)]). Requires M % 4 == 0, N % 8 == 0,
  /// K % 16 == 0 and 16-byte aligned scale pointers; throws std::invalid_argument otherwise.
  void block_scaled(std::int64_t M, std::int64_t N, std::int64_t K, const std::uint8_t* A,
                    const std::uint8_t* B, std::uint16_t* D, const float* scale_a,
                    const float* scale_b, cudaStream_t stream);

  /// bf16 A (M x K) and B (N x K), row-major, D (bf16, M x N) = A . B^T with FP32 accumulation
  /// (CUBLAS_COMPUTE_32F): the peer of chapter 9's bf16 GEMM (its dequantize_bf16 path). Same
  /// rules as per_tensor on N and K.
  void bf16(std::int64_t M, std::int64_t N, std::int64_t K, const std::uint16_t* A,
            const std::uint16_t* B, std::uint16_t* D, cudaStream_t stream);

  /// cuBLASLt's version number, e.g. 130100.
  static std::size_t version();

  /// Which of cuBLASLt's heuristic candidates every plan uses: 0 (its first choice) unless the
  /// environment variable FP8GEMM_CUBLASLT_ALGO says otherwise. Throws std::invalid_argument on
  /// a malformed value.
  static int algo_index();

 private:
  enum class Mode { per_tensor, per_tensor_fast, block_scaled, bf16 };
  void run(Mode mode, std::int64_t M, std::int64_t N, std::int64_t K, const std::uint8_t* A,
           const std::uint8_t* B, std::uint16_t* D, const float* scale_a, const float* scale_b,
           cudaStream_t stream);
  cublasLtHandle_t handle_ = nullptr;
  void* workspace_ = nullptr;
  std::size_t workspace_bytes_ = 0;
};

}  // namespace fp8gemm
