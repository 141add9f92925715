// The block-scaled math policy of the engine (chapter 7; chapter 8 reuses it): the DeepSeek-V3
// recipe that DeepGEMM implements.
//
//   D[m, n] = sum over K blocks kb of  scale_a[m, kb] * scale_b[n / 128, kb] * P_kb[m, n],
//   P_kb[m, n] = sum_{k in block kb} A[m, k] * B[n, k]          (A, B e4m3; 128-wide K blocks)
//
// A (M x K e4m3, row-major) has one float scale per row and 128 K (1 x 128 groups), B (N x K
// e4m3, row-major) one per 128 x 128 block. P_kb is a fresh tensor-core sum of 4 wgmma k32 steps;
// the CUDA cores then add it into the FP32 accumulator with one FFMA per element, multiplied by
// the product of its two scales. So the tensor cores' reduced-precision accumulation never runs
// longer than 128 K (docs/fp8_numerics.md), and the scales may change every 128 K.
//
// Per ring stage the producer loads, besides the A and B tiles, the stage's A scales into the
// side ring: scale_a[m0 .. m0 + BlockM, kb] (TMA, a 1 x BlockM box of the mn-major scale tensor;
// rows past M read as 0), expected on the stage's full barrier with the tiles. The B scales are
// one float per 128 x 128 block: each consumer thread reads the (at most kSfbRows) that its tile
// touches straight from global memory (L1/L2-resident), 32 K blocks per load, spread over the
// warp's lanes and read out by a shuffle (BScaleStream; the first loop, mainloop_v0, one K block
// ahead instead).
// A tile BlockN wide that starts at n0 covers columns of up to kSfbRows B-scale blocks: which
// block each 8-column group of the accumulator falls in depends on n0 % 128, which takes only
// 128 / gcd(BlockN, 128) values; the promotion is compiled once per value (kOffsets), so every
// scale select is resolved at compile time, and where a tile can straddle two blocks the whole
// loop is compiled once per value and chosen once per tile (mainloop_range).
#pragma once

#include <cstdint>
#include <utility>

#include "common/engine/config.cuh"
#include "common/engine/kernel.cuh"
#include "common/engine/params.hpp"
#include "common/ptx/smem.cuh"

