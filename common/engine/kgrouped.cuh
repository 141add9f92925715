// Chapter 8's weight gradient on the engine: for every group (expert) g,
//
//   dB_g [N, K] (FP32) = dD_g^T . A_g  (+ dB_g when accumulating)
//
// the reduction running over the group's tokens only (a "k-grouped" GEMM: the groups split the
// reduction, not the rows). In the engine's terms (params.hpp, KGroupedParams):
//   "A"  dD^T [N, T_pad] e4m3, K-major (tokens contiguous): the first operand, BlockM rows of N
//   "B"  A^T  [K, T_pad] e4m3, K-major: the second operand, BlockN rows of K
//   both with 1 x 128 scales along the tokens: the scale of row c of either operand and token
//   block tb at sf[tb * ld + c] (mn-major), so a K block brings BlockM scales of the first and
//   BlockN scales of the second operand, both TMA-loaded into the stage's side ring.
//   D    dB [G * N, K] FP32 (with accumulate: dB += ...), or bf16 (a training step's weight
//        gradient in the weight's own dtype, rounded once from the FP32 accumulators: no FP32
//        dB written and converted after), group g's matrix at rows g N ..
// The token layout (group g's tokens at columns P_g .., zero-padded to the next multiple of 128)
// and the schedule are grouped_schedule.hpp's (kgrouped_tile).
//
// Against chapter 7's block-scaled math the promotion differs: the second operand's scales are
// per row of B, i.e. per column of the tile, not one per 128 x 128 block. So each thread reads the
// scales of its own accumulator columns (BlockN / 4 of them per K block) from the stage's side
// ring as it promotes each 8-column group (holding them all at once spills tiles wider than 128),
// and the promotion is acc += (sa[row] x sb[col]) x part: a multiply and an FMA per element where
// chapter 7 needs the FMA only. Since the promotion reads the stage, the stage is released after
// it (chapter 7 releases before its last promotion).
#pragma once

#include <cstdint>
#include <type_traits>

#include "common/engine/block_scaled.cuh"
#include "common/engine/grouped_schedule.hpp"
#include "common/engine/kernel.cuh"
#include "common/engine/params.hpp"

namespace fp8gemm::engine {

/// The persistent k-grouped scheduler: cluster c takes units c, c + clusters, ... of the
/// k-grouped schedule; with skip_empty, the units of empty groups are passed over. A unit is
/// kClusterM neighbouring row tiles of one group and one column block (one tile without
/// clusters): the CTAs of a 2 x 1 cluster read the same tokens of the second operand, which the
/// engine's producer multicasts. With an odd number of row tiles the last unit's second tile lies
/// past N: its loads are zero-filled and its TMA store is clipped away (hence clusters only with
/// the tma_store_f32 epilogue, KGroupedMath).
template <int kClusterM = 1>
struct KGroupedTileScheduler {
  const KGroupedParams* p;
  std::int64_t next_unit;
  int stride;
  int rank_m;
  KGroupedCursor cursor;

  __device__ __forceinline__ KGroupedTileScheduler(const KGroupedParams& params, std::uint32_t rank)
      : p(&params),
        next_unit(blockIdx.x / kClusterM),
        stride(int(gridDim.x) / kClusterM),
        rank_m(int(rank) % kClusterM) {}

