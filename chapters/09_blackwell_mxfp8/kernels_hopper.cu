// The Hopper MXFP8 kernels (common/engine/mx_scaled.cuh): 128 x 128 and 128 x
// 256 tiles, promoted per 32 K, no clusters; TMA-store epilogue first (the
// default where D allows it), registers for any D.
#include "common/engine/kernel_info.cuh"
#include "common/engine/mx_scaled.cuh"
#include "hopper_mx.hpp"

namespace fp8gemm::ch09 {
using namespace engine;

template <class Cfg, bool kDecodeOnce = true>
static KernelInfo mx() {
  KernelInfo k = kernel_info<Cfg, MxScaledMath<Cfg, kDecodeOnce>>();
  if (!kDecodeOnce) k.name += "_v1";  // the first version, kept for the comparison
  return k;
}

template <int BM, int BN, int S, EpilogueKind E = EpilogueKind::tma_store>
using MxCfg =
    KernelConfig<BM, BN, S, 1, 1, Accumulation::promoted, E, E == EpilogueKind::tma_store ? 1 : 0>;

const std::vector<KernelInfo> &hopper_kernels() {
  static const std::vector<KernelInfo> all = {
      mx<MxCfg<128, 128, 5>>(),
      mx<MxCfg<128, 128, 5, EpilogueKind::registers>>(),
      // Variants for the sweep (ch09_hopper_mxfp8 --kernels=all).
      mx<MxCfg<128, 128, 4>>(),
      mx<MxCfg<128, 256, 3>>(),
      mx<MxCfg<128, 128, 5>, false>(),
  };
  return all;
}

}  // namespace fp8gemm::ch09
