// Tile widths that are not powers of two, against wave quantisation (4096 x 2112: 2112 =
// 12 x 176), and 128 x 128 with a deeper ring; plus the registers-epilogue fallback for a D that
// TMA cannot store (N not a multiple of 8, or D not 16-byte aligned).
#include "common/engine/kernel_info.cuh"
#include "kernels.hpp"

namespace fp8gemm::ch06 {
using namespace engine;

template <Accumulation A>
static void add_wide(std::vector<KernelInfo>& out) {
  out.push_back(kernel_info<KernelConfig<128, 192, 4, 2, 1, A, EpilogueKind::tma_store, 0>>());
  out.push_back(kernel_info<KernelConfig<128, 192, 4, 1, 1, A, EpilogueKind::tma_store, 0>>());
  out.push_back(kernel_info<KernelConfig<128, 176, 4, 2, 1, A, EpilogueKind::tma_store, 0>>());
  out.push_back(kernel_info<KernelConfig<128, 176, 4, 1, 1, A, EpilogueKind::tma_store, 0>>());
  out.push_back(kernel_info<KernelConfig<128, 160, 4, 2, 1, A, EpilogueKind::tma_store, 0>>());
  out.push_back(kernel_info<KernelConfig<128, 128, 6, 2, 1, A, EpilogueKind::tma_store, 0>>());
  out.push_back(kernel_info<KernelConfig<128, 128, 6, 1, 1, A, EpilogueKind::tma_store, 0>>());
  out.push_back(kernel_info<KernelConfig<128, 112, 6, 1, 1, A, EpilogueKind::tma_store, 0>>());
  out.push_back(kernel_info<KernelConfig<128, 256, 4, 2, 1, A, EpilogueKind::registers>>());
  out.push_back(kernel_info<KernelConfig<128, 128, 6, 1, 1, A, EpilogueKind::registers>>());
}

void add_kernels_wide(std::vector<KernelInfo>& out) {
  add_wide<Accumulation::fast>(out);
  add_wide<Accumulation::promoted>(out);
}

}  // namespace fp8gemm::ch06
