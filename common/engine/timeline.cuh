// A diagnostic: a block-scaled kernel whose idle producer warps write down, with the SM's clock,
// when each ring stage's full barrier completed (the stage's TMA loads landed) and when its
// empty barrier completed (every consumer warp that reads it, in both CTAs of a cluster, released
// it). The consumers' code is BlockScaledMath's plus three stamps per tile outside the main loop
// (ptxas schedules the loop a little differently around them: 83-99% of its opcodes in the same
// order, cuobjdump), and the kernel runs at 0.997-1.015x its twin's time (ch07_timeline times
// both, interleaved, in every run); the timeline says, per K block, whether the data was there
// before the consumers wanted it, how long the consumers took for it, and what a tile change
// costs. (docs/engine.md, "Where a promoted kernel's cycles go"; bench/wgmma_overlap_probe.cu
// times the consumers' loop with no loads.)
//
// Why the producer's warps and not the consumers': stamps taken by the consumers themselves
// perturbed what they measured. A first version (one lane of each consumer warpgroup storing
// clock64 at every K block's start, wave issue and wave completion, with its count in shared
// memory) made the kernel 1.27-1.45x slower with no buffer set; holding the count in registers
// instead made ptxas spill 216-464 bytes in the 8x-unrolled loop, which has no register to spare.
// The producer warpgroup's warps 1 and 2 have nothing to do in these kernels; they wait on the
// barriers with the engine's sleeping wait (mbarrier.try_wait suspends the thread until the phase
// completes), so they issue almost nothing while they wait.
//
// Output (only CTAs 0 .. kRecordCtas - 1, only with a buffer set: c_timeline in constant memory,
// one per translation unit that includes this header; set it with cudaMemcpyToSymbol from that
// unit): for CTA c, observer o (0: full barriers, 1: empty barriers) and the CTA's K block j (its
// tiles' K blocks in order, as the producer loads them),
//   data[(c x 2 + o) x capacity + j] = event << 56 | first << 55 | clock64 (55 bits),
// event kFull or kEmpty, first = 1 at a tile's first K block; capacity words per (c, o).
// And from the consumers, outside their main loop (three stamps a tile, by thread 0 of each
// consumer warpgroup; the loop's source is untouched), for tile (m_block, n_block) of warpgroup w:
//   tiles[((m_block x tiles_n + n_block) x 2 + w) x 3 + e] = cta << 56 | clock64,
// e = 0 the main loop's start, 1 its end, 2 the epilogue's end (every tile, recorded CTAs only).
#pragma once

#include <cstdint>

#include "common/engine/block_scaled.cuh"

namespace fp8gemm::engine {

namespace timeline {
enum Event : unsigned {
  kFull = 1,   ///< a stage's full barrier completed: its K block's operands and scales are in
  kEmpty = 2,  ///< its empty barrier completed: every reader released it
};
constexpr int kRecordCtas = 4;
/// Where the stamps go (null: nowhere) and how many per (CTA, observer); the consumers' tile
/// stamps (null: none) and the call's tiles along N.
struct Buffer {
  unsigned long long* data;
  int capacity;
  unsigned long long* tiles;
  int tiles_n;
};
}  // namespace timeline

/// One per translation unit: the unit that instantiates TimelineMath kernels sets it.
static __constant__ timeline::Buffer c_timeline;

template <class Cfg, int kLoop = default_block_scaled_loop<Cfg>()>
struct TimelineMath : BlockScaledMath<Cfg, kLoop> {
  using Base = BlockScaledMath<Cfg, kLoop>;
  using typename Base::Params;
  /// gemm_kernel calls observe_ring() from the producer warpgroup's idle warps 1 and 2.
  static constexpr bool kObserveRing = true;
  /// The same main loop as its twin, the early first wave included (kernel.cuh).
  using EarlyWavePolicy = TimelineMath;

  /// Lane 0 of the calling warp follows the ring as the producer fills it (the same scheduler,
  /// the same K blocks, the same stage and phase sequence) and stamps each K block's full
  /// (`full_side`) or empty barrier completion.
  __device__ __forceinline__ static void observe_ring(const Params& p, std::uint32_t rank,
                                                      const std::uint64_t* full,
                                                      const std::uint64_t* empty, bool full_side) {
    const timeline::Buffer b = c_timeline;
    if (threadIdx.x % 32 != 0 || blockIdx.x >= unsigned(timeline::kRecordCtas) || b.data == nullptr)
      return;
    unsigned long long* out =
        b.data + std::int64_t(int(blockIdx.x) * 2 + (full_side ? 0 : 1)) * b.capacity;
    const std::uint64_t* bars = full_side ? full : empty;
    const unsigned long long event = full_side ? timeline::kFull : timeline::kEmpty;
    auto scheduler = Base::make_scheduler(p, rank);
    PipelineState<Cfg::kStages> st;
    typename Base::TileT t;
    int j = 0;
    while (scheduler.next(t)) {
      for (int kb = Base::k_first(p, t); kb < Base::k_end(p, t); ++kb, ++j) {
        // Round r of stage s: the full barrier's phase r completes when its loads land, the
        // empty barrier's phase r when its readers release it; both parities are st.phase.
        wait_barrier<Cfg>(ptx::smem_u32(&bars[st.stage]), st.phase);
        long long clock;
        asm volatile("mov.u64 %0, %%clock64;" : "=l"(clock));
        if (j < b.capacity)
          out[j] = (event << 56) | (kb == Base::k_first(p, t) ? 1ull << 55 : 0ull) |
                   (std::uint64_t(clock) & ((1ull << 55) - 1));
        st.advance();
      }
    }
  }

  /// Thread 0 of consumer warpgroup wg stamps tile t's main-loop start (e = 0), end (1) and
  /// epilogue end (2), in recording CTAs with a tile buffer set. Called outside the main loop.
  template <class TileT>
  __device__ __forceinline__ static void observe_consumer(const Params&, const TileT& t, int wg,
                                                          int e) {
    long long clock;
    asm volatile("mov.u64 %0, %%clock64;" : "=l"(clock));
    const timeline::Buffer b = c_timeline;
    if (threadIdx.x % 128 != 0 || blockIdx.x >= unsigned(timeline::kRecordCtas) || b.tiles == nullptr)
      return;
    const std::int64_t tile = std::int64_t(t.m_block) * b.tiles_n + t.n_block;
    b.tiles[(tile * 2 + wg) * 3 + e] =
        (std::uint64_t(blockIdx.x) << 56) | (std::uint64_t(clock) & ((1ull << 56) - 1));
  }
};

}  // namespace fp8gemm::engine
