// Tile schedulers: which output tiles a persistent CTA computes, in which order.
//
// The interface every scheduler keeps (chapter 8 adds grouped ones behind it):
//   Scheduler(params, cluster_rank)           built by each thread that needs tiles
//   bool next(Tile& t)                        the next tile of this CTA, or false when done
// Every thread of a CTA, and both CTAs of a cluster, see the same sequence of "units" (a unit is
// one tile per CTA of the cluster), so the producer and the consumers stay in step without
// talking to each other, and the two CTAs of a cluster work on neighbouring tiles that share the
// multicast operand.
#pragma once

#include <cstdint>

#include "common/engine/params.hpp"

namespace fp8gemm::engine {

/// One output tile: rows m_block * BlockM .., columns n_block * BlockN .. of D.
struct Tile {
  int m_block = 0;
  int n_block = 0;
};

/// Unit `unit` of the banded raster (DenseSchedule) as (unit_m, unit_n): the units are cut into
/// bands of `group` unit-rows (along_n = 0; bands of unit-columns for along_n = 1), each band walked
/// down its short side first, then across; the last band may be narrower. Host and device code,
/// so the CPU tests can check that it visits every unit exactly once. The divisions are FastDiv's
/// (make_dense_schedule()): a multiply-high and a shift each, where two integer divisions were a
/// chain of ~450 cycles at every tile change.
__host__ __device__ __forceinline__ void banded_unit(const DenseSchedule& s, int unit, int& um,
                                                     int& un) {
  const int across = s.along_n == 0 ? s.units_n : s.units_m;
  const int inner = s.along_n == 0 ? s.units_m : s.units_n;
  const int band = s.per_band.div(unit);
  const int first = band * s.group;
  const int in_band = unit - band * s.group * across;
  const bool last = first + s.group > inner;  // the narrower last band
  const int width = last ? inner - first : s.group;
  const int q = last ? s.last_width.div(in_band) : s.width.div(in_band);
  const int r = in_band - q * width;
  if (s.along_n == 0) {
    um = first + r;
    un = q;
  } else {
    un = first + r;
    um = q;
  }
}

/// The dense scheduler: unit u = cluster_index + i * clusters for i = 0, 1, ... (a static
/// round-robin: with the grid no larger than what fits at once, CTA c runs units c, c + G, ...),
/// mapped to (unit_m, unit_n) through a banded raster so that the ~66-132 tiles in flight at any
/// moment touch a few A and B panels that stay in L2 instead of streaming a whole operand per
/// wave. Inside a cluster, CTA rank r takes tile (unit_m * ClusterM + r % ClusterM,
/// unit_n * ClusterN + r / ClusterM).
template <int kClusterM, int kClusterN>
struct DenseTileScheduler {
  DenseSchedule s;
  int unit;
  int stride;
  int rank_m, rank_n;

  __device__ __forceinline__ DenseTileScheduler(const DenseSchedule& sched, std::uint32_t rank)
      : s(sched),
        unit(int(blockIdx.x) / (kClusterM * kClusterN)),
        stride(int(gridDim.x) / (kClusterM * kClusterN)),
        rank_m(int(rank) % kClusterM),
        rank_n(int(rank) / kClusterM) {}

  __device__ __forceinline__ bool next(Tile& t) {
    if (unit >= s.num_units) return false;
    int um, un;
    banded_unit(s, unit, um, un);
    t.m_block = um * kClusterM + rank_m;
    t.n_block = un * kClusterN + rank_n;
    // Wrapping past 2^31 is impossible: num_units + stride <= 2 * (2^31 - 1) is refused by the
    // plan (it keeps num_units <= 2^30).
    unit += stride;
    return true;
  }
};

}  // namespace fp8gemm::engine
