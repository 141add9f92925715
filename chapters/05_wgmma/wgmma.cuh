// Chapter 5: warpgroup MMA. The tensor-core instruction becomes wgmma.mma_async: one warpgroup
// (128 threads) multiplies a 64 x 256 x 32 slab per instruction, reading A and B directly from
// 128B-swizzled shared memory through matrix descriptors, accumulating in registers, running
// asynchronously while the warpgroup issues the next one. Operands arrive by TMA (chapter 4) into
// a ring of stages guarded by mbarriers.
//
//   D (M x N, bf16, row-major) = scale_a * scale_b * A (M x K, e4m3, row-major)
//                                                  . B (N x K, e4m3, row-major)^T
//
// One thread block computes a 128 x 256 tile of D (kBlockM x kBlockN), walking K in blocks of
// 128 (kBlockK = 128 e4m3 = 128 bytes = exactly one 128B-swizzle row):
//   warp 8 (the producer; one elected lane issues): for every K block, wait until the ring stage
//     is empty, announce its bytes on the stage's "full" mbarrier, issue two TMA loads:
//       A tile: rows m0 .. m0+127 of A, k0 .. k0+127   -> 128 x 128 B = 16 KiB, 128B-swizzled
//       B tile: rows n0 .. n0+255 of B, k0 .. k0+127   -> 256 x 128 B = 32 KiB, 128B-swizzled
//   warps 0-3 and 4-7 (consumer warpgroups 0 and 1): warpgroup g owns rows 64g .. 64g+63 of the
//     tile; per K block it waits for "full", issues 4 wgmma m64n256k32 (k = 0, 32, 64, 96: the
//     descriptors' start addresses move 32 bytes along the swizzle row), commits them as one
//     group, waits until only that group is in flight (so the previous K block's group has
//     finished reading shared memory) and releases the previous stage on its "empty" mbarrier.
//   Epilogue: accumulators scaled by scale_a * scale_b (common/output_scale.cuh) -> bf16, stored
//     straight from registers with bounds checks; bf16 pairs as one 4-byte store where D is 4-byte
//     aligned and N even, single bf16 otherwise (D need only be 2-byte aligned).
// Out-of-range rows of A / B and the K tail past K are zero-filled by TMA, so any M, N >= 1 and
// any K that is a multiple of 16 (TMA's 16-byte row-stride rule) work without a special case.
#pragma once

#include <cuda.h>
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <climits>
#include <cstdint>
#include <stdexcept>
#include <string>

#include "common/cuda.hpp"
#include "common/gemm.hpp"
#include "common/launch.hpp"
#include "common/output_scale.cuh"
#include "common/ptx/mbarrier.cuh"
#include "common/ptx/smem.cuh"
#include "common/ptx/tma.cuh"
#include "common/ptx/wgmma.cuh"
#include "common/tensor_map.hpp"
#include "common/validate.hpp"

