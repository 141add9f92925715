// Chapter 3: tensor cores. The 128 x 128 output tile of a block is computed with warp-level
// mma.sync.m16n8k32 e4m3 (FP32 accumulators), its operands loaded from shared memory by ldmatrix
// (common/mma_tile.cuh). Shared memory is filled by a cp.async pipeline of kStages stages: every
// thread issues 16-byte asynchronous copies for tile kt + kStages - 1 while the warps compute
// tile kt, so the global-memory latency hides behind the math.
//   D (M x N, bf16, row-major) = scale_a * scale_b * A (M x K, e4m3, row-major)
//                                                  . B (N x K, e4m3, row-major)^T
// Shared memory per stage: A tile [128 rows of M][128 bytes of K] and B tile [128 rows of N]
// [128 bytes of K], each row's 16-byte chunks XOR-swizzled (Swizzle128B) against bank conflicts.
#pragma once

#include <cuda_runtime.h>

#include <climits>
#include <cstdint>
#include <stdexcept>
#include <string>

#include "common/cuda.hpp"
#include "common/gemm.hpp"
#include "common/launch.hpp"
#include "common/mma_tile.cuh"
#include "common/ptx/cp_async.cuh"
#include "common/ptx/smem.cuh"
#include "common/validate.hpp"

namespace fp8gemm::ch03 {

using Tile = MmaTile<Swizzle128B>;
inline constexpr int kStages = 4;  // 4 x 32 KiB = 128 KiB: one block per SM (it needs ~220 registers per thread)
inline constexpr int kStageBytes = 2 * Tile::kTileBytes;  // A tile, then B tile
inline constexpr int kSmemBytes = kStages * kStageBytes;
inline constexpr int kChunksPerRow = Tile::kBlockK / 16;                       // 8
inline constexpr int kRowsPerPass = Tile::kThreads / kChunksPerRow;            // 32
inline constexpr int kPasses = Tile::kBlockM / kRowsPerPass;                   // 4

inline GemmRequirements requirements() {
  GemmRequirements r;
  r.who = "fp8gemm::ch03_mma_sync";
  r.k_multiple = 16;
  r.k_reason = "the kernel copies A and B in 16-byte chunks along K";
  r.operand_alignment = 16;  // cp.async of 16 bytes needs 16-byte-aligned global addresses
  r.output_alignment = 2;    // bf16 stores (4-byte pairs only where D and N allow)
  r.packed_only = true;
  return r;
}

/// Starts the copy of one 128 x 128-byte tile of X (rows x K, row-major) at (row0, k0) into the
/// tile at .shared address `tile`. Thread t copies chunk t % 8 of rows t / 8 + 32 p, p < 4: a
/// warp reads 4 whole 128-byte rows (coalesced) and writes 512 contiguous bytes of shared memory.
/// Chunks past the last row or past K are zero-filled (src_bytes = 0, nothing is read): tails
/// add zeros to the sums. K % 16 == 0, so a chunk is wholly inside or outside.
/// row0 is a tile origin (< rows <= 2^31 - 1); row0 + r may pass 2^31 - 1 at the last tile, so
/// that sum is unsigned (it stays below 2^32).
__device__ __forceinline__ void load_tile_async(std::uint32_t tile, const std::uint8_t* X,
                                                int rows, int K, int row0, int k0, int tid) {
  const int chunk = tid % kChunksPerRow;
  const int k = k0 + 16 * chunk;
#pragma unroll
  for (int p = 0; p < kPasses; ++p) {
    const int r = tid / kChunksPerRow + kRowsPerPass * p;
    const unsigned row = unsigned(row0) + unsigned(r);
    const bool inside = row < unsigned(rows) && k < K;
    const std::uint8_t* src = inside ? X + std::int64_t(row) * K + k : X;
    ptx::cp_async_16(tile + Swizzle128B::offset(r, chunk), src, inside ? 16u : 0u);
  }
}

/// One-dimensional grid: blockIdx.x = tile_m * tiles_n + tile_n (no 65535 limit on M); tiles_n
/// from the host (64-bit tile_grid()). Tile origins are < M (or N) <= 2^31 - 1: ints; what is
/// added to them is unsigned (loads) or 64-bit (Tile::store).
__global__ void __launch_bounds__(Tile::kThreads, 1)
    mma_sync_kernel(int M, int N, int K, int tiles_n, const std::uint8_t* __restrict__ A,
                    const std::uint8_t* __restrict__ B, std::uint16_t* __restrict__ D,
                    const float* __restrict__ scale_a, const float* __restrict__ scale_b) {
  extern __shared__ __align__(1024) std::uint8_t smem[];
  const std::uint32_t smem_base = ptx::smem_u32(smem);
  auto a_stage = [&](int s) { return smem_base + std::uint32_t(s * kStageBytes); };
  auto b_stage = [&](int s) { return a_stage(s) + std::uint32_t(Tile::kTileBytes); };

  const int m0 = int(blockIdx.x / unsigned(tiles_n)) * Tile::kBlockM;
  const int n0 = int(blockIdx.x % unsigned(tiles_n)) * Tile::kBlockN;
  const int tid = int(threadIdx.x), warp = tid / 32, lane = tid % 32;
  const int k_tiles = (K + Tile::kBlockK - 1) / Tile::kBlockK;

  auto load_stage = [&](int stage, int kt) {
    load_tile_async(a_stage(stage), A, M, K, m0, kt * Tile::kBlockK, tid);
    load_tile_async(b_stage(stage), B, N, K, n0, kt * Tile::kBlockK, tid);
  };

  // Prologue: tiles 0 .. kStages - 2 in flight, one commit group each (empty groups past the
  // end keep the group count, and so the wait below, uniform).
#pragma unroll
  for (int s = 0; s < kStages - 1; ++s) {
    if (s < k_tiles) load_stage(s, s);
    ptx::cp_async_commit();
  }

  Tile::Accumulators acc = {};
  for (int kt = 0; kt < k_tiles; ++kt) {
    // Groups committed so far: kStages - 1 + kt. At most kStages - 2 still pending means tile
    // kt's group has landed (for this thread); the barrier makes every thread's copies visible,
    // and also tells us every warp has finished computing tile kt - 1.
    ptx::cp_async_wait<kStages - 2>();
    __syncthreads();
    // Refill the stage tile kt - 1 used with tile kt + kStages - 1.
    const int next = kt + kStages - 1;
    if (next < k_tiles) load_stage(next % kStages, next);
    ptx::cp_async_commit();

    const int s = kt % kStages;
    Tile::multiply(acc, a_stage(s), b_stage(s), warp, lane);
  }
  ptx::cp_async_wait<0>();  // nothing real is pending (only empty groups); be explicit anyway

  Tile::store(acc, D, M, N, m0, n0, load_output_scale(scale_a, scale_b), warp, lane);
}

/// D = scale_a * scale_b * A . B^T on `stream`; errors as chapter 1 (common/launch.hpp).
inline void gemm(const PerTensorGemm& g, cudaStream_t stream) {
  const GemmRequirements req = requirements();
  // 128 KiB of dynamic shared memory is above the 48 KiB default: prepare_gemm_launch opts in
  // (once per device).
  const TileGrid grid = prepare_gemm_launch(
      g.args(), req, Tile::kBlockM, Tile::kBlockN,
      reinterpret_cast<const void*>(&mma_sync_kernel), "ch03 mma_sync_kernel", "sm_90a",
      int(kSmemBytes));
  mma_sync_kernel<<<unsigned(grid.blocks), Tile::kThreads, kSmemBytes, stream>>>(
      int(g.M), int(g.N), int(g.K), int(grid.tiles_n), g.A, g.B, g.D, g.scale_a, g.scale_b);
  check_launch(req.who);
}

}  // namespace fp8gemm::ch03
