// The Hopper MXFP8 kernels (common/engine/mx_scaled.cuh), promoted per 32 K, no clusters: version
// 3 (the default: MX blocks pipelined two deep) on 128 x 128 and 128 x 64 tiles, TMA-store
// epilogue first (the default where D allows it), registers for any D, FP32 by TMA or from
// registers for a float D; versions 1 and 2 for the comparison in chapter 9's README.
#include "common/engine/kernel_info.cuh"
#include "common/engine/mx_scaled.cuh"
#include "hopper_mx.hpp"

namespace fp8gemm::ch09 {
using namespace engine;

template <class Cfg, int kVersion = 3>
static KernelInfo mx() {
  KernelInfo k = kernel_info<Cfg, MxScaledMath<Cfg, kVersion>>();
  if (kVersion != 3) k.name += "_v" + std::to_string(kVersion);  // an earlier version
  return k;
}

// Staging buffers per consumer warpgroup: one for a bf16 D by TMA (the kernels measured so),
// two for a float D by TMA (units of 64 x 32 floats, 8 KiB each: four per warpgroup would take
// 64 KiB beside the ring's 160), 0 (none) for the registers epilogues.
template <int BM, int BN, int S, EpilogueKind E = EpilogueKind::tma_store>
using MxCfg = KernelConfig<BM, BN, S, 1, 1, Accumulation::promoted, E,
                           E == EpilogueKind::tma_store       ? 1
                           : E == EpilogueKind::tma_store_f32 ? 2
                                                              : 0>;

const std::vector<KernelInfo>& hopper_kernels() {
  static const std::vector<KernelInfo> all = {
      mx<MxCfg<128, 128, 5>>(),
      mx<MxCfg<128, 128, 5, EpilogueKind::registers>>(),
      // A float D (Output::f32): the default's tile, FP32 by TMA (session 66; with accumulate
      // a TMA reduce-add: the default for accumulate where D's rows are 16-byte aligned) and
      // from registers (session 64: the default otherwise; hopper_mx.cpp says why).
      mx<MxCfg<128, 128, 5, EpilogueKind::tma_store_f32>>(),
      mx<MxCfg<128, 128, 5, EpilogueKind::registers_f32>>(),
      // Variants for the sweep (ch09_hopper_mxfp8 --kernels=all).
      mx<MxCfg<128, 128, 4>>(),
      mx<MxCfg<128, 64, 7>>(),
  };
  return all;
}

const std::vector<KernelInfo>& hopper_earlier_kernels() {
  static const std::vector<KernelInfo> all = {
      mx<MxCfg<128, 128, 5>, 2>(),
      mx<MxCfg<128, 256, 3>, 2>(),
      mx<MxCfg<128, 128, 5>, 1>(),
  };
  return all;
}

}  // namespace fp8gemm::ch09
