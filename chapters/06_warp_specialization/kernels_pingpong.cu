// Ping-pong consumers (ConsumerOrder::pingpong, common/engine/config.cuh): the two consumer
// warpgroups take whole tiles in turn, so one warpgroup's epilogue runs beside the other's main
// loop instead of leaving the tensor cores idle while a tile is stored. A warpgroup holds a whole
// tile, so the tiles are at most 128 FP32 accumulators per thread: 128 x 128 and 64 x 256. The
// staging buffers are per warpgroup (each stores its own tiles): 2 x 2 units of 64 columns with
// b2, the whole tile each with b4.
#include "common/engine/kernel_info.cuh"
#include "kernels.hpp"

namespace fp8gemm::ch06 {
using namespace engine;

template <Accumulation A>
static void add_pingpong(std::vector<KernelInfo>& out) {
  constexpr auto kStore = EpilogueKind::tma_store;
  constexpr auto kPP = ConsumerOrder::pingpong;
  out.push_back(kernel_info<KernelConfig<128, 128, 6, 1, 1, A, kStore, 2, kPP>>());
  out.push_back(kernel_info<KernelConfig<128, 128, 6, 2, 1, A, kStore, 2, kPP>>());
  out.push_back(kernel_info<KernelConfig<128, 128, 5, 2, 1, A, kStore, 4, kPP>>());
  out.push_back(kernel_info<KernelConfig<128, 128, 6, 1, 2, A, kStore, 2, kPP>>());
  out.push_back(kernel_info<KernelConfig<64, 256, 4, 1, 1, A, kStore, 2, kPP>>());
  out.push_back(kernel_info<KernelConfig<64, 256, 4, 2, 1, A, kStore, 2, kPP>>());
}

void add_kernels_pingpong(std::vector<KernelInfo>& out) {
  add_pingpong<Accumulation::fast>(out);
  // Fast accumulation only: 192 accumulators per thread, the widest tile a warpgroup can hold
  // beside its addresses (128 x 256 would need 256).
  constexpr auto kFast = Accumulation::fast;
  out.push_back(kernel_info<KernelConfig<128, 192, 4, 1, 1, kFast, EpilogueKind::tma_store, 2,
                                         ConsumerOrder::pingpong>>());
  out.push_back(kernel_info<KernelConfig<128, 192, 4, 2, 1, kFast, EpilogueKind::tma_store, 2,
                                         ConsumerOrder::pingpong>>());
  add_pingpong<Accumulation::promoted>(out);
}

}  // namespace fp8gemm::ch06
