// The engine's kernel: persistent, warp-specialised FP8 GEMM (chapters 6-10).
//
//   D (M x N, bf16, row-major) = scale_a * scale_b * A (M x K, e4m3, row-major)
//                                                  . B (N x K, e4m3, row-major)^T
//
// Grid: at most one CTA (or cluster) per SM, each looping over tiles from the tile scheduler
// (scheduler.cuh) until there are none left. Roles (config.cuh):
//   producer warpgroup, its first warp (an elected lane issues; session 38): for every tile, every K block: wait until ring stage s is
//     empty (in every CTA its multicast writes into), announce the stage's bytes on full[s],
//     issue the TMA loads (the shared operand: this CTA's half, multicast to the cluster);
//   consumer warpgroups: for every tile: the main loop (the Math policy below) waits on full[s],
//     issues wgmma from the stage, releases it on empty[s] of every CTA of the cluster; then the
//     epilogue (epilogue.cuh) writes their rows of D, and they go on to the next tile, whose first
//     stages the producer has usually filled already.
// The ring's {stage, phase} (pipeline.cuh) runs on across tiles in the producer and the consumers
// alike. docs/engine.md draws the timeline and the barriers.
#pragma once

#include <cuda.h>
#include <cuda_runtime.h>

#include <cstdint>
#include <type_traits>
#include <utility>

#include "common/engine/config.cuh"
#include "common/engine/epilogue.cuh"
#include "common/engine/params.hpp"
#include "common/engine/pipeline.cuh"
#include "common/engine/scheduler.cuh"
#include "common/output_scale.cuh"
#include "common/ptx/cluster.cuh"
#include "common/ptx/elect.cuh"
#include "common/ptx/mbarrier.cuh"
#include "common/ptx/smem.cuh"
#include "common/ptx/tma.cuh"
#include "common/ptx/warpgroup.cuh"
#include "common/ptx/wgmma.cuh"

namespace fp8gemm::engine {

/// The math policy of the per-tensor GEMM. A policy is what chapter 7 (block scaling) and
/// chapter 9 (MX scales) swap; the ring, the scheduler, the producer's tile loads and the
/// epilogue stay. Its interface, used by gemm_kernel:
///   Params                    the kernel's parameter block (tensor maps, schedule, D, scales)
///   State                     the ring position type (PipelineState)
///   kExtraStageBytes          bytes per stage of a second, "side" ring (e.g. the stage's A and B
///                             scales), a multiple of 128, after the operand ring
///   kExtraTxBytes             of those, the bytes the producer's extra copies deliver per stage,
///                             expected on the stage's full barrier with the A and B tiles
///   produce_extra(p, extra, bar, tile, kb)   the producer's extra copies for a K block
///   output_scale(p)           what the epilogue multiplies the FP32 sums by (an OutputScale, or
///                             IdentityOutputScale when the main loop applied the scales)
///   mainloop(acc, st, p, tile, ring, side, full, empty, wg, rank)   a consumer warpgroup's K loop
/// `acc` receives the tile's FP32 sums.
/// The promoted main loop's versions (kPromotedLoop of the math policies; docs/engine.md):
///   0             the first loop: per K block and group, 4 wgmma into one partial sum, wait,
///                 add; descriptors rebuilt from their address (mainloop_promoted_v0);
///   1, 2, 4, 8    the lean one-buffer loop (promoted_loop), its K-block loop unrolled that
///                 many times: barrier addresses, the K bound and the scale pointers once per
///                 tile, descriptors by addition;
///   kTwoDeepLoop  two partial sums, the next block issued before the last one is promoted
///                 (promoted_loop_two_deep), on tiles where they fit (two_deep_fits);
///   kTwoDeepCycleLoop   the same unrolled over a ring cycle (a twin only,
///                 promoted_loop_two_deep_cycle).
/// Each policy's default (kDefaultLoop) is the fastest one measured on the H200 in one run
/// (plots/data/h200/engine_loops/, chapter 6's README): two-deep wherever it fits; otherwise the
/// lean one unrolled 8x for per-tensor scaling on 256 x 128 and the first loop on its other tiles
/// (default_per_tensor_loop), and the lean one unrolled (8x or 4x) for block scaling
/// (default_block_scaled_loop; chapter 8's grouped kernels use block scaling's since session 12). The others stay compiled
/// for that comparison only (kernels_loops.cu, names ending in _loopN or _2deep).
inline constexpr int kTwoDeepLoop = 10;
/// The two-deep loop unrolled over a whole ring cycle (promoted_loop_two_deep_cycle): inside the
/// cycle each K block's stage is a compile-time constant, so its barrier, descriptor and
/// side-ring offsets are immediates and the stage / phase bookkeeping is gone from the loop.
/// Rings with an even number of stages. Alone a comparison twin (_cyc): faster where K is long,
/// slower where it is short (session 39; chapter 7's NOTEBOOK.md, "Session 39").
inline constexpr int kTwoDeepCycleLoop = 13;
/// The cycle loop for a tile of at least two ring cycles of K blocks (2 x kStages), the two-deep
/// loop for a shorter one: chosen per tile on its K-block count (uniform, outside both loops),
/// both compiled into the kernel. Block scaling's default on the narrow one-slab tiles
/// (default_block_scaled_loop; session 40, chapter 7's NOTEBOOK.md "Session 40").
inline constexpr int kTwoDeepLongCycleLoop = 15;
/// Chapter 8's weight gradient only (KGroupedMath): two-deep over the two column halves of a K
/// block, so the totals plus two half-width partial sums fit where two full-width ones do not.
inline constexpr int kTwoDeepHalvesLoop = 11;
/// kEarlyWaveLoop + u (u = 1, 2, 4, 8): the lean loop unrolled u times, with each tile's first
/// partial sum (its first K block's first slab and column group) issued before the previous
/// tile's epilogue (gemm_kernel's EarlyWaveConsumers path), so that its tensor-core work and
/// latency run under that epilogue instead of after it (session 22; chapter 7's NOTEBOOK.md, "The
/// next tile's first wave under the epilogue"). Cooperative consumers; dense tiles, and since
/// session 23 the grouped tiles chapter 8 hands over through the ring.
inline constexpr int kEarlyWaveLoop = 200;
/// kPinnedLoop + v (v a lean loop version: u or kEarlyWaveLoop + u): that loop with the ring's and
/// the barriers' shared addresses passed through __shfl_sync before it, which ptxas cannot see
/// through, so that it keeps them in registers instead of re-deriving them from the CTA id
/// (S2UR SR_CgaCtaId) at the head of every unrolled body. The early-wave defaults are pinned since
/// session 24 (chapter 7's NOTEBOOK.md, "The loop head": 0.989x the time of the unpinned loop on
/// chapter 6's 256 x 128, 0.995x on chapter 7's, 1.000x on 128 x 256, same run).
inline constexpr int kPinnedLoop = 1000;
/// Chapter 8's weight gradient only: its first loop with the first N pairs of column scales read
/// from shared memory before the wait for the partial sum (kPrefetchScalesLoop + N), so that their
/// latency hides behind the tensor cores instead of stalling the promotion.
inline constexpr int kPrefetchScalesLoop = 100;
/// Chapter 8's weight gradient only: its first loop with the two consumer warpgroups taking turns
/// at the tensor cores (KGroupedMath, "staggered"): a warpgroup issues a K block's wgmma only after
/// the other one has issued its previous piece, so that one warpgroup's promotion runs while the
/// other's wgmma are in the tensor cores, instead of both promoting at once. Measured 0.96-1.03x
/// the first loop on the default tiles (session 29): kept for the comparison only (_stag).
inline constexpr int kStaggeredLoop = 12;

/// Two partial sums fit beside the totals: one 64-row slab per consumer warpgroup, its K block
/// one partial sum (kPromotedWaveN = BlockN), and totals plus two partial sums within the
/// registers of a consumer thread less the margin for addresses and loop state.
template <class Cfg>
constexpr bool two_deep_fits() {
  return Cfg::kWavesM == 1 && Cfg::kPromotedWaveN == Cfg::kBlockN &&
         Cfg::kAccumulators + Cfg::kBlockN <= Cfg::kConsumerRegs - Cfg::kRegMargin;
}
/// Per-tensor scaling: two-deep where it fits; the lean loop unrolled 8x on two 64-row slabs per
/// warpgroup (256 x 128: +1-24% over the first loop on six of seven shapes in three same-run
/// comparisons, 377d953, 172780d and 80c55ad; -7% to +4% at K = 512), since session 22 with the
/// early first wave (kEarlyWaveLoop + 8: 0.963-0.982x the time geomean over six shapes against
/// the plain 8x loop, same run, 9fff4e9); the first loop elsewhere (192 x 128 unrolled 8x: -1% to
/// +6% geomean, flat with a 2 x 1 cluster; 128 x 256: spills).
template <class Cfg>
constexpr int default_per_tensor_loop() {
  if (two_deep_fits<Cfg>()) return kTwoDeepLoop;
  if (Cfg::kWavesM < 2) return 0;
  // Ping-pong warpgroups (a 128-row tile each) keep the plain 8x loop: the early first wave is a
  // cooperative order.
  return Cfg::kPingPong ? 8 : kPinnedLoop + kEarlyWaveLoop + 8;
}

/// A main loop's hook that does nothing (PerTensorMath::mainloop's after_issue).
struct NoHook {
  __device__ __forceinline__ void operator()() const {}
};

template <class Cfg, int kPromotedLoop = default_per_tensor_loop<Cfg>()>
struct PerTensorMath {
  using State = PipelineState<Cfg::kStages>;
  /// The tile scheduler and its tile (scheduler.cuh); chapter 8's grouped policies bring others.
  using Scheduler = DenseTileScheduler<Cfg::kClusterM, Cfg::kClusterN>;
  using TileT = Tile;
  /// The kernel's parameter block (a math policy with more inputs, e.g. chapter 7's scale
  /// tensors, brings its own).
  using Params = GemmParams;
  /// Its main loop and epilogue work for ping-pong consumers (ConsumerOrder::pingpong): the
  /// warpgroup's rows come from `wg` (the kernel's slot: 0 for ping-pong) only.
  static constexpr bool kSupportsPingPong = true;
  /// Bytes per stage of the side ring (chapter 7: the stage's scales); none for per-tensor scales.
  static constexpr std::uint32_t kExtraStageBytes = 0;
  static constexpr std::uint32_t kExtraTxBytes = 0;
  static constexpr std::uint32_t kStageStride = Cfg::kStageBytes;
  /// The promoted loop's version and this policy's default (above); kernel_info() names the
  /// non-default ones.
  static constexpr int kPromotedLoopVersion = kPromotedLoop;
  static constexpr int kDefaultLoop = default_per_tensor_loop<Cfg>();
  static constexpr bool kTwoDeepFits = two_deep_fits<Cfg>();
  /// kPinnedLoop + v: whether the lean loop's addresses are pinned, and v.
  static constexpr bool kPinAddresses = kPromotedLoop >= kPinnedLoop;
  static constexpr int kLoopBase = kPinAddresses ? kPromotedLoop - kPinnedLoop : kPromotedLoop;
  /// The lean loop's unroll factor, and whether each tile's first partial sum is issued before
  /// the previous tile's epilogue (kEarlyWaveLoop + u).
  static constexpr bool kEarlyWave = kLoopBase > kEarlyWaveLoop &&
                                     Cfg::kAccumulation == Accumulation::promoted &&
                                     !Cfg::kPingPong;
  static constexpr int kLeanUnroll =
      kLoopBase > kEarlyWaveLoop ? kLoopBase - kEarlyWaveLoop : kLoopBase;
  /// The policy whose main loop the early first wave replaces (EarlyWaveConsumers): a policy
  /// that derives from this one and brings its own main loop does not match it, so it keeps its
  /// loop whatever kPromotedLoop it inherits.
  using EarlyWavePolicy = PerTensorMath;

