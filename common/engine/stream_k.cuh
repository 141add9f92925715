// Stream-K on the engine (chapter 8's grouped forward): the grouped block-scaled math of
// grouped.cuh with the last round's tiles cut into K ranges spread over every CTA
// (stream_k.hpp has the division, the roles and why it cannot deadlock).
//
// What changes against GroupedBlockScaledMath:
//   the scheduler     the producer counts the tiles of all groups first (T, one read of the group
//                     description), then hands out its data-parallel tiles and its stream-K
//                     segments (stream_k_segment), each with its K range and, for an owner, the
//                     CTAs whose partials it adds;
//   the tile record   32 bytes through the ring instead of 16 (the K range and partner_end);
//   the main loop     BlockScaledMath::mainloop_range over the segment's K blocks (its B-scale
//                     stream starts at kb_begin);
//   after the loop    fixup(): a writer stores its FP32 partial tile to its CTA's workspace slot
//                     and raises its flag, and skips the epilogue; an owner waits for each
//                     partner's flag in CTA order, adds the partial, resets the flag, and goes on
//                     to the epilogue (the store of chapter 8, unchanged).
// Workspace (GroupedParams::sk_partials, sk_flags; the plan allocates them, chapter 8's
// grouped_gemm.cpp): one slot per CTA of BlockM x BlockN floats, laid out per consumer
// warpgroup as [register / 4][thread][4] so that every 16-byte store and load of a warpgroup
// is one contiguous 2 KiB; one flag per CTA and consumer warpgroup, zero between launches (an
// owner resets the flags it consumed). No clusters, no ping-pong consumers.
#pragma once

#include <cstdint>

#include "common/engine/grouped.cuh"
#include "common/engine/stream_k.hpp"
#include "common/ptx/cp_async.cuh"
#include "common/ptx/memory.cuh"
#include "common/ptx/smem.cuh"
#include "common/ptx/warpgroup.cuh"

namespace fp8gemm::engine {

/// A grouped tile, or the K range of one (a stream-K segment).
struct StreamKGroupedTile : GroupedTile {
  int kb_begin = 0;     ///< K blocks kb_begin .. kb_end - 1 (0 .. k_blocks - 1: a whole tile)
  int kb_end = 0;
  /// 0: a writer (its partial goes to the workspace); else the tile is stored after adding the
  /// partials of CTAs blockIdx.x + 1 .. partner_end - 1 (none: blockIdx.x + 1). One field for
  /// both, so that one register, not two, lives through the main loop to fixup().
  int partner_end = 0;
};

/// The producer's tiles: its data-parallel tiles, then its stream-K segments. Its state lives in
/// shared memory, read and written once per tile: the producer thread has 40 registers, and with
/// the division and the group cursor in registers ptxas spilled 72-92 bytes in its K loop. The
/// producer warp's 32 lanes all call next() (they walk the same tiles; an elected lane issues the
/// loads): lane 0 alone reads and writes the state, as the one producer thread did before session
/// 38, and the warp takes its tile through __shfl_sync (with the state copied into each lane's
/// registers instead, ptxas spilled again: 34 local loads and stores).
template <int kBlockM>
struct StreamKGroupedScheduler {
  struct State {
    StreamKSplit split;
    int next_dp;   ///< the next data-parallel tile (cta, cta + P, ...)
    int unit;      ///< the next stream-K unit of this CTA
    int unit_end;  ///< the first unit of the next CTA
    GroupedCursor cursor;
  };
  const GroupedLayout& layout;  ///< in the parameter block
  int n_tiles;

  __device__ __forceinline__ static State& state() {
    __shared__ State s;  // the producer warp's lane 0 alone touches it
    return s;
  }

  __device__ __forceinline__ StreamKGroupedScheduler(const GroupedLayout& l, int tiles_n,
                                                     int k_blocks)
      : layout(l), n_tiles(tiles_n) {
    int tiles = 0;  // T: every group's row tiles x the column tiles (< 2^31: the plan checks)
    // Unrolled so that up to 8 groups' sizes are in flight at once, not one round trip each.
#pragma unroll 8
    for (int g = 0; g < l.groups; ++g) {
      int begin, end;
      group_rows(l, g, begin, end);
      tiles += (end - begin + kBlockM - 1) / kBlockM * tiles_n;
    }
    if (threadIdx.x % 32 != 0) return;
    State& s = state();
    s.split = stream_k_split(tiles, int(gridDim.x), k_blocks);
    s.next_dp = int(blockIdx.x);
    s.unit = stream_k_first_unit(s.split, int(blockIdx.x));
    s.unit_end = stream_k_first_unit(s.split, int(blockIdx.x) + 1);
    s.cursor = GroupedCursor{};
  }

  __device__ __forceinline__ bool next(StreamKGroupedTile& t) {
    int more = 0;
    if (threadIdx.x % 32 == 0) more = advance(t);
    t = from_lane0(t);
    return warp_uniform(more) != 0;
  }

