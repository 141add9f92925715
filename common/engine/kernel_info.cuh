// KernelInfo (plan.hpp) of one engine kernel instance: include in the .cu file that instantiates
// the kernel.
#pragma once

#include <string>

#include "common/engine/config.cuh"
#include "common/engine/kernel.cuh"
#include "common/engine/plan.hpp"

namespace fp8gemm::engine {

template <class Cfg, class Math = PerTensorMath<Cfg>>
KernelInfo kernel_info() {
  KernelInfo k;
  k.name = std::to_string(Cfg::kBlockM) + "x" + std::to_string(Cfg::kBlockN) + "_s" +
           std::to_string(Cfg::kStages) + "_c" + std::to_string(Cfg::kClusterM) + "x" +
           std::to_string(Cfg::kClusterN) + "_" + to_string(Cfg::kAccumulation) +
           (Cfg::kEpilogue == EpilogueKind::tma_store ? "_tma_b" + std::to_string(Cfg::kEpiBuffers)
            : Cfg::kEpilogue == EpilogueKind::registers ? std::string("_reg")
            : Cfg::kEpilogue == EpilogueKind::tma_store_f32
                ? "_f32_tma_b" + std::to_string(Cfg::kEpiBuffers)
                : std::string("_f32"));
  // Ping-pong consumers (ConsumerOrder::pingpong) carry it in the name.
  if (Cfg::kPingPong) k.name += "_pp";
  // Ping-pong consumers handing over after their last wgmma completed (the order until session
  // 23): a comparison twin.
  if constexpr (requires { Math::kLateHandOver; }) {
    k.name += "_lho";
    k.comparison_only = true;
  }
  // A promoted kernel with a loop other than the default (the same-run comparison of loop
  // versions, PerTensorMath's kPromotedLoop) carries it in its name.
  if constexpr (requires { Math::kPromotedLoopVersion; })
    if (Cfg::kAccumulation == Accumulation::promoted &&
        Math::kPromotedLoopVersion != Math::kDefaultLoop) {
      // kPinnedLoop + v: "_pin", then v's name unless v is the default (a tile whose default is
      // not pinned: "_pin" alone is its default loop pinned).
      const bool pinned = Math::kPromotedLoopVersion >= kPinnedLoop;
      const int v = pinned ? Math::kPromotedLoopVersion - kPinnedLoop : Math::kPromotedLoopVersion;
      if (pinned) k.name += "_pin";
      if (!pinned || v != Math::kDefaultLoop)
        k.name += v == kTwoDeepLoop         ? std::string("_2deep")
                  : v == kTwoDeepCycleLoop  ? std::string("_cyc")
                  : v == kTwoDeepLongCycleLoop ? std::string("_cycl")
                  : v == kTwoDeepHalvesLoop ? std::string("_2deeph")
                  : v == kStaggeredLoop     ? std::string("_stag")
                  : v > kEarlyWaveLoop      ? "_ew" + std::to_string(v - kEarlyWaveLoop)
                  : v > kPrefetchScalesLoop ? "_pf" + std::to_string(v - kPrefetchScalesLoop)
                                            : "_loop" + std::to_string(v);
      k.comparison_only = true;
    }
  // A kernel whose policy would run the early first wave, built without it (chapter 8's masked
  // calls with short K; grouped.cuh, GroupedNoEarlyWaveMath): a kernel of its own, not a twin.
  if constexpr (requires { Math::kWithoutEarlyWave; }) k.name += "_noew";
  // A kernel whose threads wait on the ring's barriers by re-trying instead of sleeping (the
  // engine's wait until session 17, BarrierWait::spin) likewise.
  if (Cfg::kBarrierWait == BarrierWait::spin) {
    k.name += "_spin";
    k.comparison_only = true;
  }
  if constexpr (requires { Math::kStreamK; }) {
    // Stream-K (stream_k.cuh): slower than the data-parallel kernels wherever measured (chapter
    // 8's README, "Session 18"), so kept for the comparison by name only.
    k.name += Math::kStreamKRegisterReads ? "_skr" : "_sk";
    k.stream_k = true;
    k.comparison_only = true;
  }
  if constexpr (requires { Math::kDynamicSchedule; }) {
    // Tiles from a device counter instead of a fixed stride (grouped.cuh, GroupedDynamicMath):
    // measured ahead of its static twin in session 33 (chapter 8's NOTEBOOK.md), and served by
    // chapter 8's counter schedule (Options::counter_schedule: the caller's counter), never by
    // default_kernel() (a plan's own counter makes it single-stream).
    k.name += "_dyn";
    k.dynamic_schedule = true;
  }
  if constexpr (requires { Math::kKRound; }) k.k_round = Math::kKRound;
  k.kernel = reinterpret_cast<const void*>(&gemm_kernel<Cfg, Math>);
  k.block_m = Cfg::kBlockM;
  k.block_n = Cfg::kBlockN;
  k.stages = Cfg::kStages;
  k.cluster_m = Cfg::kClusterM;
  k.cluster_n = Cfg::kClusterN;
  k.accumulation = Cfg::kAccumulation;
  k.epilogue = Cfg::kEpilogue;
  k.epi_cols = Cfg::kEpiCols;
  k.epi_swizzle_bytes = Cfg::kEpiSwizzleBytes;
  k.epi_buffers = Cfg::kEpiBuffers;
  k.threads = Cfg::kThreads;
  k.smem_bytes = smem_bytes<Cfg, Math>();
  return k;
}

}  // namespace fp8gemm::engine
