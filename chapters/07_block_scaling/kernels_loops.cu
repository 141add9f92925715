// The same-run comparison of the promoted loop's versions (kPromotedLoop, common/engine/kernel.cuh;
// chapter 6's README, "The promoted loop"): the tiles the table uses, each with the loops that are
// not its default (block scaling: two-deep where two partial sums fit, else the lean loop
// unrolled 8x or 4x: default_block_scaled_loop).
// Measured at clean 61b9328 and 3e2acd2 (plots/data/h200/engine_loops/). Not picked by the table.
// Also the one tile only this comparison added: 128 x 128 with A shared by a 1 x 2 cluster.
#include "common/engine/block_scaled.cuh"
#include "common/engine/kernel_info.cuh"
#include "kernels.hpp"

namespace fp8gemm::ch07 {
using namespace engine;

template <int BM, int BN, int S, int CM, int CN, int Buffers>
using Cfg =
    KernelConfig<BM, BN, S, CM, CN, Accumulation::promoted, EpilogueKind::tma_store, Buffers>;

template <class C, int kLoop>
static KernelInfo bs() {
  return kernel_info<C, BlockScaledMath<C, kLoop>>();
}

void add_kernels_loops(std::vector<KernelInfo>& out) {
  // Two-slab and three-warpgroup tiles (default: the lean loop unrolled 8x on 256 x 128, 4x on
  // 128 x 256 and 192 x 128, with the early first wave since session 23): the first loop, the
  // lean one rolled, and the other unroll factors (all without the early wave).
  out.push_back(bs<Cfg<256, 128, 3, 1, 2, 0>, 0>());
  out.push_back(bs<Cfg<256, 128, 3, 1, 2, 0>, 1>());
  out.push_back(bs<Cfg<256, 128, 3, 1, 2, 0>, 2>());
  out.push_back(bs<Cfg<256, 128, 3, 1, 2, 0>, 4>());
  out.push_back(bs<Cfg<256, 128, 4, 2, 1, 1>, 0>());
  out.push_back(bs<Cfg<256, 128, 4, 2, 1, 1>, 1>());
  out.push_back(bs<Cfg<256, 128, 4, 2, 1, 1>, 4>());
  out.push_back(bs<Cfg<128, 256, 3, 1, 2, 0>, 0>());
  out.push_back(bs<Cfg<128, 256, 3, 1, 2, 0>, 1>());
  out.push_back(bs<Cfg<128, 256, 3, 1, 2, 0>, 8>());
  out.push_back(bs<Cfg<192, 128, 4, 2, 1, 0>, 0>());
  out.push_back(bs<Cfg<192, 128, 4, 2, 1, 0>, 1>());
  out.push_back(bs<Cfg<192, 128, 4, 2, 1, 0>, 8>());
  // One slab per warpgroup (default: two-deep): the first loop and the lean one.
  out.push_back(bs<Cfg<64, 32, 14, 1, 1, 1>, 0>());
  out.push_back(bs<Cfg<64, 64, 12, 1, 1, 1>, 0>());
  out.push_back(bs<Cfg<64, 128, 8, 1, 1, 1>, 0>());
  out.push_back(bs<Cfg<128, 64, 8, 1, 1, 1>, 0>());
  out.push_back(bs<Cfg<128, 128, 6, 1, 1, 1>, 0>());
  out.push_back(bs<Cfg<64, 32, 14, 1, 1, 1>, 1>());
  out.push_back(bs<Cfg<64, 64, 12, 1, 1, 1>, 1>());
  out.push_back(bs<Cfg<64, 128, 8, 1, 1, 1>, 1>());
  out.push_back(bs<Cfg<128, 64, 8, 1, 1, 1>, 1>());
  out.push_back(bs<Cfg<128, 128, 6, 1, 1, 1>, 1>());
  out.push_back(bs<Cfg<128, 128, 6, 2, 1, 1>, 1>());
  // Tiles that straddle B-scale blocks (session 17): one loop copy per n0 % 128 (eight at 176,
  // 112 and 56 columns, two at 192; BlockScaledMath::mainloop_range). Measured in session 17 with
  // the loops that were their defaults then (4x unrolled on 128 x 176 and 128 x 192, two-deep on
  // 64 x 112 and 128 x 56) beside the rolled lean loop and (128 x 176) the lean loop unrolled 2x:
  // the rolled loop won where a kernel holds eight copies, and is their default since; these keep
  // the other loops for the comparison (128 x 192, two copies, keeps its 4x default).
  out.push_back(bs<Cfg<128, 176, 4, 2, 1, 11>, 4>());
  out.push_back(bs<Cfg<128, 176, 4, 2, 1, 11>, 2>());
  out.push_back(bs<Cfg<128, 192, 4, 2, 1, 3>, 1>());
  out.push_back(bs<Cfg<64, 112, 9, 1, 1, 1>, kTwoDeepLoop>());
  out.push_back(bs<Cfg<128, 56, 8, 1, 1, 1>, kTwoDeepLoop>());
  // The M <= 128 tiles whose default was the two-deep loop (session 39), with that loop unrolled
  // over the ring cycle: _cyc. Not 128 x 128 (over its 6 stages the cycle loop loses the FFMA
  // interleave that sass_chapter_07_interleaved_ffma asks of two-warpgroup kernels: 193 of 512
  // yield bits clear, 0.4 asked). Since session 40 the tiles of at most 64 columns run the cycle
  // loop where a tile has at least two ring cycles of K blocks and two-deep elsewhere by default
  // (kTwoDeepLongCycleLoop); their two-deep loop alone is the twin _2deep.
  out.push_back(bs<Cfg<64, 16, 16, 1, 1, 1>, kTwoDeepLoop>());
  out.push_back(bs<Cfg<64, 32, 14, 1, 1, 1>, kTwoDeepLoop>());
  out.push_back(bs<Cfg<64, 64, 12, 1, 1, 1>, kTwoDeepLoop>());
  out.push_back(bs<Cfg<128, 32, 10, 1, 1, 1>, kTwoDeepLoop>());
  out.push_back(bs<Cfg<128, 64, 8, 1, 1, 1>, kTwoDeepLoop>());
  out.push_back(bs<Cfg<64, 16, 16, 1, 1, 1>, kTwoDeepCycleLoop>());
  out.push_back(bs<Cfg<64, 32, 14, 1, 1, 1>, kTwoDeepCycleLoop>());
  out.push_back(bs<Cfg<64, 64, 12, 1, 1, 1>, kTwoDeepCycleLoop>());
  out.push_back(bs<Cfg<64, 128, 8, 1, 1, 1>, kTwoDeepCycleLoop>());
  out.push_back(bs<Cfg<128, 32, 10, 1, 1, 1>, kTwoDeepCycleLoop>());
  out.push_back(bs<Cfg<128, 64, 8, 1, 1, 1>, kTwoDeepCycleLoop>());
  // 128 x 128 with A multicast, default loop.
  out.push_back(
      kernel_info<Cfg<128, 128, 6, 1, 2, 1>, BlockScaledMath<Cfg<128, 128, 6, 1, 2, 1>>>());
  // The table's large tiles with the lean loop but without the early first wave (their default
  // until session 23, now kEarlyWaveLoop + the same unroll factor): _loop8 / _loop4.
  out.push_back(bs<Cfg<256, 128, 3, 1, 2, 0>, 8>());
  out.push_back(bs<Cfg<256, 128, 4, 2, 1, 1>, 8>());
  out.push_back(bs<Cfg<128, 256, 3, 1, 2, 0>, 4>());
  out.push_back(bs<Cfg<192, 128, 4, 2, 1, 2>, 4>());
  // Three of them with the early-wave loop without pinned addresses (their default in session 23,
  // now kPinnedLoop + kEarlyWaveLoop + u): _ew8 / _ew4.
  out.push_back(bs<Cfg<256, 128, 3, 1, 2, 0>, kEarlyWaveLoop + 8>());
  out.push_back(bs<Cfg<256, 128, 4, 2, 1, 1>, kEarlyWaveLoop + 8>());
  out.push_back(bs<Cfg<128, 256, 3, 1, 2, 0>, kEarlyWaveLoop + 4>());
}

}  // namespace fp8gemm::ch07