  __device__ __forceinline__ static Scheduler make_scheduler(const GemmParams& p,
                                                            std::uint32_t rank) {
    return Scheduler(p.schedule, rank);
  }
  /// Where tile t is: the first row of A (and D) it covers, the first row of B (= column of D),
  /// the first column of D, and the row of D at which its valid rows end.
  __device__ __forceinline__ static int a_row(const Tile& t) { return t.m_block * Cfg::kBlockM; }
  __device__ __forceinline__ static int b_row(const GemmParams&, const Tile& t) {
    return t.n_block * Cfg::kBlockN;
  }
  __device__ __forceinline__ static int d_col(const Tile& t) { return t.n_block * Cfg::kBlockN; }
  __device__ __forceinline__ static int row_end(const GemmParams& p, const Tile&) { return p.M; }
  /// Tile t's K blocks: kb = k_first(p, t) .. k_end(p, t) - 1 (the whole K here; chapter 8's
  /// weight gradient reduces over its group's tokens only). A policy whose D rows are not its A
  /// rows (chapter 8's weight gradient: D holds G matrices) also defines d_row(p, t) (tile_d_row).
  template <class TileT>
  __device__ __forceinline__ static int k_first(const GemmParams&, const TileT&) { return 0; }
  template <class TileT>
  __device__ __forceinline__ static int k_end(const GemmParams& p, const TileT&) {
    return p.k_blocks;
  }

  /// Producer hook: copies of K block kb of tile t beyond A and B into the stage's side-ring bytes
  /// at `extra`, completing on `bar`. Nothing for per-tensor scales.
  __device__ __forceinline__ static void produce_extra(const Params&, std::uint32_t /*extra*/,
                                                       std::uint32_t /*bar*/, const Tile&,
                                                       int /*kb*/) {}

  /// The scale the epilogue applies to the FP32 sums: scale_a * scale_b (output_scale.cuh).
  __device__ __forceinline__ static OutputScale output_scale(const Params& p) {
    return load_output_scale(p.scale_a, p.scale_b);
  }

  /// Releases stage s: one arrival per consumer warp on empty[s] of this CTA and of the other CTA
  /// of the cluster (its multicast writes into our stage s too, so it must wait for us as well).
  __device__ __forceinline__ static void release(std::uint32_t empty_bar, std::uint32_t rank) {
    if (threadIdx.x % 32 == 0) {
      ptx::mbarrier_arrive(empty_bar);
      if constexpr (Cfg::kClusterSize == 2)
        ptx::mbarrier_arrive_cluster(ptx::map_shared_to_cta(empty_bar, rank ^ 1u));
    }
  }

  /// The matrix descriptors of ring stage `stage` for warpgroup `wg`: A at its first row, B at
  /// row 0, by addition from desc0 (the descriptor of the ring's start; promoted main loops).
  struct StageDescs {
    std::uint64_t a, b;
  };
  __device__ __forceinline__ static StageDescs stage_descs(std::uint64_t desc0, int stage, int wg) {
    const std::uint32_t stage_offset = std::uint32_t(stage) * Cfg::kStageBytes;
    return {ptx::advance_desc(desc0, stage_offset + std::uint32_t(wg * Cfg::kRowsPerWG) * Cfg::kBlockK),
            ptx::advance_desc(desc0, stage_offset + Cfg::kTileABytes)};
  }

  /// Descriptor of the 64-row A slab `wave` of this warpgroup at k step `ks` in stage `stage`.
  __device__ __forceinline__ static std::uint64_t desc_a(std::uint32_t stage_base, int wg,
                                                         int wave, int ks) {
    return ptx::make_desc_k_major_sw128(stage_base +
                                        std::uint32_t(wg * Cfg::kRowsPerWG + wave * 64) *
                                            Cfg::kBlockK +
                                        std::uint32_t(ks * Cfg::kWgmmaK));
  }
  /// Descriptor of B rows [row, row + n) at k step `ks`.
  __device__ __forceinline__ static std::uint64_t desc_b(std::uint32_t stage_base, int row,
                                                         int ks) {
    return ptx::make_desc_k_major_sw128(stage_base + Cfg::kTileABytes +
                                        std::uint32_t(row) * Cfg::kBlockK +
                                        std::uint32_t(ks * Cfg::kWgmmaK));
  }

  /// The consumer warpgroup `wg`'s main loop over tile t's K blocks: acc receives the tile's FP32
  /// sums (before the epilogue's scale).
  __device__ __forceinline__ static void mainloop(float (&acc)[Cfg::kWavesM][Cfg::kBlockN / 2],
                                                  State& st, const Params& p, const Tile& t,
                                                  std::uint32_t ring, std::uint32_t side,
                                                  const std::uint64_t* full,
                                                  const std::uint64_t* empty, int wg,
                                                  std::uint32_t rank) {
    mainloop(acc, st, p, t, ring, side, full, empty, wg, rank, NoHook{});
  }
  /// The same, calling after_issue() once every wgmma of the tile has been issued and all but
  /// the last K block's have completed (the fast loop; the promoted loops: when they return).
  /// Ping-pong consumers hand the tensor cores to the other warpgroup there (gemm_kernel): its
  /// first wgmma then queue behind this warpgroup's last ones instead of starting after they
  /// drained. A policy that brings its own mainloop hides this overload, so the kernel hands over
  /// after such a policy's main loop returns, as before.
  template <class AfterIssue>
  __device__ __forceinline__ static void mainloop(float (&acc)[Cfg::kWavesM][Cfg::kBlockN / 2],
                                                  State& st, const Params& p, const Tile& /*t*/,
                                                  std::uint32_t ring, std::uint32_t /*side*/,
                                                  const std::uint64_t* full,
                                                  const std::uint64_t* empty, int wg,
                                                  std::uint32_t rank, AfterIssue&& after_issue) {
    if constexpr (Cfg::kAccumulation == Accumulation::fast) {
      fast_loop<ptx::E4m3Mma>(acc, st, p, ring, full, empty, wg, rank, after_issue);
    } else {
      if constexpr (kPromotedLoop == 0) {
        mainloop_promoted_v0(acc, st, p, ring, full, empty, wg, rank);
      } else {
        // The two-deep loops take the warpgroup index through a shuffle, as the block-scaled
        // loops have it: ptxas then keeps the descriptors in uniform registers (session 39:
        // without it, chapter 6's promoted narrow tiles lost what the shuffled index in
        // gemm_kernel had given them in session 38, 0.909x -> 1.008x the time at
        // 64 x 2112 x 7168). The lean loop takes it as it comes.
        constexpr bool kTwoDeepFamily = kPromotedLoop == kTwoDeepLoop ||
                                        kPromotedLoop == kTwoDeepCycleLoop ||
                                        kPromotedLoop == kTwoDeepLongCycleLoop;
        UnitPromotion promotion;
        if constexpr (kTwoDeepFamily)
          run_promoted_loop(acc, st, 0, p.k_blocks, ring, full, empty, warp_uniform(wg), rank,
                            promotion);
        else
          run_promoted_loop(acc, st, 0, p.k_blocks, ring, full, empty, wg, rank, promotion);
      }
      after_issue();
    }
  }

