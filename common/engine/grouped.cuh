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
// results are never stored: the TMA-store epilogue writes through a view of D whose stores are
// clipped at a row bound given with each box (common/ragged_rows.hpp), the registers epilogue
// stops at the group's end itself. Clusters: 1 x 2 (two CTAs side by side along N, the same row
// tile and group, A multicast) or 2 x 1 (two row tiles of one group, one above the other, the
// same column tile, B multicast): the schedule pairs a group's tiles so that a cluster never
// spans two groups (grouped_cluster_tile; a group with an odd count leaves a phantom CTA).
#pragma once

#include <cstdint>

#include "common/engine/block_scaled.cuh"
#include "common/engine/grouped_schedule.hpp"

namespace fp8gemm::engine {

/// The persistent grouped scheduler: cluster c of the grid takes units c, c + clusters, ... of the
/// grouped schedule (grouped_cluster_tile; without a cluster a unit is one tile and a cluster one
/// CTA). Every thread that needs tiles builds its own; all threads of both CTAs of a cluster see
/// the same sequence of units. The CTA's place in its cluster: rank_m = rank % kClusterM,
/// rank_n = rank / kClusterM, as the producer's multicast loads take it (kernel.cuh).
template <int kBlockM, int kClusterM = 1, int kClusterN = 1>
struct GroupedTileScheduler {
  static constexpr int kClusterSize = kClusterM * kClusterN;
  GroupedLayout layout;
  int n_tiles;
  std::int64_t next_unit;
  int stride;
  int rank_m, rank_n;
  GroupedCursor cursor;

  __device__ __forceinline__ GroupedTileScheduler(const GroupedLayout& l, int tiles_n,
                                                  std::uint32_t rank)
      : layout(l),
        n_tiles(tiles_n),
        next_unit(blockIdx.x / kClusterSize),
        stride(int(gridDim.x) / kClusterSize),
        rank_m(kClusterM > 1 ? int(rank) % kClusterM : 0),
        rank_n(kClusterN > 1 ? int(rank) / kClusterM : 0) {}

