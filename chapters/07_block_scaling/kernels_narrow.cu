// Tiles that cut wave quantisation (128 x 192 and 128 x 176: N = 2112 is 11 or 12 tiles; the
// tiles straddle two or three 128-column B-scale blocks, compiled once per n0 % 128), the 128 x 128 workhorse, and the
// kernels with a registers epilogue: bf16 D that TMA cannot store, and FP32 D (optionally
// accumulated into), from registers and by TMA.
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
  // FP32 D by TMA (session 67; since session 69 the default for an accumulating FP32 D whose
  // rows are 16-byte aligned, choose_kernel: 0.52-0.88x the registers kernels' time on an H100):
  // the two FP32 tiles, each 64 x 32 unit of D staged and stored (with accumulate reduce-added in
  // L2) by the TMA unit while the next tile's main loop runs; for D whose rows are 16-byte
  // aligned. What fits beside
  // the ring and its side ring of scales: 128 x 128 with five stages and two 8 KiB units per
  // warpgroup, 128 x 256 with four stages and one unit (two do not fit). Chapter 9's MXFP8 twin
  // of this epilogue took 0.61x its registers kernel's time with accumulate at
  // 4096 x 24576 x 1536 (an H100, session 67).
  out.push_back(bs<KernelConfig<128, 128, 5, 1, 1, kP, EpilogueKind::tma_store_f32, 2>>());
  out.push_back(bs<KernelConfig<128, 256, 4, 2, 1, kP, EpilogueKind::tma_store_f32, 1>>());
}

}  // namespace fp8gemm::ch07
