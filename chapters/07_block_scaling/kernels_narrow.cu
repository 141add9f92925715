// Tiles that cut wave quantisation (128 x 192 and 128 x 176: N = 2112 is 11 or 12 tiles; the
// tiles straddle two or three 128-column B-scale blocks, compiled once per n0 % 128), the 128 x 128 workhorse, and the
// kernels with a registers epilogue: bf16 D that TMA cannot store, and FP32 D (optionally
// accumulated into).
#include "common/engine/block_scaled.cuh"
#include "common/engine/kernel_info.cuh"
#include "kernels.hpp"

namespace fp8gemm::ch07 {
using namespace engine;

template <class Cfg>
static KernelInfo bs() {
  return kernel_info<Cfg, BlockScaledMath<Cfg>>();
}
constexpr auto kP = Accumulation::promoted;

void add_kernels_narrow(std::vector<KernelInfo>& out) {
  out.push_back(bs<KernelConfig<128, 192, 4, 2, 1, kP, EpilogueKind::tma_store, 3>>());
  // 2112 = 12 x 176: a tile spans up to three B-scale blocks, n0 % 128 takes eight values.
  out.push_back(bs<KernelConfig<128, 176, 4, 2, 1, kP, EpilogueKind::tma_store, 11>>());
  out.push_back(bs<KernelConfig<128, 128, 6, 2, 1, kP, EpilogueKind::tma_store, 1>>());
  out.push_back(bs<KernelConfig<128, 128, 6, 1, 1, kP, EpilogueKind::tma_store, 1>>());
  out.push_back(bs<KernelConfig<128, 128, 6, 1, 1, kP, EpilogueKind::registers>>());
  out.push_back(bs<KernelConfig<128, 256, 4, 2, 1, kP, EpilogueKind::registers>>());
  out.push_back(bs<KernelConfig<128, 128, 6, 1, 1, kP, EpilogueKind::registers_f32>>());
  out.push_back(bs<KernelConfig<128, 256, 4, 2, 1, kP, EpilogueKind::registers_f32>>());
}

}  // namespace fp8gemm::ch07