  /// The promoted loop of this policy's version (kPromotedLoop other than 0) over the K blocks
  /// [kb_begin, kb_end) with the promotion `pr`: the one place that maps the version to its loop,
  /// for this dense path and for BlockScaledMath's K-block ranges. kTwoDeepLongCycleLoop chooses
  /// per tile on its K-block count (uniform across the warpgroup, outside both loops): the cycle
  /// loop for at least two ring cycles, else the two-deep loop.
  template <class Pr>
  __device__ __forceinline__ static void run_promoted_loop(
      float (&acc)[Cfg::kWavesM][Cfg::kBlockN / 2], State& st, int kb_begin, int kb_end,
      std::uint32_t ring, const std::uint64_t* full, const std::uint64_t* empty, int wg,
      std::uint32_t rank, Pr& pr) {
    if constexpr (kPromotedLoop == kTwoDeepLoop)
      promoted_loop_two_deep(acc, st, kb_begin, kb_end, ring, full, empty, wg, rank, pr);
    else if constexpr (kPromotedLoop == kTwoDeepCycleLoop)
      promoted_loop_two_deep_cycle(acc, st, kb_begin, kb_end, ring, full, empty, wg, rank, pr);
    else if constexpr (kPromotedLoop == kTwoDeepLongCycleLoop) {
      if (kb_end - kb_begin >= 2 * Cfg::kStages)
        promoted_loop_two_deep_cycle(acc, st, kb_begin, kb_end, ring, full, empty, wg, rank, pr);
      else
        promoted_loop_two_deep(acc, st, kb_begin, kb_end, ring, full, empty, wg, rank, pr);
    } else
      promoted_loop(acc, st, kb_begin, kb_end, ring, full, empty, wg, rank, pr);
  }

  /// The fast loop: the tensor cores accumulate the whole K in `acc`. One commit group per K
  /// block; waiting for all but the newest group means the previous block's stage has been read.
  /// Mma is the instruction (ptx::E4m3Mma: m64nNk32 e4m3; ptx::Bf16Mma: m64nNk16 bf16, chapter
  /// 9's dequantised operands, bf16_operands.cuh): one per 32-byte step of a stage either way.
  /// after_issue() runs once the tile's last commit group is issued and the one before it has
  /// completed (mainloop's hand-over point).
  template <class Mma, class AfterIssue = NoHook>
  __device__ __forceinline__ static void fast_loop(float (&acc)[Cfg::kWavesM][Cfg::kBlockN / 2],
                                                   State& st, const GemmParams& p,
                                                   std::uint32_t ring, const std::uint64_t* full,
                                                   const std::uint64_t* empty, int wg,
                                                   std::uint32_t rank,
                                                   AfterIssue&& after_issue = {}) {
    const int k_blocks = p.k_blocks;
    constexpr int kSteps = Cfg::kBlockK / Cfg::kWgmmaK;  // 4 wgmma steps of 32 bytes per stage
    int previous = -1;
    for (int kb = 0; kb < k_blocks; ++kb) {
      wait_barrier<Cfg>(ptx::smem_u32(&full[st.stage]), st.phase);
      const std::uint32_t base = ring + std::uint32_t(st.stage) * kStageStride;
      ptx::wgmma_fence();
#pragma unroll
      for (int ks = 0; ks < kSteps; ++ks) {
#pragma unroll
        for (int w = 0; w < Cfg::kWavesM; ++w)
          Mma::template mma<Cfg::kBlockN>(acc[w], desc_a(base, wg, w, ks), desc_b(base, 0, ks),
                                          (kb > 0 || ks > 0) ? 1u : 0u);
      }
      ptx::wgmma_commit_group();
      ptx::wgmma_wait_group<1>();
      if (previous >= 0) release(ptx::smem_u32(&empty[previous]), rank);
      previous = st.stage;
      st.advance();
    }
    after_issue();
    ptx::wgmma_wait_group<0>();
#pragma unroll
    for (int w = 0; w < Cfg::kWavesM; ++w) ptx::wgmma_fence_operands(acc[w]);
    if (previous >= 0) release(ptx::smem_u32(&empty[previous]), rank);
  }

  /// The first promoted loop (kPromotedLoop = 0; per-tensor tiles where two partial sums do not
  /// fit): per K block and per group (64-row slab, kPromotedWaveN columns), a fresh tensor-core
  /// sum of the block's 128 K (4 wgmma) into `part`, then part is added into the FP32 `acc` on
  /// the CUDA cores; descriptors rebuilt from their address for every wgmma, barrier addresses
  /// and the K bound recomputed in every K block.
  __device__ __forceinline__ static void mainloop_promoted_v0(
      float (&acc)[Cfg::kWavesM][Cfg::kBlockN / 2], State& st, const Params& p, std::uint32_t ring,
      const std::uint64_t* full, const std::uint64_t* empty, int wg, std::uint32_t rank) {
    const int k_blocks = p.k_blocks;
    constexpr int kSteps = Cfg::kBlockK / Cfg::kWgmmaK;
    constexpr int kWaveN = Cfg::kPromotedWaveN;
    constexpr int kWavesN = Cfg::kBlockN / kWaveN;
    zero(acc);
    float part[kWaveN / 2];
    for (int kb = 0; kb < k_blocks; ++kb) {
      wait_barrier<Cfg>(ptx::smem_u32(&full[st.stage]), st.phase);
      const std::uint32_t base = ring + std::uint32_t(st.stage) * kStageStride;
#pragma unroll
      for (int w = 0; w < Cfg::kWavesM; ++w) {
#pragma unroll
        for (int wn = 0; wn < kWavesN; ++wn) {
          ptx::wgmma_fence();
#pragma unroll
          for (int ks = 0; ks < kSteps; ++ks)
            ptx::wgmma_m64nNk32_e4m3<kWaveN>(part, desc_a(base, wg, w, ks),
                                             desc_b(base, wn * kWaveN, ks), ks > 0 ? 1u : 0u);
          ptx::wgmma_commit_group();
          ptx::wgmma_wait_group<0>();
          ptx::wgmma_fence_operands(part);
#pragma unroll
          for (int i = 0; i < kWaveN / 2; ++i) acc[w][wn * (kWaveN / 2) + i] += part[i];
        }
      }
      release(ptx::smem_u32(&empty[st.stage]), rank);
      st.advance();
    }
  }

  /// The per-tensor promotion: the partial sums are added as they are (scale_a * scale_b is
  /// applied once, in the epilogue).
  struct UnitPromotion {
    struct Block {};
    struct Slab {};
    __device__ __forceinline__ Block block(int /*kb*/) { return {}; }
    __device__ __forceinline__ Slab slab(int /*stage*/, int /*w*/) const { return {}; }
    template <int kWaveN>
    __device__ __forceinline__ void promote(float (&acc)[Cfg::kBlockN / 2],
                                            const float (&part)[kWaveN / 2], int wn, const Slab&,
                                            const Block&) const {
#pragma unroll
      for (int i = 0; i < kWaveN / 2; ++i) acc[wn * (kWaveN / 2) + i] += part[i];
    }
  };

  /// One partial sum: the 128 K of the stage for the warpgroup's 64-row slab w and columns
  /// [wn kWaveN, (wn + 1) kWaveN) of the tile, 4 wgmma k32 into a fresh `part`, waited for (the
  /// promotion reads it next). desc_a / desc_b: the stage's A rows of this warpgroup and B rows.
  template <int kWaveN>
  __device__ __forceinline__ static void partial_sum(float (&part)[kWaveN / 2],
                                                     std::uint64_t desc_a, std::uint64_t desc_b,
                                                     int w, int wn) {
    issue_partial_sum<kWaveN>(part, desc_a, desc_b, w, wn);
    ptx::wgmma_wait_group<0>();
    ptx::wgmma_fence_operands(part);
  }
  /// partial_sum() without the wait: the 4 wgmma issued and committed as one group.
  template <int kWaveN>
  __device__ __forceinline__ static void issue_partial_sum(float (&part)[kWaveN / 2],
                                                           std::uint64_t desc_a,
                                                           std::uint64_t desc_b, int w, int wn) {
    constexpr int kSteps = Cfg::kBlockK / Cfg::kWgmmaK;
    ptx::wgmma_fence();
#pragma unroll
    for (int ks = 0; ks < kSteps; ++ks)
      ptx::wgmma_m64nNk32_e4m3<kWaveN>(
          part, ptx::advance_desc(desc_a, std::uint32_t(w * 64 * Cfg::kBlockK + ks * Cfg::kWgmmaK)),
          ptx::advance_desc(desc_b, std::uint32_t(wn * kWaveN * Cfg::kBlockK + ks * Cfg::kWgmmaK)),
          ks > 0 ? 1u : 0u);
    ptx::wgmma_commit_group();
  }

