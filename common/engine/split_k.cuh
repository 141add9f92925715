// Split-K on the engine: chapter 7's block-scaled math policy with its K blocks divided among S
// work units per output tile (the schedule, the unit's K range and the parameter block are in
// split_k.hpp). Each unit runs BlockScaledMath's lean / two-deep promoted loop over its own K
// range (mainloop_range), and the registers_f32 epilogue writes the unit's FP32 partial tile to
// rows split x M + m of the workspace [S][M][N]; the unit that completes a tile's set sums the
// S partials in a fixed order into D (store_tile below; the protocol is in split_k.hpp).
//
// The producer's loop takes the unit's K range from k_first / k_end, its A scales from
// produce_extra; the B scales and the promotion are BlockScaledMath's. No clusters: every unit
// is one CTA's (the units of one tile read disjoint K ranges of A and B, so there is nothing to
// multicast between them).
#pragma once

#include <cstdint>
#include <type_traits>

#include "common/engine/block_scaled.cuh"
#include "common/engine/config.cuh"
#include "common/engine/kernel.cuh"
#include "common/engine/params.hpp"
#include "common/engine/split_k.hpp"
#include "common/ptx/atomics.cuh"
#include "common/ptx/warpgroup.cuh"

namespace fp8gemm::engine {

/// The persistent split-K scheduler: CTA c takes units c, c + grid, ... of the schedule
/// (split_k_unit), behind the interface of DenseTileScheduler.
struct SplitKTileScheduler {
  SplitKSchedule s;
  int unit;
  int stride;

  __device__ __forceinline__ explicit SplitKTileScheduler(const SplitKSchedule& sched)
      : s(sched), unit(int(blockIdx.x)), stride(int(gridDim.x)) {}

  __device__ __forceinline__ bool next(SplitKTile& t) {
    if (unit >= s.num_units) return false;
    split_k_unit(s, unit, t);
    unit += stride;  // num_units + grid <= 2^30 + 2^31: no wrap (the plan keeps num_units <= 2^30)
    return true;
  }
};

template <class Cfg, int kPromotedLoop = default_block_scaled_loop<Cfg>()>
struct SplitKBlockScaledMath : BlockScaledMath<Cfg, kPromotedLoop> {
  static_assert(Cfg::kEpilogue == EpilogueKind::registers_f32,
                "split-K writes FP32 partial tiles to its workspace");
  static_assert(Cfg::kClusterSize == 1, "split-K kernels: no clusters");
  static_assert(kPromotedLoop != 0, "split-K runs the lean or two-deep loop (mainloop_range)");
  using Base = BlockScaledMath<Cfg, kPromotedLoop>;
  using State = typename Base::State;
  using Params = SplitKParams;
  using Scheduler = SplitKTileScheduler;
  using TileT = SplitKTile;

  __device__ __forceinline__ static Scheduler make_scheduler(const Params& p, std::uint32_t) {
    return Scheduler(p.split);
  }
  __device__ __forceinline__ static int a_row(const SplitKTile& t) {
    return t.m_block * Cfg::kBlockM;
  }
  __device__ __forceinline__ static int b_row(const GemmParams&, const SplitKTile& t) {
    return t.n_block * Cfg::kBlockN;
  }
  __device__ __forceinline__ static int d_col(const SplitKTile& t) {
    return t.n_block * Cfg::kBlockN;
  }
  /// D's rows end at M (the kernel's generic epilogue bound; store_tile has its own).
  __device__ __forceinline__ static int row_end(const GemmParams& p, const SplitKTile&) {
    return p.M;
  }
  __device__ __forceinline__ static int k_first(const GemmParams&, const SplitKTile& t) {
    return t.kb_begin;
  }
  __device__ __forceinline__ static int k_end(const GemmParams&, const SplitKTile& t) {
    return t.kb_end;
  }