  __device__ __forceinline__ bool next(KGroupedTile& t) {
    const int units_m = (p->tiles_m + kClusterM - 1) / kClusterM;
    while (kgrouped_tile(p->offsets, p->groups, units_m, p->tiles_n, p->K, next_unit, cursor, t)) {
      next_unit += stride;
      t.m_block = t.m_block * kClusterM + rank_m;
      if (t.kb_count > 0 || p->skip_empty == 0) return true;
    }
    return false;
  }
};

/// The weight gradient's promoted loops (KGroupedMath's kLoop; measured side by side in chapter
/// 8's README, "The weight gradient in session 7"):
///   0                   the first loop (mainloop_first): per K block one partial sum of the
///                       whole tile width, wait, promote, release (the default until session 29;
///                       "_loop0" in a kernel's name where the lean loop is the default);
///   kTwoDeepLoop        two full-width partial sums: K block kb + 1 is issued before kb is
///                       promoted (tiles where totals plus two partial sums fit: BlockN <= 128);
///   kTwoDeepHalvesLoop  the same over the two column halves of each K block: half h + 1 (or the
///                       next block's half 0) is in the tensor cores while half h is promoted;
///                       totals plus two half-width partial sums fit up to BlockN = 192;
///   kPrefetchScalesLoop + N  the first loop, with the first N of the thread's column-scale pairs
///                       read from the stage before the wait for the partial sum (one wave per K
///                       block only), so that their shared-memory latency hides behind the
///                       tensor cores.
///   kStaggeredLoop      the first loop with the two consumer warpgroups taking turns: a
///                       warpgroup issues each piece (a K block's wave of columns) only after the
///                       other has issued its previous one (named barriers kStaggerBarrier + w),
///                       so the pieces reach the tensor cores alternately, WG 0's, WG 1's, WG 0's
///                       next, ..., and each warpgroup's promotion runs while the other's wgmma
///                       are in the tensor cores. Without the turns both warpgroups wait on the
///                       same stage, issue together, finish together and promote together, the
///                       tensor cores idle during the promotion. Measured no faster (session 29).
///   kPinnedLoop + u     chapters 6 and 7's lean loop with this promotion (mainloop_lean): the
///                       default of the two-warpgroup TMA tiles since session 29.
///   kPinnedLoop + kEarlyWaveLoop + u  the same with each tile's first partial sum issued before
///                       the previous tile's epilogue (gemm_kernel's EarlyWaveConsumers path, as
///                       chapters 6 and 7 have it; session 30): a weight-gradient tile has few K
///                       blocks (a group's tokens / 128: 16 on average at 65536 tokens and 32
///                       experts) and a large epilogue (FP32 dB: 128 KB per 128 x 256 tile), so
///                       the tensor cores idle through a larger share of its time than chapter 7's.
/// With the one-buffer first loop a warpgroup's tensor-core work and its promotion alternate, and
/// only the other warpgroup's wgmma can fill the gap; the promotion here is twice chapter 7's (a
/// multiply and an FMA per element), which is why the others were built. None was faster than
/// the first loop by more than the run-to-run spread on the H200 (session 7); the staggered loop
/// keeps one buffer and lets the other warpgroup fill the gap by construction.
template <class Cfg, int kLoop>
constexpr bool kgrouped_loop_fits() {
  constexpr int kRegs = Cfg::kConsumerRegs - Cfg::kRegMargin;
  if constexpr (kLoop == kStaggeredLoop)
    return Cfg::kWavesM == 1 && Cfg::kConsumerWGs == 2 && !Cfg::kPingPong;
  else if constexpr (kLoop == kTwoDeepLoop)
    return Cfg::kWavesM == 1 && Cfg::kAccumulators + Cfg::kBlockN <= kRegs;
  else if constexpr (kLoop == kTwoDeepHalvesLoop)
    return Cfg::kWavesM == 1 && (Cfg::kBlockN / 2) % 8 == 0 &&
           Cfg::kAccumulators + Cfg::kBlockN / 2 <= kRegs;
  else if constexpr (kLoop >= kPinnedLoop) {
    // u, or kEarlyWaveLoop + u (the early first wave: cooperative consumers only).
    constexpr int v = kLoop - kPinnedLoop;
    constexpr int u = v > kEarlyWaveLoop ? v - kEarlyWaveLoop : v;
    return u >= 1 && u <= 8 && !Cfg::kPingPong;
  }
  else if constexpr (kLoop > kPrefetchScalesLoop)
    return Cfg::kWavesM == 1 && Cfg::kPromotedWaveN == Cfg::kBlockN &&
           kLoop - kPrefetchScalesLoop <= Cfg::kBlockN / 8 &&
           Cfg::kAccumulators + Cfg::kBlockN / 2 + 2 * (kLoop - kPrefetchScalesLoop) <= Cfg::kConsumerRegs;
  else
    return kLoop == 0;
}

/// The default (session 29): the lean loop on tiles of two cooperative warpgroups with one 64-row
/// slab each that store dB by TMA, without a cluster: unrolled 4 times up to 192 columns, once
/// above (128 x 256 spills at 2: 48 bytes); the first loop elsewhere. Measured against the first
/// loop on the same tiles in session 29 (chapter 8's NOTEBOOK.md, "Session 29"): 1.00-1.08x geomean
/// over eight cases in two runs (1.03-1.06x for the bf16 dW of Fp8Linear). (The staggered loop
/// measured no faster and is not a default.) Since session 30 the bf16 dB tiles (tma_store) take
/// each tile's first partial sum before the previous tile's epilogue (kEarlyWaveLoop): 1.063x
/// (128 x 192) and 1.026x (128 x 256) the lean loop's TFLOPS, geomean over eight cases in two
/// runs. With FP32 dB (tma_store_f32; 128 x 192 unrolled twice: 4x spills with the early wave)
/// it was not faster (1.001x and 1.017x, 0.984x at 65536
/// tokens; 0.89-0.92x at 8192 tokens, 2 K blocks per tile) with one staging unit per warpgroup,
/// so those keep the lean loop; with two staging units (a unit's store need not have read its
/// buffer before the next unit is written) it was: 128 x 192 s4 b2 unrolled twice 0.995-1.12x
/// the one-unit 128 x 256 default at 65536 tokens, 1.02-1.12x in seven of eight measurements
/// (two cases, three sweeps and one interleaved peers run), level at 8192 (session 30, calls 3
/// and 4).
template <class Cfg>
constexpr int default_kgrouped_loop() {
  if constexpr (Cfg::kConsumerWGs == 2 && Cfg::kWavesM == 1 && !Cfg::kPingPong &&
                Cfg::kClusterSize == 1 && stores_by_tma(Cfg::kEpilogue))
  {
    constexpr bool kBf16 = Cfg::kEpilogue == EpilogueKind::tma_store;
    constexpr bool kEarly = kBf16 || Cfg::kEpiBuffers >= 2;
    constexpr int kUnroll = Cfg::kBlockN > 192 ? 1 : kEarly && !kBf16 ? 2 : 4;
    return kPinnedLoop + (kEarly ? kEarlyWaveLoop : 0) + kUnroll;
  }
  else
    return 0;
}

template <class Cfg, int kLoop = default_kgrouped_loop<Cfg>()>
struct KGroupedMath : PerTensorMath<Cfg> {
  static_assert(Cfg::kAccumulation == Accumulation::promoted,
                "the scales change every 128 tokens: the weight gradient promotes every K block");
  static_assert(Cfg::kClusterN == 1 &&
                    (Cfg::kClusterSize == 1 || stores_by_tma(Cfg::kEpilogue)),
                "k-grouped kernels: 2 x 1 clusters only (the pair shares the second operand), and "
                "only with a TMA epilogue (it clips a partner tile past N; registers would not)");
  static_assert(kgrouped_loop_fits<Cfg, kLoop>(),
                "this loop's partial sums do not fit beside the totals on this tile");
  using Base = PerTensorMath<Cfg>;
  /// The staggered loop's ring position also remembers whether this warpgroup has issued a
  /// piece yet (warpgroup 0's first piece waits for no turn).
  struct StaggeredState : PipelineState<Cfg::kStages> {
    bool issued = false;
  };
  using State = std::conditional_t<kLoop == kStaggeredLoop, StaggeredState, PipelineState<Cfg::kStages>>;
  using Params = KGroupedParams;
  using Scheduler = KGroupedTileScheduler<Cfg::kClusterM>;
  using TileT = KGroupedTile;
  /// The loop's version and the default (kernel_info names the others: _loop0, _2deep, _2deeph, _pf<N>).
  static constexpr int kPromotedLoopVersion = kLoop;
  static constexpr int kDefaultLoop = default_kgrouped_loop<Cfg>();