namespace fp8gemm::engine {

namespace detail {
constexpr int gcd(int a, int b) { return b == 0 ? a : gcd(b, a % b); }

/// Tiles `block_n` wide start at multiples of block_n, so n0 % 128 takes 128 / gcd(block_n, 128)
/// values; where block_n neither divides 128 nor is a multiple of it, which 128-column B-scale
/// block a column group falls in depends on that value (the tile "straddles"), and a block-scaled
/// kernel holds one copy of its loop per value (BlockScaledMath::mainloop_range).
constexpr int b_scale_offsets(int block_n) { return 128 / gcd(block_n, 128); }
constexpr bool straddles_b_scale_blocks(int block_n) {
  return block_n % 128 != 0 && 128 % block_n != 0;
}

/// Calls f(std::integral_constant<int, O * kStep>) for the O with O * kStep == value.
template <int kStep, class F, int... Os>
__device__ __forceinline__ void dispatch_offset(int value, F&& f,
                                                std::integer_sequence<int, Os...>) {
  ((value == Os * kStep ? (f(std::integral_constant<int, Os * kStep>{}), 0) : 0), ...);
}
}  // namespace detail

/// Block scaling's default promoted loop (kernel.cuh): two-deep where it fits; else the lean loop
/// unrolled 8x where a warpgroup owns two 64-row slabs (256 x 128: 1.057-1.068x of the rolled
/// lean loop over seven shapes, b105591) and 4x elsewhere (128 x 256, 192 x 128: 0.997-1.008x,
/// neutral). No spills in any of chapter 7's kernels (ptxas_chapter_07); the measurements are in
/// plots/data/h200/engine_loops/.
/// Except on a tile that straddles B-scale blocks at four or more values of n0 % 128: such a
/// kernel holds one copy of its loop per value (BlockScaledMath::mainloop_range), and there the
/// rolled lean loop is the default. Measured on the H200 in session 17 (chapter 7's NOTEBOOK.md,
/// "Straddling tiles with a rolled loop"; same run, both orders): rolled, 128 x 176 (eight copies)
/// took 0.94-0.99x the time of its 4x loop, 128 x 56 0.76-0.95x and 64 x 112 0.84-1.03x that of
/// their two-deep loop; 128 x 192 (two copies) 1.02x that of its 4x loop, so it keeps it. Chapter
/// 8's 256 x 112 (eight copies, session 16): 1.6x 256 x 128's time with its 8x loop, 1.04x
/// rolled; its 128 x 224 (four copies, the threshold; session 16, two calls apart): 1.04-1.24x
/// 128 x 256's time with its 4x loop, 0.96-0.99x rolled.
/// Where the lean loop runs on cooperative consumers and the tile does not straddle B-scale
/// blocks, each tile's first partial sum is issued before the epilogue of the tile before
/// (kEarlyWaveLoop + the unroll factor; session 23, chapter 7's NOTEBOOK.md "The early wave's B
/// scales before the epilogue": the table's four large tiles took 0.95-1.01x the time of the plain
/// loop, geomean 0.987x on 256 x 128 and 0.969x on 128 x 256 over seven shapes, same run), and
/// since session 24 with its addresses pinned (kPinnedLoop).
template <class Cfg>
constexpr int default_block_scaled_loop() {
  constexpr int kN = Cfg::kBlockN;
  if (detail::straddles_b_scale_blocks(kN) && detail::b_scale_offsets(kN) >= 4) return 1;
  // Two-deep; on tiles of at most 64 columns with a ring of an even number of stages and the TMA
  // store epilogue, the same loop unrolled over the ring cycle (kTwoDeepCycleLoop) for tiles of
  // at least two cycles of K blocks (kTwoDeepLongCycleLoop). Sessions 39 and 40 measured the cycle
  // loop at 0.89-0.99x the time of two-deep where K >= 7168 on 64 x 16, 64 x 32 and 128 x 64
  // (four runs), but 1.06-1.26x on 64 x 16 / 64 x 32 where K <= 1536 (a tile of 4-12 K blocks
  // enters a 14-16-step body at a rotating stage); on 64 x 128 1.00-1.03x everywhere (not
  // used there), and 128 x 128 loses the FFMA interleave (sass_chapter_07_interleaved_ffma).
  // Chapter 7's NOTEBOOK.md, "Session 40".
  if (two_deep_fits<Cfg>())
    return Cfg::kBlockN <= 64 && Cfg::kStages % 2 == 0 &&
                   Cfg::kEpilogue == EpilogueKind::tma_store
               ? kTwoDeepLongCycleLoop
               : kTwoDeepLoop;
  const int unroll = Cfg::kWavesM >= 2 ? 8 : 4;
  // The early first wave promotes through Promotion, which needs a tile whose columns are in
  // one B-scale block row (not straddling), and it is a cooperative order.
  // Its addresses pinned (kPinnedLoop; session 24).
  return !Cfg::kPingPong && !detail::straddles_b_scale_blocks(kN)
             ? kPinnedLoop + kEarlyWaveLoop + unroll
             : unroll;
}

template <class Cfg, int kPromotedLoop = default_block_scaled_loop<Cfg>()>
struct BlockScaledMath : PerTensorMath<Cfg, kPromotedLoop> {  // its scheduler, tile geometry,
                                                              // helpers and promoted loop
  static_assert(Cfg::kAccumulation == Accumulation::promoted,
                "block scaling promotes every 128-K block: the scales change along K");
  using Base = PerTensorMath<Cfg, kPromotedLoop>;
  using State = PipelineState<Cfg::kStages>;
  using Params = BlockScaledParams;
  static constexpr int kDefaultLoop = default_block_scaled_loop<Cfg>();
  using EarlyWavePolicy = BlockScaledMath;  // kernel.cuh, EarlyWaveConsumers

