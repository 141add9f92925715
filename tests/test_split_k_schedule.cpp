// CPU tests of the split-K schedule (common/engine/split_k.hpp, chapter 7's opt-in split-K): run
// as the persistent grid runs it (CTA c takes units c, c + grid, ...), every (output tile, K
// block) pair is covered by exactly one unit, every unit's K range is non-empty and its split's
// own, the splits of a tile are balanced (floor or ceil of k_blocks / S blocks), and a unit's
// workspace rows split x M .. (split + 1) x M - 1 never overlap another split's; for many
// (M, N, K, S), S not dividing the K blocks and S = k_blocks included.
#include <cstdint>
#include <set>
#include <tuple>
#include <vector>

#include "catch.hpp"
#include "common/engine/split_k.hpp"

using fp8gemm::engine::split_k_first;
using fp8gemm::engine::split_k_unit;
using fp8gemm::engine::SplitKSchedule;
using fp8gemm::engine::SplitKTile;

// A REQUIRE that costs nothing when it holds (millions of checks below).
#define EXPECT(cond)          \
  do {                        \
    if (!(cond)) FAIL(#cond); \
  } while (0)

namespace {

int ceil_div(std::int64_t a, std::int64_t b) { return int((a + b - 1) / b); }

/// Runs the schedule on `grid` CTAs and checks it; returns the number of units visited.
std::int64_t check_schedule(std::int64_t M, std::int64_t N, std::int64_t K, int S, int block_m,
                            int block_n, int grid) {
  SplitKSchedule s;
  s.tiles_m = ceil_div(M, block_m);
  s.tiles_n = ceil_div(N, block_n);
  s.splits = S;
  s.k_blocks = ceil_div(K, 128);
  s.num_units = s.tiles_m * s.tiles_n * S;
  // covered[(m_block, n_block)][kb] = how many units computed K block kb of that tile.
  std::vector<int> covered(
      std::size_t(s.tiles_m) * std::size_t(s.tiles_n) * std::size_t(s.k_blocks), 0);
  std::set<std::tuple<int, int, int>> units;  // (m_block, n_block, split)
  std::int64_t visited = 0;
  for (int cta = 0; cta < grid; ++cta) {
    for (int u = cta; u < s.num_units; u += grid) {
      SplitKTile t;
      split_k_unit(s, u, t);
      ++visited;
      EXPECT(t.m_block >= 0);
      EXPECT(t.m_block < s.tiles_m);
      EXPECT(t.n_block >= 0);
      EXPECT(t.n_block < s.tiles_n);
      EXPECT(t.split >= 0);
      EXPECT(t.split < S);
      EXPECT(units.insert({t.m_block, t.n_block, t.split}).second);  // each unit once
      // The split's own range, never empty, balanced.
      EXPECT(t.kb_begin == split_k_first(t.split, S, s.k_blocks));
      EXPECT(t.kb_end == split_k_first(t.split + 1, S, s.k_blocks));
      EXPECT(t.kb_end > t.kb_begin);
      EXPECT(t.kb_end - t.kb_begin >= s.k_blocks / S);
      EXPECT(t.kb_end - t.kb_begin <= (s.k_blocks + S - 1) / S);
      for (int kb = t.kb_begin; kb < t.kb_end; ++kb)
        ++covered[(std::size_t(t.m_block) * std::size_t(s.tiles_n) + std::size_t(t.n_block)) *
                      std::size_t(s.k_blocks) +
                  std::size_t(kb)];
      // The workspace rows the unit writes (the epilogue's d_row and row_end): inside its split.
      const std::int64_t row0 = std::int64_t(t.split) * M + std::int64_t(t.m_block) * block_m;
      const std::int64_t row_end = std::int64_t(t.split + 1) * M;
      EXPECT(row0 >= std::int64_t(t.split) * M);
      EXPECT(row0 < row_end);
    }
  }
  EXPECT(visited == s.num_units);
  for (int c : covered) EXPECT(c == 1);  // every (tile, K block) exactly once
  return visited;
}

}  // namespace

TEST_CASE("split-K: the ranges of one tile cut 0 .. k_blocks - 1 into S balanced pieces",
          "[split_k][cpu]") {
  for (int kb = 1; kb <= 200; ++kb)
    for (int S = 1; S <= kb; ++S) {
      int end = 0;
      for (int s = 0; s < S; ++s) {
        const int b = split_k_first(s, S, kb), e = split_k_first(s + 1, S, kb);
        EXPECT(b == end);
        EXPECT(e - b >= kb / S);
        EXPECT(e - b <= (kb + S - 1) / S);
        end = e;
      }
      EXPECT(end == kb);
    }
  // No overflow where split x k_blocks passes 2^31.
  CHECK(split_k_first(60000, 65536, 65536) == 60000);
  CHECK(split_k_first(1, 3, 2000000000) == 666666666);
}

TEST_CASE("split-K: every (tile, K block) is computed by exactly one unit", "[split_k][cpu]") {
  std::int64_t total = 0;
  // The small-M DeepSeek shapes with the split-K kernels' tiles, and odd shapes.
  for (std::int64_t M : {1, 64, 65, 127, 128})
    for (std::int64_t N : {8, 40, 2112, 4096})
      for (std::int64_t K : {16, 128, 130, 656, 7168})
        for (auto [bm, bn] : {std::pair{64, 32}, std::pair{64, 64}, std::pair{128, 32}}) {
          const int k_blocks = ceil_div(K, 128);
          for (int S : {1, 2, 3, 4, 5, 7, k_blocks}) {
            if (S > k_blocks) continue;
            for (int grid : {1, 132}) total += check_schedule(M, N, K, S, bm, bn, grid);
          }
        }
  CHECK(total > 0);
}
