// M <= 128 (decode): narrow tiles with deep rings, so that enough SMs stream the weights.
#include "common/engine/block_scaled.cuh"
#include "common/engine/kernel_info.cuh"
#include "kernels.hpp"

namespace fp8gemm::ch07 {
using namespace engine;

template <int BM, int BN, int S>
using SmallCfg = KernelConfig<BM, BN, S, 1, 1, Accumulation::promoted, EpilogueKind::tma_store, 1>;

template <class Cfg>
static KernelInfo bs() {
  return kernel_info<Cfg, BlockScaledMath<Cfg>>();
}

void add_kernels_small(std::vector<KernelInfo>& out) {
  out.push_back(bs<SmallCfg<64, 16, 16>>());
  out.push_back(bs<SmallCfg<64, 32, 14>>());
  out.push_back(bs<SmallCfg<64, 64, 12>>());
  out.push_back(bs<SmallCfg<64, 128, 8>>());
  out.push_back(bs<SmallCfg<128, 32, 10>>());
  out.push_back(bs<SmallCfg<128, 64, 8>>());
  // N = 7168 = 128 x 56 = 64 x 112: 128 tiles, one wave on 132 SMs (DeepGEMM picks 64 x 112).
  out.push_back(bs<SmallCfg<128, 56, 8>>());
  out.push_back(bs<SmallCfg<64, 112, 9>>());
}

}  // namespace fp8gemm::ch07
