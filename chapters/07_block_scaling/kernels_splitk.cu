// Split-K for small M (opt-in: Options::splits; splitk.hpp): the GEMM kernels whose units write
// FP32 partial tiles to the workspace and whose last unit per tile sums them into D
// (common/engine/split_k.cuh), with the small-M tiles and stage counts of kernels_small.cu.
#include <vector>

#include "common/engine/kernel_info.cuh"
#include "common/engine/split_k.cuh"
#include "splitk.hpp"

namespace fp8gemm::ch07 {
using namespace engine;

namespace {

template <int BM, int BN, int S>
using SplitCfg = KernelConfig<BM, BN, S, 1, 1, Accumulation::promoted, EpilogueKind::registers_f32>;

template <class Cfg>
KernelInfo splitk() {
  KernelInfo k = kernel_info<Cfg, SplitKBlockScaledMath<Cfg>>();
  k.name += "_splitk";  // "64x32_s14_c1x1_promoted_f32_splitk"
  return k;
}

}  // namespace

void add_kernels_splitk(std::vector<KernelInfo>& out) {
  out.push_back(splitk<SplitCfg<64, 32, 14>>());
  out.push_back(splitk<SplitCfg<64, 64, 12>>());
  out.push_back(splitk<SplitCfg<128, 32, 10>>());
  out.push_back(splitk<SplitCfg<128, 64, 8>>());
}

}  // namespace fp8gemm::ch07