namespace fp8gemm::ch05 {

inline constexpr int kBlockM = 128;                      // rows of D per block (2 warpgroups x 64)
inline constexpr int kBlockN = 256;                      // columns of D per block (wgmma N)
inline constexpr int kBlockK = 128;                      // K per stage: one 128-byte swizzle row
inline constexpr int kWgmmaK = 32;                       // K per wgmma (e4m3)
inline constexpr int kStages = 4;                        // ring depth
inline constexpr int kConsumerWarpgroups = kBlockM / 64;
inline constexpr int kConsumerThreads = 128 * kConsumerWarpgroups;
inline constexpr int kProducerWarp = kConsumerThreads / 32;  // the warp after the consumers
inline constexpr int kThreads = kConsumerThreads + 32;
inline constexpr int kAccumulators = kBlockN / 2;        // f32 registers per consumer thread
inline constexpr int kGroupM = 8;                        // tile order: 8 M-tiles share B in L2

inline constexpr std::uint32_t kTileABytes = kBlockM * kBlockK;  // e4m3: 1 byte per element
inline constexpr std::uint32_t kTileBBytes = kBlockN * kBlockK;
inline constexpr std::uint32_t kStageBytes = kTileABytes + kTileBBytes;
/// Dynamic shared memory: the ring, plus slack to align its start to the 1024-byte swizzle atom.
inline constexpr std::size_t kSmemBytes = std::size_t(kStages) * kStageBytes + 1024;

static_assert(kBlockK == 128, "one K block must be exactly one 128-byte swizzle row");
static_assert(kTileABytes % ptx::kSw128AtomBytes == 0 && kTileBBytes % ptx::kSw128AtomBytes == 0,
              "every tile must start on a 1024-byte swizzle atom");
static_assert(kSmemBytes <= 227 * 1024, "more shared memory than an H200 block may have");

/// K a multiple of 16 (TMA row strides are multiples of 16 bytes); 16-byte aligned A and B (TMA
/// base addresses); packed tensors. M and N are free: TMA zero-fills, the epilogue checks bounds.
inline GemmRequirements requirements() {
  GemmRequirements r;
  r.who = "fp8gemm::ch05_wgmma";
  r.k_multiple = 16;
  r.k_reason = "TMA needs the row stride of A and B, K bytes, to be a multiple of 16";
  r.operand_alignment = 16;
  r.output_alignment = 2;
  r.packed_only = true;
  return r;
}

/// Maps the linear block index to a (tile_m, tile_n) so that consecutive blocks walk down a group
/// of kGroupM tile rows before moving right: the ~132 blocks in flight then share a few B tiles
/// and a few A tiles in L2 instead of streaming all of B (or A) per wave. tiles_m and tiles_n come
/// from the host (64-bit tile_grid()); the arithmetic is 64-bit, so no M, N <= 2^31 - 1 overflows
/// it (kGroupM * tiles_n in int would, for N near 2^31).
__device__ __forceinline__ void tile_coordinates(int tiles_m, int tiles_n, std::int64_t& tile_m,
                                                 std::int64_t& tile_n) {
  const std::int64_t id = blockIdx.x;
  const std::int64_t tiles_per_group = std::int64_t(kGroupM) * tiles_n;
  const std::int64_t first_m = (id / tiles_per_group) * kGroupM;
  const std::int64_t group_rows = min(std::int64_t(tiles_m) - first_m, std::int64_t(kGroupM));
  const std::int64_t in_group = id % tiles_per_group;
  tile_m = first_m + in_group % group_rows;
  tile_n = in_group / group_rows;
}

/// Whether D[r][c] is 4-byte aligned for every even c: D itself 4-byte aligned and N even. Only
/// then may the epilogue store bf16 pairs; validate_gemm() guarantees only 2-byte alignment.
__device__ __forceinline__ bool pairs_aligned(const std::uint16_t* D, int N) {
  return reinterpret_cast<std::uintptr_t>(D) % 4 == 0 && N % 2 == 0;
}

/// Writes this thread's accumulators (the wgmma D layout, see common/ptx/wgmma.cuh) of the 64 x
/// 256 slab whose first row is `row0` and first column `col0`, scaled, as bf16 (D: M x N
/// row-major). kChecked = false is the interior-tile path: the caller guarantees that the whole
/// slab is inside D and pairs_aligned(D, N), so every store is an unconditional, 4-byte-aligned
/// bf16 pair. Indices are 64-bit: near M, N = 2^31 an int would overflow.
template <bool kChecked>
__device__ __forceinline__ void store_accumulators(const float (&d)[kAccumulators],
                                                   const OutputScale& scale, std::int64_t row0,
                                                   std::int64_t col0, int M, int N,
                                                   std::uint16_t* __restrict__ D) {
  const int warp_in_group = int(threadIdx.x / 32) % 4;
  const int lane = int(threadIdx.x % 32);
  const std::int64_t row = row0 + 16 * warp_in_group + lane / 4;
  const std::int64_t col = col0 + 2 * (lane % 4);
  const bool pairs = !kChecked || pairs_aligned(D, N);
#pragma unroll
  for (int j = 0; j < kBlockN / 8; ++j) {
    const std::int64_t c = col + 8 * j;
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      const std::int64_t r = row + 8 * h;
      if (kChecked && (r >= M || c >= N)) continue;
      const float v0 = scale.apply(d[4 * j + 2 * h]);
      const float v1 = scale.apply(d[4 * j + 2 * h + 1]);
      std::uint16_t* out = D + r * N + c;
      if (pairs && (!kChecked || c + 1 < N)) {
        // .x (v0) goes to the lower address, D[r][c].
        *reinterpret_cast<__nv_bfloat162*>(out) = __floats2bfloat162_rn(v0, v1);
      } else {
        out[0] = __bfloat16_as_ushort(__float2bfloat16_rn(v0));
        if (c + 1 < N) out[1] = __bfloat16_as_ushort(__float2bfloat16_rn(v1));
      }
    }
  }
}

