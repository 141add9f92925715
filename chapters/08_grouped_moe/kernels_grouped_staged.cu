// Session 15's same-run comparison: the staged promoted loop (common/engine/staged_loop.cuh:
// whole rounds of kStages K blocks from ring stage 0, every block's stage a compile-time
// constant; the plan allows K multiples of 128 x stages only) on the 4-stage 256 x 128 tiles, 1 x 1
// and 1 x 2, and on the 3-stage default tile, beside the same tiles with the lean loop
// (kernels_grouped.cu). Named _loop12. A translation unit of their own because ptxas spills 32
// bytes in each 4-stage one (inside the loop: 9 local loads and 8 stores per round of 4 K
// blocks), which ptxas_chapter_08 refuses in the kernels it checks (kernels_grouped.cu,
// kernels_grouped_2x1.cu).
#include "common/engine/staged_loop.cuh"
#include "grouped_configs.cuh"

namespace fp8gemm::ch08 {

template <class Cfg>
static KernelInfo staged() {
  return kernel_info<Cfg, StagedMath<Cfg, GroupedBlockScaledMath<Cfg>>>();
}

std::vector<KernelInfo> kernels_staged() {
  return {
      staged<GroupedTmaCfg<256, 128, 4, 1>>(),
      staged<GroupedTmaPairCfg<256, 128, 4, 1>>(),
      // The balanced default's tile (3 stages, 1 x 2): no spill, 59 instructions per K block
      // beside the MMA and promotion against the lean loop's 79; K a multiple of 384 only.
      staged<GroupedTmaPairCfg<256, 128, 3, 0>>(),
  };
}

}  // namespace fp8gemm::ch08
