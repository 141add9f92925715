// Chapter 4: the Tensor Memory Accelerator. Same block tile and the same tensor-core compute as
// chapter 3 (common/mma_tile.cuh); what changes is how A and B reach shared memory. Instead of
// 256 threads each issuing 8 cp.async of 16 bytes per stage (address math, bounds checks and
// swizzle in every thread), ONE thread issues two cp.async.bulk.tensor.2d copies per stage, each
// moving a whole 128 x 128-byte box described by a tensor map built on the host. The TMA unit
// applies the 128-byte swizzle (the same layout chapter 3 wrote by hand) and zero-fills whatever
// part of a box lies outside A or B: no bounds checks in the kernel, no padding of the inputs.
// Completion is signalled on an mbarrier per stage by transaction count (bytes), not by
// cp.async groups.
//   D (M x N, bf16, row-major) = scale_a * scale_b * A (M x K, e4m3, row-major)
//                                                  . B (N x K, e4m3, row-major)^T
#pragma once

#include <cuda.h>
#include <cuda_runtime.h>

#include <climits>
#include <cstdint>
#include <stdexcept>
#include <string>

#include "common/cuda.hpp"
#include "common/gemm.hpp"
#include "common/launch.hpp"
#include "common/mma_tile.cuh"
#include "common/ptx/mbarrier.cuh"
#include "common/ptx/smem.cuh"
#include "common/ptx/tma.cuh"
#include "common/tensor_map.hpp"
#include "common/validate.hpp"