  static constexpr std::uint32_t kSfaBytes = std::uint32_t(Cfg::kBlockM) * 4u;
  static constexpr std::uint32_t kSfaStride = (kSfaBytes + 127u) & ~127u;  // TMA: 128-aligned
  static constexpr std::uint32_t kSfbBytes = std::uint32_t(Cfg::kBlockN) * 4u;
  static constexpr std::uint32_t kExtraTxBytes = kSfaBytes + kSfbBytes;
  static constexpr std::uint32_t kExtraStageBytes = kSfaStride + ((kSfbBytes + 127u) & ~127u);
  static constexpr std::uint32_t kStageStride = Cfg::kStageBytes;

  __device__ __forceinline__ static Scheduler make_scheduler(const Params& p, std::uint32_t rank) {
    return Scheduler(p, rank);
  }
  __device__ __forceinline__ static int a_row(const KGroupedTile& t) {
    return t.m_block * Cfg::kBlockM;
  }
  __device__ __forceinline__ static int b_row(const GemmParams&, const KGroupedTile& t) {
    return t.n_block * Cfg::kBlockN;
  }
  __device__ __forceinline__ static int d_col(const KGroupedTile& t) {
    return t.n_block * Cfg::kBlockN;
  }
  /// dB_g's rows in D: g N .. g N + N - 1.
  __device__ __forceinline__ static int d_row(const GemmParams& p, const KGroupedTile& t) {
    return t.group * p.M + t.m_block * Cfg::kBlockM;
  }
  __device__ __forceinline__ static int row_end(const GemmParams& p, const KGroupedTile& t) {
    return (t.group + 1) * p.M;
  }
  __device__ __forceinline__ static int k_first(const GemmParams&, const KGroupedTile& t) {
    return t.kb_first;
  }
  __device__ __forceinline__ static int k_end(const GemmParams&, const KGroupedTile& t) {
    return t.kb_first + t.kb_count;
  }

