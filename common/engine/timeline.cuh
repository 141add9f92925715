// A diagnostic, not a kernel anyone should run for speed: chapter 7's block-scaled kernel with
// clock64 stamps at the consumer warpgroups' steps, so that a timeline shows where a real
// kernel's cycles go between the tensor cores' work (docs/engine.md, "Two warpgroups on one
// tensor core": the probe bench/wgmma_overlap_probe.cu times the loop with no loads; this times
// the loop inside the kernel, loads, barriers and epilogue included).
//
// TimelineMath<Cfg> is BlockScaledMath<Cfg> with three wrappers, none of which changes what is
// computed:
//   - its scheduler numbers each CTA's tiles (TileT::ordinal);
//   - its main loop stamps the tile's start and end around the engine's lean promoted loop;
//   - its promotion object (the loop's hooks) stamps each K block's start (before the wait on
//     the stage's full barrier), each wave's issue (after the wait and the A-scale loads, just
//     before wgmma.fence) and each wave's completion (after wgmma.wait_group, before the FFMA).
// Only thread 0 of each consumer warpgroup of CTAs 0 .. kRecordCtas - 1 records, and only when
// the host has set a buffer (g_timeline, one per translation unit that includes this header;
// set it with cudaMemcpyToSymbol from that unit). Each stamp is one 64-bit word, the event in
// bits 56-63 and the SM's clock64 in bits 0-55, at
//   data[((cta x 2 + warpgroup) x kMaxTiles + tile ordinal) x events_per_tile + n],
// n counting the tile's events from 0; events_per_tile must be >= 2 + 5 K blocks x kWavesM.
// The other threads read the clock and skip the rest: a few instructions per event, whose cost
// the tool measures (the kernel against its twin without stamps, same run).
#pragma once

#include <cstdint>

#include "common/engine/block_scaled.cuh"

namespace fp8gemm::engine {

namespace timeline {
enum Event : unsigned {
  kTileStart = 1,    ///< the main loop's entry
  kKBlockStart = 2,  ///< a K block's start: before the full-barrier wait
  kIssue = 3,        ///< a wave (64-row slab's partial sum) about to be issued
  kDone = 4,         ///< that wave's wgmma complete, before its promotion
  kTileEnd = 5,      ///< the main loop's exit (the epilogue follows)
};
constexpr int kRecordCtas = 4;
constexpr int kMaxTiles = 64;
/// Where the stamps go (null: nowhere).
struct Buffer {
  unsigned long long* data;
  int events_per_tile;
};
}  // namespace timeline

/// One per translation unit: the unit that instantiates TimelineMath kernels sets it.
static __device__ timeline::Buffer g_timeline;

/// The stamps of one consumer warpgroup's tiles. Its state (where the tile's stamps go, how many
/// were taken) lives in shared memory, touched by the recording thread only, so that the loop it
/// is called from keeps its registers (a version holding it in registers made ptxas spill
/// 216-360 bytes in the 8x-unrolled loop).
struct TimelineRecorder {
  struct State {
    unsigned long long* slot;
    int n, cap;
  };
  __device__ __forceinline__ static State* state(int wg) {
    __shared__ State s[2];
    return &s[wg];
  }
  __device__ __forceinline__ static bool recording() {
    return blockIdx.x < unsigned(timeline::kRecordCtas) && threadIdx.x % 128 == 0;
  }
  /// Tile `ordinal` of this CTA starts: its stamps go to their own slot.
  __device__ __forceinline__ static void start_tile(int ordinal, int wg) {
    if (!recording()) return;
    const timeline::Buffer b = g_timeline;
    State* st = state(wg);
    const bool on = b.data != nullptr && ordinal < timeline::kMaxTiles;
    st->slot = on ? b.data + (std::int64_t(int(blockIdx.x) * 2 + wg) * timeline::kMaxTiles +
                              ordinal) * b.events_per_tile
                  : nullptr;
    st->n = 0;
    st->cap = on ? b.events_per_tile : 0;
  }
  __device__ __forceinline__ static void mark(timeline::Event e, int wg) {
    long long t;
    asm volatile("mov.u64 %0, %%clock64;" : "=l"(t)::"memory");  // ordered with the wgmma asm
    if (!recording()) return;
    State* st = state(wg);
    const int n = st->n;
    if (n < st->cap) st->slot[n] = (std::uint64_t(e) << 56) | (std::uint64_t(t) & ((1ull << 56) - 1));
    st->n = n + 1;
  }
};

template <class Cfg>
struct TimelineMath : BlockScaledMath<Cfg> {
  using Base = BlockScaledMath<Cfg>;
  using Loop = typename Base::Base;  // PerTensorMath: the lean promoted loop
  using typename Base::Params;
  using typename Base::State;
  static_assert(Base::kDefaultLoop == Base::kPromotedLoopVersion &&
                    Base::kDefaultLoop != kTwoDeepLoop && Base::kDefaultLoop >= 1 &&
                    !Base::kStraddles,
                "the timeline wraps the lean loop of a tile that does not straddle B-scale blocks");
  static constexpr bool kTimeline = true;

  struct TileT : Tile {
    int ordinal = 0;  ///< this CTA's tiles in order, from 0
  };
  struct Scheduler {
    typename Base::Scheduler inner;
    int count = 0;
    __device__ __forceinline__ bool next(TileT& t) {
      if (!inner.next(t)) return false;
      t.ordinal = count++;
      return true;
    }
  };
  __device__ __forceinline__ static Scheduler make_scheduler(const Params& p, std::uint32_t rank) {
    return Scheduler{Base::make_scheduler(p, rank)};
  }

  /// The engine's block-scaled promotion with stamps at the loop's hooks.
  struct Promotion : Base::template Promotion<TileT> {
    using P = typename Base::template Promotion<TileT>;
    int wg;
    __device__ __forceinline__ typename P::Block block(int kb) {
      TimelineRecorder::mark(timeline::kKBlockStart, wg);
      return P::block(kb);
    }
    __device__ __forceinline__ typename P::Slab slab(int stage, int w) const {
      const typename P::Slab s = P::slab(stage, w);
      TimelineRecorder::mark(timeline::kIssue, wg);
      return s;
    }
    template <int kWaveN>
    __device__ __forceinline__ void promote(float (&acc)[Cfg::kBlockN / 2],
                                            const float (&part)[kWaveN / 2], int wn,
                                            const typename P::Slab& s,
                                            const typename P::Block& b) const {
      TimelineRecorder::mark(timeline::kDone, wg);
      P::template promote<kWaveN>(acc, part, wn, s, b);
    }
  };

  __device__ __forceinline__ static void mainloop(float (&acc)[Cfg::kWavesM][Cfg::kBlockN / 2],
                                                  State& st, const Params& p, const TileT& t,
                                                  std::uint32_t ring, std::uint32_t side,
                                                  const std::uint64_t* full,
                                                  const std::uint64_t* empty, int wg_index,
                                                  std::uint32_t rank) {
    const int wg = __shfl_sync(0xffffffffu, wg_index, 0);  // uniform, as in mainloop_range
    Promotion pr{Base::make_promotion(p, t, side, wg), wg};
    TimelineRecorder::start_tile(t.ordinal, wg);
    TimelineRecorder::mark(timeline::kTileStart, wg);
    Loop::promoted_loop(acc, st, 0, p.k_blocks, ring, full, empty, wg, rank, pr);
    TimelineRecorder::mark(timeline::kTileEnd, wg);
  }
};

}  // namespace fp8gemm::engine