__global__ void __launch_bounds__(kThreads, 1)
    wgmma_kernel(const __grid_constant__ CUtensorMap map_a,  // A: M x K e4m3, box 128 x 128
                 const __grid_constant__ CUtensorMap map_b,  // B: N x K e4m3, box 256 x 128
                 int M, int N, int K, int tiles_m, int tiles_n, std::uint16_t* __restrict__ D,
                 const float* __restrict__ scale_a, const float* __restrict__ scale_b) {
  // The ring: stage s holds its A tile (128 rows x 128 B) then its B tile (256 rows x 128 B),
  // each in TMA's 128B-swizzled layout; stage bases are 1024-byte aligned.
  extern __shared__ std::uint8_t smem_raw[];
  const std::uint32_t ring = (ptx::smem_u32(smem_raw) + 1023u) & ~1023u;
  // full[s]: completes when stage s holds its K block (1 arrival + kStageBytes of TMA).
  // empty[s]: completes when every consumer warp has finished reading stage s.
  __shared__ alignas(8) std::uint64_t full[kStages];
  __shared__ alignas(8) std::uint64_t empty[kStages];
  constexpr std::uint32_t kConsumerWarps = kConsumerThreads / 32;

  const int warp = int(threadIdx.x / 32);
  const int lane = int(threadIdx.x % 32);
  std::int64_t tile_m, tile_n;
  tile_coordinates(tiles_m, tiles_n, tile_m, tile_n);
  // Tile origins are < M (or N) <= 2^31 - 1; the TMA coordinates below are 32-bit.
  const std::int64_t m0 = tile_m * kBlockM;
  const std::int64_t n0 = tile_n * kBlockN;
  const int k_blocks = (K + kBlockK - 1) / kBlockK;  // the last one zero-filled past K

  if (warp == kProducerWarp && lane == 0) {
    ptx::tma_prefetch_descriptor(&map_a);
    ptx::tma_prefetch_descriptor(&map_b);
    for (int s = 0; s < kStages; ++s) {
      ptx::mbarrier_init(ptx::smem_u32(&full[s]), 1);
      ptx::mbarrier_init(ptx::smem_u32(&empty[s]), kConsumerWarps);
    }
    ptx::fence_barrier_init();  // visible to the TMA unit (async proxy) before the first copy
  }
  __syncthreads();

  if (warp == kProducerWarp) {
    if (lane != 0) return;
    for (int kb = 0; kb < k_blocks; ++kb) {
      const int s = kb % kStages;
      const int round = kb / kStages;
      // Use r of stage s needs the (r-1)-th release of it (none for the first round).
      if (round > 0) ptx::mbarrier_wait(ptx::smem_u32(&empty[s]), (round - 1) & 1);
      const std::uint32_t bar = ptx::smem_u32(&full[s]);
      const std::uint32_t tile_a = ring + std::uint32_t(s) * kStageBytes;
      ptx::mbarrier_arrive_expect_tx(bar, kStageBytes);  // zero-filled bytes count too
      ptx::tma_load_2d(tile_a, &map_a, bar, kb * kBlockK, int(m0));
      ptx::tma_load_2d(tile_a + kTileABytes, &map_b, bar, kb * kBlockK, int(n0));
    }
    return;
  }

  // Consumers: warpgroup g computes rows 64g .. 64g+63 of the tile, all 256 columns.
  const int group = warp / 4;
  float d[kAccumulators];  // written by the first wgmma (scale_d = 0) before any read
  for (int kb = 0; kb < k_blocks; ++kb) {
    const int s = kb % kStages;
    ptx::mbarrier_wait(ptx::smem_u32(&full[s]), (kb / kStages) & 1);
    const std::uint32_t tile_a = ring + std::uint32_t(s) * kStageBytes;
    // A rows 64g.. start 64 x 128 B = 8 KiB (8 swizzle atoms) into the A tile.
    const std::uint64_t desc_a = ptx::make_desc_k_major_sw128(tile_a + group * 64 * kBlockK);
    const std::uint64_t desc_b = ptx::make_desc_k_major_sw128(tile_a + kTileABytes);
    ptx::wgmma_fence();
#pragma unroll
    for (int ks = 0; ks < kBlockK / kWgmmaK; ++ks) {
      ptx::wgmma_m64nNk32_e4m3<kBlockN>(d, ptx::advance_desc(desc_a, ks * kWgmmaK),
                                        ptx::advance_desc(desc_b, ks * kWgmmaK),
                                        (kb > 0 || ks > 0) ? 1u : 0u);
    }
    ptx::wgmma_commit_group();
    // Keep this K block's group in flight; the previous one is then done with its stage.
    ptx::wgmma_wait_group<1>();
    if (kb > 0 && lane == 0) ptx::mbarrier_arrive(ptx::smem_u32(&empty[(kb - 1) % kStages]));
  }
  ptx::wgmma_wait_group<0>();
  ptx::wgmma_fence_operands(d);

  const OutputScale scale = load_output_scale(scale_a, scale_b);
  const std::int64_t row0 = m0 + 64 * group;
  if (row0 + 64 <= M && n0 + kBlockN <= N && pairs_aligned(D, N)) {
    store_accumulators<false>(d, scale, row0, n0, M, N, D);
  } else {
    store_accumulators<true>(d, scale, row0, n0, M, N, D);
  }
}

