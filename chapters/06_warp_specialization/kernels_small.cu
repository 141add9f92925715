// Small M (decode, M <= 128): few rows, so the tiles are narrow along N to give every SM a tile,
// with deep rings (the weights stream from HBM once; latency hiding is everything).
#include "common/engine/kernel_info.cuh"
#include "kernels.hpp"

namespace fp8gemm::ch06 {
using namespace engine;

template <Accumulation A>
static void add_small(std::vector<KernelInfo>& out) {
  out.push_back(kernel_info<KernelConfig<128, 64, 8, 1, 1, A, EpilogueKind::tma_store, 0>>());
  out.push_back(kernel_info<KernelConfig<128, 56, 8, 1, 1, A, EpilogueKind::tma_store, 0>>());
  out.push_back(kernel_info<KernelConfig<128, 32, 10, 1, 1, A, EpilogueKind::tma_store, 0>>());
  out.push_back(kernel_info<KernelConfig<128, 16, 10, 1, 1, A, EpilogueKind::tma_store, 0>>());
  out.push_back(kernel_info<KernelConfig<64, 128, 8, 1, 1, A, EpilogueKind::tma_store, 0>>());
  out.push_back(kernel_info<KernelConfig<64, 64, 12, 1, 1, A, EpilogueKind::tma_store, 0>>());
  out.push_back(kernel_info<KernelConfig<64, 32, 14, 1, 1, A, EpilogueKind::tma_store, 0>>());
  out.push_back(kernel_info<KernelConfig<64, 16, 16, 1, 1, A, EpilogueKind::tma_store, 0>>());
}

void add_kernels_small(std::vector<KernelInfo>& out) {
  add_small<Accumulation::fast>(out);
  add_small<Accumulation::promoted>(out);
}

}  // namespace fp8gemm::ch06
