// CPU tests of the grouped tile schedule (common/engine/grouped_schedule.hpp, chapter 8): every
// (group, row tile, column tile) is visited exactly once over all persistent CTAs, tiles cover
// exactly each group's rows and never start in another group, empty groups have no tiles, and
// the cursor only moves forward; for contiguous offsets and masked row counts, with the group
// sizes MoE routing produces (0, 1, 127, 128, 129, everything in one group, G = 1 and G = 256).
#include <algorithm>
#include <cstdint>
#include <map>
#include <random>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "catch.hpp"
#include "common/engine/grouped_schedule.hpp"

using fp8gemm::engine::grouped_tile;
using fp8gemm::engine::GroupedCursor;
using fp8gemm::engine::GroupedKind;
using fp8gemm::engine::GroupedLayout;
using fp8gemm::engine::GroupedTile;

namespace {

/// Runs the schedule as `grid` persistent CTAs would (CTA c takes tiles c, c + grid, ...) and
/// checks it against the group rows `begin[g] .. end[g]`. Returns the number of tiles.
std::int64_t check_schedule(const GroupedLayout& L, const std::vector<int>& begin,
                            const std::vector<int>& end, int block_m, int n_tiles, int grid) {
  std::set<std::tuple<int, int, int>> seen;  // (group, m0, n_block)
  std::int64_t count = 0;
  for (int cta = 0; cta < grid; ++cta) {
    GroupedCursor c;
    GroupedTile t;
    int last_group = -1;
    for (std::int64_t i = cta; grouped_tile(L, block_m, n_tiles, i, c, t); i += grid) {
      ++count;
      REQUIRE(t.group >= last_group);  // the cursor only moves forward
      last_group = t.group;
      const int g = t.group;
      REQUIRE(g >= 0);
      REQUIRE(g < L.groups);
      REQUIRE(end[g] > begin[g]);          // no tile for an empty group
      REQUIRE(t.m0 >= begin[g]);           // starts inside its group
      REQUIRE(t.m0 < end[g]);
      REQUIRE((t.m0 - begin[g]) % block_m == 0);
      REQUIRE(t.row_end == end[g]);        // where the epilogue must stop
      REQUIRE(t.n_block >= 0);
      REQUIRE(t.n_block < n_tiles);
      REQUIRE(seen.insert({g, t.m0, t.n_block}).second);  // each tile once
    }
  }
  // Every tile of every group was visited.
  std::int64_t expected = 0;
  for (int g = 0; g < L.groups; ++g) {
    const int tiles_m = (end[g] - begin[g] + block_m - 1) / block_m;
    expected += std::int64_t(tiles_m) * n_tiles;
    for (int i = 0; i < tiles_m; ++i)
      for (int n = 0; n < n_tiles; ++n) REQUIRE(seen.count({g, begin[g] + i * block_m, n}) == 1);
  }
  REQUIRE(count == expected);
  return count;
}

std::vector<int> offsets_of(const std::vector<int>& rows) {
  std::vector<int> off(rows.size() + 1, 0);
  for (std::size_t g = 0; g < rows.size(); ++g) off[g + 1] = off[g] + rows[g];
  return off;
}

}  // namespace

TEST_CASE("grouped schedule: contiguous groups of MoE-like sizes", "[grouped][cpu]") {
  std::mt19937_64 gen(2024);
  std::vector<std::vector<int>> cases = {
      {0, 1, 127, 128, 129, 0},        // the edges around one 128-row tile
      {1000},                          // G = 1
      {0, 0, 0, 4096, 0},              // everything in one group
      {0, 0, 0},                       // no rows at all: no tiles
  };
  // G = 32 skewed (two empty experts, sizes not multiples of 128) and G = 256.
  for (int G : {32, 256}) {
    std::vector<int> rows(static_cast<std::size_t>(G));
    std::exponential_distribution<double> skew(1.0 / 200.0);
    for (auto& r : rows) r = int(skew(gen));
    rows[3] = 0;
    rows[G - 1] = 0;
    cases.push_back(rows);
  }
  for (const auto& rows : cases) {
    const std::vector<int> off = offsets_of(rows);
    GroupedLayout L;
    L.kind = GroupedKind::contiguous;
    L.groups = int(rows.size());
    L.offsets = off.data();
    L.rows = off.back();
    const std::vector<int> begin(off.begin(), off.end() - 1), end(off.begin() + 1, off.end());
    for (int block_m : {64, 128, 256})
      for (int n_tiles : {1, 3, 56})
        for (int grid : {1, 7, 132}) {
          CAPTURE(rows.size(), block_m, n_tiles, grid);
          check_schedule(L, begin, end, block_m, n_tiles, grid);
        }
  }
}