/// D = scale_a * scale_b * A . B^T on `stream`. Throws std::invalid_argument on bad arguments
/// (before any GPU work) and std::runtime_error on CUDA errors or a GPU without sm_90a
/// (common/launch.hpp).
inline void gemm(const PerTensorGemm& g, cudaStream_t stream) {
  const GemmRequirements req = requirements();
  // Validation, the 64-bit grid, the pointer checks, then once per device: the machine code must
  // exist for this GPU, and the kernel may use more than 48 KiB of dynamic shared memory only
  // after opting in.
  const TileGrid grid = prepare_gemm_launch(
      g.args(), req, kBlockM, kBlockN, reinterpret_cast<const void*>(&wgmma_kernel),
      "ch05 wgmma_kernel", "sm_90a", int(kSmemBytes));

  const CUtensorMap map_a =
      make_tensor_map_2d(g.A, CU_TENSOR_MAP_DATA_TYPE_UINT8, 1, std::uint64_t(g.M),
                         std::uint64_t(g.K), std::uint64_t(g.K), kBlockM, kBlockK,
                         CU_TENSOR_MAP_SWIZZLE_128B);
  const CUtensorMap map_b =
      make_tensor_map_2d(g.B, CU_TENSOR_MAP_DATA_TYPE_UINT8, 1, std::uint64_t(g.N),
                         std::uint64_t(g.K), std::uint64_t(g.K), kBlockN, kBlockK,
                         CU_TENSOR_MAP_SWIZZLE_128B);
  wgmma_kernel<<<unsigned(grid.blocks), kThreads, kSmemBytes, stream>>>(
      map_a, map_b, int(g.M), int(g.N), int(g.K), int(grid.tiles_m), int(grid.tiles_n), g.D,
      g.scale_a, g.scale_b);
  check_launch(req.who);
}

}  // namespace fp8gemm::ch05