 private:
  /// Lane 0's step: the next tile into t, false past the last.
  __device__ __forceinline__ bool advance(StreamKGroupedTile& t) {
    State& s = state();
    if (s.next_dp < s.split.dp_tiles) {
      if (!grouped_tile(layout, kBlockM, n_tiles, s.next_dp, s.cursor, t)) return false;
      t.kb_begin = 0;
      t.kb_end = s.split.k_blocks;
      t.partner_end = int(blockIdx.x) + 1;
      s.next_dp += int(gridDim.x);
      return true;
    }
    if (s.unit >= s.unit_end) return false;
    const StreamKSegment g = stream_k_segment(s.split, int(blockIdx.x), s.unit, s.unit_end);
    if (!grouped_tile(layout, kBlockM, n_tiles, g.tile, s.cursor, t)) return false;
    t.kb_begin = g.kb_begin;
    t.kb_end = g.kb_end;
    t.partner_end = g.kb_begin > 0 ? 0 : g.partner_end;
    s.unit += g.kb_end - g.kb_begin;
    return true;
  }
};

/// How an owner reads its partners' partials (fixup()).
enum class StreamKReads : int {
  /// Straight into registers, 16 bytes per load (the first version): the accumulators hold 128
  /// registers, so only a few loads are in flight at once and the read is a chain of L2 round trips.
  registers = 0,
  /// Through the operand ring, free once both consumer warpgroups have finished the owner's K
  /// blocks (its last segment): each thread copies its 16-byte pieces with cp.async, all in flight
  /// at once, and adds them from shared memory.
  staged = 1,
};

/// Named barrier 3: both consumer warpgroups of an owner are done with the ring (1 and 2 are the
/// epilogue's, 4 and 5 chapter 9's, 6 and 7 the ping-pong order's).
inline constexpr std::uint32_t kStreamKRingBarrier = 3;

template <class Cfg, int kLoop = default_block_scaled_loop<Cfg>(),
          StreamKReads kReads = StreamKReads::staged>
struct StreamKGroupedMath : GroupedBlockScaledMath<Cfg, kLoop> {
  static_assert(Cfg::kClusterSize == 1, "stream-K kernels: no clusters");
  static_assert(!Cfg::kPingPong, "stream-K kernels: cooperative consumers");
  static_assert(Cfg::kEpilogue == EpilogueKind::tma_store, "stream-K kernels: bf16 D by TMA");
  using Base = GroupedBlockScaledMath<Cfg, kLoop>;
  using BS = BlockScaledMath<Cfg, kLoop>;
  using State = typename Base::State;
  using Params = GroupedParams;
  using TileT = StreamKGroupedTile;
  using Scheduler = StreamKGroupedScheduler<Cfg::kBlockM>;
  /// kernel.cuh: the consumers call fixup() after the main loop (StreamKFixup).
  static constexpr bool kStreamK = true;
  static constexpr bool kStreamKRegisterReads = kReads == StreamKReads::registers;  // "_skr"

  __device__ __forceinline__ static Scheduler make_scheduler(const Params& p, std::uint32_t) {
    return Scheduler(p.layout, p.n_tiles, p.k_blocks);
  }
  template <class T>
  __device__ __forceinline__ static int k_first(const GemmParams&, const T& t) {
    return t.kb_begin;
  }
  template <class T>
  __device__ __forceinline__ static int k_end(const GemmParams&, const T& t) {
    return t.kb_end;
  }

  static_assert(Base::kTileInfoOffset + 32 <= Base::kExtraStageBytes, "the record fits");
  /// The 32-byte tile record (block_scaled.cuh reserves 32 bytes after the A scales).
  __device__ __forceinline__ static void post_tile(std::uint32_t addr, const StreamKGroupedTile& t) {
    ptx::st_shared_v4_s32(addr, t.group, t.m0, t.row_end, t.n_block);
    ptx::st_shared_v4_s32(addr + 16u, t.kb_begin, t.kb_end, t.partner_end, 0);
  }
  /// Lane 0 reads both halves (Base::take_tile says why lane 0 alone).
  __device__ __forceinline__ static bool take_tile(std::uint32_t addr, StreamKGroupedTile& t) {
    if (!Base::take_tile(addr, t)) return false;
    const int4 v = ptx::ld_shared_v4_s32_lane0(addr + 16u);
    t.kb_begin = v.x;
    t.kb_end = v.y;
    t.partner_end = v.z;
    return true;
  }

  /// The segment's K blocks through chapter 7's promoted loop.
  __device__ __forceinline__ static void mainloop(float (&acc)[Cfg::kWavesM][Cfg::kBlockN / 2],
                                                  State& st, const Params& p,
                                                  const StreamKGroupedTile& t, std::uint32_t ring,
                                                  std::uint32_t side, const std::uint64_t* full,
                                                  const std::uint64_t* empty, int wg_index,
                                                  std::uint32_t rank) {
    BS::mainloop_range(acc, st, p, t, t.kb_begin, t.kb_end, ring, side, full, empty, wg_index,
                       rank);
  }

