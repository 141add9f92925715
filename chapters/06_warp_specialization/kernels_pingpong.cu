// Ping-pong consumers (ConsumerOrder::pingpong, common/engine/config.cuh): the two consumer
// warpgroups take whole tiles in turn, so one warpgroup's epilogue runs beside the other's main
// loop instead of leaving the tensor cores idle while a tile is stored. A warpgroup holds a whole
// tile: 128 x 128 and 64 x 256 (128 FP32 accumulators per thread) in both modes, 128 x 192 (192)
// in fast mode only. Each warpgroup stages its own tiles: b2 is a ring of two 64-column units per
// warpgroup, b4 one buffer per unit of a 128 x 128 tile. Measured against the cooperative order
// in NOTEBOOK.md ("Ping-pong consumers"); the fast column of the table (ws_gemm.cpp) picks them
// where they measured faster than every cooperative kernel.
#include "common/engine/kernel_info.cuh"
#include "kernels.hpp"

namespace fp8gemm::ch06 {
using namespace engine;

constexpr auto kStore = EpilogueKind::tma_store;
constexpr auto kPP = ConsumerOrder::pingpong;

template <Accumulation A>
static void add_pingpong(std::vector<KernelInfo>& out) {
  out.push_back(kernel_info<KernelConfig<128, 128, 6, 1, 1, A, kStore, 2, kPP>>());
  out.push_back(kernel_info<KernelConfig<128, 128, 6, 2, 1, A, kStore, 2, kPP>>());
  out.push_back(kernel_info<KernelConfig<128, 128, 5, 2, 1, A, kStore, 4, kPP>>());
  out.push_back(kernel_info<KernelConfig<128, 128, 6, 1, 2, A, kStore, 2, kPP>>());
  out.push_back(kernel_info<KernelConfig<64, 256, 4, 1, 1, A, kStore, 2, kPP>>());
  out.push_back(kernel_info<KernelConfig<64, 256, 4, 2, 1, A, kStore, 2, kPP>>());
}

template <class C>
static void add_late_hand_over(std::vector<KernelInfo>& out) {
  out.push_back(kernel_info<C, LateHandOverMath<C>>());
}

void add_kernels_pingpong(std::vector<KernelInfo>& out) {
  add_pingpong<Accumulation::fast>(out);
  // Fast accumulation only: 192 accumulators per thread, the widest tile a warpgroup can hold
  // beside its addresses (128 x 256 would need 256).
  constexpr auto kFast = Accumulation::fast;
  out.push_back(kernel_info<KernelConfig<128, 192, 4, 1, 1, kFast, kStore, 2, kPP>>());
  out.push_back(kernel_info<KernelConfig<128, 192, 4, 2, 1, kFast, kStore, 2, kPP>>());
  // 176 columns for N = 2112 (12 tiles of 176 across it: 384 tiles at M = 4096, 97% of three
  // waves of 132, against 352 of 192 columns, 89%), the table's cooperative tile there. 176 / 8
  // is even but 176 is no multiple of 32: 16-column staging units, 22 per warpgroup tile; b11
  // stages half a tile before its first reuse, as the cooperative kernel does.
  out.push_back(kernel_info<KernelConfig<128, 176, 4, 1, 1, kFast, kStore, 11, kPP>>());
  out.push_back(kernel_info<KernelConfig<128, 176, 4, 2, 1, kFast, kStore, 11, kPP>>());
  // A fifth stage for the table's ping-pong tiles (fewer staging buffers to make room: 221 and
  // 211 KB of shared memory), and 128 x 192 with A multicast instead of B.
  out.push_back(kernel_info<KernelConfig<128, 192, 5, 2, 1, kFast, kStore, 1, kPP>>());
  out.push_back(kernel_info<KernelConfig<128, 176, 5, 2, 1, kFast, kStore, 4, kPP>>());
  out.push_back(kernel_info<KernelConfig<128, 192, 4, 1, 2, kFast, kStore, 2, kPP>>());
  add_pingpong<Accumulation::promoted>(out);
  // The fast table's ping-pong kernels handing over only after their last wgmma completed (the
  // engine's order until session 23; LateHandOverMath): the same-run comparison, by name only.
  add_late_hand_over<KernelConfig<128, 192, 4, 2, 1, kFast, kStore, 2, kPP>>(out);
  add_late_hand_over<KernelConfig<128, 192, 4, 1, 1, kFast, kStore, 2, kPP>>(out);
  add_late_hand_over<KernelConfig<128, 176, 4, 2, 1, kFast, kStore, 11, kPP>>(out);
  add_late_hand_over<KernelConfig<128, 128, 6, 2, 1, kFast, kStore, 2, kPP>>(out);
  add_late_hand_over<KernelConfig<128, 128, 6, 1, 1, kFast, kStore, 2, kPP>>(out);
}

}  // namespace fp8gemm::ch06