  /// The stage's scales: BlockM of the first operand's rows, BlockN of the second's.
  __device__ __forceinline__ static void produce_extra(const Params& p, std::uint32_t extra,
                                                       std::uint32_t bar, const KGroupedTile& t,
                                                       int kb) {
    ptx::tma_load_2d(extra, &p.map_sfa, bar, t.m_block * Cfg::kBlockM, kb);
    ptx::tma_load_2d(extra + kSfaStride, &p.map_sfb, bar, t.n_block * Cfg::kBlockN, kb);
  }

  /// (kernel.cuh calls store_tile_f32 where this constant exists.)
  static constexpr bool kStoresF32Tile = true;
  /// The tma_store_f32 epilogue of this warpgroup's rows of tile t: dB's map (map_d) is 3-D,
  /// (K, N, G) innermost first, so a box is clipped at its own group's last row and at K.
  __device__ __forceinline__ static void store_tile_f32(
      const float (&acc)[Cfg::kWavesM][Cfg::kBlockN / 2], const Params& p, const KGroupedTile& t,
      std::uint32_t staging, int slot, std::uint32_t barrier_id) {
    store_tile_tma_f32<Cfg, StoreMap::planes>(
        acc, IdentityOutputScale{}, &p.map_d, staging,
        t.m_block * Cfg::kBlockM + slot * Cfg::kRowsPerWG, t.n_block * Cfg::kBlockN, t.group,
        p.accumulate != 0, barrier_id);
  }

  /// The tma_store (bf16) epilogue of this warpgroup's rows of tile t, into dB's 3-D bf16 map
  /// (K, N, G), clipped as store_tile_f32's. (kernel.cuh calls it where this constant exists.)
  static constexpr bool kStoresBf16Tile = true;
  __device__ __forceinline__ static void store_tile_bf16(
      const float (&acc)[Cfg::kWavesM][Cfg::kBlockN / 2], const Params& p, const KGroupedTile& t,
      std::uint32_t staging, int slot, std::uint32_t barrier_id) {
    store_tile_tma<Cfg, StoreMap::planes>(acc, IdentityOutputScale{}, &p.map_d, staging,
                                          t.m_block * Cfg::kBlockM + slot * Cfg::kRowsPerWG,
                                          t.n_block * Cfg::kBlockN, barrier_id, t.group);
  }

  /// The scales were applied in the main loop.
  __device__ __forceinline__ static IdentityOutputScale output_scale(const Params&) { return {}; }

  __device__ __forceinline__ static void mainloop(float (&acc)[Cfg::kWavesM][Cfg::kBlockN / 2],
                                                  State& st, const Params& p,
                                                  const KGroupedTile& t, std::uint32_t ring,
                                                  std::uint32_t side, const std::uint64_t* full,
                                                  const std::uint64_t* empty, int wg_index,
                                                  std::uint32_t rank) {
    if constexpr (kLoop >= kPinnedLoop)
      mainloop_lean(acc, st, t, ring, side, full, empty, wg_index, rank);
    else if constexpr (kLoop == 0 || kLoop > kPrefetchScalesLoop || kLoop == kStaggeredLoop)
      mainloop_first(acc, st, p, t, ring, side, full, empty, wg_index, rank);
    else
      mainloop_two_deep(acc, st, t, ring, side, full, empty, wg_index, rank);
  }

