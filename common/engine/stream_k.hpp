// Stream-K over the last round of a persistent grid, host and device code: which K blocks of
// which tiles each CTA computes, and which CTAs hand partial tiles to which (chapter 8's masked
// calls; the policy is stream_k.cuh).
//
// A persistent grid of P CTAs over T output tiles of k_blocks K blocks each runs R = T / P full
// rounds and a last round of r = T % P tiles, in which P - r CTAs idle: at T = 224 tiles on 132
// SMs (chapter 8's masked N = 7168 calls) the second round keeps 92 of 132 SMs busy. Stream-K
// (Osama et al., "Stream-K: Work-centric Parallel Decomposition for Dense Matrix-Matrix
// Multiplication on the GPU", PPoPP 2023; CUTLASS's "data-parallel + stream-K" hybrid) spreads the
// last round's U = r x k_blocks "units" (one K block of one tile each) evenly over all P CTAs:
//   tiles 0 .. R P - 1     data-parallel: CTA c takes tiles c, c + P, ... with all their K blocks;
//   units 0 .. U - 1       unit u is K block u % k_blocks of tile R P + u / k_blocks; CTA c takes
//                          the contiguous units [c U / P, (c + 1) U / P) (integer division).
// A CTA's units cut into "segments", one per tile they touch, in order:
//   - a first segment that starts inside a tile (kb_begin > 0): a *writer*. It writes its FP32
//     partial tile to the CTA's own slot of a workspace and raises the CTA's flag; it stores
//     nothing to D. Only a CTA's first segment can start inside a tile, so a CTA writes at most one
//     partial per launch, and the workspace has one slot per CTA.
//   - whole tiles (kb_begin = 0, kb_end = k_blocks): stored as usual.
//   - a last segment that starts at a tile's first K block and stops before its end: the tile's
//     *owner*. After its own K blocks it waits for the flags of the CTAs that hold the rest of the
//     tile (cta + 1 .. partner_end - 1, each a writer whose first segment it is), adds their
//     partials in that order, and stores the tile.
// Deterministic: each tile's sum is its owner's K blocks, then the writers' partials in CTA order,
// the same in every launch with the same T and P (a different SM count or group sizes cut other
// segments, so other rounding). No deadlock while all P CTAs are resident (a persistent grid of at
// most one CTA per SM; a writer never waits, and an owner's segment is the last of its CTA, so the
// writers it waits for have nothing before their writing segment but data-parallel tiles).
//
// When stream-K is used (stream_k_split): the last round holds between half and 7/8 of the grid's
// tiles (P / 2 <= r <= 7 P / 8) and gives every CTA at least one unit (U >= P); otherwise every
// tile is data-parallel, as without stream-K. The lower bound keeps each CTA's share at half a
// tile or more, so a tile has at most two writers: an owner adds its partners' partials one
// after the other, and with a last round of 4 tiles over 132 CTAs (chapter 8's balanced
// 4 x 8192-row call, session 18's first rule) each owner added 32 of them, which took longer than
// the round it saved.
#pragma once

#include <cstdint>

#include "common/fp8.hpp"  // FP8GEMM_HD

namespace fp8gemm::engine {

/// The division of T tiles among P CTAs. int throughout (the producer thread that walks it has
/// 40 registers): the plan keeps T and U below 2^31 (chapter 8's grouped_gemm.cpp).
struct StreamKSplit {
  int dp_tiles = 0;  ///< tiles 0 .. dp_tiles - 1 are data-parallel (R P, or all T)
  int units = 0;     ///< U: the stream-K units (0: no stream-K)
  int k_blocks = 0;
  int ctas = 0;      ///< P
};

/// The split of `tiles` tiles of `k_blocks` K blocks over `ctas` CTAs (all >= 0; ctas >= 1).
FP8GEMM_HD inline StreamKSplit stream_k_split(int tiles, int ctas, int k_blocks) {
  StreamKSplit s;
  s.k_blocks = k_blocks;
  s.ctas = ctas;
  s.dp_tiles = tiles;
  const int last = tiles % ctas;  // r: the last round's tiles
  if (std::int64_t(last) * 2 >= ctas && std::int64_t(last) * 8 <= std::int64_t(ctas) * 7 &&
      std::int64_t(last) * k_blocks >= ctas) {
    s.dp_tiles = tiles - last;
    s.units = last * k_blocks;
  }
  return s;
}

/// The first stream-K unit of CTA c (c = ctas: the end of the last CTA's).
FP8GEMM_HD inline int stream_k_first_unit(const StreamKSplit& s, int c) {
  return int(std::int64_t(s.units) * c / s.ctas);
}

/// One segment of a CTA's stream-K units: K blocks kb_begin .. kb_end - 1 of tile `tile`.
struct StreamKSegment {
  int tile = 0;
  int kb_begin = 0;
  int kb_end = 0;
  /// An owner (kb_begin = 0, kb_end < k_blocks): the CTAs cta + 1 .. partner_end - 1 hold the rest
  /// of the tile, each as its writing first segment. Otherwise cta + 1 (no partner).
  int partner_end = 0;
};

/// The segment of CTA `cta` that starts at unit `unit` (within the CTA's units, before `end` =
/// stream_k_first_unit(s, cta + 1)).
FP8GEMM_HD inline StreamKSegment stream_k_segment(const StreamKSplit& s, int cta, int unit,
                                                  int end) {
  StreamKSegment g;
  g.tile = s.dp_tiles + unit / s.k_blocks;
  g.kb_begin = unit % s.k_blocks;
  const int left = end - unit;
  g.kb_end = left < s.k_blocks - g.kb_begin ? g.kb_begin + left : s.k_blocks;
  g.partner_end = cta + 1;
  if (g.kb_begin == 0 && g.kb_end < s.k_blocks) {
    // The CTAs whose units start before the tile's end.
    const int tile_end = (unit / s.k_blocks + 1) * s.k_blocks;
    while (g.partner_end < s.ctas && stream_k_first_unit(s, g.partner_end) < tile_end)
      ++g.partner_end;
  }
  return g;
}

}  // namespace fp8gemm::engine