  __device__ __forceinline__ bool next(GroupedTile& t) {
    if (!grouped_cluster_tile(layout, kBlockM, n_tiles, kClusterM, kClusterN, rank_m, rank_n,
                              next_unit, cursor, t))
      return false;
    next_unit += stride;
    return true;
  }
};

/// The block-scaled math of chapter 7 with the grouped schedule and geometry, and chapter 7's
/// default promoted loop (default_block_scaled_loop); kLoop other than that only for chapter 8's
/// same-run loop comparison (kernels_grouped.cu). Until session 12 the grouped kernels ran the
/// first loop (kPromotedLoop 0): the unrolled one spilled in them (ptxas: 248-592 bytes inside the
/// K loop) while every consumer thread walked the groups itself; with the tiles handed over
/// through the ring (kTilesThroughRing below) it does not.
template <class Cfg, int kLoop = default_block_scaled_loop<Cfg>()>
struct GroupedBlockScaledMath : BlockScaledMath<Cfg, kLoop> {
  /// The consumers take their tiles from the producer through the ring (kernel.cuh,
  /// TilesThroughRing): the producer warp, the only warp that walks the groups, writes (by its
  /// elected lane) each tile into 16 bytes after the A scales of the tile's first stage before it
  /// arms that stage's full barrier, and after its last tile an end mark into the next stage,
  /// armed by a plain arrive.
  /// Why: with every consumer thread walking the groups itself (the cursor, its loop over the
  /// offsets), chapter 7's 8x-unrolled loop spilled inside the K loop of the grouped 256 x 128
  /// kernels (ptxas: 464-592 bytes); the dense scheduler's state, which ptxas re-reads from the
  /// parameter block, does not cost that.
  static constexpr bool kTilesThroughRing = true;
  /// Its lean loop issues each tile's first partial sum before the previous tile's epilogue, as
  /// chapter 7's does (kernel.cuh, EarlyWaveConsumers; session 23): the consumers read the next
  /// tile from the ring first. Policies derived from this one (stream-K, the staged loop) bring
  /// their own loops and keep the default order.
  using EarlyWavePolicy = GroupedBlockScaledMath;
  /// A consumer warpgroup whose rows of a tile all lie past the tile's group (a group's last tile:
  /// 64 rows of 128 x 256, 128 of 256 x 128) computes and stores nothing for it (kernel.cuh,
  /// SkipsIdleRows; session 32). Its stages are still waited for and released.
  static constexpr bool kSkipsIdleRows = true;
  static constexpr std::uint32_t kTileInfoOffset = BlockScaledMath<Cfg>::kSkewedSfaBytes;
  static_assert(kTileInfoOffset % 16 == 0, "the tile's 16 bytes are one 16-byte store");
  __device__ __forceinline__ static void post_tile(std::uint32_t addr, const GroupedTile& t) {
    ptx::st_shared_v4_s32(addr, t.group, t.m0, t.row_end, t.n_block);
  }
  __device__ __forceinline__ static void post_end(std::uint32_t addr) {
    ptx::st_shared_v4_s32(addr, -1, -1, -1, -1);
  }
  /// The tile at `addr` into t; false at the end mark. Lane 0 of the warp alone reads the record
  /// and hands it to its lanes (ptx::ld_shared_v4_s32_lane0), so the thread that reads a stage's
  /// record is the one whose arrive later releases the stage (release(): lane 0's arrive on
  /// empty[s]), and the producer's next write into that stage (a later record, or the end mark)
  /// is ordered after the read by that thread's own arrive. Until session 13 every lane read the
  /// record and a __syncwarp before the main loop ordered the reads before lane 0's arrive:
  /// valid, but compute-sanitizer's racecheck did not follow that chain and reported the reads
  /// against post_tile and post_end (session 13, call 1: 4 hazards on the many-tiles case ring_g3
  /// with that version, 0 with this one; chapter 8's NOTEBOOK.md).
  __device__ __forceinline__ static bool take_tile(std::uint32_t addr, GroupedTile& t) {
    const int4 v = ptx::ld_shared_v4_s32_lane0(addr);
    t.group = v.x;
    t.m0 = v.y;
    t.row_end = v.z;
    t.n_block = v.w;
    return t.group >= 0;
  }
  using Params = GroupedParams;
  using Scheduler = GroupedTileScheduler<Cfg::kBlockM, Cfg::kClusterM, Cfg::kClusterN>;
  using TileT = GroupedTile;

  /// A tile's rows may end inside it (a group's last tile). The TMA-store epilogue writes through
  /// D's ragged-rows view (common/ragged_rows.hpp; the plan makes p.map_d so), each box clipped at
  /// the group's end t.row_end; the registers epilogue stops there itself (row_end below).
  static constexpr bool kStoresBf16Tile = true;
  __device__ __forceinline__ static void store_tile_bf16(
      const float (&acc)[Cfg::kWavesM][Cfg::kBlockN / 2], const Params& p, const GroupedTile& t,
      std::uint32_t staging, int slot, std::uint32_t barrier_id) {
    store_tile_tma<Cfg, StoreMap::ragged_rows>(acc, IdentityOutputScale{}, &p.map_d, staging,
                                               t.m0 + slot * Cfg::kRowsPerWG,
                                               t.n_block * Cfg::kBlockN, barrier_id, t.row_end);
  }

