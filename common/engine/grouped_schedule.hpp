// The grouped tile schedule of chapter 8 (mixture-of-experts GEMMs), host and device code: which
// output tiles exist when the rows of A and D belong to G groups (experts) whose sizes are device
// data, and how a persistent CTA walks them without the host ever reading those sizes (so a call
// can be captured in a CUDA graph and replayed with other group sizes).
//
// Two layouts of the rows:
//   contiguous  A [total_rows, K], D [total_rows, N]; group g owns rows [offsets[g], offsets[g+1])
//               (offsets: G + 1 int32 on the device, offsets[0] = 0, monotone, offsets[G] =
//               total_rows). Any size per group, 0 included: no padding to the tile height.
//   masked      A [G, M_max, K], D [G, M_max, N]; group g owns rows [g M_max, g M_max + m_g),
//               m_g = min(masked_m[g], M_max) (masked_m: G int32 on the device). Rows past m_g are
//               neither computed into results nor written.
// Tiles never straddle two groups: group g has ceil(rows_g / BlockM) row tiles times n_tiles
// column tiles, numbered group by group; inside a group the row tile varies fastest, so
// consecutive tiles (which run at the same time on neighbouring SMs) share the group's B tile
// B_g[n_block] and walk down its rows of A. A tile's last rows may belong to the next group (or
// to the padding of a masked group): `row_end` is where the tile's valid rows stop, and the
// epilogue must not write at or past it.
//
// A persistent CTA takes tiles c, c + grid, c + 2 grid, ... (increasing), so each CTA keeps a
// cursor that only moves forward through the groups: O(G) reads of the offsets per CTA over the
// whole kernel, all of them L2 hits after the first CTA. The total number of tiles is never
// needed: a CTA stops when its cursor runs past the last group.
#pragma once

#include <cstdint>

#include "common/fp8.hpp"  // FP8GEMM_HD

