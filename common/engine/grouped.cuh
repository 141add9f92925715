// Chapter 8 on the engine: the block-scaled GEMM of chapter 7 over G groups (mixture-of-experts),
// one launch, the group sizes read only on the device (grouped_schedule.hpp).
//
//   for every group g:  D[rows of g, :] = A[rows of g, :] . B_g^T, block-scaled as in chapter 7
//   A  [total rows, K] e4m3 (contiguous) or [G * M_max, K] (masked), 1 x 128 scales over all rows
//   B  [G * N, K] e4m3 (B_g = rows g N .. g N + N - 1), 128 x 128 scales per group
//      ([G][ceil(N/128)][ld], groups sfb_group_stride floats apart)
//   D  rows as A, N columns, bf16 (or FP32 with accumulate)
//
// What changes against chapter 7 is the schedule and the tile geometry, nothing in the main loop:
// the scheduler walks (group, row tile, column tile) from the device offsets; the producer loads
// A at the tile's first row and B at g N + n0; the consumers read the group's B scales; the
// epilogue stops at the group's last row. A tile's A rows past its group belong to the next
// group (or to a masked group's padding): they are loaded and multiplied like any rows, and their
// results are never stored. The TMA-store epilogue writes the warpgroups whose rows are all in
// the group and falls back to register stores for the one a group's end cuts. Clusters: 1 x 2
// only (two CTAs side by side along N, the same row tile and group, A multicast); a 2 x 1 cluster's
// two row tiles could fall in two groups, so the schedule would have to pair a group's row tiles.
#pragma once

#include <cstdint>

#include "common/engine/block_scaled.cuh"
#include "common/engine/grouped_schedule.hpp"

namespace fp8gemm::engine {

/// The persistent grouped scheduler: cluster c of the grid takes units c, c + clusters, ... of the
/// grouped schedule (grouped_cluster_tile; with kClusterN = 1 a unit is one tile and a cluster one
/// CTA). Every thread that needs tiles builds its own; all threads of both CTAs of a cluster see
/// the same sequence of units.
template <int kBlockM, int kClusterN = 1>
struct GroupedTileScheduler {
  GroupedLayout layout;
  int n_tiles;
  std::int64_t next_unit;
  int stride;
  int rank_n;
  GroupedCursor cursor;

  __device__ __forceinline__ GroupedTileScheduler(const GroupedLayout& l, int tiles_n,
                                                  std::uint32_t rank)
      : layout(l),
        n_tiles(tiles_n),
        next_unit(blockIdx.x / kClusterN),
        stride(int(gridDim.x) / kClusterN),
        rank_n(kClusterN > 1 ? int(rank) : 0) {}

  __device__ __forceinline__ bool next(GroupedTile& t) {
    if (!grouped_cluster_tile(layout, kBlockM, n_tiles, kClusterN, rank_n, next_unit, cursor, t))
      return false;
    next_unit += stride;
    return true;
  }
};

/// The grouped kernels' promoted loop: two-deep where it fits, else the first loop. Measured on the
/// H200, the default 128 x 256 tile on the eight balanced and masked cases, each run with both
/// loops (plots/data/h200/ch08/loops_4777cb9.json, loops_a33ed69.json): the first loop 1.024-1.132x
/// (geomean 1.052x), then 0.985-1.035x (geomean 1.017x) the rolled lean loop; the lean loop
/// unrolled spills there (32 bytes at 2x, 248-280 at 4x).
template <class Cfg>
constexpr int grouped_block_scaled_loop() {
  return two_deep_fits<Cfg>() ? kTwoDeepLoop : 0;
}

/// The block-scaled math of chapter 7 with the grouped schedule and geometry; kLoop other than the
/// default only for chapter 8's same-run loop comparison (kernels_grouped.cu).
template <class Cfg, int kLoop = grouped_block_scaled_loop<Cfg>()>
struct GroupedBlockScaledMath : BlockScaledMath<Cfg, kLoop> {
  static_assert(Cfg::kClusterM == 1,
                "grouped kernels: clusters along N only (two row tiles could be in two groups)");
  /// A tile's rows may end inside it (a group's last tile): with the TMA-store epilogue, a
  /// warpgroup whose rows all belong to the group stores them by TMA, the others from registers
  /// (kernel.cuh's epilogue).
  static constexpr bool kRowsEndInTiles = true;
  static constexpr int kDefaultLoop = grouped_block_scaled_loop<Cfg>();  // kernel_info's names
  using Params = GroupedParams;
  using Scheduler = GroupedTileScheduler<Cfg::kBlockM, Cfg::kClusterN>;
  using TileT = GroupedTile;

  __device__ __forceinline__ static Scheduler make_scheduler(const Params& p, std::uint32_t rank) {
    return Scheduler(p.layout, p.n_tiles, rank);
  }
  __device__ __forceinline__ static int a_row(const GroupedTile& t) { return t.m0; }
  __device__ __forceinline__ static int b_row(const GemmParams& p, const GroupedTile& t) {
    return t.group * p.N + t.n_block * Cfg::kBlockN;
  }
  __device__ __forceinline__ static int d_col(const GroupedTile& t) {
    return t.n_block * Cfg::kBlockN;
  }
  __device__ __forceinline__ static int row_end(const GemmParams&, const GroupedTile& t) {
    return t.row_end;
  }
  /// The side ring holds BlockM + 4 A scales per stage, from row m0 & ~3 (block_scaled.cuh,
  /// kSkewedRows: a TMA box must start 16-byte aligned along the rows).
  static constexpr std::uint32_t kExtraTxBytes = BlockScaledMath<Cfg>::kSkewedSfaBytes;
  static constexpr std::uint32_t kExtraStageBytes =
      BlockScaledMath<Cfg>::template side_stage_bytes<GroupedTile>();
  /// The stage's A scales: rows (m0 & ~3) .. (m0 & ~3) + BlockM + 3 of the scale tensor over all
  /// rows (the map's box is BlockM + 4 wide, or two boxes of 160 for BlockM = 256; rows past the
  /// tensor are zero-filled).
  __device__ __forceinline__ static void produce_extra(const Params& p, std::uint32_t extra,
                                                       std::uint32_t bar, const GroupedTile& t,
                                                       int kb) {
    using BS = BlockScaledMath<Cfg>;
#pragma unroll
    for (int i = 0; i < BS::kSkewedBoxes; ++i)
      ptx::tma_load_2d(extra + std::uint32_t(i * BS::kSkewedBoxRows) * 4u, &p.map_sfa, bar,
                       (t.m0 & ~3) + i * BS::kSkewedBoxRows, kb);
  }
};

}  // namespace fp8gemm::engine
