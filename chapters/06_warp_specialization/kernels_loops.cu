// The same-run comparison of the promoted loop's versions (PerTensorMath's kPromotedLoop, in
// common/engine/kernel.cuh): the promoted table's large kernels with the first loop (_loop0,
// measured at 7ce3b58), and 192 x 128 with the lean loop unrolled twice (_loop2); the default lean
// loop (not unrolled) is in the other files; and the two-deep loop (_2deep) on the tiles it fits.
// Not picked by the table.
#include "common/engine/kernel_info.cuh"
#include "kernels.hpp"

namespace fp8gemm::ch06 {
using namespace engine;

template <int BM, int BN, int S, int CM, int CN, int Buffers>
using Cfg =
    KernelConfig<BM, BN, S, CM, CN, Accumulation::promoted, EpilogueKind::tma_store, Buffers>;

template <class C, int kLoop = 0>
static KernelInfo loop() {
  return kernel_info<C, PerTensorMath<C, kLoop>>();
}

void add_kernels_loops(std::vector<KernelInfo>& out) {
  out.push_back(loop<Cfg<192, 128, 4, 1, 1, 2>>());
  out.push_back(loop<Cfg<192, 128, 4, 2, 1, 2>>());
  out.push_back(loop<Cfg<128, 256, 4, 1, 1, 2>>());
  out.push_back(loop<Cfg<128, 256, 4, 2, 1, 2>>());
  out.push_back(loop<Cfg<128, 192, 4, 2, 1, 3>>());
  out.push_back(loop<Cfg<192, 128, 4, 1, 1, 2>, 2>());
  // The two-deep loop (_2deep), on every tile it fits: one 64-row slab per warpgroup.
  out.push_back(loop<Cfg<128, 128, 6, 2, 1, 0>, kTwoDeepLoop>());
  out.push_back(loop<Cfg<128, 128, 6, 1, 2, 0>, kTwoDeepLoop>());
  out.push_back(loop<Cfg<128, 128, 6, 1, 1, 0>, kTwoDeepLoop>());
  out.push_back(loop<Cfg<128, 64, 8, 1, 1, 0>, kTwoDeepLoop>());
  out.push_back(loop<Cfg<128, 32, 10, 1, 1, 0>, kTwoDeepLoop>());
  out.push_back(loop<Cfg<64, 128, 8, 1, 1, 0>, kTwoDeepLoop>());
  out.push_back(loop<Cfg<64, 64, 12, 1, 1, 0>, kTwoDeepLoop>());
  out.push_back(loop<Cfg<64, 32, 14, 1, 1, 0>, kTwoDeepLoop>());
  out.push_back(loop<Cfg<64, 16, 16, 1, 1, 0>, kTwoDeepLoop>());
}

}  // namespace fp8gemm::ch06
