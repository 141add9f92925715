// Split-K for the block-scaled engine (chapter 7, small M), host and device code: the work
// units, their K ranges, and the kernel's parameter block. The device policy is split_k.cuh.
//
// With M = 64 or 128 and N = 2112 or 4096 there are fewer output tiles than SMs (64 x 2112 in
// 64 x 32 tiles: 66 tiles for 132 SMs). Split-K cuts the k_blocks = ceil(K / 128) K blocks of
// every output tile into S contiguous ranges; each (tile, split) pair is one work unit of the
// persistent grid, which writes its FP32 partial tile (the block scales already applied: the
// promotion happens per 128 K inside the main loop, so partial sums of different K ranges simply
// add) to a workspace [S][M][N], then counts itself on the tile's counter. The unit that counts
// last (whichever split it is) sums the S partials in the order s = 0 .. S - 1 and writes D:
// the same bits whatever order the units finish in, no second kernel, and no unit ever waits
// for another (so no deadlock whatever runs beside the grid; a unit that spun on a flag for its
// predecessor could wait forever for a CTA that is not resident).
//
// Split s of a tile covers K blocks [s k_blocks / S, (s + 1) k_blocks / S) (integer division):
// every range holds floor or ceil(k_blocks / S) blocks, none is empty while S <= k_blocks, and
// the ranges tile 0 .. k_blocks - 1 exactly. Unit u is
//   m_block = u % tiles_m,  split = (u / tiles_m) % S,  n_block = u / (tiles_m S):
// the row tile fastest, so the units in flight at one time that share a B panel (M = 128 in
// 64-row tiles) run side by side and read it from L2 once; then the splits of one column tile.
// A persistent CTA takes units c, c + grid, ... (the dense scheduler's round-robin).
#pragma once

#include <cstdint>

#include "common/engine/params.hpp"
#include "common/fp8.hpp"  // FP8GEMM_HD

namespace fp8gemm::engine {

/// The unit space (host-computed; the plan keeps num_units and splits x M below 2^30).
struct SplitKSchedule {
  int tiles_m = 0;    ///< ceil(M / BlockM)
  int tiles_n = 0;    ///< ceil(N / BlockN)
  int splits = 1;     ///< S, 1 <= S <= k_blocks
  int k_blocks = 0;   ///< ceil(K / 128)
  int num_units = 0;  ///< tiles_m x tiles_n x S
};

/// One work unit: output tile (m_block, n_block), split `split`, K blocks kb_begin .. kb_end - 1.
struct SplitKTile {
  int m_block = 0;
  int n_block = 0;
  int split = 0;
  int kb_begin = 0;
  int kb_end = 0;
};

/// First K block of split s (the end of split s is split_k_first(s + 1)). In 64-bit arithmetic:
/// s x k_blocks may pass 2^31.
FP8GEMM_HD inline int split_k_first(int split, int splits, int k_blocks) {
  return int((std::int64_t(split) * k_blocks) / splits);
}

/// Unit `unit` (0 <= unit < num_units) of the schedule.
FP8GEMM_HD inline void split_k_unit(const SplitKSchedule& s, int unit, SplitKTile& t) {
  t.m_block = unit % s.tiles_m;
  const int rest = unit / s.tiles_m;
  t.split = rest % s.splits;
  t.n_block = rest / s.splits;
  t.kb_begin = split_k_first(t.split, s.splits, s.k_blocks);
  t.kb_end = split_k_first(t.split + 1, s.splits, s.k_blocks);
}

/// The split-K kernel's parameters: chapter 7's block-scaled ones plus the unit space, the
/// counters and the caller's D. Of the base, D_f32 is the workspace [S][M][N] (ldd = N,
/// accumulate = 0, d_pairs_ok for it): split s's partial tile of rows m goes to rows s M + m.
struct SplitKParams : BlockScaledParams {
  SplitKSchedule split;
  /// tiles_m x tiles_n x (consumer warpgroups) counters, zero between launches: each warpgroup
  /// of a unit adds 1 to its tile's after storing its partial rows; the one that reads S - 1
  /// sums and writes D, then sets it back to 0.
  std::uint32_t* counters = nullptr;
  std::uint16_t* out = nullptr;  ///< the caller's bf16 D (out_f32 == nullptr) ...
  float* out_f32 = nullptr;      ///< ... or FP32 D (D = sum + D with out_accumulate)
  std::int64_t out_ld = 0;       ///< elements per row of D
  int out_pairs_ok = 0;          ///< D and out_ld allow bf16x2 / float2 stores
  int out_accumulate = 0;
};

}  // namespace fp8gemm::engine