  /// Floats per consumer thread, and per warpgroup's share of a workspace slot.
  static constexpr int kFloats = Cfg::kWavesM * Cfg::kBlockN / 2;
  static_assert(kFloats % 4 == 0, "16-byte accesses");
  static constexpr std::int64_t kSlotFloatsPerWG = std::int64_t(kFloats) * 128;
  static_assert(kReads != StreamKReads::staged ||
                    std::int64_t(Cfg::kConsumerWGs) * kSlotFloatsPerWG * 4 <=
                        std::int64_t(Cfg::kStages) * Cfg::kStageBytes,
                "a staged fixup holds each warpgroup's partial in the operand ring");

  /// After the main loop, before the epilogue, for warpgroup `wg`: false if the segment was a
  /// writer's (its partial is in the workspace; nothing to store), true if the tile is to be
  /// stored (whole, or an owner's with its partners' partials added).
  __device__ __forceinline__ static bool fixup(float (&acc)[Cfg::kWavesM][Cfg::kBlockN / 2],
                                               const Params& p, const StreamKGroupedTile& t,
                                               int wg, std::uint32_t ring) {
    const int cta = int(blockIdx.x);
    const int tid = int(threadIdx.x % 128);
    // The warpgroup's own barrier (the epilogue's id for the same 128 threads).
    const std::uint32_t bar = std::uint32_t(1 + wg);
    // Register i of the thread's kFloats, slab-major (every index a constant after unrolling).
    auto reg = [&](int i) -> float& { return acc[i / (Cfg::kBlockN / 2)][i % (Cfg::kBlockN / 2)]; };
    if (t.partner_end == 0) {
      float* slot = p.sk_partials + (std::int64_t(cta) * Cfg::kConsumerWGs + wg) * kSlotFloatsPerWG;
#pragma unroll
      for (int j = 0; j < kFloats / 4; ++j)
        ptx::st_global_cg_v4(slot + (std::int64_t(j) * 128 + tid) * 4, reg(4 * j), reg(4 * j + 1),
                             reg(4 * j + 2), reg(4 * j + 3));
      ptx::named_barrier_sync(bar, 128);  // every thread's partial written ...
      if (tid == 0) ptx::st_release_gpu(p.sk_flags + cta * Cfg::kConsumerWGs + wg, 1);  // ... then
      return false;
    }
    if (t.partner_end == cta + 1) return true;  // a whole tile
    // This warpgroup's 64 KiB of the ring (staged reads), usable once both warpgroups have
    // finished the owner's K blocks: the owner's segment is the CTA's last, so the producer
    // loads nothing more into the ring.
    const std::uint32_t stage_area =
        ring + std::uint32_t(wg) * std::uint32_t(kSlotFloatsPerWG * 4);
    if constexpr (kReads == StreamKReads::staged)
      ptx::named_barrier_sync(kStreamKRingBarrier, Cfg::kConsumerThreads);
    for (int c = cta + 1; c < t.partner_end; ++c) {
      int* flag = p.sk_flags + c * Cfg::kConsumerWGs + wg;
      if (tid == 0)
        while (ptx::ld_acquire_gpu(flag) == 0) __nanosleep(64);
      ptx::named_barrier_sync(bar, 128);  // the partial is visible to the whole warpgroup
      const float* slot =
          p.sk_partials + (std::int64_t(c) * Cfg::kConsumerWGs + wg) * kSlotFloatsPerWG;
      if constexpr (kReads == StreamKReads::staged) {
        // Every piece in flight at once; each thread reads back only the pieces it copied, so
        // no barrier between the copy and the adds (nor before the next partner's copy).
#pragma unroll
        for (int j = 0; j < kFloats / 4; ++j)
          ptx::cp_async_16(stage_area + std::uint32_t(j * 128 + tid) * 16u,
                           slot + (std::int64_t(j) * 128 + tid) * 4, 16);
        ptx::cp_async_commit();
        ptx::cp_async_wait<0>();
#pragma unroll
        for (int j = 0; j < kFloats / 4; ++j) {
          const float4 v = ptx::ld_shared_v4_f32(stage_area + std::uint32_t(j * 128 + tid) * 16u);
          reg(4 * j) += v.x;
          reg(4 * j + 1) += v.y;
          reg(4 * j + 2) += v.z;
          reg(4 * j + 3) += v.w;
        }
      } else {
#pragma unroll
        for (int j = 0; j < kFloats / 4; ++j) {
          const float4 v = ptx::ld_global_cg_v4(slot + (std::int64_t(j) * 128 + tid) * 4);
          reg(4 * j) += v.x;
          reg(4 * j + 1) += v.y;
          reg(4 * j + 2) += v.z;
          reg(4 * j + 3) += v.w;
        }
      }
      if (tid == 0) ptx::st_relaxed_gpu(flag, 0);  // zero for the next launch
    }
    return true;
  }
};

}  // namespace fp8gemm::engine
