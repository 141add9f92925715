// The tensor-core compute shared by chapters 3 and 4: a 256-thread block multiplies a
// 128 x 128-byte tile of A by a 128 x 128-byte tile of B (both e4m3, K contiguous) into a
// 128 x 128 FP32 accumulator tile with warp-level mma.sync.m16n8k32 e4m3, its fragments loaded
// from shared memory by ldmatrix; and the epilogue that scales, rounds to bf16 and stores D.
// Chapters 3 and 4 differ only in how the tiles reach shared memory (cp.async by every thread vs.
// one TMA copy); both lay them out the same way, so this code is written once, templated on the
// layout: Layout::offset(row, chunk) is the byte offset of 16-byte chunk `chunk` (k = 16 chunk ..
// 16 chunk + 15) of tile row `row`.
//
// Block: 8 warps as 2 (along M) x 4 (along N); each warp owns a 64 x 32 piece of the 128 x 128
// tile = 4 x 4 m16n8 accumulators of 4 floats (64 registers). Per k32 step a warp issues
// 4 ldmatrix.x4 for A (one per m16), 2 ldmatrix.x4 for B (one per pair of n8) and 16 mma.
// Fragment layouts (common/ptx/mma_sync.cuh and ldmatrix.cuh, PTX ISA), g = lane / 4,
// t = lane % 4:
//   A m16 x k32:  a[0] = A[g][4t..], a[1] = A[g+8][4t..], a[2] = A[g][16+4t..], a[3] = A[g+8][16+4t..]
//   B n8 x k32:   b[0] = B[g][4t..], b[1] = B[g][16+4t..]
//   ldmatrix.x4:  register i of lane l = matrix i, row l / 4, bytes 4 (l % 4) .. 4 (l % 4) + 3,
//                 where matrix i's 8 row addresses come from lanes 8i .. 8i+7.
// So for A, matrix i must be (rows 8 (i % 2) .., chunk i / 2): lane l points at row l % 16,
// chunk l / 16 of the m16 x k32 sub-tile. For two n8 tiles of B at once, matrix i must be
// (n8 tile i / 2, chunk i % 2): lane l points at row 8 (l / 16) + l % 8, chunk (l / 8) % 2.
#pragma once

#include <cuda_bf16.h>

#include <cstdint>

#include "common/output_scale.cuh"
#include "common/ptx/ldmatrix.cuh"
#include "common/ptx/mma_sync.cuh"

namespace fp8gemm {

/// Tile rows of 128 bytes (128 e4m3 along K) = 8 chunks of 16 bytes; chunk c of row r is stored
/// at chunk position c ^ (r % 8). ldmatrix reads one chunk from each of 8 consecutive rows; the
/// XOR puts those 8 chunks in 8 different 16-byte bank groups, so every ldmatrix phase is
/// conflict-free (unswizzled, all 8 would sit in the same 4 banks: an 8-way conflict). This is
/// also exactly what TMA's CU_TENSOR_MAP_SWIZZLE_128B writes into a 1024-byte-aligned box.
struct Swizzle128B {
  static constexpr int kRowBytes = 128;
  __device__ __forceinline__ static std::uint32_t offset(int row, int chunk) {
    return std::uint32_t(row * kRowBytes + ((chunk ^ (row % 8)) * 16));
  }
};

/// One 128 x 128 (x 128 bytes of K) block tile computed by 8 warps with mma.sync.
template <class Layout>
struct MmaTile {
  static constexpr int kBlockM = 128, kBlockN = 128;
  static constexpr int kBlockK = Layout::kRowBytes;  // e4m3: one byte per k
  static constexpr int kWarpsM = 2, kWarpsN = 4, kThreads = 32 * kWarpsM * kWarpsN;
  static constexpr int kWarpM = kBlockM / kWarpsM;  // 64
  static constexpr int kWarpN = kBlockN / kWarpsN;  // 32
  static constexpr int kMTiles = kWarpM / 16;       // m16 tiles per warp
  static constexpr int kNTiles = kWarpN / 8;        // n8 tiles per warp
  static constexpr int kTileBytes = kBlockM * kBlockK;  // one operand tile (A or B) in smem
  static_assert(kBlockM == kBlockN, "A and B tiles have the same shape");
  static_assert(kBlockK % 32 == 0 && kNTiles % 2 == 0, "k32 steps, n8 tiles in pairs");

