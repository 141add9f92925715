// The same-run comparison of the promoted loop's versions (kPromotedLoop, common/engine/kernel.cuh;
// this chapter's README, "The promoted loop"): the promoted table's tiles, each with the loops that
// are not its default (per-tensor scaling: two-deep where two partial sums fit, else the first
// loop). Measured at clean 61b9328 and 3e2acd2 (plots/data/h200/engine_loops/). Not picked by the
// table. Also the one tile only this comparison added: 128 x 128 promoted with A shared by a 1 x 2
// cluster.
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
  // Two slabs (or two column halves) per warpgroup, default the first loop: the lean one.
  out.push_back(loop<Cfg<192, 128, 4, 1, 1, 2>, 1>());
  out.push_back(loop<Cfg<192, 128, 4, 1, 1, 2>, 2>());
  out.push_back(loop<Cfg<192, 128, 4, 2, 1, 2>, 1>());
  out.push_back(loop<Cfg<128, 256, 4, 1, 1, 2>, 1>());
  out.push_back(loop<Cfg<128, 256, 4, 2, 1, 2>, 1>());
  out.push_back(loop<Cfg<128, 192, 4, 2, 1, 3>, 1>());
  // Unrolled further (chapter 7's 8x gained 7-12% on its 256 x 128 tiles; 2x here spilled only in
  // the 128-accumulator 128 x 256 kernels): three warpgroups of one slab, and two of two slabs.
  // Added after the last GPU run of the session that wrote them: not yet measured.
  out.push_back(loop<Cfg<192, 128, 4, 1, 1, 2>, 4>());
  out.push_back(loop<Cfg<192, 128, 4, 1, 1, 2>, 8>());
  out.push_back(loop<Cfg<192, 128, 4, 2, 1, 2>, 8>());
  out.push_back(loop<Cfg<256, 128, 4, 1, 2, 2>, 8>());
  out.push_back(loop<Cfg<256, 128, 4, 2, 1, 2>, 8>());
  // One slab per warpgroup, default two-deep: the lean loop.
  out.push_back(loop<Cfg<128, 128, 6, 2, 1, 0>, 1>());
  out.push_back(loop<Cfg<128, 32, 10, 1, 1, 0>, 1>());
  out.push_back(loop<Cfg<64, 32, 14, 1, 1, 0>, 1>());
  out.push_back(loop<Cfg<64, 16, 16, 1, 1, 0>, 1>());
  // 128 x 128 with A multicast, default loop.
  out.push_back(kernel_info<Cfg<128, 128, 6, 1, 2, 0>, PerTensorMath<Cfg<128, 128, 6, 1, 2, 0>>>());
}

}  // namespace fp8gemm::ch06
