// CPU tests of the stream-K division (common/engine/stream_k.hpp, chapter 8's _sk kernels), run
// as the kernel runs it: each CTA walks its data-parallel tiles (c, c + P, ...) and then its
// stream-K segments (stream_k_segment from its first unit to the next CTA's). Checked, for many
// (tiles, CTAs, K blocks):
//   - every (tile, K block) pair is computed by exactly one segment, every segment non-empty;
//   - the role rules the kernel relies on: a segment that starts inside a tile (a writer) is its
//     CTA's first, so one workspace slot per CTA suffices; an owner (K block 0, not the whole
//     tile) is its CTA's last segment; the partners an owner waits for are exactly the CTAs whose
//     writing segment belongs to its tile, cta + 1 .. partner_end - 1;
//   - stream-K is used exactly when the rule says (a last round of 1/2 to 7/8 of the CTAs, at
//     least one unit per CTA) and then every CTA's units differ by at most one, and no tile has
//     more than two writers;
//   - the masked N = 7168 calls of the issue (224 tiles of 16 K blocks on 132 CTAs) are split.
#include <cstdint>
#include <map>
#include <vector>

#include "catch.hpp"
#include "common/engine/stream_k.hpp"

using fp8gemm::engine::stream_k_first_unit;
using fp8gemm::engine::stream_k_segment;
using fp8gemm::engine::stream_k_split;
using fp8gemm::engine::StreamKSegment;
using fp8gemm::engine::StreamKSplit;

#define EXPECT(cond)          \
  do {                        \
    if (!(cond)) FAIL(#cond); \
  } while (0)

namespace {

/// Walks the division and checks it; returns whether stream-K was used.
bool check_division(int tiles, int ctas, int k_blocks) {
  const StreamKSplit s = stream_k_split(tiles, ctas, k_blocks);
  const int last = tiles % ctas;
  const bool expected = last * 2 >= ctas && last * 8 <= ctas * 7 &&
                        last * k_blocks >= ctas;
  EXPECT((s.units > 0) == expected);
  EXPECT(s.dp_tiles == (expected ? tiles - last : tiles));
  EXPECT(s.units == (expected ? last * k_blocks : 0));

  std::vector<int> covered(std::size_t(tiles) * std::size_t(k_blocks), 0);
  std::map<int, std::vector<int>> writers_of;   // tile -> CTAs writing a partial of it
  std::map<int, std::pair<int, int>> owner_of;  // tile -> (owner CTA, partner_end)
  for (int c = 0; c < ctas; ++c) {
    for (int t = c; t < s.dp_tiles; t += ctas)
      for (int kb = 0; kb < k_blocks; ++kb) ++covered[std::size_t(t * k_blocks + kb)];
    if (s.units == 0) continue;
    const int first = stream_k_first_unit(s, c), end = stream_k_first_unit(s, c + 1);
    const int count = end - first;
    EXPECT(count >= s.units / ctas && count <= s.units / ctas + 1);
    EXPECT(count >= 1);
    int segment = 0;
    for (int u = first; u < end; ++segment) {
      const StreamKSegment g = stream_k_segment(s, c, u, end);
      EXPECT(g.tile >= s.dp_tiles && g.tile < tiles);
      EXPECT(g.kb_begin >= 0 && g.kb_begin < g.kb_end && g.kb_end <= k_blocks);
      for (int kb = g.kb_begin; kb < g.kb_end; ++kb)
        ++covered[std::size_t(g.tile * k_blocks + kb)];
      u += g.kb_end - g.kb_begin;
      if (g.kb_begin > 0) {  // a writer: the CTA's first segment
        EXPECT(segment == 0);
        writers_of[g.tile].push_back(c);
        EXPECT(g.partner_end == c + 1);
      } else if (g.kb_end < k_blocks) {  // an owner: the CTA's last segment
        EXPECT(u == end);
        EXPECT(owner_of.count(g.tile) == 0);
        owner_of[g.tile] = {c, g.partner_end};
      } else {
        EXPECT(g.partner_end == c + 1);
      }
    }
  }
  for (int v : covered) EXPECT(v == 1);
  // Every split tile has one owner, and its partners are exactly its writers, in CTA order.
  for (const auto& [tile, writers] : writers_of) {
    REQUIRE(owner_of.count(tile) == 1);
    const auto [owner, partner_end] = owner_of[tile];
    std::vector<int> expected_partners;
    for (int c = owner + 1; c < partner_end; ++c) expected_partners.push_back(c);
    EXPECT(writers == expected_partners);
    EXPECT(writers.size() <= 2);  // each CTA's share is at least half a tile
  }
  for (const auto& [tile, o] : owner_of) EXPECT(writers_of.count(tile) == 1);
  return s.units > 0;
}

}  // namespace

TEST_CASE("stream-K: every (tile, K block) once, the roles the kernel relies on", "[cpu]") {
  int used = 0, cases = 0;
  for (int ctas : {1, 2, 7, 66, 132, 133})
    for (int k_blocks : {1, 2, 3, 6, 16, 17, 57})
      for (int tiles : {0, 1, 2, 5, 9, 10, 40, 92, 131, 132, 133, 176, 224, 300, 1000}) {
        used += check_division(tiles, ctas, k_blocks) ? 1 : 0;
        ++cases;
      }
  CHECK(used > cases / 8);  // the rule is exercised both ways
  CHECK(used < cases);
}

TEST_CASE("stream-K: chapter 8's masked N = 7168 calls are split, full rounds are not", "[cpu]") {
  // 224 tiles of 256 x 128 (or 128 x 256) over 132 CTAs, K = 2048: 16 K blocks.
  const StreamKSplit s = stream_k_split(224, 132, 16);
  CHECK(s.dp_tiles == 132);
  CHECK(s.units == 92 * 16);
  CHECK(check_division(224, 132, 16));
  // 128 tiles of the N = 4096 masked calls on 132 CTAs: 97% busy in one round, not split.
  CHECK(stream_k_split(128, 132, 56).units == 0);
  // A whole number of rounds is never split.
  CHECK(stream_k_split(264, 132, 16).units == 0);
  // Nor a last round of fewer than half the CTAs: the balanced calls (4096 tiles of 56 K blocks,
  // 7168 of 16), whose owners would each add up to 32 partials.
  CHECK(stream_k_split(4096, 132, 56).units == 0);
  CHECK(stream_k_split(7168, 132, 16).units == 0);
}
