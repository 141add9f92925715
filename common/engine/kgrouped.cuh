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
//   D    dB [G * N, K] FP32, group g's matrix at rows g N ..
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

#include "common/engine/block_scaled.cuh"  // detail::ld_shared_f32
#include "common/engine/grouped_schedule.hpp"
#include "common/engine/kernel.cuh"
#include "common/engine/params.hpp"

namespace fp8gemm::engine {

/// The persistent k-grouped scheduler: CTA c takes tiles c, c + grid, ... of the k-grouped
/// schedule; with skip_empty, the tiles of empty groups are passed over.
struct KGroupedTileScheduler {
  const KGroupedParams* p;
  std::int64_t next_tile;
  int stride;
  KGroupedCursor cursor;

  __device__ __forceinline__ explicit KGroupedTileScheduler(const KGroupedParams& params)
      : p(&params), next_tile(blockIdx.x), stride(int(gridDim.x)) {}

  __device__ __forceinline__ bool next(KGroupedTile& t) {
    while (kgrouped_tile(p->offsets, p->groups, p->tiles_m, p->tiles_n, p->K, next_tile, cursor,
                         t)) {
      next_tile += stride;
      if (t.kb_count > 0 || p->skip_empty == 0) return true;
    }
    return false;
  }
};

template <class Cfg>
struct KGroupedMath : PerTensorMath<Cfg> {
  static_assert(Cfg::kAccumulation == Accumulation::promoted,
                "the scales change every 128 tokens: the weight gradient promotes every K block");
  static_assert(Cfg::kEpilogue == EpilogueKind::registers_f32,
                "the weight gradient is FP32 (and may accumulate into the caller's dB)");
  static_assert(Cfg::kClusterSize == 1, "k-grouped kernels: no clusters");
  using Base = PerTensorMath<Cfg>;
  using State = PipelineState<Cfg::kStages>;
  using Params = KGroupedParams;
  using Scheduler = KGroupedTileScheduler;
  using TileT = KGroupedTile;

  static constexpr std::uint32_t kSfaBytes = std::uint32_t(Cfg::kBlockM) * 4u;
  static constexpr std::uint32_t kSfaStride = (kSfaBytes + 127u) & ~127u;  // TMA: 128-aligned
  static constexpr std::uint32_t kSfbBytes = std::uint32_t(Cfg::kBlockN) * 4u;
  static constexpr std::uint32_t kExtraTxBytes = kSfaBytes + kSfbBytes;
  static constexpr std::uint32_t kExtraStageBytes = kSfaStride + ((kSfbBytes + 127u) & ~127u);
  static constexpr std::uint32_t kStageStride = Cfg::kStageBytes;

  __device__ __forceinline__ static Scheduler make_scheduler(const Params& p, std::uint32_t) {
    return Scheduler(p);
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

  /// The scales were applied in the main loop.
  __device__ __forceinline__ static IdentityOutputScale output_scale(const Params&) { return {}; }

  __device__ __forceinline__ static void mainloop(float (&acc)[Cfg::kWavesM][Cfg::kBlockN / 2],
                                                  State& st, const Params& p,
                                                  const KGroupedTile& t, std::uint32_t ring,
                                                  std::uint32_t side, const std::uint64_t* full,
                                                  const std::uint64_t* empty, int wg_index,
                                                  std::uint32_t rank) {
    const int wg = __shfl_sync(0xffffffffu, wg_index, 0);  // uniform: see BlockScaledMath
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
      ptx::mbarrier_wait(ptx::smem_u32(&full[st.stage]), st.phase);
      const auto [desc_a, desc_b] = PerTensorMath<Cfg>::stage_descs(desc0, st.stage, wg);
      const std::uint32_t extra = side + std::uint32_t(st.stage) * kExtraStageBytes;
#pragma unroll
      for (int w = 0; w < Cfg::kWavesM; ++w) {
        const std::uint32_t sa_addr = extra + std::uint32_t(row_in_tile + 64 * w) * 4u;
        const float sa0 = detail::ld_shared_f32(sa_addr);
        const float sa1 = detail::ld_shared_f32(sa_addr + 32u);
#pragma unroll
        for (int wn = 0; wn < kWavesN; ++wn) {
          BlockScaledMath<Cfg>::template partial_sum<kWaveN>(part, desc_a, desc_b, w, wn);
#pragma unroll
          for (int gi = 0; gi < kWaveN / 8; ++gi) {
            // The second operand's scales of this 8-column group's two columns.
            const std::uint32_t sb_addr =
                extra + kSfaStride + std::uint32_t(wn * kWaveN + 8 * gi) * 4u + col_bytes;
            const float sb0 = detail::ld_shared_f32(sb_addr);
            const float sb1 = detail::ld_shared_f32(sb_addr + 4u);
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
};

}  // namespace fp8gemm::engine