  static constexpr int kSfbRows = sfb_rows_for(Cfg::kBlockN);
  static constexpr std::uint32_t kSfaBytes = std::uint32_t(Cfg::kBlockM) * 4u;
  static constexpr std::uint32_t kExtraTxBytes = kSfaBytes;
  static constexpr std::uint32_t kExtraStageBytes = (kSfaBytes + 127u) & ~127u;  // TMA: 128-aligned
  /// A tile that may start at any row (chapter 8's groups: its TileT has m0): TMA faults with an
  /// illegal instruction when the box's first element along the innermost dimension is not
  /// 16-byte aligned (measured on the H200: a grouped tile starting at row 1), so such a tile's A
  /// scales are loaded from row m0 & ~3, four more of them, and read `m0 & 3` further on.
  template <class TileT>
  static constexpr bool kSkewedRows = requires(const TileT& t) { t.m0; };
  /// Those BlockM + 4 scales in one TMA box or two, back to back in the stage (params.hpp).
  static constexpr int kSkewedBoxRows = skewed_scale_box_rows(Cfg::kBlockM);
  static constexpr int kSkewedBoxes = skewed_scale_boxes(Cfg::kBlockM);
  static_assert(kSkewedBoxes * kSkewedBoxRows >= Cfg::kBlockM + 4, "the boxes cover the rows");
  static constexpr std::uint32_t kSkewedSfaBytes =
      std::uint32_t(kSkewedBoxes * kSkewedBoxRows) * 4u;  // BlockM <= 128: kSfaBytes + 16
  /// A stage's side bytes: the A scales, and for a tile that may start at any row (chapter 8's
  /// grouped forward) 32 more after them, where its producer hands each tile to the consumers
  /// (grouped.cuh, kTilesThroughRing: 16 bytes; stream_k.cuh: 32). Rounded to 128 bytes, the
  /// 32 take no more than 16 did at BlockM = 64, 128, 192 and 256.
  template <class TileT>
  static constexpr std::uint32_t side_stage_bytes() {
    return kSkewedRows<TileT> ? (kSkewedSfaBytes + 32u + 127u) & ~127u : kExtraStageBytes;
  }
  static constexpr std::uint32_t kStageStride = Cfg::kStageBytes;
  /// n0 % 128 takes the values 0, kOffsetStep, 2 kOffsetStep, ... (kOffsets of them).
  static constexpr int kOffsetStep = detail::gcd(Cfg::kBlockN, 128);
  static constexpr int kOffsets = detail::b_scale_offsets(Cfg::kBlockN);
  /// Whether a tile's columns can fall in B-scale blocks that depend on n0 % 128: not when
  /// BlockN divides 128 (a tile never crosses a block boundary) or is a multiple of it.
  static constexpr bool kStraddles = detail::straddles_b_scale_blocks(Cfg::kBlockN);

  /// The B scales of K block kb for the tile's block rows nb0 .. nb0 + kSfbRows - 1 (0 past N),
  /// from the scale tensor at `sfb` (the tile's group's, in chapter 8): the first loop's loads,
  /// one K block ahead (its SASS keeps them per thread, no R2UR after them: BScaleStream says
  /// why that matters).
  __device__ __forceinline__ static void load_sfb(float (&sb)[kSfbRows], const Params& p,
                                                  const float* sfb, int nb0, int kb) {
#pragma unroll
    for (int r = 0; r < kSfbRows; ++r)
      sb[r] = nb0 + r < p.sfb_rows ? __ldg(sfb + (std::int64_t(nb0 + r) * p.sfb_ld + kb)) : 0.0f;
  }
  /// The B-scale tensor of tile t: one for a dense GEMM; the tile's group's in chapter 8 (a tile
  /// with a `group`, groups sfb_group_stride floats apart).
  template <class TileT>
  __device__ __forceinline__ static const float* sfb_of(const BlockScaledParams& p,
                                                        const TileT& t) {
    if constexpr (requires { t.group; })
      return p.sfb + std::int64_t(t.group) * p.sfb_group_stride;
    else
      return p.sfb;
  }

