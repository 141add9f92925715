// Large tiles for M >= 256: 128 x 256 and 256 x 128 with a 2-CTA cluster sharing the bigger
// operand by multicast, 3 stages with a whole-tile staging buffer or 4 stages with 2 buffers.
#include "common/engine/kernel_info.cuh"
#include "kernels.hpp"

namespace fp8gemm::ch06 {
using namespace engine;

template <Accumulation A>
static void add_large(std::vector<KernelInfo>& out) {
  out.push_back(kernel_info<KernelConfig<128, 256, 4, 2, 1, A, EpilogueKind::tma_store, 2>>());
  out.push_back(kernel_info<KernelConfig<128, 256, 3, 2, 1, A, EpilogueKind::tma_store, 0>>());
  out.push_back(kernel_info<KernelConfig<128, 256, 4, 1, 2, A, EpilogueKind::tma_store, 2>>());
  out.push_back(kernel_info<KernelConfig<256, 128, 4, 1, 2, A, EpilogueKind::tma_store, 2>>());
  out.push_back(kernel_info<KernelConfig<256, 128, 3, 1, 2, A, EpilogueKind::tma_store, 0>>());
  out.push_back(kernel_info<KernelConfig<256, 128, 4, 2, 1, A, EpilogueKind::tma_store, 2>>());
  out.push_back(kernel_info<KernelConfig<256, 128, 4, 1, 1, A, EpilogueKind::tma_store, 2>>());
  out.push_back(kernel_info<KernelConfig<128, 256, 4, 1, 1, A, EpilogueKind::tma_store, 2>>());
}

void add_kernels_large(std::vector<KernelInfo>& out) {
  add_large<Accumulation::fast>(out);
  add_large<Accumulation::promoted>(out);
}

}  // namespace fp8gemm::ch06
