// M <= 128 (decode): narrow tiles with deep rings, so that enough SMs stream the weights.
#include "common/engine/block_scaled.cuh"
#include "common/engine/kernel_info.cuh"
#include "kernels.hpp"

namespace fp8gemm::ch07 {
using namespace engine;

template <int BM, int BN, int S>
using SmallCfg = KernelConfig<BM, BN, S, 1, 1, Accumulation::promoted, EpilogueKind::tma_store, 1>;
/// The same 64-row tiles with k-split consumers (ConsumerOrder::ksplit, session 37): two
/// warpgroups, each with half of a tile's K blocks, so two dependent chains per SM.
template <int BN, int S>
using KSplitCfg = KernelConfig<64, BN, S, 1, 1, Accumulation::promoted, EpilogueKind::tma_store,
                               1, ConsumerOrder::ksplit>;

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
  out.push_back(bs<KSplitCfg<16, 16>>());
  out.push_back(bs<KSplitCfg<32, 14>>());
  out.push_back(bs<KSplitCfg<64, 12>>());
  out.push_back(bs<KSplitCfg<128, 6>>());
}

}  // namespace fp8gemm::ch07
