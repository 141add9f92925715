// Split-K for the block-scaled engine (chapter 7, small M), host and device code: the work
// units, their K ranges, and the kernel's parameter block. The device policy is split_k.cuh.
//
// With M = 64 or 128 and N = 2112 or 4096 there are fewer output tiles than SMs (64 x 2112 in
// 64 x 32 tiles: 66 tiles for 132 SMs). Split-K cuts the k_blocks = ceil(K / 128) K blocks of
// every output tile into S contiguous ranges; each (tile, split) pair is one work unit of the
// persistent grid, which writes its FP32 partial tile (the block scales already applied: the
// promotion happens per 128 K inside the main loop, so partial sums of different K ranges simply
// add) to a workspace [S][M][N]; a second kernel sums the S partials in the order s = 0 .. S - 1
// (deterministic: no atomics) and writes D.
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

/// The split-K kernel's parameters: chapter 7's block-scaled ones plus the unit space. Of the
/// base, D_f32 is the workspace [S][M][N] (ldd = N, accumulate = 0): split s's partial tile of
/// rows m goes to rows s M + m.
struct SplitKParams : BlockScaledParams {
  SplitKSchedule split;
};

}  // namespace fp8gemm::engine