TEST_CASE("grouped schedule: masked groups, masked_m from 0 to M_max and beyond", "[grouped][cpu]") {
  const int m_max = 1024;
  const std::vector<int> masked = {0, 1, 1023, 1024, 5000 /* clamped to M_max */, -3 /* empty */,
                                   300, 129};
  GroupedLayout L;
  L.kind = GroupedKind::masked;
  L.groups = int(masked.size());
  L.masked_m = masked.data();
  L.m_max = m_max;
  std::vector<int> begin, end;
  for (int g = 0; g < L.groups; ++g) {
    begin.push_back(g * m_max);
    end.push_back(g * m_max + std::clamp(masked[std::size_t(g)], 0, m_max));
  }
  for (int block_m : {64, 128})
    for (int grid : {1, 5, 132}) check_schedule(L, begin, end, block_m, 7, grid);
}

TEST_CASE("grouped schedule: decreasing offsets give empty groups, never negative rows",
          "[grouped][cpu]") {
  // Offsets are device data the host never reads; a bad one must not make the kernel compute a
  // negative row count (the checking mode reports it as an error).
  const std::vector<int> off = {0, 300, 200, 500};
  GroupedLayout L;
  L.groups = 3;
  L.offsets = off.data();
  L.rows = 500;
  check_schedule(L, {0, 300, 200}, {300, 300, 500}, 128, 2, 3);
}

TEST_CASE("grouped schedule: offsets outside [0, rows] are clamped, never a tile outside D",
          "[grouped][cpu]") {
  const std::vector<int> off = {-50, 100, 900, 400, 2000};
  GroupedLayout L;
  L.groups = 4;
  L.offsets = off.data();
  L.rows = 600;
  check_schedule(L, {0, 100, 600, 400}, {100, 600, 600, 600}, 128, 2, 3);
}

/// Walks the units of `clusters` persistent clusters of two CTAs (cluster_m x cluster_n = 2 x 1 or
/// 1 x 2), as the kernel's GroupedTileScheduler does: cluster c takes units c, c + clusters, ...;
/// both CTAs must run out of units together. Calls unit(t0, t1) with the two CTAs' tiles.
template <class Unit>
void walk_pairs(const GroupedLayout& L, int block_m, int n_tiles, int cluster_m, int clusters,
                Unit&& unit) {
  const int cluster_n = 2 / cluster_m;
  for (int c = 0; c < clusters; ++c) {
    fp8gemm::engine::GroupedCursor c0, c1;
    GroupedTile t0, t1;
    for (std::int64_t u = c;; u += clusters) {
      const bool ok0 = fp8gemm::engine::grouped_cluster_tile(L, block_m, n_tiles, cluster_m,
                                                             cluster_n, 0, 0, u, c0, t0);
      const bool ok1 = fp8gemm::engine::grouped_cluster_tile(
          L, block_m, n_tiles, cluster_m, cluster_n, cluster_m == 2 ? 1 : 0,
          cluster_n == 2 ? 1 : 0, u, c1, t1);
      REQUIRE(ok0 == ok1);  // both CTAs run the same number of units
      if (!ok0) break;
      unit(t0, t1);
    }
  }
}

// 1 x 2 clusters (grouped_cluster_tile): the two CTAs of a cluster walk the same units, take the
// same row tile of the same group and neighbouring column tiles; every real tile is computed
// exactly once; a CTA past the last column tile (odd n_tiles) appears only beside its partner's
// last real tile.
TEST_CASE("grouped schedule: 1 x 2 clusters pair column tiles of one row tile", "[grouped][cpu]") {
  const std::vector<int> rows = {0, 1, 127, 128, 129, 0, 300, 5};
  const std::vector<int> off = offsets_of(rows);
  GroupedLayout L;
  L.groups = int(rows.size());
  L.offsets = off.data();
  L.rows = off.back();
  for (int block_m : {128, 256})
    for (int n_tiles : {1, 2, 3, 16, 57})
      for (int clusters : {1, 3, 66}) {
        CAPTURE(block_m, n_tiles, clusters);
        std::set<std::tuple<int, int, int>> seen;
        std::int64_t phantoms = 0;
        walk_pairs(L, block_m, n_tiles, 1, clusters,
                   [&](const GroupedTile& t0, const GroupedTile& t1) {
          REQUIRE(t0.group == t1.group);  // one group, one row tile: A multicast is valid
          REQUIRE(t0.m0 == t1.m0);
          REQUIRE(t0.row_end == t1.row_end);
          REQUIRE(t0.n_block % 2 == 0);
          REQUIRE(t1.n_block == t0.n_block + 1);
          REQUIRE(t0.n_block < n_tiles);  // rank 0 always has a real tile
          for (const GroupedTile& t : {t0, t1}) {
            if (t.n_block >= n_tiles) {
              REQUIRE(n_tiles % 2 == 1);
              REQUIRE(t.n_block == n_tiles);
              ++phantoms;
              continue;
            }
            REQUIRE(seen.insert({t.group, t.m0, t.n_block}).second);
          }
        });
        std::int64_t expected = 0, row_tiles = 0;
        for (int r : rows) row_tiles += (r + block_m - 1) / block_m;
        expected = row_tiles * n_tiles;
        REQUIRE(std::int64_t(seen.size()) == expected);
        REQUIRE(phantoms == (n_tiles % 2 == 1 ? row_tiles : 0));
      }
}

