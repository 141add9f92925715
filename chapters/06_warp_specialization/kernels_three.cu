// Three consumer warpgroups: 192 x 128 tiles, each warpgroup 64 rows with 64 FP32 accumulators
// (152 registers per consumer thread). Promoted accumulation stalls each warpgroup at every
// 128-K block while it adds its partial sum; with three of them, two keep the tensor cores busy.
#include "common/engine/kernel_info.cuh"
#include "kernels.hpp"

namespace fp8gemm::ch06 {
using namespace engine;

template <Accumulation A>
static void add_three(std::vector<KernelInfo>& out) {
  out.push_back(kernel_info<KernelConfig<192, 128, 4, 2, 1, A, EpilogueKind::tma_store, 0>>());
  out.push_back(kernel_info<KernelConfig<192, 128, 5, 2, 1, A, EpilogueKind::tma_store, 1>>());
  out.push_back(kernel_info<KernelConfig<192, 128, 4, 1, 2, A, EpilogueKind::tma_store, 0>>());
  out.push_back(kernel_info<KernelConfig<192, 128, 4, 1, 1, A, EpilogueKind::tma_store, 0>>());
}

void add_kernels_three(std::vector<KernelInfo>& out) {
  add_three<Accumulation::fast>(out);
  add_three<Accumulation::promoted>(out);
}

}  // namespace fp8gemm::ch06
