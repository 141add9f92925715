// The grouped kernels: chapter 7's block-scaled math with the grouped schedule (no clusters:
// common/engine/grouped.cuh says why), TMA-store or registers epilogue.
#include "common/engine/grouped.cuh"
#include "common/engine/kernel_info.cuh"
#include "grouped_gemm.hpp"

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

template <class Cfg, int kLoop = default_block_scaled_loop<Cfg>()>
static KernelInfo grouped() {
  return kernel_info<Cfg, GroupedBlockScaledMath<Cfg, kLoop>>();
}

const std::vector<KernelInfo>& kernels() {
  // The plan's default is chosen by default_kernel() (grouped_gemm.cpp: by layout and mean rows
  // per group, from session 12's measurements); without a TMA-compatible D, the first registers
  // kernel (128 x 256 was the fastest on every case of the first tuning run,
  // plots/data/h200/ch08/sweep_acdaf11.json).
  static const std::vector<KernelInfo> all = {
      grouped<GroupedTmaCfg<128, 256, 4, 1>>(),
      grouped<GroupedCfg<128, 256, 4>>(),
      grouped<GroupedCfg<128, 128, 6>>(),
      grouped<GroupedCfg<64, 128, 8>>(),
      // Chapter 7's 256 x 128 tile (its stage's BlockM + 4 = 260 A scales in two TMA boxes).
      grouped<GroupedTmaCfg<256, 128, 4, 1>>(),
      // 1 x 2 clusters (A multicast; grouped.cuh), both tiles, and chapter 7's table tile
      // 256 x 128 with 3 stages and a staging buffer per unit.
      grouped<GroupedTmaPairCfg<128, 256, 4, 1>>(),
      grouped<GroupedTmaPairCfg<256, 128, 4, 1>>(),
      grouped<GroupedTmaPairCfg<256, 128, 3, 0>>(),
      // Same-run comparison only (README, "The promoted loop"): the first loop (_loop0), the
      // default until session 12, and the lean loop rolled (_loop1).
      grouped<GroupedTmaCfg<128, 256, 4, 1>, 0>(),
      grouped<GroupedTmaCfg<128, 256, 4, 1>, 1>(),
      grouped<GroupedTmaCfg<256, 128, 4, 1>, 0>(),
      grouped<GroupedTmaPairCfg<256, 128, 4, 1>, 0>(),
  };
  return all;
}

}  // namespace fp8gemm::ch08
