// The same-run comparison of the promoted loop's versions (PerTensorMath's kPromotedLoop, in
// common/engine/kernel.cuh): the table's kernels with the first loop (_loop0, measured at
// 7ce3b58), and the 8192^3 kernel with the lean loop unrolled twice (_loop2) and 4 times
// (_loop4), and the two-deep loop (_2deep) on the tiles it fits; the default (not unrolled,
// _loop1) is in the other files. Not picked by the table.
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
  out.push_back(bs<Cfg<256, 128, 3, 1, 2, 0>, 0>());
  out.push_back(bs<Cfg<256, 128, 3, 1, 2, 0>, 2>());
  out.push_back(bs<Cfg<256, 128, 3, 1, 2, 0>, 4>());
  out.push_back(bs<Cfg<256, 128, 4, 2, 1, 1>, 0>());
  out.push_back(bs<Cfg<128, 256, 3, 1, 2, 0>, 0>());
  out.push_back(bs<Cfg<192, 128, 4, 2, 1, 0>, 0>());
  out.push_back(bs<Cfg<64, 32, 14, 1, 1, 1>, 0>());
  out.push_back(bs<Cfg<64, 64, 12, 1, 1, 1>, 0>());
  out.push_back(bs<Cfg<64, 128, 8, 1, 1, 1>, 0>());
  out.push_back(bs<Cfg<128, 64, 8, 1, 1, 1>, 0>());
  out.push_back(bs<Cfg<128, 128, 6, 1, 1, 1>, 0>());
  // The two-deep loop (_2deep), on every tile it fits: one 64-row slab per warpgroup.
  out.push_back(bs<Cfg<128, 128, 6, 2, 1, 1>, kTwoDeepLoop>());
  out.push_back(bs<Cfg<128, 128, 6, 1, 2, 1>, kTwoDeepLoop>());
  out.push_back(bs<Cfg<128, 128, 6, 1, 1, 1>, kTwoDeepLoop>());
  out.push_back(bs<Cfg<64, 16, 16, 1, 1, 1>, kTwoDeepLoop>());
  out.push_back(bs<Cfg<64, 32, 14, 1, 1, 1>, kTwoDeepLoop>());
  out.push_back(bs<Cfg<64, 64, 12, 1, 1, 1>, kTwoDeepLoop>());
  out.push_back(bs<Cfg<64, 128, 8, 1, 1, 1>, kTwoDeepLoop>());
  out.push_back(bs<Cfg<128, 32, 10, 1, 1, 1>, kTwoDeepLoop>());
  out.push_back(bs<Cfg<128, 64, 8, 1, 1, 1>, kTwoDeepLoop>());
}

}  // namespace fp8gemm::ch07