  /// The stage's A scales (BlockScaledMath::produce_extra for a SplitKTile).
  __device__ __forceinline__ static void produce_extra(const Params& p, std::uint32_t extra,
                                                       std::uint32_t bar, const SplitKTile& t,
                                                       int kb) {
    ptx::tma_load_2d(extra, &p.map_sfa, bar, t.m_block * Cfg::kBlockM, kb);
  }

  /// The epilogue (the kernel calls it instead of its own: StoresOwnTile). Warpgroup `wg`
  /// (rows `slot` x kRowsPerWG .. of the tile) stores its partial rows to the workspace, counts
  /// them on its counter (release), and if it counted last (acquire) sums the S partials of its
  /// rows in the order ((p_0 + p_1) + p_2) + ... into D: bf16 (cvt.rn, as the other epilogues) or
  /// FP32 (sum + D with out_accumulate). S = 1 takes the same path (its partial read back is
  /// the sum: the same bits): one store path less keeps the 256-column kernels' main loop free of
  /// spills.
  static constexpr bool kStoresOwnTile = true;
  template <class Scale>
  __device__ __forceinline__ static void store_tile(float (&acc)[Cfg::kWavesM][Cfg::kBlockN / 2],
                                                    const Scale&, const Params& p,
                                                    const SplitKTile& t, int slot, int wg) {
    static_assert(std::is_same_v<Scale, IdentityOutputScale>,
                  "block scaling applies its scales in the promotion: no output scale");
    const int S = p.split.splits;
    const int M = p.M, N = p.N;
    const int m0 = t.m_block * Cfg::kBlockM + slot * Cfg::kRowsPerWG;  // D's rows of this warpgroup
    const int col0 = t.n_block * Cfg::kBlockN;
    const std::uint32_t bar = std::uint32_t(1 + wg);  // the epilogue's named barrier
#pragma unroll
    for (int w = 0; w < Cfg::kWavesM; ++w)
      store_slab_f32<Cfg::kBlockN>(acc[w], IdentityOutputScale{}, t.split * M + m0 + 64 * w, col0,
                                   (t.split + 1) * M, N, p.D_f32, N, false, p.d_pairs_ok != 0);
    // Every thread's stores come before thread 0's release (bar.sync, then the atomic).
    ptx::named_barrier_sync(bar, 128);
    bool completes = false;
    if (threadIdx.x % 128 == 0) {
      std::uint32_t* counter =
          p.counters + (std::int64_t(t.n_block) * p.split.tiles_m + t.m_block) * Cfg::kConsumerWGs +
          slot;
      completes = ptx::atom_add_acq_rel_gpu(counter, 1u) == std::uint32_t(S - 1);
      if (completes) ptx::st_relaxed_gpu(counter, 0u);  // zero again for the next launch
    }
    if (ptx::named_barrier_or(bar, 128, completes)) sum_partials(p, m0, col0);
  }

