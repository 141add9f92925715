// Large tiles for M >= 256, all block-scaled and promoted: 256 x 128 with A shared by a 1 x 2
// cluster (DeepGEMM's choice on most M = 4096 shapes), 128 x 256 with B shared by a 2 x 1
// cluster, and three consumer warpgroups on 192 x 128.
#include "common/engine/block_scaled.cuh"
#include "common/engine/kernel_info.cuh"
#include "kernels.hpp"

namespace fp8gemm::ch07 {
using namespace engine;

template <int BM, int BN, int S, int CM, int CN, int Buffers>
using TmaCfg = KernelConfig<BM, BN, S, CM, CN, Accumulation::promoted, EpilogueKind::tma_store,
                            Buffers>;

template <class Cfg>
static KernelInfo bs() {
  return kernel_info<Cfg, BlockScaledMath<Cfg>>();
}

void add_kernels_large(std::vector<KernelInfo>& out) {
  out.push_back(bs<TmaCfg<256, 128, 3, 1, 2, 0>>());
  out.push_back(bs<TmaCfg<256, 128, 4, 1, 2, 1>>());
  out.push_back(bs<TmaCfg<256, 128, 4, 2, 1, 1>>());
  out.push_back(bs<TmaCfg<128, 256, 4, 2, 1, 1>>());
  out.push_back(bs<TmaCfg<128, 256, 3, 1, 2, 0>>());
  out.push_back(bs<TmaCfg<192, 128, 4, 2, 1, 0>>());
  out.push_back(bs<TmaCfg<192, 128, 4, 1, 1, 0>>());
}

}  // namespace fp8gemm::ch07