  /// A float D by TMA (EpilogueKind::tma_store_f32; session 64): the same ragged-rows view of D
  /// (float), a store or with `accumulate` a reduce-add, each box clipped at t.row_end.
  static constexpr bool kStoresF32Tile = true;
  __device__ __forceinline__ static void store_tile_f32(
      const float (&acc)[Cfg::kWavesM][Cfg::kBlockN / 2], const Params& p, const GroupedTile& t,
      std::uint32_t staging, int slot, std::uint32_t barrier_id) {
    store_tile_tma_f32<Cfg, StoreMap::ragged_rows>(acc, IdentityOutputScale{}, &p.map_d, staging,
                                                   t.m0 + slot * Cfg::kRowsPerWG,
                                                   t.n_block * Cfg::kBlockN, t.row_end,
                                                   p.accumulate != 0, barrier_id);
  }

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
  static_assert(kTileInfoOffset + 16 <= kExtraStageBytes, "the tile fits after the A scales");
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

/// The grouped schedule handed out by a device counter (GroupedDynamicMath): each next() takes
/// the next unclaimed tile number, so a CTA whose tiles were cheap (a group's last row tile, whose
/// second warpgroup has no rows: SkipsIdleRows) takes more of them, where the fixed stride
/// (c, c + grid, ...) gives every CTA the same count whatever they cost. The numbers a CTA takes
/// increase, as the cursor needs. Only the producer warp calls it, all 32 lanes converged (the
/// consumers take their tiles through the ring): lane 0 draws and the warp shares its draw
/// (warp_uniform), since every lane must walk the same tiles (the loads are issued by an elected
/// lane; session 38's first run let each lane draw its own number, and the grid skipped tiles).
/// One atomic per tile, in the producer's loop, several stages ahead of the consumers. The
/// counter resets itself: a CTA that draws a number past the last tile counts itself out in [1];
/// the last of the grid to do so zeroes both, after every CTA's last draw.
/// No clusters (both CTAs of one would need the same unit).
template <int kBlockM>
struct GroupedDynamicScheduler {
  GroupedLayout layout;
  int n_tiles;
  int* counter;
  GroupedCursor cursor;

  __device__ __forceinline__ GroupedDynamicScheduler(const GroupedLayout& l, int tiles_n,
                                                     int* c)
      : layout(l), n_tiles(tiles_n), counter(c) {}

  __device__ __forceinline__ bool next(GroupedTile& t) {
    const bool lane0 = threadIdx.x % 32 == 0;
    int unit = 0;
    if (lane0) unit = atomicAdd(counter, 1);
    unit = warp_uniform(unit);
    // A counter not zeroed before the run (a caller's bug, caught only in checking mode) may
    // hand out negative units, which grouped_tile would map to rows before the group's first
    // (an illegal-instruction fault in session 55's control, or stores before D): such a CTA
    // stops drawing, and the others still cover every tile.
    if (unit >= 0 && grouped_tile(layout, kBlockM, n_tiles, unit, cursor, t)) return true;
    // This CTA's last draw, ordered before its count-out (atomicAdd is relaxed: without the
    // fences the reset below could, in the memory model, land before another CTA's last draw).
    if (lane0) {
      __threadfence();
      if (atomicAdd(counter + 1, 1) == int(gridDim.x) - 1) {  // every CTA has drawn its last
        __threadfence();
        counter[0] = 0;
        counter[1] = 0;
      }
    }
    __syncwarp();
    return false;
  }
};

/// GroupedBlockScaledMath with its tiles from a device counter (GroupedDynamicScheduler; names
/// ending in _dyn, session 32): the same kernel otherwise, early first wave included.
template <class Cfg>
struct GroupedDynamicMath : GroupedBlockScaledMath<Cfg> {
  static_assert(Cfg::kClusterSize == 1, "the dynamic schedule: no clusters");
  static constexpr bool kDynamicSchedule = true;
  using EarlyWavePolicy = GroupedDynamicMath;
  using Scheduler = GroupedDynamicScheduler<Cfg::kBlockM>;
  __device__ __forceinline__ static Scheduler make_scheduler(const GroupedParams& p,
                                                             std::uint32_t) {
    return Scheduler(p.layout, p.n_tiles, p.tile_counter);
  }
};

/// The same kernel with the early first wave left out (the order before session 23; kernel
/// names end in "_noew"): a policy derived from GroupedBlockScaledMath does not opt in
/// (EarlyWaveConsumers), so its consumers store each tile before reading the next. Chapter 8's
/// masked calls with K <= 2048 take it (default_kernel): there the early wave measured 1.9-3.5%
/// more time in three runs, against 1.1% less at K = 7168 and 0.5-1.2% less on every contiguous
/// case (chapter 8's NOTEBOOK.md, "Session 23"). It keeps the default loop's other parts:
/// unrolled 8x, addresses pinned since session 24 (kPinnedLoop).
template <class Cfg>
struct GroupedNoEarlyWaveMath : GroupedBlockScaledMath<Cfg> {
  static constexpr bool kWithoutEarlyWave = true;
};

}  // namespace fp8gemm::engine