  /// The lean promoted loop (chapters 6 and 7; kPromotedLoop >= 1) over K blocks
  /// kb_begin .. kb_end - 1: per K block and per group (64-row slab w, kPromotedWaveN columns),
  /// a fresh tensor-core sum of the block's 128 K into `part` (partial_sum), then
  /// promotion.promote() adds it into the FP32 `acc` on the CUDA cores. The wait before the add
  /// serialises this warpgroup; the other consumer warpgroups' wgmma keep the tensor cores busy.
  /// The loop shortens the path from one group's wait to the next group's issue (the hypothesis
  /// it was built to test; chapter 6's README has what it measured): barrier addresses and the K
  /// bound in registers once per tile, descriptors by addition (stage_descs), the promotion's
  /// per-block global loads issued one block ahead (Promotion::block), and the loop unrolled
  /// kLeanUnroll times so that ptxas can move the next block's full-barrier wait and
  /// descriptor arithmetic in between the current block's FFMAs (DeepGEMM unrolls its loop the
  /// same way). The stage is released after
  /// its last wgmma has completed, before the last promotion (the scales it needs are in
  /// registers by then).
  ///   Promotion: block(kb) at the top of K block kb, before its wait: what the block needs
  ///                from global memory (block scaling: its B scales, from BScaleStream);
  ///              slab(stage, w) after the wait: what slab w needs from the stage's side ring;
  ///              promote<kWaveN>(acc[w], part, wn, slab, block) after each partial sum.
  template <class Promotion>
  __device__ __forceinline__ static void promoted_loop(
      float (&acc)[Cfg::kWavesM][Cfg::kBlockN / 2], State& st, int kb_begin, int kb_end,
      std::uint32_t ring, const std::uint64_t* full, const std::uint64_t* empty, int wg,
      std::uint32_t rank, Promotion& promotion) {
    static_assert(kLeanUnroll >= 1, "the lean loop's unroll factor");
    zero(acc);
    float part[Cfg::kPromotedWaveN / 2];
    const std::uint64_t desc0 = ptx::make_desc_k_major_sw128(pinned(ring));
    const std::uint32_t full0 = pinned(ptx::smem_u32(full));
    const std::uint32_t empty0 = pinned(ptx::smem_u32(empty));
#pragma unroll kLeanUnroll
    for (int kb = kb_begin; kb < kb_end; ++kb)
      lean_block<false>(acc, part, st, kb, desc0, full0, empty0, wg, rank, promotion);
  }

  /// A shared address the lean loop keeps (kPinAddresses: through warp_uniform(), whose result
  /// ptxas cannot rematerialise, so it stays in a register).
  __device__ __forceinline__ static std::uint32_t pinned(std::uint32_t address) {
    if constexpr (kPinAddresses) return warp_uniform(address);
    return address;
  }

  /// One K block of the lean loop: per slab w and column group wn a partial sum, waited for, then
  /// promoted; the stage released after its last wgmma. kFirstIssued: the block's first partial
  /// sum (w = 0, wn = 0) was issued by issue_first_wave(), after its full barrier's wait, and is
  /// only waited for here.
  template <bool kFirstIssued, class Promotion>
  __device__ __forceinline__ static void lean_block(float (&acc)[Cfg::kWavesM][Cfg::kBlockN / 2],
                                                    float (&part)[Cfg::kPromotedWaveN / 2],
                                                    State& st, int kb, std::uint64_t desc0,
                                                    std::uint32_t full0, std::uint32_t empty0,
                                                    int wg, std::uint32_t rank,
                                                    Promotion& promotion) {
    constexpr int kWaveN = Cfg::kPromotedWaveN;
    constexpr int kWavesN = Cfg::kBlockN / kWaveN;
    const auto block = promotion.block(kb);
    if constexpr (!kFirstIssued) wait_barrier<Cfg>(full0 + 8u * std::uint32_t(st.stage), st.phase);
    const auto [desc_a, desc_b] = stage_descs(desc0, st.stage, wg);
#pragma unroll
    for (int w = 0; w < Cfg::kWavesM; ++w) {
      const auto slab = promotion.slab(st.stage, w);
#pragma unroll
      for (int wn = 0; wn < kWavesN; ++wn) {
        if (kFirstIssued && w == 0 && wn == 0) {
          ptx::wgmma_wait_group<0>();
          ptx::wgmma_fence_operands(part);
        } else {
          partial_sum<kWaveN>(part, desc_a, desc_b, w, wn);
        }
        // A promotion that reads the stage itself (chapter 8's weight gradient: its column
        // scales, kReadsStage) releases it after its last promotion instead.
        constexpr bool kReleaseAfter = requires { Promotion::kReadsStage; };
        if (!kReleaseAfter && w == Cfg::kWavesM - 1 && wn == kWavesN - 1)
          release(empty0 + 8u * std::uint32_t(st.stage), rank);
        promotion.template promote<kWaveN>(acc[w], part, wn, slab, block);
        if (kReleaseAfter && w == Cfg::kWavesM - 1 && wn == kWavesN - 1)
          release(empty0 + 8u * std::uint32_t(st.stage), rank);
      }
    }
    st.advance();
  }

  /// The early first wave (kEarlyWave): waits for the stage of the ring's next K block (a tile's
  /// first) and issues its first partial sum (slab 0, column group 0) into `part` without waiting
  /// for it. gemm_kernel calls it before the epilogue of the tile before, and
  /// promoted_loop_after_first_wave() then waits for it. The tile is for a policy whose tiles may
  /// have no K block (chapter 8's weight gradient issues nothing for those); every tile of this
  /// policy's schedulers has one.
  template <class TileT>
  __device__ __forceinline__ static void issue_first_wave(float (&part)[Cfg::kPromotedWaveN / 2],
                                                          const State& st, std::uint32_t ring,
                                                          const std::uint64_t* full, int wg,
                                                          const TileT& /*tile*/) {
    wait_barrier<Cfg>(ptx::smem_u32(full) + 8u * std::uint32_t(st.stage), st.phase);
    const auto [desc_a, desc_b] = stage_descs(ptx::make_desc_k_major_sw128(ring), st.stage, wg);
    issue_partial_sum<Cfg::kPromotedWaveN>(part, desc_a, desc_b, 0, 0);
  }

  /// The lean loop over K blocks kb_begin .. kb_end - 1 (kb_begin < kb_end) whose first partial
  /// sum is in flight in `part` (issue_first_wave).
  template <class Promotion>
  __device__ __forceinline__ static void promoted_loop_after_first_wave(
      float (&acc)[Cfg::kWavesM][Cfg::kBlockN / 2], float (&part)[Cfg::kPromotedWaveN / 2],
      State& st, int kb_begin, int kb_end, std::uint32_t ring, const std::uint64_t* full,
      const std::uint64_t* empty, int wg, std::uint32_t rank, Promotion& promotion) {
    static_assert(kEarlyWave, "the early first wave's loop");
    zero(acc);
    const std::uint64_t desc0 = ptx::make_desc_k_major_sw128(pinned(ring));
    const std::uint32_t full0 = pinned(ptx::smem_u32(full));
    const std::uint32_t empty0 = pinned(ptx::smem_u32(empty));
    lean_block<true>(acc, part, st, kb_begin, desc0, full0, empty0, wg, rank, promotion);
#pragma unroll kLeanUnroll
    for (int kb = kb_begin + 1; kb < kb_end; ++kb)
      lean_block<false>(acc, part, st, kb, desc0, full0, empty0, wg, rank, promotion);
  }

  /// The promotion state of a tile's lean loop (block scaling: its B scales; BlockScaledMath has
  /// its own): nothing for per-tensor scales.
  template <class TileT>
  __device__ __forceinline__ static UnitPromotion make_promotion(const Params&, const TileT&,
                                                                 std::uint32_t, int) {
    return {};
  }

  /// The two-deep promoted loop (kPromotedLoop = kTwoDeepLoop): for tiles where a warpgroup's
  /// whole K block is one partial sum (one 64-row slab, kPromotedWaveN = BlockN) and two partial
  /// sums fit beside the totals (kTwoDeepFits), K block kb goes into P[kb % 2] and is issued
  /// before K block kb - 1 (in the other buffer) is promoted, so this warpgroup's own wgmma keep
  /// the tensor cores busy while it promotes; with the one-buffer loops only the other
  /// warpgroups' wgmma can. ptxas keeps the wgmma asynchronous because the buffer that the
  /// promotion reads was retired (wgmma.wait_group 0) before the next group's warpgroup.arrive
  /// (waiting for one of two groups instead makes it serialise them, C7514; chapter 9's v3 found
  /// this). A stage is released once the group that read it has completed, at the next block's
  /// wait; its scales are in registers by then.
  template <class Promotion>
  __device__ __forceinline__ static void promoted_loop_two_deep(
      float (&acc)[Cfg::kWavesM][Cfg::kBlockN / 2], State& st, int kb_begin, int kb_end,
      std::uint32_t ring, const std::uint64_t* full, const std::uint64_t* empty, int wg,
      std::uint32_t rank, Promotion& promotion) {
    static_assert(kTwoDeepFits, "two partial sums do not fit beside the totals");
    constexpr int kN = Cfg::kBlockN;
    zero(acc);
    float P0[kN / 2], P1[kN / 2];
    const std::uint64_t desc0 = ptx::make_desc_k_major_sw128(ring);
    const std::uint32_t full0 = ptx::smem_u32(full);
    const std::uint32_t empty0 = ptx::smem_u32(empty);
    // The block issued last and not yet promoted: its scales and its stage.
    typename Promotion::Block pend_block{};
    typename Promotion::Slab pend_slab{};
    int pend_stage = -1;
    // One K block into `dst`, then the promotion of the pending one from `src`.
    auto step = [&](int kb, float(&dst)[kN / 2], float(&src)[kN / 2]) {
      const auto block = promotion.block(kb);
      wait_barrier<Cfg>(full0 + 8u * std::uint32_t(st.stage), st.phase);
      const auto [desc_a, desc_b] = stage_descs(desc0, st.stage, wg);
      const auto slab = promotion.slab(st.stage, 0);
      ptx::wgmma_wait_group<0>();  // the pending block's group: its stage is read, src is final
      if (pend_stage >= 0) release(empty0 + 8u * std::uint32_t(pend_stage), rank);
      ptx::wgmma_fence();
#pragma unroll
      for (int ks = 0; ks < Cfg::kBlockK / Cfg::kWgmmaK; ++ks)
        ptx::wgmma_m64nNk32_e4m3<kN>(dst, ptx::advance_desc(desc_a, std::uint32_t(ks * Cfg::kWgmmaK)),
                                     ptx::advance_desc(desc_b, std::uint32_t(ks * Cfg::kWgmmaK)),
                                     ks > 0 ? 1u : 0u);
      ptx::wgmma_commit_group();
      if (pend_stage >= 0) {
        ptx::wgmma_fence_operands(src);
        promotion.template promote<kN>(acc[0], src, 0, pend_slab, pend_block);
      }
      pend_block = block;
      pend_slab = slab;
      pend_stage = st.stage;
      st.advance();
    };
    int kb = kb_begin;
    for (; kb + 1 < kb_end; kb += 2) {
      step(kb, P0, P1);
      step(kb + 1, P1, P0);
    }
    const bool odd_tail = kb < kb_end;
    if (odd_tail) step(kb, P0, P1);
    ptx::wgmma_wait_group<0>();  // on every path (ptxas injects one otherwise, C7517)
    if (pend_stage >= 0) {
      // The last block is in P0 after an odd tail, else in P1.
      promote_last(acc, P0, P1, odd_tail, promotion, pend_slab, pend_block);
      release(empty0 + 8u * std::uint32_t(pend_stage), rank);
    }
  }