// 2 x 1 clusters (grouped_cluster_tile, B multicast): the two CTAs of a cluster walk the same
// units, take the same column tile of the same group and the row tiles m0 and m0 + block_m; every
// real tile is computed exactly once; a CTA whose tile starts at or past its group's end appears
// once per group with an odd number of row tiles, beside its partner's last real tile. Contiguous
// and masked layouts (a masked phantom's rows are the group's padding or the next group's).
TEST_CASE("grouped schedule: 2 x 1 clusters pair row tiles of one group", "[grouped][cpu]") {
  const std::vector<int> rows = {0, 1, 127, 128, 129, 0, 300, 5, 256, 257};
  const std::vector<int> off = offsets_of(rows);
  const int m_max = 300;
  for (GroupedKind kind : {GroupedKind::contiguous, GroupedKind::masked}) {
    GroupedLayout L;
    L.kind = kind;
    L.groups = int(rows.size());
    L.offsets = off.data();
    L.rows = off.back();
    L.masked_m = rows.data();
    L.m_max = m_max;
    for (int block_m : {64, 128})
      for (int n_tiles : {1, 2, 3, 57})
        for (int clusters : {1, 3, 66}) {
          CAPTURE(int(kind), block_m, n_tiles, clusters);
          std::set<std::tuple<int, int, int>> seen;
          std::int64_t phantoms = 0;
          walk_pairs(L, block_m, n_tiles, 2, clusters,
                     [&](const GroupedTile& t0, const GroupedTile& t1) {
            REQUIRE(t0.group == t1.group);  // one group, one column tile: B multicast is valid
            REQUIRE(t0.n_block == t1.n_block);
            REQUIRE(t0.n_block < n_tiles);
            REQUIRE(t0.row_end == t1.row_end);
            REQUIRE(t1.m0 == t0.m0 + block_m);
            REQUIRE(t0.m0 < t0.row_end);  // rank 0 always has a real tile
            const int begin = kind == GroupedKind::contiguous ? off[std::size_t(t0.group)]
                                                              : t0.group * m_max;
            REQUIRE((t0.m0 - begin) % (2 * block_m) == 0);
            REQUIRE(t0.row_end == begin + rows[std::size_t(t0.group)]);
            for (const GroupedTile& t : {t0, t1}) {
              if (t.m0 >= t.row_end) {
                ++phantoms;
                continue;
              }
              REQUIRE(seen.insert({t.group, t.m0, t.n_block}).second);
            }
          });
          std::int64_t row_tiles = 0, odd_groups = 0;
          for (int r : rows) {
            const int tiles = (r + block_m - 1) / block_m;
            row_tiles += tiles;
            odd_groups += tiles % 2;
          }
          REQUIRE(std::int64_t(seen.size()) == row_tiles * n_tiles);
          REQUIRE(phantoms == odd_groups * n_tiles);
        }
  }
}

// The k-grouped schedule of the weight gradient: every (group, m tile, n tile) exactly once over
// any grid of persistent CTAs, each with its group's padded token blocks.
TEST_CASE("k-grouped schedule: every tile once, each group's padded K blocks", "[grouped][cpu]") {
  const std::vector<int> counts = {0, 1, 127, 128, 129, 0, 300, 1000};
  const int G = int(counts.size());
  std::vector<int> offsets(G + 1, 0), first_block(G + 1, 0);
  for (int g = 0; g < G; ++g) {
    offsets[g + 1] = offsets[g] + counts[g];
    first_block[g + 1] = first_block[g] + (counts[g] + 127) / 128;
  }
  const int tiles_m = 3, tiles_n = 5;
  for (int grid : {1, 2, 7, 132, 1000}) {
    std::map<std::tuple<int, int, int>, int> seen;
    for (int cta = 0; cta < grid; ++cta) {
      fp8gemm::engine::KGroupedCursor cursor;
      fp8gemm::engine::KGroupedTile t;
      for (std::int64_t tile = cta;
           fp8gemm::engine::kgrouped_tile(offsets.data(), G, tiles_m, tiles_n, 1 << 20, tile,
                                          cursor, t);
           tile += grid) {
        ++seen[{t.group, t.m_block, t.n_block}];
        CHECK(t.m_block < tiles_m);
        CHECK(t.n_block < tiles_n);
        CHECK(t.kb_first == first_block[t.group]);
        CHECK(t.kb_count == (counts[t.group] + 127) / 128);
      }
    }
    CHECK(seen.size() == std::size_t(G * tiles_m * tiles_n));
    for (const auto& [key, n] : seen) CHECK(n == 1);
  }
}

TEST_CASE("k-grouped schedule: bad offsets stay within the token capacity", "[grouped][cpu]") {
  const std::vector<int> offsets = {0, 2000000000, 100, -2000000000, 300};
  const int capacity = 1024;
  fp8gemm::engine::KGroupedCursor cursor;
  fp8gemm::engine::KGroupedTile t;
  for (std::int64_t tile = 0;
       fp8gemm::engine::kgrouped_tile(offsets.data(), 4, 1, 1, capacity, tile, cursor, t); ++tile) {
    CHECK(t.kb_first * 128 <= capacity);
    CHECK(t.kb_count * 128 <= capacity);
  }
}
