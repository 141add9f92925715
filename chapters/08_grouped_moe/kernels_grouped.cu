// The grouped kernels: chapter 7's block-scaled math with the grouped schedule (no clusters,
// registers epilogue; common/engine/grouped.cuh says why).
#include "common/engine/grouped.cuh"
#include "common/engine/kernel_info.cuh"
#include "grouped_gemm.hpp"

namespace fp8gemm::ch08 {
using namespace engine;

template <int BM, int BN, int S>
using GroupedCfg = KernelConfig<BM, BN, S, 1, 1, Accumulation::promoted, EpilogueKind::registers>;

template <class Cfg>
static KernelInfo grouped() {
  return kernel_info<Cfg, GroupedBlockScaledMath<Cfg>>();
}

const std::vector<KernelInfo>& kernels() {
  static const std::vector<KernelInfo> all = {
      grouped<GroupedCfg<128, 128, 6>>(),
      grouped<GroupedCfg<128, 256, 4>>(),
      grouped<GroupedCfg<64, 128, 8>>(),
  };
  return all;
}

}  // namespace fp8gemm::ch08
