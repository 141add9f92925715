// Split-K on the engine: chapter 7's block-scaled math policy with its K blocks divided among S
// work units per output tile (the schedule, the unit's K range and the parameter block are in
// split_k.hpp). Each unit runs BlockScaledMath's lean / two-deep promoted loop over its own K
// range (mainloop_range), and the registers_f32 epilogue writes the unit's FP32 partial tile to
// rows split x M + m of the workspace [S][M][N] (tile_d_row through d_row; row_end stops the
// rows at (split + 1) x M, the epilogue's N bound at N). A second kernel (chapter 7,
// kernels_splitk.cu) sums the S partials in a fixed order into D.
//
// The producer's loop takes the unit's K range from k_first / k_end, its A scales from
// produce_extra; the B scales and the promotion are BlockScaledMath's. No clusters: every unit
// is one CTA's (the units of one tile read disjoint K ranges of A and B, so there is nothing to
// multicast between them).
#pragma once

#include <cstdint>

#include "common/engine/block_scaled.cuh"
#include "common/engine/config.cuh"
#include "common/engine/kernel.cuh"
#include "common/engine/params.hpp"
#include "common/engine/split_k.hpp"

namespace fp8gemm::engine {

/// The persistent split-K scheduler: CTA c takes units c, c + grid, ... of the schedule
/// (split_k_unit), behind the interface of DenseTileScheduler.
struct SplitKTileScheduler {
  SplitKSchedule s;
  int unit;
  int stride;

  __device__ __forceinline__ explicit SplitKTileScheduler(const SplitKSchedule& sched)
      : s(sched), unit(int(blockIdx.x)), stride(int(gridDim.x)) {}

  __device__ __forceinline__ bool next(SplitKTile& t) {
    if (unit >= s.num_units) return false;
    split_k_unit(s, unit, t);
    unit += stride;  // num_units + grid <= 2^30 + 2^31: no wrap (the plan keeps num_units <= 2^30)
    return true;
  }
};

template <class Cfg, int kPromotedLoop = default_block_scaled_loop<Cfg>()>
struct SplitKBlockScaledMath : BlockScaledMath<Cfg, kPromotedLoop> {
  static_assert(Cfg::kEpilogue == EpilogueKind::registers_f32,
                "split-K writes FP32 partial tiles to its workspace");
  static_assert(Cfg::kClusterSize == 1, "split-K kernels: no clusters");
  static_assert(kPromotedLoop != 0, "split-K runs the lean or two-deep loop (mainloop_range)");
  using Base = BlockScaledMath<Cfg, kPromotedLoop>;
  using State = typename Base::State;
  using Params = SplitKParams;
  using Scheduler = SplitKTileScheduler;
  using TileT = SplitKTile;

  __device__ __forceinline__ static Scheduler make_scheduler(const Params& p, std::uint32_t) {
    return Scheduler(p.split);
  }
  __device__ __forceinline__ static int a_row(const SplitKTile& t) {
    return t.m_block * Cfg::kBlockM;
  }
  __device__ __forceinline__ static int b_row(const GemmParams&, const SplitKTile& t) {
    return t.n_block * Cfg::kBlockN;
  }
  __device__ __forceinline__ static int d_col(const SplitKTile& t) {
    return t.n_block * Cfg::kBlockN;
  }
  /// The unit's partial tile in the workspace: rows split x M + m_block x BlockM ..
  __device__ __forceinline__ static int d_row(const GemmParams& p, const SplitKTile& t) {
    return t.split * p.M + t.m_block * Cfg::kBlockM;
  }
  /// ... which end at the split's last row of A, (split + 1) x M.
  __device__ __forceinline__ static int row_end(const GemmParams& p, const SplitKTile& t) {
    return (t.split + 1) * p.M;
  }
  __device__ __forceinline__ static int k_first(const GemmParams&, const SplitKTile& t) {
    return t.kb_begin;
  }
  __device__ __forceinline__ static int k_end(const GemmParams&, const SplitKTile& t) {
    return t.kb_end;
  }

  /// The stage's A scales (BlockScaledMath::produce_extra for a SplitKTile).
  __device__ __forceinline__ static void produce_extra(const Params& p, std::uint32_t extra,
                                                       std::uint32_t bar, const SplitKTile& t,
                                                       int kb) {
    ptx::tma_load_2d(extra, &p.map_sfa, bar, t.m_block * Cfg::kBlockM, kb);
  }

  /// The unit's K blocks through BlockScaledMath's promoted loop.
  __device__ __forceinline__ static void mainloop(float (&acc)[Cfg::kWavesM][Cfg::kBlockN / 2],
                                                  State& st, const Params& p, const SplitKTile& t,
                                                  std::uint32_t ring, std::uint32_t side,
                                                  const std::uint64_t* full,
                                                  const std::uint64_t* empty, int wg_index,
                                                  std::uint32_t rank) {
    Base::mainloop_range(acc, st, p, t, t.kb_begin, t.kb_end, ring, side, full, empty, wg_index,
                         rank);
  }
};

}  // namespace fp8gemm::engine