  /// The first loop (kLoop = 0): per K block one partial sum of the whole tile width (or of
  /// kPromotedWaveN columns at a time), waited for, promoted, and the stage released. With
  /// kLoop = kPrefetchScalesLoop + N, the first N column-scale pairs are read between the wgmma's
  /// commit and its wait (the registers of the partial sum the promotion consumes hold the later
  /// ones, as ptxas already schedules them).
  __device__ __forceinline__ static void mainloop_first(
      float (&acc)[Cfg::kWavesM][Cfg::kBlockN / 2], State& st, const Params& p,
      const KGroupedTile& t, std::uint32_t ring, std::uint32_t side, const std::uint64_t* full,
      const std::uint64_t* empty, int wg_index, std::uint32_t rank) {
    const int wg = warp_uniform(wg_index);  // uniform: see BlockScaledMath
    constexpr int kWaveN = Cfg::kPromotedWaveN;
    constexpr int kWavesN = Cfg::kBlockN / kWaveN;
    const int warp = int(threadIdx.x / 32) % 4;
    const int lane = int(threadIdx.x % 32);
    // This thread's accumulator rows (r and r + 8 of every 64-row slab) and columns (8 j + c and
    // 8 j + c + 1 for every 8-column group j, c = 2 (lane % 4)): the wgmma D fragment.
    const int row_in_tile = wg * Cfg::kRowsPerWG + 16 * warp + lane / 4;
    const std::uint32_t col_bytes = std::uint32_t(2 * (lane % 4)) * 4u;
    Base::zero(acc);
    float part[kWaveN / 2];
    const std::uint64_t desc0 = ptx::make_desc_k_major_sw128(ring);
    for (int i = 0; i < t.kb_count; ++i) {
      wait_barrier<Cfg>(ptx::smem_u32(&full[st.stage]), st.phase);
      const auto [desc_a, desc_b] = PerTensorMath<Cfg>::stage_descs(desc0, st.stage, wg);
      const std::uint32_t extra = side + std::uint32_t(st.stage) * kExtraStageBytes;
#pragma unroll
      for (int w = 0; w < Cfg::kWavesM; ++w) {
        const std::uint32_t sa_addr = extra + std::uint32_t(row_in_tile + 64 * w) * 4u;
        const float sa0 = ptx::ld_shared_f32(sa_addr);
        const float sa1 = ptx::ld_shared_f32(sa_addr + 32u);
#pragma unroll
        for (int wn = 0; wn < kWavesN; ++wn) {
          constexpr int kPre = kLoop > kPrefetchScalesLoop ? kLoop - kPrefetchScalesLoop : 0;
          const std::uint32_t sb_base = extra + kSfaStride + std::uint32_t(wn * kWaveN) * 4u + col_bytes;
          float2 pre[kPre > 0 ? kPre : 1];
          if constexpr (kLoop == kStaggeredLoop) {
            // Our turn: warpgroup 1 after warpgroup 0 has issued this piece, warpgroup 0 after
            // warpgroup 1 has issued the previous one (every piece but the kernel's first).
            if (wg == 1 || st.issued) ptx::named_barrier_sync(kStaggerBarrier + std::uint32_t(wg), 256);
            BlockScaledMath<Cfg>::template issue_partial_sum<kWaveN>(part, desc_a, desc_b, w, wn);
            // Its turn: its wgmma queue behind ours while we wait for ours and promote.
            ptx::named_barrier_arrive(kStaggerBarrier + std::uint32_t(wg ^ 1), 256);
            st.issued = true;
            ptx::wgmma_wait_group<0>();
            ptx::wgmma_fence_operands(part);
          } else if constexpr (kPre == 0) {
            BlockScaledMath<Cfg>::template partial_sum<kWaveN>(part, desc_a, desc_b, w, wn);
          } else {
            constexpr int kSteps = Cfg::kBlockK / Cfg::kWgmmaK;
            ptx::wgmma_fence();
#pragma unroll
            for (int ks = 0; ks < kSteps; ++ks)
              ptx::wgmma_m64nNk32_e4m3<kWaveN>(
                  part, ptx::advance_desc(desc_a, std::uint32_t(ks * Cfg::kWgmmaK)),
                  ptx::advance_desc(desc_b, std::uint32_t(ks * Cfg::kWgmmaK)), ks > 0 ? 1u : 0u);
            ptx::wgmma_commit_group();
#pragma unroll
            for (int gi = 0; gi < kPre; ++gi)
              pre[gi] = ptx::ld_shared_v2_f32(sb_base + std::uint32_t(8 * gi) * 4u);
            ptx::wgmma_wait_group<0>();
            ptx::wgmma_fence_operands(part);
          }
#pragma unroll
          for (int gi = 0; gi < kWaveN / 8; ++gi) {
            // The second operand's scales of this 8-column group's two columns.
            const std::uint32_t sb_addr = sb_base + std::uint32_t(8 * gi) * 4u;
            float sb0, sb1;
            if (gi < kPre) {
              sb0 = pre[gi < kPre ? gi : 0].x;
              sb1 = pre[gi < kPre ? gi : 0].y;
            } else {
              sb0 = ptx::ld_shared_f32(sb_addr);
              sb1 = ptx::ld_shared_f32(sb_addr + 4u);
            }
            float* a = &acc[w][wn * (kWaveN / 2) + 4 * gi];
            a[0] = __fmaf_rn(sa0 * sb0, part[4 * gi + 0], a[0]);
            a[1] = __fmaf_rn(sa0 * sb1, part[4 * gi + 1], a[1]);
            a[2] = __fmaf_rn(sa1 * sb0, part[4 * gi + 2], a[2]);
            a[3] = __fmaf_rn(sa1 * sb1, part[4 * gi + 3], a[3]);
          }
        }
      }
      Base::release(ptx::smem_u32(&empty[st.stage]), rank);  // after the promotion read the scales
      st.advance();
    }
  }

  /// After the consumers' last tile (gemm_kernel): with the staggered loop, warpgroup 1 handed
  /// warpgroup 0 a turn after its last piece that no piece took; warpgroup 0 takes it, so that no
  /// barrier is left half-arrived when the CTA exits.
  __device__ __forceinline__ static void consumers_done(const State& st, int wg_index) {
    if constexpr (kLoop == kStaggeredLoop) {
      if (warp_uniform(wg_index) == 0 && st.issued) ptx::named_barrier_sync(kStaggerBarrier, 256);
    }
  }

