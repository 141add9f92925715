// The configurations of chapter 8's grouped kernels and the KernelInfo of one, shared by the
// translation units that instantiate them (kernels_grouped.cu, kernels_grouped_2x1.cu).
#pragma once

#include "common/engine/grouped.cuh"
#include "common/engine/kernel_info.cuh"

namespace fp8gemm::ch08 {
using namespace engine;

template <int BM, int BN, int S>
using GroupedCfg = KernelConfig<BM, BN, S, 1, 1, Accumulation::promoted, EpilogueKind::registers>;
/// The TMA-store epilogue: whole warpgroup slabs by TMA, a group's cut slab from registers.
template <int BM, int BN, int S, int Buffers>
using GroupedTmaCfg =
    KernelConfig<BM, BN, S, 1, 1, Accumulation::promoted, EpilogueKind::tma_store, Buffers>;

/// The TMA-store epilogue in 1 x 2 clusters: the two CTAs take neighbouring column tiles of one row
/// tile and multicast A (grouped.cuh).
template <int BM, int BN, int S, int Buffers>
using GroupedTmaPairCfg =
    KernelConfig<BM, BN, S, 1, 2, Accumulation::promoted, EpilogueKind::tma_store, Buffers>;

/// The TMA-store epilogue in 2 x 1 clusters: the two CTAs take two row tiles of one group, one
/// above the other, in the same column tile, and multicast B (grouped.cuh).
template <int BM, int BN, int S, int Buffers>
using GroupedTmaRowPairCfg =
    KernelConfig<BM, BN, S, 2, 1, Accumulation::promoted, EpilogueKind::tma_store, Buffers>;

template <class Cfg, int kLoop = default_block_scaled_loop<Cfg>()>
inline KernelInfo grouped() {
  return kernel_info<Cfg, GroupedBlockScaledMath<Cfg, kLoop>>();
}

}  // namespace fp8gemm::ch08
