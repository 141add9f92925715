// The ring's position: which stage and which phase (parity) of its mbarriers the next K block
// uses. The producer and every consumer keep their own copy and advance it once per K block, in
// the same order, ACROSS tiles: a persistent CTA never resets it, so the producer can fill the
// next tile's first stages while the consumers are still on the previous tile (CUTLASS's
// PipelineState; DeepGEMM carries the running k-iteration instead).
//
// Barriers of stage s (common/ptx/mbarrier.cuh for the phase rules):
//   full[s]  : 1 arrival (the producer's arrive.expect_tx) + the stage's bytes from TMA; its
//              completion number r (r = 0, 1, ...) means "stage s holds its r-th K block".
//              Consumers wait for parity `phase`.
//   empty[s] : kStageReaderWarps x kClusterSize arrivals (every consumer warp that reads the
//              stage, of every CTA that its multicast writes into); completion r means "the
//              r-th K block of stage s has been read". The producer waits for parity
//              `phase ^ 1` before refilling: in the first round that is the phase before the
//              barrier's first, which counts as done.
#pragma once

#include <cstdint>
#include <type_traits>

#include "common/engine/params.hpp"
#include "common/ptx/mbarrier.cuh"

namespace fp8gemm::engine {

/// Waits until the phase with parity `parity` of the ring barrier at shared address `bar` has
/// completed, as the configuration says (Cfg::kBarrierWait, params.hpp): asleep (the default) or
/// re-trying.
template <class Cfg>
__device__ __forceinline__ void wait_barrier(std::uint32_t bar, std::uint32_t parity) {
  if constexpr (Cfg::kBarrierWait == BarrierWait::sleep)
    ptx::mbarrier_wait_sleep(bar, parity);
  else
    ptx::mbarrier_wait(bar, parity);
}

/// x of the warp's lane 0, in every lane (__shfl_sync). The engine passes values that are the same
/// in every lane through it (the warpgroup index, the lean loop's ring and barrier addresses):
/// ptxas then treats them as warp-uniform (the consumers' wgmma descriptors and their address
/// arithmetic stay in uniform registers) and cannot rematerialise them from what they were
/// computed from (session 24: the barrier addresses re-derived from the CTA id, S2UR, at the head
/// of every unrolled K-loop body; kernel.cuh, kPinnedLoop).
template <class T>
__device__ __forceinline__ T warp_uniform(T x) {
  return __shfl_sync(0xffffffffu, x, 0);
}

/// A struct of lane 0 (one computed there alone), in every lane: one __shfl_sync per 32-bit word.
template <class T>
__device__ __forceinline__ T from_lane0(const T& x) {
  static_assert(sizeof(T) % 4 == 0 && std::is_trivially_copyable_v<T>, "32-bit words only");
  T r;
  const auto* in = reinterpret_cast<const std::uint32_t*>(&x);
  auto* out = reinterpret_cast<std::uint32_t*>(&r);
#pragma unroll
  for (int i = 0; i < int(sizeof(T) / 4); ++i) out[i] = __shfl_sync(0xffffffffu, in[i], 0);
  return r;
}

template <int kStages>
struct PipelineState {
  int stage = 0;
  std::uint32_t phase = 0;

  __device__ __forceinline__ void advance() {
    if (++stage == kStages) {
      stage = 0;
      phase ^= 1u;
    }
  }
  /// advance() n times (n >= 0): a ping-pong consumer passes over the other warpgroup's tile.
  __device__ __forceinline__ void skip(int n) {
    const int s = stage + n;
    const int wraps = s / kStages;
    stage = s - wraps * kStages;
    phase ^= std::uint32_t(wraps) & 1u;
  }
};

}  // namespace fp8gemm::engine