  /// The B scales of a tile's K blocks as the consumers read them (a "scale stream"): lane l of
  /// every warp holds, for each of the tile's kSfbRows B-scale rows, K block base + l's in `cur`;
  /// K block kb's is a shuffle from lane kb - base. At block base + 16 the next 32 blocks' are
  /// requested into `next`, which becomes `cur` at base + 32: one load per lane and row per 32 K
  /// blocks, 16 blocks (a few thousand cycles) before its first use. Why not one load per K block,
  /// one block ahead (the loop up to 3204fe1): that value is the same in every lane, so ptxas kept
  /// it in a uniform register and moved it there (R2UR) right after the load, which made every
  /// load synchronous: one L1/L2 round trip per K block between the last promotion and the next
  /// full-barrier wait, in the SASS of every block-scaled kernel.
  struct BScaleStream {
    const float* sfb_row[kSfbRows];  ///< B-scale rows nb0 + r of the tile (read where ok[r])
    bool ok[kSfbRows];               ///< nb0 + r < sfb_rows: rows past N's last block read as 0
    int kb_end;                      ///< the tile's K blocks end here (none read past it)
    int base;                        ///< K block held by lane 0 in cur
    float cur[kSfbRows];
    float next[kSfbRows];

    /// The stream of tile t, its first 32 K blocks' requested.
    template <class TileT>
    __device__ __forceinline__ BScaleStream(const Params& p, const TileT& t) {
      const int nb0 = (t.n_block * Cfg::kBlockN) / 128;
      const float* sfb = sfb_of(p, t);
#pragma unroll
      for (int r = 0; r < kSfbRows; ++r) {
        ok[r] = nb0 + r < p.sfb_rows;
        sfb_row[r] = sfb + std::int64_t(nb0 + r) * p.sfb_ld;
      }
      base = 0;
      kb_end = p.k_blocks;
      if constexpr (requires { t.kb_begin; }) {  // a split-K unit: its K blocks only
        base = t.kb_begin;
        kb_end = t.kb_end;
      }
#pragma unroll
      for (int r = 0; r < kSfbRows; ++r) {
        cur[r] = 0.0f;
        next[r] = 0.0f;  // requested at block base + 16
      }
      load(cur, base);
    }
    /// Lane l: K block kb0 + l's scales of every row (0 past kb_end or N).
    __device__ __forceinline__ void load(float (&v)[kSfbRows], int kb0) const {
      const int kb = kb0 + int(threadIdx.x % 32);
#pragma unroll
      for (int r = 0; r < kSfbRows; ++r) v[r] = ok[r] && kb < kb_end ? __ldg(sfb_row[r] + kb) : 0.0f;
    }
    /// K block kb's B scales (kb = base, base + 1, ... in order; every lane of the warp calls it).
    __device__ __forceinline__ void get(int kb, float (&sb)[kSfbRows]) {
      int i = kb - base;
      if (i == 32) {  // into the next 32 blocks
#pragma unroll
        for (int r = 0; r < kSfbRows; ++r) cur[r] = next[r];
        base += 32;
        i = 0;
      }
      if (i == 16) load(next, base + 32);
#pragma unroll
      for (int r = 0; r < kSfbRows; ++r) sb[r] = __shfl_sync(0xffffffffu, cur[r], i);
    }
  };
  __device__ __forceinline__ static void produce_extra(const Params& p, std::uint32_t extra,
                                                       std::uint32_t bar, const Tile& t, int kb) {
    ptx::tma_load_2d(extra, &p.map_sfa, bar, t.m_block * Cfg::kBlockM, kb);
  }

  /// The scales were applied in the main loop.
  __device__ __forceinline__ static IdentityOutputScale output_scale(const Params&) { return {}; }

