// The same-run comparison of the promoted loop's versions (kPromotedLoop, common/engine/kernel.cuh;
// this chapter's README, "The promoted loop"): the promoted table's tiles, each with the loops that
// are not its default (per-tensor scaling: two-deep where two partial sums fit, the lean loop
// unrolled 8x on 256 x 128, else the first loop: default_per_tensor_loop). Measured at clean
// 61b9328, 3e2acd2, 377d953 and 172780d (plots/data/h200/engine_loops/). Not picked by the table.
// Also the one tile only this comparison added: 128 x 128 promoted with A shared by a 1 x 2 cluster.
#include "common/engine/kernel_info.cuh"
#include "kernels.hpp"

namespace fp8gemm::ch06 {
using namespace engine;

template <int BM, int BN, int S, int CM, int CN, int Buffers>
using Cfg =
    KernelConfig<BM, BN, S, CM, CN, Accumulation::promoted, EpilogueKind::tma_store, Buffers>;

template <class C, int kLoop>
static KernelInfo loop() {
  return kernel_info<C, PerTensorMath<C, kLoop>>();
}

void add_kernels_loops(std::vector<KernelInfo>& out) {
  // Two slabs per warpgroup (256 x 128), default the lean loop unrolled 8x (since 172780d; with
  // the early first wave since session 22): the first loop.
  out.push_back(loop<Cfg<256, 128, 4, 1, 2, 2>, 0>());
  out.push_back(loop<Cfg<256, 128, 4, 2, 1, 2>, 0>());
  // Three warpgroups of one slab (192 x 128), default the first loop: the lean one, rolled and
  // unrolled (8x was the default at 172780d only; two runs disagreed).
  out.push_back(loop<Cfg<192, 128, 4, 1, 1, 2>, 1>());
  out.push_back(loop<Cfg<192, 128, 4, 1, 1, 2>, 2>());
  out.push_back(loop<Cfg<192, 128, 4, 1, 1, 2>, 4>());
  out.push_back(loop<Cfg<192, 128, 4, 1, 1, 2>, 8>());
  out.push_back(loop<Cfg<192, 128, 4, 2, 1, 2>, 1>());
  out.push_back(loop<Cfg<192, 128, 4, 2, 1, 2>, 8>());
  // Two column halves per warpgroup (128 x 256, 128 x 192), default the first loop: the lean one
  // (unrolled, 128 x 256's 128 accumulators per thread spilled ~700 bytes at 2x).
  out.push_back(loop<Cfg<128, 256, 4, 1, 1, 2>, 1>());
  out.push_back(loop<Cfg<128, 256, 4, 2, 1, 2>, 1>());
  out.push_back(loop<Cfg<128, 192, 4, 2, 1, 3>, 1>());
  // One slab per warpgroup, default two-deep: the lean loop.
  out.push_back(loop<Cfg<128, 128, 6, 2, 1, 0>, 1>());
  out.push_back(loop<Cfg<128, 32, 10, 1, 1, 0>, 1>());
  out.push_back(loop<Cfg<64, 32, 14, 1, 1, 0>, 1>());
  out.push_back(loop<Cfg<64, 16, 16, 1, 1, 0>, 1>());
  // The promoted table's 256 x 128 tiles with the lean loop unrolled 8x without the early first
  // wave (their default from 172780d to session 22, now kEarlyWaveLoop + 8).
  out.push_back(loop<Cfg<256, 128, 3, 1, 2, 0>, 8>());
  out.push_back(loop<Cfg<256, 128, 4, 2, 1, 2>, 8>());
  // 8192^3's tile with the early-wave loop without pinned addresses (its default in sessions 22
  // and 23, now kPinnedLoop + kEarlyWaveLoop + 8): _ew8.
  out.push_back(loop<Cfg<256, 128, 3, 1, 2, 0>, kEarlyWaveLoop + 8>());
  // 128 x 128 with A multicast, default loop.
  out.push_back(kernel_info<Cfg<128, 128, 6, 1, 2, 0>, PerTensorMath<Cfg<128, 128, 6, 1, 2, 0>>>());
}

}  // namespace fp8gemm::ch06
