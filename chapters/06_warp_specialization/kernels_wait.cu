// The same-run comparison of the engine's barrier wait (session 17; NOTEBOOK.md, "Waits that
// sleep"): the table's large-shape kernels with the wait the engine had until then,
// BarrierWait::spin (mbarrier.try_wait re-issued in a loop), beside their defaults, which sleep
// until the phase completes (BarrierWait::sleep). Names end in "_spin"; never chosen by the table
// or the rule.
#include "common/engine/kernel_info.cuh"
#include "kernels.hpp"

namespace fp8gemm::ch06 {
using namespace engine;

void add_kernels_wait(std::vector<KernelInfo>& out) {
  constexpr auto kFast = Accumulation::fast;
  constexpr auto kPromoted = Accumulation::promoted;
  constexpr auto kStore = EpilogueKind::tma_store;
  constexpr auto kPP = ConsumerOrder::pingpong;
  constexpr auto kCoop = ConsumerOrder::cooperative;
  constexpr auto kSpin = BarrierWait::spin;
  // Fast: 8192^3 and 4096 x 24576 x 1536; 4096 x 7168 x 16384 and x 2048; 4096^3.
  out.push_back(kernel_info<KernelConfig<128, 192, 4, 2, 1, kFast, kStore, 2, kPP, kSpin>>());
  out.push_back(kernel_info<KernelConfig<128, 176, 4, 2, 1, kFast, kStore, 11, kPP, kSpin>>());
  out.push_back(kernel_info<KernelConfig<128, 256, 4, 2, 1, kFast, kStore, 2, kCoop, kSpin>>());
  // Promoted: 8192^3 and three M = 4096 shapes.
  out.push_back(kernel_info<KernelConfig<256, 128, 3, 1, 2, kPromoted, kStore, 0, kCoop, kSpin>>());
}

}  // namespace fp8gemm::ch06