  /// The two-deep loops' last promotion, after their final wgmma_wait_group<0>: the block left
  /// pending, from P0 (in_p0) or P1.
  template <class Promotion>
  __device__ __forceinline__ static void promote_last(
      float (&acc)[Cfg::kWavesM][Cfg::kBlockN / 2], float (&P0)[Cfg::kBlockN / 2],
      float (&P1)[Cfg::kBlockN / 2], bool in_p0, Promotion& promotion,
      const typename Promotion::Slab& slab, const typename Promotion::Block& block) {
    if (in_p0) {
      ptx::wgmma_fence_operands(P0);
      promotion.template promote<Cfg::kBlockN>(acc[0], P0, 0, slab, block);
    } else {
      ptx::wgmma_fence_operands(P1);
      promotion.template promote<Cfg::kBlockN>(acc[0], P1, 0, slab, block);
    }
  }

  /// What promoted_loop_two_deep_cycle's steps share: the next K block, the tile's range, the
  /// cycle's phase, the pinned addresses, and the block issued last and not yet promoted.
  template <class Promotion>
  struct CycleState {
    int kb, kb_begin, kb_end;
    std::uint32_t phase;
    std::uint64_t desc0;
    std::uint32_t full0, empty0;
    int wg;
    std::uint32_t rank;
    typename Promotion::Block pend_block{};
    typename Promotion::Slab pend_slab{};
  };
  /// The buffer of stage parity kOdd: P0 for even stages, P1 for odd ones.
  template <int kOdd>
  __device__ __forceinline__ static float (&buffer(float (&P0)[Cfg::kBlockN / 2],
                                                   float (&P1)[Cfg::kBlockN / 2]))[Cfg::kBlockN / 2] {
    if constexpr (kOdd == 0)
      return P0;
    else
      return P1;
  }
  /// One step of the cycle: K block cs.kb at stage S into P[S % 2], then the promotion of the
  /// pending block (stage S - 1) from the other buffer.
  template <int S, class Promotion>
  __device__ __forceinline__ static void cycle_step(float (&acc)[Cfg::kWavesM][Cfg::kBlockN / 2],
                                                    float (&P0)[Cfg::kBlockN / 2],
                                                    float (&P1)[Cfg::kBlockN / 2],
                                                    Promotion& promotion,
                                                    CycleState<Promotion>& cs) {
    constexpr int kN = Cfg::kBlockN;
    constexpr int kS = Cfg::kStages;
    float(&dst)[kN / 2] = buffer<S % 2>(P0, P1);
    float(&src)[kN / 2] = buffer<(S + 1) % 2>(P0, P1);
    const auto block = promotion.block(cs.kb);
    wait_barrier<Cfg>(cs.full0 + 8u * std::uint32_t(S), cs.phase);
    const StageDescs descs = stage_descs(cs.desc0, S, cs.wg);
    const auto slab = promotion.slab(S, 0);
    const bool pending = cs.kb != cs.kb_begin;
    ptx::wgmma_wait_group<0>();  // the pending block's group: its stage is read, src is final
    if (pending) release(cs.empty0 + 8u * std::uint32_t((S + kS - 1) % kS), cs.rank);
    ptx::wgmma_fence();
#pragma unroll
    for (int ks = 0; ks < Cfg::kBlockK / Cfg::kWgmmaK; ++ks)
      ptx::wgmma_m64nNk32_e4m3<kN>(dst, ptx::advance_desc(descs.a, std::uint32_t(ks * Cfg::kWgmmaK)),
                                   ptx::advance_desc(descs.b, std::uint32_t(ks * Cfg::kWgmmaK)),
                                   ks > 0 ? 1u : 0u);
    ptx::wgmma_commit_group();
    if (pending) {
      ptx::wgmma_fence_operands(src);
      promotion.template promote<kN>(acc[0], src, 0, cs.pend_slab, cs.pend_block);
    }
    cs.pend_block = block;
    cs.pend_slab = slab;
    ++cs.kb;
  }
  /// One ring cycle: the steps of stages `first` .. kStages - 1 while K blocks remain.
  template <class Promotion, int... Ss>
  __device__ __forceinline__ static void cycle(std::integer_sequence<int, Ss...>,
                                               float (&acc)[Cfg::kWavesM][Cfg::kBlockN / 2],
                                               float (&P0)[Cfg::kBlockN / 2],
                                               float (&P1)[Cfg::kBlockN / 2],
                                               Promotion& promotion, CycleState<Promotion>& cs,
                                               int first) {
    ((Ss >= first && cs.kb < cs.kb_end
          ? (cycle_step<Ss>(acc, P0, P1, promotion, cs), 0)
          : 0),
     ...);
  }

  /// The two-deep loop (promoted_loop_two_deep, the same order of waits, wgmma, releases and
  /// promotions) unrolled over a ring cycle (kPromotedLoop = kTwoDeepCycleLoop): the body holds
  /// one copy of a K block's step per stage S = 0 .. kStages - 1, so S, the buffer the block goes
  /// into (P[S % 2]: with an even number of stages the stage's parity alternates like the block's)
  /// and the stage it releases (S - 1) are compile-time constants, and the barrier, descriptor and
  /// side-ring addresses are immediates off registers kept for the whole tile (pinned). The
  /// phase flips once per cycle. A tile whose first K block is not at stage 0 starts inside the
  /// first cycle: each step runs only from the ring's stage on and while K blocks remain
  /// (two uniform compares per block). Session 38's source view counted 69.2 warp instructions per
  /// K block in the two-deep loop of 64 x 16 (DeepGEMM 50.6); chapter 7's NOTEBOOK.md,
  /// "Session 39", has the prediction and what this measured.
  template <class Promotion>
  __device__ __forceinline__ static void promoted_loop_two_deep_cycle(
      float (&acc)[Cfg::kWavesM][Cfg::kBlockN / 2], State& st, int kb_begin, int kb_end,
      std::uint32_t ring, const std::uint64_t* full, const std::uint64_t* empty, int wg,
      std::uint32_t rank, Promotion& promotion) {
    static_assert(kTwoDeepFits, "two partial sums do not fit beside the totals");
    static_assert(Cfg::kStages % 2 == 0, "the buffer of a stage is its parity");
    constexpr int kN = Cfg::kBlockN;
    constexpr int kS = Cfg::kStages;
    zero(acc);
    float P0[kN / 2], P1[kN / 2];
    const std::uint64_t desc0 = ptx::make_desc_k_major_sw128(warp_uniform(ring));
    const std::uint32_t full0 = warp_uniform(ptx::smem_u32(full));
    const std::uint32_t empty0 = warp_uniform(ptx::smem_u32(empty));
    if constexpr (requires { promotion.pin(); }) promotion.pin();  // block scaling's A-scale row
    CycleState<Promotion> cs{kb_begin, kb_begin, kb_end, st.phase, desc0, full0, empty0, wg, rank};
    int first = st.stage;  // the first cycle starts at the ring's stage, the later ones at 0
    while (cs.kb < kb_end) {
      cycle(std::make_integer_sequence<int, kS>{}, acc, P0, P1, promotion, cs, first);
      first = 0;
      cs.phase ^= 1u;
    }
    const auto& pend_block = cs.pend_block;
    const auto& pend_slab = cs.pend_slab;
    ptx::wgmma_wait_group<0>();  // on every path (ptxas injects one otherwise, C7517)
    if (kb_end > kb_begin) {
      // The last block: its stage's parity says which buffer holds it.
      const int last = (st.stage + (kb_end - kb_begin) - 1) % kS;
      promote_last(acc, P0, P1, last % 2 == 0, promotion, pend_slab, pend_block);
      release(empty0 + 8u * std::uint32_t(last), rank);
      st.skip(kb_end - kb_begin);
    }
  }

