// The ablation's intermediate steps (fast accumulation, 128 x 256, 4 stages): the engine with
// chapter 5's registers epilogue and no cluster (run with one CTA per tile, then persistent),
// then + the TMA-store epilogue (128x256_s4_c1x1_fast_tma_b2, in kernels_large.cu). The next
// steps (+ cluster multicast, + per-shape tiles) are kernels of the other files.
#include "common/engine/kernel_info.cuh"
#include "kernels.hpp"

namespace fp8gemm::ch06 {
using namespace engine;

void add_kernels_ablation(std::vector<KernelInfo>& out) {
  constexpr auto kFast = Accumulation::fast;
  out.push_back(kernel_info<KernelConfig<128, 256, 4, 1, 1, kFast, EpilogueKind::registers>>());
}

}  // namespace fp8gemm::ch06
