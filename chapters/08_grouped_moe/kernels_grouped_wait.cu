// The same-run comparison of the engine's barrier wait (session 17; README, "Session 17"): the
// plan's three default tiles with the wait the engine had until then, BarrierWait::spin
// (mbarrier.try_wait re-issued in a loop), beside the defaults, which sleep until the phase
// completes (BarrierWait::sleep). Names end in "_spin"; the plan's rule never takes them. The last
// entry is not one of them: the counter-schedule kernel (_dyn), which counter_schedule_kernel()
// picks (grouped_gemm.cpp).
#include "grouped_configs.cuh"

namespace fp8gemm::ch08 {

template <int BM, int BN, int S, int CN, int Buffers>
using SpinCfg = KernelConfig<BM, BN, S, 1, CN, Accumulation::promoted, EpilogueKind::tma_store,
                             Buffers, ConsumerOrder::cooperative, BarrierWait::spin>;

std::vector<KernelInfo> kernels_wait() {
  return {
      grouped<SpinCfg<256, 128, 3, 2, 0>>(),  // contiguous, >= 1024 rows per group on average
      grouped<SpinCfg<256, 128, 4, 1, 1>>(),  // masked, M_max >= 256
      grouped<SpinCfg<128, 256, 4, 1, 1>>(),  // contiguous, fewer rows per group
      // The last one with its tiles from a device counter (grouped.cuh, GroupedDynamicMath;
      // session 32: the fixed stride gives each CTA the same number of tiles however cheap).
      kernel_info<GroupedTmaCfg<128, 256, 4, 1>, GroupedDynamicMath<GroupedTmaCfg<128, 256, 4, 1>>>(),
  };
}

}  // namespace fp8gemm::ch08