  __device__ __forceinline__ static void zero(float (&acc)[Cfg::kWavesM][Cfg::kBlockN / 2]) {
#pragma unroll
    for (int w = 0; w < Cfg::kWavesM; ++w)
#pragma unroll
      for (int i = 0; i < Cfg::kBlockN / 2; ++i) acc[w][i] = 0.0f;
  }
};

/// Ping-pong consumers that hand the tensor cores to the other warpgroup only when their main
/// loop has returned, its last wgmma completed: the engine's order until session 23, kept as a
/// same-run comparison twin (kernel names end in _lho, "late hand-over"; comparison-only).
template <class Cfg>
struct LateHandOverMath : PerTensorMath<Cfg> {
  using Base = PerTensorMath<Cfg>;
  static constexpr bool kLateHandOver = true;
  /// Hides PerTensorMath's main loop with the hook, so the kernel hands over after this returns.
  __device__ __forceinline__ static void mainloop(float (&acc)[Cfg::kWavesM][Cfg::kBlockN / 2],
                                                  typename Base::State& st, const GemmParams& p,
                                                  const Tile& t, std::uint32_t ring,
                                                  std::uint32_t side, const std::uint64_t* full,
                                                  const std::uint64_t* empty, int wg,
                                                  std::uint32_t rank) {
    Base::mainloop(acc, st, p, t, ring, side, full, empty, wg, rank);
  }
};

/// The producer's copy of one operand tile (kRows rows x kRowBytes bytes, starting at row `row0`,
/// column `k0`) into shared memory at `dst`, completing on `bar`. Shared by the 2-CTA cluster
/// (kMulticast): CTA `half` loads rows [half x kRows/2, (half + 1) x kRows/2) and multicasts them
/// to both CTAs; otherwise one plain load of the whole tile.
template <bool kMulticast, int kRows, int kRowBytes>
__device__ __forceinline__ void load_tile(std::uint32_t dst, const CUtensorMap* map,
                                          std::uint32_t bar, int k0, int row0, int half) {
  if constexpr (kMulticast) {
    constexpr int kHalf = kRows / 2;
    constexpr std::uint16_t kBothCtas = 0x3;
    ptx::tma_load_2d_multicast(dst + std::uint32_t(half * kHalf) * kRowBytes, map, bar, k0,
                               row0 + half * kHalf, kBothCtas);
  } else {
    ptx::tma_load_2d(dst, map, bar, k0, row0);
  }
}

/// The row of D where tile t's rows start: Math::d_row(p, t) where the policy has one, else its A
/// row.
template <class Math, class TileT>
__device__ __forceinline__ int tile_d_row(const typename Math::Params& p, const TileT& t) {
  if constexpr (requires { Math::d_row(p, t); })
    return Math::d_row(p, t);
  else
    return Math::a_row(t);
}

/// A math policy that stores bf16 tiles itself (chapter 8's weight gradient, into its 3-D map of
/// D; its grouped forward, through D's ragged-rows view). A concept, not an inline
/// requires-expression: in the epilogue's generic lambda nvcc instantiates the discarded branch
/// of `if constexpr (requires {...})` and fails on the call.
template <class Math>
concept StoresBf16Tile = requires { Math::kStoresBf16Tile; };

/// A math policy that stores FP32 tiles itself (tma_store_f32: chapter 8's weight gradient, into
/// its 3-D map of dB); the others' go through D's 2-D map (store_tile_tma_f32, StoreMap::rows).
template <class Math>
concept StoresF32Tile = requires { Math::kStoresF32Tile; };

/// A math policy whose consumers take their tiles from the producer through the ring (chapter
/// 8's grouped forward): Math::post_tile / post_end / take_tile at kTileInfoOffset of the stage's
/// side bytes (grouped.cuh says why).
template <class Math>
concept TilesThroughRing = requires { Math::kTilesThroughRing; };

/// A math policy whose tiles may be K ranges of a tile computed by several CTAs (stream_k.cuh):
/// after the main loop, Math::fixup(acc, p, t, slot, ring) hands a partial tile over (false:
/// nothing to store) or adds the other CTAs' partials (true: store the tile).
template <class Math>
concept StreamKFixup = requires { Math::kStreamK; };

/// A math policy whose tiles may have rows that no result needs (chapter 8's grouped forward: a
/// group's last tile runs past the group's end, Math::row_end). A consumer warpgroup whose rows of
/// a tile all lie at or past that end computes nothing for the tile and stores nothing
/// (pass_stages): DeepGEMM's grouped kernels skip such a warpgroup's 64 rows the same way. Not for
/// stream-K policies (their partial-tile hand-over counts every warpgroup).
template <class Math>
concept SkipsIdleRows = requires { Math::kSkipsIdleRows; } && Math::kSkipsIdleRows &&
                        !StreamKFixup<Math>;

/// `blocks` K blocks of a tile whose rows this warpgroup does not compute (SkipsIdleRows): each
/// stage waited for and released, as the main loop would. The wait is needed: a stage is free
/// once every consumer warp has arrived on its empty barrier, and an arrival made before the
/// stage's data landed could count towards the stage's previous round, freeing it while the
/// other warpgroup still reads it. Lane 0's arrive also comes after its read of the tile's record
/// (RingTileSource), in program order, as in the main loop.
template <class Cfg, class Math, class State>
__device__ __forceinline__ void pass_stages(State& st, int blocks, std::uint32_t full0,
                                            std::uint32_t empty0, std::uint32_t rank) {
  for (int i = 0; i < blocks; ++i) {
    wait_barrier<Cfg>(full0 + 8u * std::uint32_t(st.stage), st.phase);
    Math::release(empty0 + 8u * std::uint32_t(st.stage), rank);
    st.advance();
  }
}

/// The consumers' tile source of a TilesThroughRing policy: the next tile is in the side bytes of
/// the ring's current stage `st`, readable once its full barrier completes (the main loop then
/// waits on that barrier again and passes at once); false at the producer's end mark.
template <class Cfg, class Math>
struct RingTileSource {
  std::uint32_t full0;  ///< the full barriers' shared address
  std::uint32_t side;   ///< the side ring's
  template <class State>
  __device__ __forceinline__ bool next(typename Math::TileT& t, const State& st) const {
    wait_barrier<Cfg>(full0 + 8u * std::uint32_t(st.stage), st.phase);
    return Math::take_tile(
        side + std::uint32_t(st.stage) * Math::kExtraStageBytes + Math::kTileInfoOffset, t);
  }
};

/// The consumers' tiles: the policy's scheduler, or for a TilesThroughRing policy the ring.
template <class Cfg, class Math>
__device__ __forceinline__ auto consumer_tiles(const typename Math::Params& p, std::uint32_t rank,
                                               std::uint32_t full0, std::uint32_t side) {
  if constexpr (TilesThroughRing<Math>) {
    static_assert(!Cfg::kPingPong, "ping-pong consumers peek at the scheduler's next tile");
    return RingTileSource<Cfg, Math>{full0, side};
  } else {
    return Math::make_scheduler(p, rank);
  }
}
template <class Source, class TileT, class State>
__device__ __forceinline__ bool next_consumer_tile(Source& tiles, TileT& t, const State& st) {
  if constexpr (requires { tiles.next(t, st); })
    return tiles.next(t, st);
  else
    return tiles.next(t);
}

/// A math policy whose lean loop takes each tile's first partial sum from before the previous
/// tile's epilogue (kEarlyWaveLoop + u): gemm_kernel's consumers then run that order. Opt-in by
/// type: the policy names itself as its EarlyWavePolicy (PerTensorMath, BlockScaledMath and the
/// timeline's observed twin do), so a derived policy with a loop of its own never takes it.
template <class Math>
concept EarlyWaveConsumers = requires { typename Math::EarlyWavePolicy; } &&
                             std::is_same_v<typename Math::EarlyWavePolicy, Math> &&
                             Math::kEarlyWave;

/// Dynamic shared memory of gemm_kernel<Cfg, Math>: the ring and staging of the configuration,
/// plus the math policy's side ring and the slack that re-aligns the staging buffers after it.
template <class Cfg, class Math>
constexpr std::size_t smem_bytes() {
  return Cfg::kSmemBytes +
         (Math::kExtraStageBytes == 0 ? 0 : std::size_t(Cfg::kStages) * Math::kExtraStageBytes + 1024);
}

/// Named barriers 6 and 7: ping-pong warpgroup w arrives on kOrderBarrier + w when its main loop
/// is done and the other has a tile next, which bar.syncs on it before its main loop (1 and 2 are
/// the epilogue's, 4 and 5 chapter 9's).
inline constexpr std::uint32_t kOrderBarrier = 6;
/// Named barriers 8 and 9: the staggered weight-gradient loop's turns (kgrouped.cuh): warpgroup w
/// bar.syncs on kStaggerBarrier + w before it issues a piece, the other arrives there after issuing.
inline constexpr std::uint32_t kStaggerBarrier = 8;

template <class Cfg, class Math = PerTensorMath<Cfg>>
__global__ void __launch_bounds__(Cfg::kThreads, 1)
    gemm_kernel(const __grid_constant__ typename Math::Params p) {
  static_assert(Math::kExtraStageBytes % 128 == 0, "side-ring stages must stay 128-byte aligned");
  static_assert(Math::kExtraTxBytes <= Math::kExtraStageBytes, "extra copies exceed their stage");
  static_assert(smem_bytes<Cfg, Math>() <= kMaxSmemBytes,
                "the ring with the math policy's side ring exceeds a Hopper CTA's shared memory");
  static_assert(!Cfg::kPingPong || requires { Math::kSupportsPingPong; },
                "ping-pong consumers: only a math policy that declares kSupportsPingPong (its "
                "main loop and epilogue take the warpgroup's rows from `slot`, not from wg)");
  extern __shared__ std::uint8_t smem_raw[];
  // Stage s: A tile (BlockM rows x 128 B) then B tile (BlockN rows x 128 B), 128B-swizzled, each
  // on a 1024-byte boundary. After the ring, the math policy's side ring (kExtraStageBytes per
  // stage), then the epilogue's staging buffers (1024-aligned for the swizzled TMA store).
  const std::uint32_t ring = (ptx::smem_u32(smem_raw) + 1023u) & ~1023u;
  const std::uint32_t side = ring + std::uint32_t(Cfg::kStages) * Math::kStageStride;
  const std::uint32_t staging =
      Math::kExtraStageBytes == 0
          ? side
          : (side + std::uint32_t(Cfg::kStages) * Math::kExtraStageBytes + 1023u) & ~1023u;
  __shared__ alignas(8) std::uint64_t full[Cfg::kStages];
  __shared__ alignas(8) std::uint64_t empty[Cfg::kStages];

  // Not through __shfl_sync: session 38 passed wg through warp_uniform at first, and ptxas then
  // spilled in chapter 6's large consumers (14-66 bytes, the SASS checks) and gave the narrow
  // tiles' consumer loop 3 more instructions per two K blocks. The producer's branch below is
  // made warp-uniform by its own test of the warp index, which is what its loads need.
  const int wg = int(threadIdx.x / 128);
  const std::uint32_t rank = Cfg::kClusterSize > 1 ? ptx::cluster_cta_rank() : 0u;

  if (threadIdx.x == 0) {
    for (int s = 0; s < Cfg::kStages; ++s) {
      ptx::mbarrier_init(ptx::smem_u32(&full[s]), 1);
      ptx::mbarrier_init(ptx::smem_u32(&empty[s]), Cfg::kStageReaderWarps * Cfg::kClusterSize);
    }
    ptx::fence_barrier_init();
  }
  // The other CTA's producer and consumers signal our barriers: they must exist first.
  if constexpr (Cfg::kClusterSize > 1) ptx::cluster_sync();
  else __syncthreads();

  if (wg == Cfg::kConsumerWGs) {
    // ------------------------------ producer warpgroup ------------------------------
    ptx::setmaxnreg_dec<Cfg::kProducerRegs>();
    // The producer warpgroup's first warp runs the loop, every lane computing the same
    // addresses and coordinates (uniform registers), and one elected lane issues the loads. The
    // warp index through __shfl_sync (warp_uniform): ptxas then knows the branch is taken by
    // whole warps and keeps the loads' operands in uniform registers (session 37: with one
    // producer thread, each TMA load sat in a waterfall loop, 65 instructions per ring stage
    // against DeepGEMM's 30; session 38: 31 with the warp, docs/engine.md).
    if (warp_uniform(int(threadIdx.x / 32)) == Cfg::kConsumerThreads / 32) {
      if (ptx::elect_one_sync()) {
        ptx::tma_prefetch_descriptor(&p.map_a);
        ptx::tma_prefetch_descriptor(&p.map_b);
      }
      auto scheduler = Math::make_scheduler(p, rank);
      PipelineState<Cfg::kStages> st;
      typename Math::TileT t;
      const int rank_m = int(rank) % Cfg::kClusterM;
      const int rank_n = int(rank) / Cfg::kClusterM;
      // The ring's, the side ring's and the barriers' shared addresses and the maps' addresses
      // pinned through __shfl_sync (as the consumers' pinned loops have them): otherwise ptxas
      // re-derives them from the CTA id and the parameter space in every iteration.
      const std::uint32_t ring_p = warp_uniform(ring);
      const std::uint32_t side_p = warp_uniform(side);
      const std::uint32_t full0 = warp_uniform(ptx::smem_u32(full));
      const std::uint32_t empty0 = warp_uniform(ptx::smem_u32(empty));
      const auto* map_a = reinterpret_cast<const CUtensorMap*>(
          warp_uniform(reinterpret_cast<unsigned long long>(&p.map_a)));
      const auto* map_b = reinterpret_cast<const CUtensorMap*>(
          warp_uniform(reinterpret_cast<unsigned long long>(&p.map_b)));
      while (scheduler.next(t)) {
        const int m0 = Math::a_row(t);
        const int n0 = Math::b_row(p, t);
        // The tile's K blocks (0 .. p.k_blocks - 1 for a dense GEMM). k_end is evaluated in the
        // condition, as p.k_blocks always was: hoisted into a register, the bound lets the
        // compiler unroll this loop 4 times (+370 instructions per kernel, no gain measured).
        for (int kb = Math::k_first(p, t); kb < Math::k_end(p, t); ++kb) {
          wait_barrier<Cfg>(empty0 + 8u * std::uint32_t(st.stage), st.phase ^ 1u);
          const std::uint32_t bar = full0 + 8u * std::uint32_t(st.stage);
          const std::uint32_t tile_a = ring_p + std::uint32_t(st.stage) * Math::kStageStride;
          const std::uint32_t tile_b = tile_a + Cfg::kTileABytes;
          const int k0 = kb * Cfg::kBlockK;
          if (ptx::elect_one_sync()) {
            if constexpr (TilesThroughRing<Math>) {  // the tile, for the consumers, before the arm
              if (kb == Math::k_first(p, t))
                Math::post_tile(side_p + std::uint32_t(st.stage) * Math::kExtraStageBytes +
                                    Math::kTileInfoOffset,
                                t);
            }
            // The stage's bytes, zero-filled ones too.
            ptx::mbarrier_arrive_expect_tx(bar, Cfg::kStageBytes + Math::kExtraTxBytes);
            load_tile<Cfg::kClusterN == 2, Cfg::kBlockM, Cfg::kBlockK>(tile_a, map_a, bar, k0, m0,
                                                                     rank_n);
            load_tile<Cfg::kClusterM == 2, Cfg::kBlockN, Cfg::kBlockK>(tile_b, map_b, bar, k0, n0,
                                                                     rank_m);
            Math::produce_extra(p, side_p + std::uint32_t(st.stage) * Math::kExtraStageBytes, bar,
                                t, kb);
          }
          __syncwarp();
          st.advance();
        }
      }
      if constexpr (TilesThroughRing<Math>) {  // the end mark, in the next stage
        wait_barrier<Cfg>(ptx::smem_u32(&empty[st.stage]), st.phase ^ 1u);
        if (ptx::elect_one_sync()) {
          Math::post_end(side + std::uint32_t(st.stage) * Math::kExtraStageBytes +
                         Math::kTileInfoOffset);
          ptx::mbarrier_arrive(ptx::smem_u32(&full[st.stage]));
        }
      }
    }
    if constexpr (requires { Math::kObserveRing; }) {
      // A diagnostic policy only (timeline.cuh): warps 1 and 2 of this warpgroup, otherwise idle,
      // write down when each stage's full and empty barriers complete (and the consumers, through
      // observe_consumer, when each tile's main loop starts and ends and its epilogue ends).
      const int warp = int(threadIdx.x - Cfg::kConsumerThreads) / 32;
      if (warp == 1 || warp == 2) Math::observe_ring(p, rank, full, empty, warp == 1);
    }
  } else {
    // ------------------------------ consumer warpgroups ------------------------------
    ptx::setmaxnreg_inc<Cfg::kConsumerRegs>();
    const auto scale = Math::output_scale(p);
    auto scheduler = consumer_tiles<Cfg, Math>(p, rank, ptx::smem_u32(full), side);
    typename Math::State st;
    typename Math::TileT t;
    float acc[Cfg::kWavesM][Cfg::kBlockN / 2];
    const std::uint32_t my_staging = staging + std::uint32_t(wg * Cfg::kEpiBuffers) * Cfg::kEpiUnitBytes;
    // Which rows of a tile this warpgroup computes: its own share (cooperative), or all of them
    // (ping-pong, slot 0).
    const int slot = Cfg::kPingPong ? 0 : wg;
    // The epilogue of tile tt: acc -> D (epilogue.cuh, or the policy's own store).
    auto store_tile = [&](const typename Math::TileT& tt) {
      const int row0 = tile_d_row<Math>(p, tt) + slot * Cfg::kRowsPerWG;
      const int col0 = Math::d_col(tt);
      const int rows = Math::row_end(p, tt);  // D's rows stop here (M; a group's end in chapter 8)
      with_output_scale(scale, [&](const auto& sc) {
        if constexpr (Cfg::kEpilogue == EpilogueKind::tma_store && StoresBf16Tile<Math>) {
          // bf16 D by TMA through the policy's own map of D (chapter 8: the weight gradient's 3-D
          // one, the grouped forward's ragged-rows view).
          Math::store_tile_bf16(acc, p, tt, my_staging, slot, std::uint32_t(1 + wg));
        } else if constexpr (Cfg::kEpilogue == EpilogueKind::tma_store) {
          store_tile_tma<Cfg>(acc, sc, &p.map_d, my_staging, row0, col0, std::uint32_t(1 + wg));
        } else if constexpr (Cfg::kEpilogue == EpilogueKind::tma_store_f32 && StoresF32Tile<Math>) {
          // FP32 D by TMA through the policy's own map (chapter 8's weight gradient: dB's 3-D
          // one; its grouped forward: D's ragged-rows view, since session 64).
          Math::store_tile_f32(acc, p, tt, my_staging, slot, std::uint32_t(1 + wg));
        } else if constexpr (Cfg::kEpilogue == EpilogueKind::tma_store_f32) {
          // FP32 D by TMA through D's 2-D map (the library's per-tensor FP32 D; chapter 9's MXFP8
          // float D since session 66; chapter 7's block-scaled since session 67). A policy whose
          // D is not one 2-D matrix (chapter 8's: several groups' D) must store its tiles itself.
          static_assert(std::is_same_v<typename Math::Params, GemmParams> ||
                            std::is_same_v<typename Math::Params, MxParams> ||
                            std::is_same_v<typename Math::Params, BlockScaledParams>,
                        "tma_store_f32 through D's 2-D map: GemmParams, MxParams and "
                        "BlockScaledParams policies only "
                        "(a policy with its own map of D defines kStoresF32Tile and "
                        "store_tile_f32)");
          store_tile_tma_f32<Cfg>(acc, sc, &p.map_d, my_staging, row0, col0, 0, p.accumulate != 0,
                                  std::uint32_t(1 + wg));
        } else if constexpr (Cfg::kEpilogue == EpilogueKind::registers) {
#pragma unroll
          for (int w = 0; w < Cfg::kWavesM; ++w)
            store_slab_registers<Cfg::kBlockN>(acc[w], sc, row0 + 64 * w, col0, rows, p.N, p.D,
                                               p.ldd, p.d_pairs_ok != 0);
        } else {
#pragma unroll
          for (int w = 0; w < Cfg::kWavesM; ++w)
            store_slab_f32<Cfg::kBlockN>(acc[w], sc, row0 + 64 * w, col0, rows, p.N, p.D_f32,
                                         p.ldd, p.accumulate != 0, p.d_pairs_ok != 0);
        }
      });
    };
    // Whether this warpgroup's rows of tile tt all lie at or past the tile's row end
    // (SkipsIdleRows; the same in every thread of the warpgroup): then it passes the tile's
    // stages (pass_stages) instead of its main loop and epilogue.
    auto rows_idle = [&](const typename Math::TileT& tt) {
      static_assert(!(SkipsIdleRows<Math> && Cfg::kPingPong), "idle rows: cooperative consumers");
      if constexpr (SkipsIdleRows<Math>)
        return warp_uniform(tile_d_row<Math>(p, tt) + slot * Cfg::kRowsPerWG) >=
               warp_uniform(Math::row_end(p, tt));
      else
        return false;
    };
    auto pass_tile = [&](const typename Math::TileT& tt) {
      pass_stages<Cfg, Math>(st, Math::k_end(p, tt) - Math::k_first(p, tt),
                             ptx::smem_u32(full), ptx::smem_u32(empty), rank);
    };
    if constexpr (EarlyWaveConsumers<Math>) {
      // Each tile's first partial sum is issued before the epilogue of the tile before it
      // (kEarlyWaveLoop), so that the tensor cores work while this warpgroup stores.
      // The order of the loop matters to ptxas: written as "main loop, next tile, issue, store,
      // back" (4b4aa54), the K loop re-read the CTA id (S2UR) for every release and each K block
      // took ~150 cycles longer (the timeline); as "next tile, issue, store the one before, main
      // loop, back" the K loop compiles as the default one does.
      static_assert(!Cfg::kPingPong && !StreamKFixup<Math>,
                    "the early first wave: cooperative consumers, whole tiles");
      float part[Cfg::kPromotedWaveN / 2];
      // The tile's main loop, its first partial sum already issued and its promotion made.
      using PromotionT = decltype(Math::make_promotion(p, t, side, 0));
      auto main_loop = [&](const typename Math::TileT& tt, PromotionT& promotion) {
        if constexpr (requires { Math::kObserveRing; }) Math::observe_consumer(p, tt, wg, 0);
        Math::promoted_loop_after_first_wave(acc, part, st, Math::k_first(p, tt),
                                             Math::k_end(p, tt), ring, full, empty,
                                             warp_uniform(wg), rank, promotion);
        if constexpr (requires { Math::kObserveRing; }) Math::observe_consumer(p, tt, wg, 1);
      };
      auto epilogue = [&](const typename Math::TileT& tt) {
        store_tile(tt);
        if constexpr (requires { Math::kObserveRing; }) Math::observe_consumer(p, tt, wg, 2);
      };
      typename Math::TileT done;
      bool stored = true;  // no tile waits for its epilogue yet
      // The next tile from the scheduler, or from the ring (chapter 8's grouped tiles: read from
      // its first stage's side bytes after that stage's full barrier, by the lanes whose arrive
      // releases the stage in the main loop, as in the default order).
      while (next_consumer_tile(scheduler, t, st)) {
        if (rows_idle(t)) {  // nothing to compute: store the tile before, pass this one's stages
          if (!stored) epilogue(done);
          stored = true;
          pass_tile(t);
          continue;
        }
        const int wg_u = warp_uniform(wg);  // uniform, as mainloop() has it
        // The tile's first partial sum runs while this warpgroup stores the tile before.
        Math::issue_first_wave(part, st, ring, full, wg_u, t);
        // So do the promotion's loads (chapter 7: the tile's first 32 B scales, from L2): made
        // after the epilogue, their latency fell between the finished first wave and its
        // promotion at every tile change.
        auto promotion = Math::make_promotion(p, t, side, wg_u);
        if (!stored) epilogue(done);
        main_loop(t, promotion);
        done = t;
        stored = false;
      }
      if (!stored) epilogue(done);
    } else {
      int tile_index = 0;
      while (next_consumer_tile(scheduler, t, st)) {
        bool hand_over = false;  // ping-pong: the other warpgroup has a tile after this one
        if constexpr (Cfg::kPingPong) {
          // Ping-pong: this CTA's tiles alternate between the two warpgroups. The producer loads
          // them in the scheduler's order, so the other warpgroup's tile occupies the next K
          // blocks of the ring: pass over them.
          const int index = tile_index++;
          if ((index & 1) != wg) {
            st.skip(Math::k_end(p, t) - Math::k_first(p, t));
            continue;
          }
          // The main loops take turns (kOrderBarrier): ours starts when the other warpgroup's has
          // waited on the full barriers of all of its K blocks (its last wgmma may still run).
          // Needed for correctness, not only for order: a full barrier's parity wait tells phases
          // r and r + 2 apart only if phase r - 1 is complete, and after skipping a whole tile our
          // first K block is kStages or more blocks ahead of what the producer may have loaded
          // yet; once the other warpgroup has passed its last K block's full barrier, the block
          // kStages before our first has landed.
          if (index > 0) ptx::named_barrier_sync(kOrderBarrier + std::uint32_t(wg ^ 1), 256);
          auto peek = scheduler;
          typename Math::TileT later;
          hand_over = peek.next(later);
        }
        if (rows_idle(t)) {  // nothing to compute or store (never with ping-pong: see above)
          pass_tile(t);
          continue;
        }
        if constexpr (requires { Math::kObserveRing; }) Math::observe_consumer(p, t, wg, 0);
        // Ping-pong: the other warpgroup's main loop may start while we finish and store this
        // tile.
        auto hand_over_now = [&] {
          if (hand_over) ptx::named_barrier_arrive(kOrderBarrier + std::uint32_t(wg), 256);
        };
        if constexpr (Cfg::kPingPong && requires {
                        Math::mainloop(acc, st, p, t, ring, side, full, empty, slot, rank,
                                       hand_over_now);
                      }) {
          // As soon as our last wgmma are issued (PerTensorMath::mainloop's after_issue): the
          // other warpgroup's first ones queue behind them, the tensor cores never drain.
          Math::mainloop(acc, st, p, t, ring, side, full, empty, slot, rank, hand_over_now);
          if constexpr (requires { Math::kObserveRing; }) Math::observe_consumer(p, t, wg, 1);
        } else {
          // When our main loop has returned (a policy with its own main loop; the _lho twins).
          Math::mainloop(acc, st, p, t, ring, side, full, empty, slot, rank);
          if constexpr (requires { Math::kObserveRing; }) Math::observe_consumer(p, t, wg, 1);
          hand_over_now();
        }
        if constexpr (StreamKFixup<Math>) {
          if (!Math::fixup(acc, p, t, slot, ring)) continue;  // a partial, handed to its owner
        }
        store_tile(t);
        if constexpr (requires { Math::kObserveRing; }) Math::observe_consumer(p, t, wg, 2);
      }
      // A policy whose warpgroups hand each other turns settles the last hand-over here.
      if constexpr (requires { Math::consumers_done(st, wg); }) Math::consumers_done(st, wg);
    }
    if constexpr (stores_by_tma(Cfg::kEpilogue)) {
      // The staging buffers must stay valid until the last stores have read them, and D must be
      // written before the grid counts as finished.
      if (threadIdx.x % 128 == 0) ptx::tma_store_wait_all<0>();
    }
  }
  // No CTA of a cluster may exit while the other can still arrive on its barriers or multicast
  // into its shared memory.
  __syncwarp();
  if constexpr (Cfg::kClusterSize > 1) ptx::cluster_sync();
}

}  // namespace fp8gemm::engine