  /// The last unit's sum for one warpgroup's rows m0 .. m0 + kRowsPerWG - 1 (below M) and the
  /// tile's columns col0 .. (below N): D = ((p_0 + p_1) + p_2) + ... from the workspace, every
  /// partial (its own too) read from L2 (ld.global.cg: an L1 line of this SM could be stale).
  /// Not in the accumulators' layout: the 128 threads walk the rows in 4-column chunks (a warp
  /// reads 512 contiguous bytes of a 128-wide tile); summing in the registers' layout kept a
  /// column bound per register across the epilogue and spilled. One pass per partial, each
  /// thread's kIters loads of a pass in flight together: a loop of dependent loads per chunk
  /// (the first version) made the sum several L2 round trips long per unit.
  __device__ __forceinline__ static void sum_partials(const Params& p, int m0, int col0) {
    constexpr int kChunks = Cfg::kBlockN / 4;  // 4-column chunks per row (BlockN % 8 == 0)
    constexpr int kIters = (Cfg::kRowsPerWG * kChunks + 127) / 128;
    const int M = p.M, N = p.N, S = p.split.splits;
    const int tid = int(threadIdx.x % 128);
    // float4 loads: rows of N floats from a 256-aligned workspace, chunks at multiples of 4.
    const bool quads = N % 4 == 0;
    float v[kIters][4];
    for (int s = 0; s < S; ++s) {
      const float* split_base = p.D_f32 + std::int64_t(s) * M * N;
#pragma unroll
      for (int it = 0; it < kIters; ++it) {
        const int e = tid + 128 * it;
        const int row = m0 + e / kChunks;
        const int c = col0 + 4 * (e % kChunks);
        if (e >= Cfg::kRowsPerWG * kChunks || row >= M || c >= N) continue;
        const float* part = split_base + std::int64_t(row) * N + c;
        float x[4] = {0.0f, 0.0f, 0.0f, 0.0f};
        if (quads) {
          const float4 q = __ldcg(reinterpret_cast<const float4*>(part));
          x[0] = q.x, x[1] = q.y, x[2] = q.z, x[3] = q.w;
        } else {
#pragma unroll
          for (int j = 0; j < 4; ++j)
            if (c + j < N) x[j] = __ldcg(part + j);
        }
#pragma unroll
        for (int j = 0; j < 4; ++j) v[it][j] = s == 0 ? x[j] : v[it][j] + x[j];
      }
    }
#pragma unroll
    for (int it = 0; it < kIters; ++it) {
      const int e = tid + 128 * it;
      const int row = m0 + e / kChunks;
      const int c = col0 + 4 * (e % kChunks);
      if (e >= Cfg::kRowsPerWG * kChunks || row >= M || c >= N) continue;
      const int cols = N - c < 4 ? N - c : 4;
      const std::int64_t at = std::int64_t(row) * p.out_ld + c;
      if (p.out_f32 != nullptr) {
        float* d = p.out_f32 + at;
#pragma unroll
        for (int j = 0; j < 4; j += 2) {
          if (p.out_pairs_ok != 0 && j + 1 < cols) {
            float2 x = make_float2(v[it][j], v[it][j + 1]);
            if (p.out_accumulate != 0) {
              const float2 old = *reinterpret_cast<const float2*>(d + j);
              x.x += old.x;
              x.y += old.y;
            }
            *reinterpret_cast<float2*>(d + j) = x;
          } else {
            if (j < cols) d[j] = p.out_accumulate != 0 ? v[it][j] + d[j] : v[it][j];
            if (j + 1 < cols)
              d[j + 1] = p.out_accumulate != 0 ? v[it][j + 1] + d[j + 1] : v[it][j + 1];
          }
        }
      } else {
        std::uint16_t* d = p.out + at;
#pragma unroll
        for (int j = 0; j < 4; j += 2) {
          if (p.out_pairs_ok != 0 && j + 1 < cols) {
            *reinterpret_cast<std::uint32_t*>(d + j) = pack_bf16x2(v[it][j], v[it][j + 1]);
          } else {
            if (j < cols) d[j] = __bfloat16_as_ushort(__float2bfloat16_rn(v[it][j]));
            if (j + 1 < cols) d[j + 1] = __bfloat16_as_ushort(__float2bfloat16_rn(v[it][j + 1]));
          }
        }
      }
    }
  }

  /// The unit's K blocks through BlockScaledMath's promoted loop.
  __device__ __forceinline__ static void mainloop(float (&acc)[Cfg::kWavesM][Cfg::kBlockN / 2],
                                                  State& st, const Params& p, const SplitKTile& t,
                                                  std::uint32_t ring, std::uint32_t side,
                                                  const std::uint64_t* full,
                                                  const std::uint64_t* empty, int wg_index,
                                                  std::uint32_t rank) {
    Base::mainloop_range(acc, st, p, t, t.kb_begin, t.kb_end, ring, side, full, empty, wg_index,
                         rank);
  }
};

}  // namespace fp8gemm::engine
