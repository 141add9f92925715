// Chapter 2: shared-memory tiling and register blocking on the CUDA cores.
//   D (M x N, bf16, row-major) = scale_a * scale_b * A (M x K, e4m3, row-major)
//                                                  . B (N x K, e4m3, row-major)^T
// A block of 256 threads computes a 128 x 128 tile of D. For every 32-wide slice of K it copies
// A[128 rows][32] and B[128 rows][32] from global memory once (16-byte vector loads), decodes the
// e4m3 bytes to float once (packed cvt.rn.f16x2.e4m3x2, then f16 -> f32), and stores them in
// shared memory transposed (k-major), where all 256 threads reuse them. Each thread then keeps
// an 8 x 8 block of D in registers: per k it reads 8 floats of A and 8 of B and does 64 FFMA.
// The accumulation is FP32 throughout (FFMA); only the decoding goes through f16, which is exact.
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

namespace fp8gemm::ch02 {

inline constexpr int kBlockM = 128;  // rows of D (and of A) per block
inline constexpr int kBlockN = 128;  // columns of D (rows of B) per block
inline constexpr int kBlockK = 32;   // K per shared-memory tile: two 16-byte vectors per row
inline constexpr int kThreads = 256;
inline constexpr int kThreadM = 8;   // each thread: 8 x 8 outputs
inline constexpr int kThreadN = 8;
/// Two buffers (double buffering), each A and B as float[kBlockK][128]: 2 x 2 x 16 KiB.
inline constexpr int kSmemBytes = 2 * 2 * kBlockK * kBlockM * int(sizeof(float));

static_assert(kBlockM == kBlockN, "one thread loads one A row and one B row");
static_assert(kThreads == kBlockM * (kBlockK / 16), "one 16-byte vector of A and of B per thread");
static_assert((kBlockM / kThreadM) * (kBlockN / kThreadN) == kThreads, "8 x 8 per thread");

inline GemmRequirements requirements() {
  GemmRequirements r;
  r.who = "fp8gemm::ch02_smem_tiling";
  r.k_multiple = 16;
  r.k_reason = "the kernel reads A and B in 16-byte vectors along K";
  r.operand_alignment = 16;  // 16-byte vector loads from A and B
  r.output_alignment = 2;    // bf16 stores (8-byte ones only where D and N allow)
  r.packed_only = true;
  return r;
}

/// 16 e4m3 bytes (k, k+1, ..., k+15; lowest byte first) -> 16 floats. Each
/// __nv_cvt_fp8x2_to_halfraw2 is one cvt.rn.f16x2.e4m3x2 (two values); f16 -> f32 is exact.
__device__ __forceinline__ void decode_16_e4m3(const uint4& v, float (&out)[16]) {
  const std::uint32_t words[4] = {v.x, v.y, v.z, v.w};
#pragma unroll
  for (int w = 0; w < 4; ++w) {
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      const __half2_raw pair = __nv_cvt_fp8x2_to_halfraw2(
          static_cast<__nv_fp8x2_storage_t>(words[w] >> (16 * h)), __NV_E4M3);
      const float2 f = __half22float2(__half2(pair));
      out[4 * w + 2 * h] = f.x;
      out[4 * w + 2 * h + 1] = f.y;
    }
  }
}

/// 16 bytes of row `row` (< rows) starting at column k (< K): zero outside the matrix, so tails in
/// M, N and K add nothing to the sums. K % 16 == 0, so a vector is wholly inside or outside.
/// `row` is unsigned: a tile origin (< rows <= 2^31 - 1) plus up to 127 may pass 2^31 - 1 at the
/// last tile, which an int could not hold, but never 2^32.
__device__ __forceinline__ uint4 load_16(const std::uint8_t* __restrict__ X, int rows, int K,
                                         unsigned row, int k) {
  if (row >= unsigned(rows) || k >= K) return make_uint4(0, 0, 0, 0);
  return *reinterpret_cast<const uint4*>(X + std::int64_t(row) * K + k);
}

