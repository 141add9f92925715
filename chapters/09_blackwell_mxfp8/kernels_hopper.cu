// The Hopper MXFP8 kernels (common/engine/mx_scaled.cuh): 128 x 128 and 128 x 256 tiles, promoted
// per 32 K, no clusters; TMA-store epilogue first (the default where D allows it), registers for any D.
#include "common/engine/kernel_info.cuh"
#include "common/engine/mx_scaled.cuh"
#include "hopper_mx.hpp"

namespace fp8gemm::ch09 {
using namespace engine;

template <class Cfg>
static KernelInfo mx() {
  return kernel_info<Cfg, MxScaledMath<Cfg>>();
}

const std::vector<KernelInfo>& hopper_kernels() {
  static const std::vector<KernelInfo> all = {
      mx<KernelConfig<128, 128, 5, 1, 1, Accumulation::promoted, EpilogueKind::tma_store, 1>>(),
      mx<KernelConfig<128, 128, 6, 1, 1, Accumulation::promoted, EpilogueKind::registers>>(),
      // Variants for the first sweep (ch09_hopper_mxfp8 --kernels=all): wider tiles, so that
      // one warpgroup's promotion overlaps the other's tensor-core work for longer.
      mx<KernelConfig<128, 256, 4, 1, 1, Accumulation::promoted, EpilogueKind::tma_store, 1>>(),
      mx<KernelConfig<128, 128, 6, 1, 1, Accumulation::promoted, EpilogueKind::tma_store, 1>>(),
  };
  return all;
}

}  // namespace fp8gemm::ch09