  /// One partial sum (64 rows x kWaveN columns, columns [wn kWaveN, (wn + 1) kWaveN) of the
  /// tile) added into the slab's totals: acc += (scale_a[row] x scale_b[block]) x part, the block
  /// of each 8-column group known at compile time from kOffset = n0 % 128.
  template <int kOffset, int kWaveN>
  __device__ __forceinline__ static void promote(float (&acc)[Cfg::kBlockN / 2],
                                                 const float (&part)[kWaveN / 2], int wn,
                                                 float sa0, float sa1,
                                                 const float (&sb)[kSfbRows]) {
#pragma unroll
    for (int gi = 0; gi < kWaveN / 8; ++gi) {
      const int b = (kOffset + wn * kWaveN + 8 * gi) / 128;  // constant after unrolling
      const float s0 = sa0 * sb[b];  // row r
      const float s1 = sa1 * sb[b];  // row r + 8
      float* a = &acc[wn * (kWaveN / 2) + 4 * gi];
      a[0] = __fmaf_rn(s0, part[4 * gi + 0], a[0]);
      a[1] = __fmaf_rn(s0, part[4 * gi + 1], a[1]);
      a[2] = __fmaf_rn(s1, part[4 * gi + 2], a[2]);
      a[3] = __fmaf_rn(s1, part[4 * gi + 3], a[3]);
    }
  }

  /// The block-scaled promotion of the lean loop (PerTensorMath::promoted_loop): per K block the
  /// tile's B scales (from its BScaleStream), per 64-row slab the stage's two
  /// A scales of this thread's rows (from the side ring, after the stage's full barrier), per
  /// partial sum acc += (scale_a x scale_b) x part (promote).
  template <class TileT>
  struct Promotion {
    BScaleStream bs;                     ///< the tile's B scales
    std::uint32_t sa_base = 0;           ///< side ring + this thread's first A-scale row x 4
    std::uint32_t side_stage_bytes = 0;  ///< side-ring bytes per stage
    int offset = 0;  ///< n0 % 128 (which B-scale block each column group is in)
    struct Block {
      float sb[kSfbRows];  ///< the K block's B scales
    };
    struct Slab {
      float sa0, sa1;  ///< the A scales of rows r and r + 8 of the slab
    };

    __device__ __forceinline__ Block block(int kb) {
      Block b;
      bs.get(kb, b.sb);
      return b;
    }
    /// The A-scale address through an identity shuffle (each lane reads its own value), which
    /// ptxas cannot see through: it then keeps it in a register. The ring-cycle loop calls this
    /// (promoted_loop_two_deep_cycle): there ptxas re-derived it from the thread index before each
    /// K block's scale loads, 6 instructions a K block (session 39). The other loops do not need
    /// it (chapter 7 within -0.7 % / +1.2 % with it everywhere, session 39's call 4).
    __device__ __forceinline__ void pin() {
      sa_base = __shfl_sync(0xffffffffu, sa_base, int(threadIdx.x % 32));
    }
    __device__ __forceinline__ Slab slab(int stage, int w) const {
      const std::uint32_t addr =
          sa_base + std::uint32_t(stage) * side_stage_bytes + std::uint32_t(64 * w) * 4u;
      return {ptx::ld_shared_f32(addr), ptx::ld_shared_f32(addr + 32u)};
    }
    /// A tile that does not straddle B-scale blocks has the same promotion at every n0 % 128
    /// (every column group is in the tile's first block row): offset 0, no choice at run time.
    /// A straddling tile promotes through FixedPromotion, its n0 % 128 fixed per tile
    /// (mainloop_range); a loop that would call this on one does not compile.
    template <int kWaveN>
    __device__ __forceinline__ void promote(float (&acc)[Cfg::kBlockN / 2],
                                            const float (&part)[kWaveN / 2], int wn,
                                            const Slab& s, const Block& b) const {
      static_assert(!kStraddles, "a straddling tile promotes through FixedPromotion");
      BlockScaledMath::promote<0, kWaveN>(acc, part, wn, s.sa0, s.sa1, b.sb);
    }
  };

  /// The same promotion with n0 % 128 a compile-time constant: the main loop of a tile is
  /// compiled once per value (mainloop_range), so the loop holds one promotion per partial sum
  /// instead of kOffsets of them behind a compare chain.
  template <class TileT, int kOffset>
  struct FixedPromotion : Promotion<TileT> {
    template <int kWaveN>
    __device__ __forceinline__ void promote(float (&acc)[Cfg::kBlockN / 2],
                                            const float (&part)[kWaveN / 2], int wn,
                                            const typename Promotion<TileT>::Slab& s,
                                            const typename Promotion<TileT>::Block& b) const {
      BlockScaledMath::promote<kOffset, kWaveN>(acc, part, wn, s.sa0, s.sa1, b.sb);
    }
  };

