// The same-run comparison of the engine's barrier wait (session 17; chapter 6's NOTEBOOK.md, "Waits
// that sleep"): the table's tiles with the wait the engine had until then, BarrierWait::spin
// (mbarrier.try_wait re-issued in a loop), beside their defaults, which sleep until the phase
// completes (BarrierWait::sleep). Names end in "_spin"; not picked by the table.
#include "common/engine/block_scaled.cuh"
#include "common/engine/kernel_info.cuh"
#include "kernels.hpp"

namespace fp8gemm::ch07 {
using namespace engine;

template <int BM, int BN, int S, int CM, int CN, int Buffers>
using SpinCfg = KernelConfig<BM, BN, S, CM, CN, Accumulation::promoted, EpilogueKind::tma_store,
                             Buffers, ConsumerOrder::cooperative, BarrierWait::spin>;

template <class C>
static KernelInfo bs() {
  return kernel_info<C, BlockScaledMath<C>>();
}

void add_kernels_wait(std::vector<KernelInfo>& out) {
  out.push_back(bs<SpinCfg<256, 128, 3, 1, 2, 0>>());  // 8192^3 and three M = 4096 shapes
  out.push_back(bs<SpinCfg<256, 128, 4, 2, 1, 1>>());  // 4096 x 4096 / 7168 x 7168 / 16384
  out.push_back(bs<SpinCfg<128, 256, 3, 1, 2, 0>>());  // 4096 x 32768 x 512, 4096 x 7168 x 2048
  out.push_back(bs<SpinCfg<128, 64, 8, 1, 1, 1>>());   // M = 128: 7168 x 16384, 7168 x 2048, ...
  out.push_back(bs<SpinCfg<64, 64, 12, 1, 1, 1>>());   // M = 64 and 128 x 4096 x 7168
}

}  // namespace fp8gemm::ch07
