// Chapter 1: the naive FP8 GEMM. One thread computes one element of D:
//   D[m][n] = scale_a * scale_b * sum_k A[m][k] * B[n][k]
// A: M x K e4m3 row-major, B: N x K e4m3 row-major (so the dot product walks both rows along K),
// D: M x N bf16 row-major. Every e4m3 byte is decoded to float as it is read and the sum is kept
// in FP32. No reuse at all: each A and B byte is read from global memory N and M times.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>
#include <cuda_runtime.h>

#include <climits>
#include <cstdint>
#include <stdexcept>
#include <string>

#include "common/cuda.hpp"
#include "common/gemm.hpp"
#include "common/launch.hpp"
#include "common/output_scale.cuh"
#include "common/validate.hpp"

namespace fp8gemm::ch01 {

/// A block is 32 x 8 threads: threadIdx.x walks N (so a warp writes 32 consecutive bf16 of D),
/// threadIdx.y walks M.
inline constexpr int kBlockN = 32;
inline constexpr int kBlockM = 8;

/// Any M, N, K >= 1: the kernel reads one byte at a time, so there is no rule on K or on the
/// alignment of A and B. D takes bf16 stores: 2-byte aligned.
inline GemmRequirements requirements() {
  GemmRequirements r;
  r.who = "fp8gemm::ch01_naive";
  r.output_alignment = 2;
  r.packed_only = true;
  return r;
}

/// e4m3 -> float, exactly (every e4m3 value is a half, every half a float). On sm_89+ the first
/// step is one instruction, cvt.rn.f16x2.e4m3x2 (here with one of its two lanes used).
__device__ __forceinline__ float e4m3_to_float(std::uint8_t bits) {
  const __half_raw h = __nv_cvt_fp8_to_halfraw(bits, __NV_E4M3);
  return __half2float(__half(h));
}

/// The grid is one-dimensional (blockIdx.x = tile_m * tiles_n + tile_n) so that neither M nor N
/// runs into the 65535 limit of gridDim.y. tiles_n comes from the host (tile_grid(), 64-bit), and
/// every row and column index is 64-bit: with M or N near 2^31, (N + kBlockN - 1) or the last
/// tile's indices would overflow an int.
__global__ void __launch_bounds__(kBlockN * kBlockM)
    naive_kernel(int M, int N, int K, int tiles_n, const std::uint8_t* __restrict__ A,
                 const std::uint8_t* __restrict__ B, std::uint16_t* __restrict__ D,
                 const float* __restrict__ scale_a, const float* __restrict__ scale_b) {
  const std::int64_t m = std::int64_t(blockIdx.x / unsigned(tiles_n)) * kBlockM + threadIdx.y;
  const std::int64_t n = std::int64_t(blockIdx.x % unsigned(tiles_n)) * kBlockN + threadIdx.x;
  if (m >= M || n >= N) return;

  const std::uint8_t* a_row = A + m * K;  // A[m][0 .. K)
  const std::uint8_t* b_row = B + n * K;  // B[n][0 .. K)
  float acc = 0.0f;                       // FP32 accumulation
  for (int k = 0; k < K; ++k) acc = fmaf(e4m3_to_float(a_row[k]), e4m3_to_float(b_row[k]), acc);

  // The per-tensor scales are applied once, to the FP32 sum (without forming an FP32
  // scale_a * scale_b that could overflow: common/output_scale.cuh), then D is rounded to bf16.
  const OutputScale scale = load_output_scale(scale_a, scale_b);
  D[m * N + n] = __bfloat16_as_ushort(__float2bfloat16_rn(scale.apply(acc)));
}

/// D = scale_a * scale_b * A . B^T on `stream`. Throws std::invalid_argument on bad arguments
/// (before touching the GPU) and std::runtime_error on CUDA errors (common/launch.hpp).
inline void gemm(const PerTensorGemm& g, cudaStream_t stream) {
  const GemmRequirements req = requirements();
  const TileGrid grid =
      prepare_gemm_launch(g.args(), req, kBlockM, kBlockN,
                          reinterpret_cast<const void*>(&naive_kernel), "ch01 naive_kernel",
                          "sm_90a", 0);
  naive_kernel<<<unsigned(grid.blocks), dim3(kBlockN, kBlockM), 0, stream>>>(
      int(g.M), int(g.N), int(g.K), int(grid.tiles_n), g.A, g.B, g.D, g.scale_a, g.scale_b);
  check_launch(req.who);
}

}  // namespace fp8gemm::ch01