namespace fp8gemm::ch04 {

using Tile = MmaTile<Swizzle128B>;  // TMA's CU_TENSOR_MAP_SWIZZLE_128B is this layout
inline constexpr int kStages = 4;   // 4 x 32 KiB ring, as chapter 3
inline constexpr int kStageBytes = 2 * Tile::kTileBytes;  // A tile, then B tile
/// + 1 KiB so that the ring can start at a 1024-byte boundary: the 128-byte swizzle pattern
/// repeats every 8 rows x 128 bytes and TMA computes it from the shared-memory address.
inline constexpr int kSmemBytes = kStages * kStageBytes + 1024;

inline GemmRequirements requirements() {
  GemmRequirements r;
  r.who = "fp8gemm::ch04_tma";
  r.k_multiple = 16;
  r.k_reason = "TMA needs the row stride of A and B (K bytes) to be a multiple of 16 bytes";
  r.operand_alignment = 16;  // TMA: global base address 16-byte aligned
  r.output_alignment = 2;    // bf16 stores (4-byte pairs only where D and N allow)
  r.packed_only = true;
  return r;
}

/// One-dimensional grid: blockIdx.x = tile_m * tiles_n + tile_n (no 65535 limit on M); tiles_n
/// from the host (64-bit tile_grid()). Tile origins are < M (or N) <= 2^31 - 1: ints (TMA takes
/// 32-bit coordinates); Tile::store adds to them in 64 bits.
/// map_a: A as rows = M, cols = K (bytes), box 128 x 128, 128B swizzle; map_b: B likewise with N.
__global__ void __launch_bounds__(Tile::kThreads, 1)
    tma_kernel(const __grid_constant__ CUtensorMap map_a, const __grid_constant__ CUtensorMap map_b,
               int M, int N, int K, int tiles_n, std::uint16_t* __restrict__ D,
               const float* __restrict__ scale_a, const float* __restrict__ scale_b) {
  extern __shared__ std::uint8_t smem[];
  __shared__ alignas(8) std::uint64_t full[kStages];  // "stage s has landed" barriers
  const std::uint32_t ring = (ptx::smem_u32(smem) + 1023u) & ~1023u;
  auto a_stage = [&](int s) { return ring + std::uint32_t(s * kStageBytes); };
  auto b_stage = [&](int s) { return a_stage(s) + std::uint32_t(Tile::kTileBytes); };
  auto full_bar = [&](int s) { return ptx::smem_u32(&full[s]); };

  const int m0 = int(blockIdx.x / unsigned(tiles_n)) * Tile::kBlockM;
  const int n0 = int(blockIdx.x % unsigned(tiles_n)) * Tile::kBlockN;
  const int tid = int(threadIdx.x), warp = tid / 32, lane = tid % 32;
  const int k_tiles = (K + Tile::kBlockK - 1) / Tile::kBlockK;

  // Thread 0 issues every copy: the stage's barrier expects both boxes' bytes (32 KiB, zero-filled
  // parts included), then the two copies count them down as they land.
  auto load_stage = [&](int stage, int kt) {
    ptx::mbarrier_arrive_expect_tx(full_bar(stage), kStageBytes);
    ptx::tma_load_2d(a_stage(stage), &map_a, full_bar(stage), kt * Tile::kBlockK, m0);
    ptx::tma_load_2d(b_stage(stage), &map_b, full_bar(stage), kt * Tile::kBlockK, n0);
  };

  if (tid == 0) {
    ptx::tma_prefetch_descriptor(&map_a);
    ptx::tma_prefetch_descriptor(&map_b);
    for (int s = 0; s < kStages; ++s) ptx::mbarrier_init(full_bar(s), 1);  // 1 arrival: thread 0
    ptx::fence_barrier_init();  // make the initialised barriers visible to the TMA unit
  }
  __syncthreads();

  // Prologue: tiles 0 .. kStages - 2 in flight, as in chapter 3.
  if (tid == 0)
    for (int s = 0; s < kStages - 1 && s < k_tiles; ++s) load_stage(s, s);

  Tile::Accumulators acc = {};
  for (int kt = 0; kt < k_tiles; ++kt) {
    // Tile kt sits in stage kt % kStages, which it fills for the (kt / kStages)-th time: that
    // fill completes the barrier's phase kt / kStages, so we wait for its parity.
    const int s = kt % kStages;
    ptx::mbarrier_wait(full_bar(s), std::uint32_t((kt / kStages) & 1));
    // Every warp has finished computing tile kt - 1 once all are here: its stage can be refilled.
    __syncthreads();
    const int next = kt + kStages - 1;
    if (tid == 0 && next < k_tiles) load_stage(next % kStages, next);

    Tile::multiply(acc, a_stage(s), b_stage(s), warp, lane);
  }

  Tile::store(acc, D, M, N, m0, n0, load_output_scale(scale_a, scale_b), warp, lane);
}

/// D = scale_a * scale_b * A . B^T on `stream`; errors as chapter 1 (common/launch.hpp).
inline void gemm(const PerTensorGemm& g, cudaStream_t stream) {
  const GemmRequirements req = requirements();
  const TileGrid grid = prepare_gemm_launch(
      g.args(), req, Tile::kBlockM, Tile::kBlockN, reinterpret_cast<const void*>(&tma_kernel),
      "ch04 tma_kernel", "sm_90a", int(kSmemBytes));
  // The tensor maps: A is M rows x K bytes (row stride K), B is N x K; one box is one 128 x 128
  // tile. They are cheap to encode (host only) and go to the kernel as __grid_constant__
  // parameters, so a map per call costs nothing on the device.
  const CUtensorMap map_a = make_tensor_map_2d(
      g.A, CU_TENSOR_MAP_DATA_TYPE_UINT8, 1, std::uint64_t(g.M), std::uint64_t(g.K),
      std::uint64_t(g.K), Tile::kBlockM, Tile::kBlockK, CU_TENSOR_MAP_SWIZZLE_128B);
  const CUtensorMap map_b = make_tensor_map_2d(
      g.B, CU_TENSOR_MAP_DATA_TYPE_UINT8, 1, std::uint64_t(g.N), std::uint64_t(g.K),
      std::uint64_t(g.K), Tile::kBlockN, Tile::kBlockK, CU_TENSOR_MAP_SWIZZLE_128B);
  tma_kernel<<<unsigned(grid.blocks), Tile::kThreads, kSmemBytes, stream>>>(
      map_a, map_b, int(g.M), int(g.N), int(g.K), int(grid.tiles_n), g.D, g.scale_a, g.scale_b);
  check_launch(req.who);
}

}  // namespace fp8gemm::ch04
