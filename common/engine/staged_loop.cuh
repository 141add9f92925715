// An experimental promoted main loop for the same-run comparison of session 15 (chapter 8's
// NOTEBOOK.md): the lean loop of kernel.cuh (promoted_loop) with every K block's ring stage a
// compile-time constant, where that is possible without knowing the stage at compile time: when
// a tile starts at ring stage 0 and its K-block count is a multiple of kStages, its K blocks go
// in rounds of kStages whose block r is always in stage r, with the round's phase. With
// kStages = 4, every tile of a shape with K a multiple of 512 is such a tile (each has the same
// K-block count, a multiple of 4, so every tile starts where the last one ended: at stage 0).
// Only such shapes may run it: the engine's plan refuses other K for these kernels (kKRound,
// KernelInfo::k_round; the loop would skip a tile's last blocks and fall out of step with the
// producer). Neither a fallback to
// the lean loop nor a trap is compiled in: in the same kernel, the fallback made ptxas spill
// 276-372 bytes and move the descriptors through R2UR, and the trap alone 1,048 bytes.
//
// Why: ncu's source view of the lean loop counts 40 more instructions per warp and K block than
// DeepGEMM's, whose K count and stage count are compile-time constants. In the static SASS of the
// 4-stage 256 x 128 tiles this loop has 68-71 instructions per K block beside its QGMMA and FFMA
// against the lean loop's 77-79, but spills a little inside the loop. Measured on the H200 (chapter
// 8's NOTEBOOK.md, "Session 15"): 4.2% fewer instructions executed and 1.3-5.0% slower than
// the lean loop on every case (5.4% more cycles on bal_g4, the tensor pipe 80% busy against 84%).
// On the 3-stage default tile, where it does not spill (59 instructions per K block against 79),
// it was 0.4-0.5% faster at K = 6144 and 1.9-2.1% at K = 1536, in two runs: the spills, not the
// loop, made the 4-stage ones slow. Not a default; kept for the comparison.
//
// StagedMath<Cfg, Base> wraps a block-scaled math policy (BlockScaledMath or chapter 8's
// GroupedBlockScaledMath) and replaces only its main loop (the promotion is the policy's own,
// make_promotion); the kernel's name gets "_loop12".
#pragma once

#include <cstdint>

#include "common/engine/block_scaled.cuh"

namespace fp8gemm::engine {

inline constexpr int kStagedLoop = 12;

template <class Cfg, class Base>
struct StagedMath : Base {
  using typename Base::Params;
  using typename Base::State;
  static constexpr int kPromotedLoopVersion = kStagedLoop;
  /// Whole rounds of kStages K blocks (KernelInfo::k_round: the plan refuses other K).
  static constexpr int kKRound = Cfg::kStages;
  using Lean = typename Base::Base;  // the lean loop's policy (PerTensorMath)

  template <class TileT>
  __device__ __forceinline__ static void mainloop(float (&acc)[Cfg::kWavesM][Cfg::kBlockN / 2],
                                                  State& st, const Params& p, const TileT& t,
                                                  std::uint32_t ring, std::uint32_t side,
                                                  const std::uint64_t* full,
                                                  const std::uint64_t* empty, int wg_index,
                                                  std::uint32_t rank) {
    const int wg = warp_uniform(wg_index);
    auto promotion = Base::make_promotion(p, t, side, wg);
    constexpr int kS = Cfg::kStages;
    const int k_blocks = p.k_blocks;
    // Every tile starts at ring stage 0 (the plan allows this kernel only where K is a multiple
    // of 128 kStages, so every tile has whole rounds).
    Lean::zero(acc);
    const typename Lean::StageDescs d0 = Lean::stage_descs(ptx::make_desc_k_major_sw128(ring), 0, wg);
    const std::uint32_t full0 = ptx::smem_u32(full);
    const std::uint32_t empty0 = ptx::smem_u32(empty);
    std::uint32_t phase = st.phase;
    int kb = 0;
#pragma unroll 1
    for (; kb + kS <= k_blocks; kb += kS) {
      round<0>(acc, kb, phase, d0, full0, empty0, rank, promotion);
      phase ^= 1u;
    }
    st.skip(k_blocks);
  }

  /// Blocks kR .. kStages - 1 of the round starting at K block kb: block r in ring stage r.
  template <int kR, class Promotion>
  __device__ __forceinline__ static void round(float (&acc)[Cfg::kWavesM][Cfg::kBlockN / 2],
                                               int kb, std::uint32_t phase,
                                               const typename Lean::StageDescs& d0,
                                               std::uint32_t full0, std::uint32_t empty0,
                                               std::uint32_t rank, Promotion& promotion) {
    if constexpr (kR < Cfg::kStages) {
      constexpr int kWaveN = Cfg::kPromotedWaveN;
      constexpr int kWavesN = Cfg::kBlockN / kWaveN;
      float part[kWaveN / 2];
      const auto blk = promotion.block(kb + kR);
      wait_barrier<Cfg>(full0 + 8u * kR, phase);
      constexpr std::uint32_t kOffset = std::uint32_t(kR) * Cfg::kStageBytes;
      const std::uint64_t desc_a = ptx::advance_desc(d0.a, kOffset);
      const std::uint64_t desc_b = ptx::advance_desc(d0.b, kOffset);
#pragma unroll
      for (int w = 0; w < Cfg::kWavesM; ++w) {
        const auto slab = promotion.slab(kR, w);
#pragma unroll
        for (int wn = 0; wn < kWavesN; ++wn) {
          Lean::template partial_sum<kWaveN>(part, desc_a, desc_b, w, wn);
          if (w == Cfg::kWavesM - 1 && wn == kWavesN - 1) Lean::release(empty0 + 8u * kR, rank);
          promotion.template promote<kWaveN>(acc[w], part, wn, slab, blk);
        }
      }
      round<kR + 1>(acc, kb, phase, d0, full0, empty0, rank, promotion);
    }
  }
};

}  // namespace fp8gemm::engine