  /// This thread's scales in a stage's side bytes, from its wgmma D fragment: the A scale of its
  /// first row (rows r and r + 8 of the warpgroup's 64-row slab, r = 16 warp + lane / 4) and the
  /// B scale of its first column (columns 8 j + 2 (lane % 4) + {0, 1}), byte offsets.
  struct FragmentOffsets {
    std::uint32_t sa, sb;
  };
  __device__ __forceinline__ static FragmentOffsets fragment_offsets(int wg) {
    const int warp = int(threadIdx.x / 32) % 4;
    const int lane = int(threadIdx.x % 32);
    return {std::uint32_t(wg * Cfg::kRowsPerWG + 16 * warp + lane / 4) * 4u,
            kSfaStride + std::uint32_t(2 * (lane % 4)) * 4u};
  }

  /// The lean loop's promotion (kLoop = kPinnedLoop + u): chapters 6 and 7's lean loop
  /// (PerTensorMath::promoted_loop: descriptors by addition, ring and barrier addresses pinned in
  /// registers, the K loop unrolled u times) with this recipe's promotion, acc += (sa[row] x
  /// sb[col]) x part, the scales read from the stage's side ring. Since the promotion reads the
  /// stage, the loop releases it after the promotion (kReadsStage), not before the last one.
  struct LeanPromotion {
    static constexpr bool kReadsStage = true;
    std::uint32_t side;       ///< the side ring
    std::uint32_t sa_offset;  ///< this thread's first row's A scale, from a stage's side bytes
    std::uint32_t sb_offset;  ///< this thread's first column's B scale, likewise
    struct Block {};
    struct Slab {
      float sa0, sa1;   ///< the scales of this thread's rows r and r + 8 of slab w
      std::uint32_t sb; ///< the stage's B scale of this thread's first column
    };
    __device__ __forceinline__ Block block(int /*kb*/) { return {}; }
    __device__ __forceinline__ Slab slab(int stage, int w) const {
      const std::uint32_t extra = side + std::uint32_t(stage) * kExtraStageBytes;
      const std::uint32_t a = extra + sa_offset + std::uint32_t(64 * w) * 4u;
      return {ptx::ld_shared_f32(a), ptx::ld_shared_f32(a + 32u), extra + sb_offset};
    }
    /// wn: the column group, a constant once lean_block's loop over it is unrolled.
    template <int kWaveN>
    __device__ __forceinline__ void promote(float (&acc)[Cfg::kBlockN / 2],
                                            const float (&part)[kWaveN / 2], int wn,
                                            const Slab& s, const Block&) const {
      KGroupedMath::promote<kWaveN>(acc, part, s.sb, s.sa0, s.sa1, wn * kWaveN);
    }
  };

  /// This warpgroup's lean-loop promotion over the side ring `side`.
  __device__ __forceinline__ static LeanPromotion lean_promotion(std::uint32_t side, int wg) {
    const FragmentOffsets off = fragment_offsets(wg);
    return LeanPromotion{side, off.sa, off.sb};
  }

  /// The lean loop (kLoop = kPinnedLoop + u) over the tile's K blocks.
  __device__ __forceinline__ static void mainloop_lean(
      float (&acc)[Cfg::kWavesM][Cfg::kBlockN / 2], State& st, const KGroupedTile& t,
      std::uint32_t ring, std::uint32_t side, const std::uint64_t* full,
      const std::uint64_t* empty, int wg_index, std::uint32_t rank) {
    const int wg = warp_uniform(wg_index);  // uniform: see BlockScaledMath
    LeanPromotion promotion = lean_promotion(side, wg);
    PerTensorMath<Cfg, kLoop>::promoted_loop(acc, st, t.kb_first, t.kb_first + t.kb_count, ring,
                                              full, empty, wg, rank, promotion);
  }