  /// The consumer warpgroup's main loop over tile t's K blocks (all of K): the lean loop, or the
  /// first one (kPromotedLoop = 0, mainloop_v0) for the same-run comparison.
  template <class TileT>
  __device__ __forceinline__ static void mainloop(float (&acc)[Cfg::kWavesM][Cfg::kBlockN / 2],
                                                  State& st, const Params& p, const TileT& t,
                                                  std::uint32_t ring, std::uint32_t side,
                                                  const std::uint64_t* full,
                                                  const std::uint64_t* empty, int wg_index,
                                                  std::uint32_t rank) {
    if constexpr (kPromotedLoop == 0)
      mainloop_v0(acc, st, p, t, ring, side, full, empty, wg_index, rank);
    else
      mainloop_range(acc, st, p, t, 0, p.k_blocks, ring, side, full, empty, wg_index, rank);
  }

  /// The promotion of tile t for warpgroup wg (the same in every lane): its B-scale stream from
  /// the tile's first K block, this thread's A-scale rows in the side ring, n0 % 128.
  template <class TileT>
  __device__ __forceinline__ static Promotion<TileT> make_promotion(const Params& p,
                                                                    const TileT& t,
                                                                    std::uint32_t side, int wg) {
    const int warp = int(threadIdx.x / 32) % 4;
    const int lane = int(threadIdx.x % 32);
    // This thread's accumulator rows inside the tile: r and r + 8 of every 64-row slab.
    int row_in_tile = wg * Cfg::kRowsPerWG + 16 * warp + lane / 4;
    if constexpr (kSkewedRows<TileT>) row_in_tile += t.m0 & 3;  // the scales start at m0 & ~3
    Promotion<TileT> promotion{BScaleStream(p, t)};
    promotion.sa_base = side + std::uint32_t(row_in_tile) * 4u;
    promotion.side_stage_bytes = side_stage_bytes<TileT>();
    promotion.offset = (t.n_block * Cfg::kBlockN) % 128;
    return promotion;
  }

  /// The lean loop over K blocks kb_begin .. kb_end - 1 of tile t (a policy that splits K calls
  /// this with its range).
  template <class TileT>
  __device__ __forceinline__ static void mainloop_range(
      float (&acc)[Cfg::kWavesM][Cfg::kBlockN / 2], State& st, const Params& p, const TileT& t,
      int kb_begin, int kb_end, std::uint32_t ring, std::uint32_t side, const std::uint64_t* full,
      const std::uint64_t* empty, int wg_index, std::uint32_t rank) {
    // The warpgroup index through a shuffle: the compiler then knows it is the same in every
    // lane, so the descriptors derived from it live in uniform registers (one UIADD each)
    // instead of being built per thread and moved over with R2UR (DeepGEMM does the same).
    const int wg = warp_uniform(wg_index);
    Promotion<TileT> promotion = make_promotion(p, t, side, wg);  // from K block kb_begin
    if constexpr (!kStraddles) {
      Base::run_promoted_loop(acc, st, kb_begin, kb_end, ring, full, empty, wg, rank, promotion);
    } else {
      // A tile that straddles B-scale blocks: one copy of the loop per n0 % 128, chosen once
      // per tile. With the choice inside the loop instead (once per partial sum), a 256 x 112
      // kernel had 11,200 instructions, 8 promotions behind a compare chain at each of the 16
      // partial sums of its unrolled body, and took 3.6-4.0x the time of 256 x 128 on the H200
      // (chapter 8's NOTEBOOK.md, "Session 16"; 1.6x this way, where each tile's loop is as long as
      // an unstraddled tile's: what remains is fetching 8 copies of an 8x loop, 1.04x rolled).
      detail::dispatch_offset<kOffsetStep>(
          promotion.offset,
          [&](auto off) {
            FixedPromotion<TileT, decltype(off)::value> fixed{promotion};
            Base::run_promoted_loop(acc, st, kb_begin, kb_end, ring, full, empty, wg, rank,
                                    fixed);
          },
          std::make_integer_sequence<int, kOffsets>{});
    }
  }