namespace fp8gemm::engine {

enum class GroupedKind : int { contiguous = 0, masked = 1 };

/// Where the groups' rows are (device pointers; host code may pass host arrays to the same
/// functions, as the CPU tests do).
struct GroupedLayout {
  GroupedKind kind = GroupedKind::contiguous;
  int groups = 0;                  ///< G
  const int* offsets = nullptr;    ///< contiguous: G + 1 row offsets
  const int* masked_m = nullptr;   ///< masked: G row counts
  int m_max = 0;                   ///< masked: rows reserved per group
  int rows = 0;                    ///< contiguous: the rows of A and D (offsets are clamped to it)
};

/// The rows [begin, end) of group g.
FP8GEMM_HD inline void group_rows(const GroupedLayout& L, int g, int& begin, int& end) {
  if (L.kind == GroupedKind::contiguous) {
    // Offsets outside [0, rows] are clamped into it and a decreasing one makes an empty group,
    // so bad offsets never make a tile outside A and D (wrong results for the rows they skip;
    // the checking mode reports them).
    const int b = L.offsets[g], e = L.offsets[g + 1];
    begin = b < 0 ? 0 : b > L.rows ? L.rows : b;
    end = e < begin ? begin : e > L.rows ? L.rows : e;
  } else {
    begin = g * L.m_max;
    const int m = L.masked_m[g];
    end = begin + (m < 0 ? 0 : m > L.m_max ? L.m_max : m);
  }
}

/// One tile of the grouped schedule.
struct GroupedTile {
  int group = 0;    ///< g: which B_g the tile multiplies by
  int m0 = 0;       ///< first row of the tile (a row of A and D)
  int row_end = 0;  ///< the group's end: rows m0 .. min(m0 + BlockM, row_end) - 1 are valid
  int n_block = 0;  ///< columns n_block * BlockN ..
};

/// A CTA's position in the group sequence.
struct GroupedCursor {
  int group = 0;                ///< the group the next tile is in (or past the last)
  std::int64_t first_tile = 0;  ///< the number of tiles in groups before `group`
  int begin = 0, end = 0;       ///< the group's rows, once loaded
  std::int64_t tiles = -1;      ///< the group's tiles; -1: not loaded yet
};

/// Tile number `t` of the schedule (t must not decrease between calls with the same cursor), or
/// false when t is past the last tile.
FP8GEMM_HD inline bool grouped_tile(const GroupedLayout& L, int block_m, int n_tiles,
                                    std::int64_t t, GroupedCursor& c, GroupedTile& out) {
  while (c.group < L.groups) {
    if (c.tiles < 0) {
      group_rows(L, c.group, c.begin, c.end);
      c.tiles = std::int64_t((c.end - c.begin + block_m - 1) / block_m) * n_tiles;
    }
    if (t < c.first_tile + c.tiles) {
      const std::int64_t in_group = t - c.first_tile;
      const std::int64_t m_tiles = c.tiles / n_tiles;
      out.group = c.group;
      out.m0 = c.begin + int(in_group % m_tiles) * block_m;
      out.row_end = c.end;
      out.n_block = int(in_group / m_tiles);
      return true;
    }
    c.first_tile += c.tiles;
    ++c.group;
    c.tiles = -1;
  }
  return false;
}

/// Unit `unit` of the grouped schedule for clusters of cluster_m x cluster_n CTAs (at most 2 in
/// all, config.cuh). A unit is `cluster_m` neighbouring row tiles of one group times `cluster_n`
/// neighbouring column tiles, so the cluster's CTAs never span two groups:
///   1 x 2 (A multicast): one row tile, two column tiles; the CTA of rank `rank_n` takes column
///     tile unit_n x 2 + rank_n. When n_tiles is odd, the last unit of each row tile has a CTA
///     past the last column tile (n_block >= n_tiles).
///   2 x 1 (B multicast): one column tile, two row tiles of the group, rows m0 and m0 + block_m;
///     the CTA with rank_m = 1 takes the second. When the group's row tiles are odd, its last
///     unit has a CTA whose tile starts at or past the group's end (m0 >= row_end).
/// Such a phantom CTA loads and multiplies with its partner (the multicast needs both halves of
/// the shared operand) and stores nothing (D's columns end at N; the epilogue writes no row at or
/// past row_end). cluster_m = cluster_n = 1 is grouped_tile itself.
FP8GEMM_HD inline bool grouped_cluster_tile(const GroupedLayout& L, int block_m, int n_tiles,
                                            int cluster_m, int cluster_n, int rank_m, int rank_n,
                                            std::int64_t unit, GroupedCursor& c, GroupedTile& out) {
  if (!grouped_tile(L, block_m * cluster_m, (n_tiles + cluster_n - 1) / cluster_n, unit, c, out))
    return false;
  out.m0 += rank_m * block_m;
  out.n_block = out.n_block * cluster_n + rank_n;
  return true;
}

// ---------------------------------------------------------------------------------------------
// The k-grouped schedule of chapter 8's weight gradient: for every group g, dB_g [N, K] (FP32) =
// dD_g^T . A_g, the reduction running over the group's tokens. The operands are the transposed,
// token-padded FP8 tensors that quantize_tokens_transposed_1x128 writes: group g's count_g =
// offsets[g+1] - offsets[g] tokens sit at columns P_g .. P_g + count_g - 1, P_g = sum over j < g
// of round_up(count_j, 128), zeros up to P_{g+1}; so a 128-token block never mixes groups and
// group g reduces over K blocks P_g / 128 .. P_g / 128 + ceil(count_g / 128) - 1.
// Every group has the same output tiles (tiles_m x tiles_n of its N x K matrix), numbered group
// by group, the m tile fastest. An empty group's tiles have no K block: they write zeros, or,
// when D is accumulated into (skip_empty), are skipped so that dB_g is left untouched.

/// One tile of the k-grouped schedule.
struct KGroupedTile {
  int group = 0;     ///< g: which output matrix dB_g
  int m_block = 0;   ///< rows m_block * BlockM .. of dB_g (rows of the first operand, dD^T)
  int n_block = 0;   ///< columns n_block * BlockN .. of dB_g (rows of the second operand, A^T)
  int kb_first = 0;  ///< the group's first 128-token block (P_g / 128)
  int kb_count = 0;  ///< ceil(count_g / 128); 0 for an empty group
};

/// A CTA's position in the group sequence of the k-grouped schedule.
struct KGroupedCursor {
  int group = -1;       ///< the group whose count is loaded (-1: none yet)
  int padded_begin = 0; ///< P_group, in tokens
  int count = 0;        ///< count_group
};

/// Tile number `t` (not decreasing between calls with the same cursor) of the k-grouped schedule
/// over G groups of tiles_m x tiles_n tiles, or false when t is past the last tile. `capacity`:
/// the token columns of the operands, a bound for every count and P_g, so that bad offsets (a
/// decreasing one makes an empty group) can neither overflow the int arithmetic nor make a tile
/// write outside its group's dB_g; blocks past the capacity read as zeros (TMA).
FP8GEMM_HD inline bool kgrouped_tile(const int* offsets, int groups, int tiles_m, int tiles_n,
                                     int capacity, std::int64_t t, KGroupedCursor& c,
                                     KGroupedTile& out) {
  const std::int64_t per_group = std::int64_t(tiles_m) * tiles_n;
  const std::int64_t g = t / per_group;
  if (g >= groups) return false;
  while (c.group < g) {
    if (c.group >= 0) {
      const int next = c.padded_begin + (c.count + 127) / 128 * 128;
      c.padded_begin = next < capacity ? next : capacity;
    }
    ++c.group;
    const int n = offsets[c.group + 1] - offsets[c.group];
    c.count = n < 0 ? 0 : n > capacity ? capacity : n;
  }
  const std::int64_t in_group = t - g * per_group;
  out.group = int(g);
  out.m_block = int(in_group % tiles_m);
  out.n_block = int(in_group / tiles_m);
  out.kb_first = c.padded_begin / 128;
  out.kb_count = (c.count + 127) / 128;
  return true;
}

}  // namespace fp8gemm::engine