  /// This warp's FP32 accumulators: acc[i][j] is the m16n8 tile at rows 16 i, columns 8 j of the
  /// warp's piece, in the mma C/D fragment layout.
  using Accumulators = float[kMTiles][kNTiles][4];

  /// acc += A_tile . B_tile^T for this warp's 64 x 32 piece. a_tile / b_tile: .shared addresses
  /// of the 128 x kBlockK A and B tiles (row = m or n, K contiguous), laid out by Layout.
  __device__ __forceinline__ static void multiply(Accumulators& acc, std::uint32_t a_tile,
                                                  std::uint32_t b_tile, int warp, int lane) {
    const int a_row = (warp / kWarpsN) * kWarpM + lane % 16;
    const int a_chunk = lane / 16;
    const int b_row = (warp % kWarpsN) * kWarpN + 8 * (lane / 16) + lane % 8;
    const int b_chunk = (lane / 8) % 2;
    // Not unrolled: on sm_90a ptxas turns each e4m3 mma.sync into f16 conversions of its
    // operands, two HMMA.16816 into a temporary accumulator and 4 FADD (see the chapter 3
    // README), so every mma in flight costs 4 more registers. Unrolling the k32 steps lets ptxas
    // hoist the next step's work and run out of registers (255 and spills); one step at a time
    // needs about 220.
#pragma unroll 1
    for (int s = 0; s < kBlockK / 32; ++s) {  // k32 step s: chunks 2s and 2s + 1
      std::uint32_t b[kNTiles][2];
#pragma unroll
      for (int j = 0; j < kNTiles; j += 2) {
        std::uint32_t r[4];
        ptx::ldmatrix_x4(r, b_tile + Layout::offset(b_row + 8 * j, 2 * s + b_chunk));
        b[j][0] = r[0];
        b[j][1] = r[1];
        b[j + 1][0] = r[2];
        b[j + 1][1] = r[3];
      }
#pragma unroll
      for (int i = 0; i < kMTiles; ++i) {
        std::uint32_t a[4];
        ptx::ldmatrix_x4(a, a_tile + Layout::offset(a_row + 16 * i, 2 * s + a_chunk));
#pragma unroll
        for (int j = 0; j < kNTiles; ++j) ptx::mma_m16n8k32_e4m3(acc[i][j], a, b[j]);
      }
    }
  }

  /// D[m0 + ..][n0 + ..] = bf16(scale.apply(acc)) for this warp's piece, bounds-checked against
  /// M, N (indices in 64 bits: near M, N = 2^31 an int would overflow). D is M x N bf16
  /// row-major and 2-byte aligned; pairs of columns go out as one 4-byte store where D and N make
  /// every pair 4-byte aligned, element by element otherwise.
  __device__ __forceinline__ static void store(const Accumulators& acc, std::uint16_t* D, int M,
                                               int N, std::int64_t m0, std::int64_t n0,
                                               const OutputScale& scale, int warp, int lane) {
    const bool pairs_ok = (reinterpret_cast<std::uintptr_t>(D) % 4 == 0) && (N % 2 == 0);
    const std::int64_t row0 = m0 + (warp / kWarpsN) * kWarpM + lane / 4;
    const std::int64_t col0 = n0 + (warp % kWarpsN) * kWarpN + 2 * (lane % 4);
#pragma unroll
    for (int i = 0; i < kMTiles; ++i)
#pragma unroll
      for (int half = 0; half < 2; ++half) {  // c[0..1] at row g, c[2..3] at row g + 8
        const std::int64_t m = row0 + 16 * i + 8 * half;
        if (m >= M) continue;
        std::uint16_t* d_row = D + m * N;
#pragma unroll
        for (int j = 0; j < kNTiles; ++j) {
          const std::int64_t n = col0 + 8 * j;
          const __nv_bfloat162 v = __floats2bfloat162_rn(scale.apply(acc[i][j][2 * half]),
                                                         scale.apply(acc[i][j][2 * half + 1]));
          if (pairs_ok && n + 1 < N) {
            *reinterpret_cast<__nv_bfloat162*>(d_row + n) = v;
          } else {
            if (n < N) d_row[n] = __bfloat16_as_ushort(v.x);
            if (n + 1 < N) d_row[n + 1] = __bfloat16_as_ushort(v.y);
          }
        }
      }
  }
};

}  // namespace fp8gemm