  /// The first block-scaled loop (kPromotedLoop = 0), the default until 0e55dd5; kept for the
  /// same-run comparison (kernels_loops.cu).
  template <class TileT>
  __device__ __forceinline__ static void mainloop_v0(float (&acc)[Cfg::kWavesM][Cfg::kBlockN / 2],
                                                     State& st, const Params& p, const TileT& t,
                                                     std::uint32_t ring, std::uint32_t side,
                                                     const std::uint64_t* full,
                                                     const std::uint64_t* empty, int wg_index,
                                                     std::uint32_t rank) {
    // The warpgroup index through a shuffle: the compiler then knows it is the same in every
    // lane, so the descriptors derived from it live in uniform registers (one UIADD each)
    // instead of being built per thread and moved over with R2UR (DeepGEMM does the same).
    const int wg = warp_uniform(wg_index);
    constexpr int kWaveN = Cfg::kPromotedWaveN;
    constexpr int kWavesN = Cfg::kBlockN / kWaveN;
    const int offset = (t.n_block * Cfg::kBlockN) % 128;
    const int warp = int(threadIdx.x / 32) % 4;
    const int lane = int(threadIdx.x % 32);
    // This thread's accumulator rows inside the tile: r and r + 8 of every 64-row slab.
    int row_in_tile = wg * Cfg::kRowsPerWG + 16 * warp + lane / 4;
    if constexpr (kSkewedRows<TileT>) row_in_tile += t.m0 & 3;  // the scales start at m0 & ~3
    Base::zero(acc);
    float part[kWaveN / 2];
    // Matrix descriptors by addition: the descriptor of stage 0's first row, once; per K block the
    // stage's A (this warpgroup's rows) and B descriptors are that plus a byte offset / 16, and
    // each wgmma's a compile-time constant more (advance_desc: the start-address field cannot
    // carry, shared addresses are < 256 KiB). Rebuilding every descriptor from its address costs
    // ~6 instructions per operand and wgmma, on the path between a wait and the next wgmma.
    const std::uint64_t desc0 = ptx::make_desc_k_major_sw128(ring);
    const int nb0 = (t.n_block * Cfg::kBlockN) / 128;
    const float* sfb = sfb_of(p, t);
    float sb_next[kSfbRows];
    load_sfb(sb_next, p, sfb, nb0, 0);
    for (int kb = 0; kb < p.k_blocks; ++kb) {
      float sb[kSfbRows];
#pragma unroll
      for (int r = 0; r < kSfbRows; ++r) sb[r] = sb_next[r];
      if (kb + 1 < p.k_blocks) load_sfb(sb_next, p, sfb, nb0, kb + 1);
      wait_barrier<Cfg>(ptx::smem_u32(&full[st.stage]), st.phase);
      const auto [desc_a, desc_b] = Base::stage_descs(desc0, st.stage, wg);
      const std::uint32_t extra = side + std::uint32_t(st.stage) * side_stage_bytes<TileT>();
#pragma unroll
      for (int w = 0; w < Cfg::kWavesM; ++w) {
        const std::uint32_t sa_addr = extra + std::uint32_t(row_in_tile + 64 * w) * 4u;
        const float sa0 = ptx::ld_shared_f32(sa_addr);
        const float sa1 = ptx::ld_shared_f32(sa_addr + 32u);
#pragma unroll
        for (int wn = 0; wn < kWavesN; ++wn) {
          Base::template partial_sum<kWaveN>(part, desc_a, desc_b, w, wn);
          // The stage's last wgmma has read it and its scales are in registers: hand it back
          // to the producer before the last promotion (DeepGEMM does the same).
          if (w == Cfg::kWavesM - 1 && wn == kWavesN - 1)
            Base::release(ptx::smem_u32(&empty[st.stage]), rank);
          detail::dispatch_offset<kOffsetStep>(
              offset,
              [&](auto off) { promote<decltype(off)::value, kWaveN>(acc[w], part, wn, sa0, sa1, sb); },
              std::make_integer_sequence<int, kOffsets>{});
        }
      }
      st.advance();
    }
  }
};

}  // namespace fp8gemm::engine