  /// The early first wave (kLoop = kPinnedLoop + kEarlyWaveLoop + u): gemm_kernel's
  /// EarlyWaveConsumers path issues each tile's first partial sum before the previous tile's
  /// epilogue, through these four, with the lean loop's promotion. A tile of an empty group
  /// (kb_count 0, scheduled when dB is written rather than accumulated) has no K block: nothing
  /// is issued for it and its totals are zeros, as the lean loop leaves them.
  static constexpr bool kEarlyWave =
      kLoop >= kPinnedLoop && kLoop - kPinnedLoop > kEarlyWaveLoop;
  using EarlyWavePolicy = KGroupedMath;
  using LeanMath = PerTensorMath<Cfg, (kEarlyWave ? kLoop : kPinnedLoop + 1)>;
  __device__ __forceinline__ static LeanPromotion make_promotion(const Params&,
                                                                 const KGroupedTile&,
                                                                 std::uint32_t side, int wg) {
    return lean_promotion(side, wg);
  }
  __device__ __forceinline__ static void issue_first_wave(float (&part)[Cfg::kPromotedWaveN / 2],
                                                          const State& st, std::uint32_t ring,
                                                          const std::uint64_t* full, int wg,
                                                          const KGroupedTile& t) {
    if (t.kb_count > 0) LeanMath::issue_first_wave(part, st, ring, full, wg, t);
  }
  __device__ __forceinline__ static void promoted_loop_after_first_wave(
      float (&acc)[Cfg::kWavesM][Cfg::kBlockN / 2], float (&part)[Cfg::kPromotedWaveN / 2],
      State& st, int kb_begin, int kb_end, std::uint32_t ring, const std::uint64_t* full,
      const std::uint64_t* empty, int wg, std::uint32_t rank, LeanPromotion& promotion) {
    if (kb_begin == kb_end) {
      // Nothing was issued for this tile; the wait (for nothing) is for ptxas, which does not
      // see that this branch and issue_first_wave's test agree: without it, a path that issued
      // a partial sum and skipped its wait reaches the next wgmma, and ptxas injects a wait
      // before every use of the wgmma's registers (C7517, failing the ptxas check).
      ptx::wgmma_wait_group<0>();
      Base::zero(acc);
      return;
    }
    LeanMath::promoted_loop_after_first_wave(acc, part, st, kb_begin, kb_end, ring, full, empty,
                                             wg, rank, promotion);
  }

  /// The two-deep loops' state across pieces.
  struct TwoDeep {
    std::uint64_t desc0;
    std::uint32_t full0, empty0, side, sa_offset, sb_offset;
    int wg;
    std::uint32_t rank;
    typename Base::StageDescs descs;  ///< the current K block's stage (set at its first piece)
    float sa0, sa1;                   ///< the current K block's A scales of this thread's rows
    int pend_stage;                   ///< the piece issued last and not yet promoted: its stage
    float pend_sa0, pend_sa1;         ///< and its rows' scales
  };
  static constexpr int kUnits = kLoop == kTwoDeepHalvesLoop ? 2 : 1;  ///< pieces per K block
  static constexpr int kPieceN = Cfg::kBlockN / kUnits;              ///< columns per piece

  /// Piece h of the current K block into `dst`, then the promotion of the pending piece (the
  /// previous one) from `src`.
  template <int h>
  __device__ __forceinline__ static void two_deep_step(float (&acc)[Cfg::kBlockN / 2], State& st,
                                                       TwoDeep& s, float (&dst)[kPieceN / 2],
                                                       float (&src)[kPieceN / 2]) {
    constexpr int kSteps = Cfg::kBlockK / Cfg::kWgmmaK;
    constexpr int kPendH = kUnits == 2 ? 1 - h : 0;  // the pending piece's half
    if constexpr (h == 0) {
      wait_barrier<Cfg>(s.full0 + 8u * std::uint32_t(st.stage), st.phase);
      s.descs = Base::stage_descs(s.desc0, st.stage, s.wg);
      const std::uint32_t sa_addr = s.side + std::uint32_t(st.stage) * kExtraStageBytes + s.sa_offset;
      s.sa0 = ptx::ld_shared_f32(sa_addr);
      s.sa1 = ptx::ld_shared_f32(sa_addr + 32u);
    }
    ptx::wgmma_wait_group<0>();  // the pending piece: src is final
    ptx::wgmma_fence();
#pragma unroll
    for (int ks = 0; ks < kSteps; ++ks)
      ptx::wgmma_m64nNk32_e4m3<kPieceN>(
          dst, ptx::advance_desc(s.descs.a, std::uint32_t(ks * Cfg::kWgmmaK)),
          ptx::advance_desc(s.descs.b, std::uint32_t(h * kPieceN * Cfg::kBlockK + ks * Cfg::kWgmmaK)),
          ks > 0 ? 1u : 0u);
    ptx::wgmma_commit_group();
    if (s.pend_stage >= 0) {
      ptx::wgmma_fence_operands(src);
      promote(acc, src, s.side + std::uint32_t(s.pend_stage) * kExtraStageBytes + s.sb_offset,
              s.pend_sa0, s.pend_sa1, kPendH * kPieceN);
      // The pending piece was its block's last: its stage (operands and scales) is read.
      if constexpr (kPendH == kUnits - 1) Base::release(s.empty0 + 8u * std::uint32_t(s.pend_stage), s.rank);
    }
    s.pend_stage = st.stage;
    s.pend_sa0 = s.sa0;
    s.pend_sa1 = s.sa1;
    if constexpr (h == kUnits - 1) st.advance();
  }

