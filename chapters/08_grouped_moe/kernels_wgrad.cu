// The k-grouped weight-gradient kernels (common/engine/kgrouped.cuh): FP32 output, no clusters.
#include "common/engine/kernel_info.cuh"
#include "common/engine/kgrouped.cuh"
#include "wgrad.hpp"

namespace fp8gemm::ch08 {
using namespace engine;

template <int BM, int BN, int S>
using WgradCfg =
    KernelConfig<BM, BN, S, 1, 1, Accumulation::promoted, EpilogueKind::registers_f32>;
/// FP32 dB by TMA (kgrouped.cuh): Buffers staging units of 64 x 32 floats per warpgroup.
template <int BM, int BN, int S, int Buffers>
using WgradTmaCfg =
    KernelConfig<BM, BN, S, 1, 1, Accumulation::promoted, EpilogueKind::tma_store_f32, Buffers>;

template <class Cfg, int kLoop = default_kgrouped_loop<Cfg>()>
static KernelInfo wgrad() {
  return kernel_info<Cfg, KGroupedMath<Cfg, kLoop>>();
}

const std::vector<KernelInfo>& wgrad_kernels() {
  static const std::vector<KernelInfo> all = {
      // The first of each epilogue is the plan's default (wgrad.cpp: TMA where dB suits it),
      // each the fastest of its kind in session 7's same-run sweep (plots/data/h200/ch08/
      // wgrad_loops_096690a/: 128 x 192 with 4 stages and 3 staging units per warpgroup 1.060x
      // the registers epilogue's geomean over ten cases, 1.011-1.170x per case).
      wgrad<WgradTmaCfg<128, 192, 4, 3>>(),
      wgrad<WgradCfg<128, 192, 5>>(),
      wgrad<WgradCfg<128, 128, 6>>(),
      wgrad<WgradCfg<128, 64, 8>>(),
      wgrad<WgradCfg<128, 160, 5>>(),
      wgrad<WgradTmaCfg<128, 192, 4, 2>>(),
      wgrad<WgradTmaCfg<128, 192, 5, 1>>(),
      wgrad<WgradTmaCfg<128, 160, 5, 2>>(),
      wgrad<WgradTmaCfg<128, 128, 5, 2>>(),
      // The two-deep loops (kgrouped.cuh), for the same-run comparison.
      wgrad<WgradCfg<128, 192, 5>, kTwoDeepHalvesLoop>(),
      wgrad<WgradCfg<128, 128, 6>, kTwoDeepLoop>(),
      wgrad<WgradTmaCfg<128, 192, 4, 2>, kTwoDeepHalvesLoop>(),
      wgrad<WgradTmaCfg<128, 128, 5, 2>, kTwoDeepLoop>(),
  };
  return all;
}

}  // namespace fp8gemm::ch08