/// The grid is one-dimensional (blockIdx.x = tile_m * tiles_n + tile_n): no 65535 limit on M.
/// tiles_n comes from the host (64-bit tile_grid()). A tile origin is < M (or N) <= 2^31 - 1, so it
/// fits an int; origin + offset may not, so those sums are unsigned (loads) or 64-bit (stores).
__global__ void __launch_bounds__(kThreads, 2)
    smem_tiling_kernel(int M, int N, int K, int tiles_n, const std::uint8_t* __restrict__ A,
                       const std::uint8_t* __restrict__ B, std::uint16_t* __restrict__ D,
                       const float* __restrict__ scale_a, const float* __restrict__ scale_b) {
  // smem: [buffer 0: As, Bs][buffer 1: As, Bs], As[k][m] = A[m0 + m][k0 + k] as float (k-major,
  // so that a thread's 4 consecutive m are one 16-byte read), Bs[k][n] likewise.
  extern __shared__ float4 smem_f4[];
  float* smem = reinterpret_cast<float*>(smem_f4);
  constexpr int kTileFloats = kBlockK * kBlockM;

  const int m0 = int(blockIdx.x / unsigned(tiles_n)) * kBlockM;
  const int n0 = int(blockIdx.x % unsigned(tiles_n)) * kBlockN;
  const int tid = int(threadIdx.x);

  // Copy role: thread t loads row t % 128 of the A tile and of the B tile, 16 bytes at
  // k = 16 * (t / 128). A warp thus covers 32 consecutive rows at one k, and its transposed
  // stores As[k][32 consecutive m] hit 32 different banks.
  const unsigned copy_row = unsigned(tid % kBlockM);
  const int copy_k = 16 * (tid / kBlockM);
  // Compute role: thread (ty, tx) owns rows {4 ty + i, 64 + 4 ty + i} and columns
  // {4 tx + j, 64 + 4 tx + j}, i, j < 4. The split in two halves makes a quarter-warp's 16-byte
  // reads of Bs[k][4 tx ..] contiguous (no bank conflicts) and the D stores 8 bytes wide.
  const int ty = tid / 16, tx = tid % 16;

  float acc[kThreadM][kThreadN] = {};
  const int k_tiles = (K + kBlockK - 1) / kBlockK;

  auto store_tile = [&](int buffer, const uint4& a, const uint4& b) {
    float* As = smem + buffer * 2 * kTileFloats;
    float* Bs = As + kTileFloats;
    float fa[16], fb[16];
    decode_16_e4m3(a, fa);
    decode_16_e4m3(b, fb);
#pragma unroll
    for (int j = 0; j < 16; ++j) {
      As[(copy_k + j) * kBlockM + copy_row] = fa[j];
      Bs[(copy_k + j) * kBlockN + copy_row] = fb[j];
    }
  };

  // Prologue: tile 0 into buffer 0.
  uint4 a_next = load_16(A, M, K, unsigned(m0) + copy_row, copy_k);
  uint4 b_next = load_16(B, N, K, unsigned(n0) + copy_row, copy_k);
  store_tile(0, a_next, b_next);
  __syncthreads();

  for (int kt = 0; kt < k_tiles; ++kt) {
    // Double buffering: the global loads of tile kt + 1 are in flight (in registers) while this
    // tile is computed from shared memory.
    const bool has_next = kt + 1 < k_tiles;
    if (has_next) {
      const int k_next = (kt + 1) * kBlockK + copy_k;
      a_next = load_16(A, M, K, unsigned(m0) + copy_row, k_next);
      b_next = load_16(B, N, K, unsigned(n0) + copy_row, k_next);
    }

    const float* As = smem + (kt % 2) * 2 * kTileFloats;
    const float* Bs = As + kTileFloats;
#pragma unroll
    for (int k = 0; k < kBlockK; ++k) {
      const float4 a_lo = *reinterpret_cast<const float4*>(&As[k * kBlockM + 4 * ty]);
      const float4 a_hi = *reinterpret_cast<const float4*>(&As[k * kBlockM + 64 + 4 * ty]);
      const float4 b_lo = *reinterpret_cast<const float4*>(&Bs[k * kBlockN + 4 * tx]);
      const float4 b_hi = *reinterpret_cast<const float4*>(&Bs[k * kBlockN + 64 + 4 * tx]);
      const float a[kThreadM] = {a_lo.x, a_lo.y, a_lo.z, a_lo.w, a_hi.x, a_hi.y, a_hi.z, a_hi.w};
      const float b[kThreadN] = {b_lo.x, b_lo.y, b_lo.z, b_lo.w, b_hi.x, b_hi.y, b_hi.z, b_hi.w};
#pragma unroll
      for (int i = 0; i < kThreadM; ++i)
#pragma unroll
        for (int j = 0; j < kThreadN; ++j) acc[i][j] = fmaf(a[i], b[j], acc[i][j]);
    }

    // The other buffer was last read in iteration kt - 1, and every thread has passed the
    // barrier that ended it: safe to overwrite. The barrier below publishes it for kt + 1.
    if (has_next) store_tile((kt + 1) % 2, a_next, b_next);
    __syncthreads();
  }

  // Epilogue: scale the FP32 sums once (common/output_scale.cuh), round to bf16, store 4
  // consecutive columns (8 bytes) when D and N make every such group 8-byte aligned and it is in
  // bounds, element by element otherwise (D itself need only be 2-byte aligned).
  const OutputScale scale = load_output_scale(scale_a, scale_b);
  const bool vector_ok = (reinterpret_cast<std::uintptr_t>(D) % 8 == 0) && (N % 4 == 0);
#pragma unroll
  for (int i = 0; i < kThreadM; ++i) {
    const std::int64_t m = std::int64_t(m0) + (i < 4 ? 4 * ty + i : 64 + 4 * ty + i - 4);
    if (m >= M) continue;
    std::uint16_t* d_row = D + m * N;
#pragma unroll
    for (int half = 0; half < 2; ++half) {
      const std::int64_t n = std::int64_t(n0) + 64 * half + 4 * tx;
      std::uint16_t v[4];
#pragma unroll
      for (int j = 0; j < 4; ++j)
        v[j] = __bfloat16_as_ushort(__float2bfloat16_rn(scale.apply(acc[i][4 * half + j])));
      if (vector_ok && n + 3 < N) {
        *reinterpret_cast<uint2*>(d_row + n) =
            make_uint2(v[0] | (std::uint32_t(v[1]) << 16), v[2] | (std::uint32_t(v[3]) << 16));
      } else {
#pragma unroll
        for (int j = 0; j < 4; ++j)
          if (n + j < N) d_row[n + j] = v[j];
      }
    }
  }
}

/// D = scale_a * scale_b * A . B^T on `stream`; errors as chapter 1 (common/launch.hpp).
inline void gemm(const PerTensorGemm& g, cudaStream_t stream) {
  const GemmRequirements req = requirements();
  // 64 KiB of dynamic shared memory is above the 48 KiB default: prepare_gemm_launch opts in
  // (once per device).
  const TileGrid grid = prepare_gemm_launch(
      g.args(), req, kBlockM, kBlockN, reinterpret_cast<const void*>(&smem_tiling_kernel),
      "ch02 smem_tiling_kernel", "sm_90a", int(kSmemBytes));
  smem_tiling_kernel<<<unsigned(grid.blocks), kThreads, kSmemBytes, stream>>>(
      int(g.M), int(g.N), int(g.K), int(grid.tiles_n), g.A, g.B, g.D, g.scale_a, g.scale_b);
  check_launch(req.who);
}

}  // namespace fp8gemm::ch02