  /// The two-deep loops (kLoop = kTwoDeepLoop or kTwoDeepHalvesLoop). A K block is kUnits
  /// pieces of kPieceN columns (the whole width, or two halves); piece u goes into P[u % 2] and is
  /// issued before piece u - 1 (in the other buffer) is promoted, so this warpgroup's own wgmma
  /// keep the tensor cores busy while it promotes. As in PerTensorMath::promoted_loop_two_deep,
  /// the buffer the promotion reads was retired (wgmma.wait_group 0) before the next piece's
  /// warpgroup.arrive, which keeps ptxas from serialising the wgmma (C7514). The promotion reads
  /// the columns' scales from the stage's side ring, so a stage is released after its last
  /// piece's promotion, one piece later than it could be otherwise. Each thread reads its two
  /// columns' scales with one 8-byte load (the first loop: two 4-byte loads).
  __device__ __forceinline__ static void mainloop_two_deep(
      float (&acc)[Cfg::kWavesM][Cfg::kBlockN / 2], State& st, const KGroupedTile& t,
      std::uint32_t ring, std::uint32_t side, const std::uint64_t* full,
      const std::uint64_t* empty, int wg_index, std::uint32_t rank) {
    TwoDeep s{};
    s.wg = warp_uniform(wg_index);  // uniform: see BlockScaledMath
    const FragmentOffsets off = fragment_offsets(s.wg);
    s.sa_offset = off.sa;
    s.sb_offset = off.sb;
    s.desc0 = ptx::make_desc_k_major_sw128(ring);
    s.full0 = ptx::smem_u32(full);
    s.empty0 = ptx::smem_u32(empty);
    s.side = side;
    s.rank = rank;
    s.pend_stage = -1;
    Base::zero(acc);
    float P0[kPieceN / 2], P1[kPieceN / 2];
    int i = 0;
    bool last_in_p1 = true;  // where the last piece went
    if constexpr (kUnits == 2) {
      for (; i < t.kb_count; ++i) {
        two_deep_step<0>(acc[0], st, s, P0, P1);
        two_deep_step<1>(acc[0], st, s, P1, P0);
      }
    } else {
      for (; i + 1 < t.kb_count; i += 2) {
        two_deep_step<0>(acc[0], st, s, P0, P1);
        two_deep_step<0>(acc[0], st, s, P1, P0);
      }
      if (i < t.kb_count) {  // an odd tail: the last block goes into P0
        two_deep_step<0>(acc[0], st, s, P0, P1);
        last_in_p1 = false;
      }
    }
    ptx::wgmma_wait_group<0>();  // on every path (ptxas injects one otherwise, C7517)
    if (s.pend_stage >= 0) {
      const std::uint32_t sb_addr = side + std::uint32_t(s.pend_stage) * kExtraStageBytes + s.sb_offset;
      constexpr int kLastCol = (kUnits - 1) * kPieceN;
      if (last_in_p1) {
        ptx::wgmma_fence_operands(P1);
        promote(acc[0], P1, sb_addr, s.pend_sa0, s.pend_sa1, kLastCol);
      } else {
        ptx::wgmma_fence_operands(P0);
        promote(acc[0], P0, sb_addr, s.pend_sa0, s.pend_sa1, kLastCol);
      }
      Base::release(s.empty0 + 8u * std::uint32_t(s.pend_stage), rank);
    }
  }

  /// acc[col0 + ...] += (sa[row] x sb[col]) x part for the kW columns from col0 of this thread's
  /// rows; sb_addr: the stage's side ring at this thread's first column's scale. col0 must be a
  /// compile-time constant after inlining and unrolling (it indexes the register array acc).
  template <int kW = kPieceN>
  __device__ __forceinline__ static void promote(float (&acc)[Cfg::kBlockN / 2],
                                                 const float (&part)[kW / 2], std::uint32_t sb_addr,
                                                 float sa0, float sa1, int col0) {
#pragma unroll
    for (int gi = 0; gi < kW / 8; ++gi) {
      const float2 sb = ptx::ld_shared_v2_f32(sb_addr + std::uint32_t(col0 + 8 * gi) * 4u);
      float* a = &acc[col0 / 2 + 4 * gi];
      a[0] = __fmaf_rn(sa0 * sb.x, part[4 * gi + 0], a[0]);
      a[1] = __fmaf_rn(sa0 * sb.y, part[4 * gi + 1], a[1]);
      a[2] = __fmaf_rn(sa1 * sb.x, part[4 * gi + 2], a[2]);
      a[3] = __fmaf_rn(sa1 * sb.y, part[4 * gi + 3], a[3]);
    }
  }
};

}  // namespace fp8gemm::engine
