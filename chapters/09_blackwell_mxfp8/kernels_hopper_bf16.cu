// The dequantize_bf16 path's GEMM kernels (hopper_mx.hpp, HopperPath): bf16 operands on the
// engine (common/engine/bf16_operands.cuh), the tensor cores' FP32 sums over the whole K. The
// tiles are chapter 6's fast table's for the same shapes (its ws_gemm.cpp: 128 x 192 and
// 128 x 176 ping-pong, 128 x 256 and 128 x 128 with a 2 x 1 cluster), because a bf16 stage costs
// the tensor cores what an e4m3 stage does; a registers epilogue for any D.
#include "common/engine/bf16_operands.cuh"
#include "common/engine/kernel_info.cuh"
#include "hopper_mx.hpp"

namespace fp8gemm::ch09 {
using namespace engine;

template <class Cfg>
static KernelInfo bf16() {
  KernelInfo k = kernel_info<Cfg, Bf16Math<Cfg>>();
  k.name += "_bf16";
  return k;
}

constexpr auto kFast = Accumulation::fast;
constexpr auto kTma = EpilogueKind::tma_store;
constexpr auto kPP = ConsumerOrder::pingpong;

const std::vector<KernelInfo>& hopper_bf16_kernels() {
  static const std::vector<KernelInfo> all = {
      bf16<KernelConfig<128, 192, 4, 2, 1, kFast, kTma, 2, kPP>>(),
      bf16<KernelConfig<128, 256, 4, 1, 1, kFast, EpilogueKind::registers>>(),
      // A float D (Output::f32, session 64): the registers kernel's FP32 twin.
      bf16<KernelConfig<128, 256, 4, 1, 1, kFast, EpilogueKind::registers_f32>>(),
      // A float D by TMA (session 67; the path's float D default where D's rows are 16-byte
      // aligned since session 69, 0.80-0.99x the registers kernel's time): the two tile
      // sizes the bf16 D's rule picks between (bf16_kernel in hopper_mx.cpp: there 128 x 192 is
      // a ping-pong kernel in 2 x 1 clusters; here cooperative, one CTA), each 64 x 32 unit of
      // FP32 D staged and stored (with accumulate reduce-added) by the TMA unit while the next
      // tile's main loop runs; two 8 KiB units per warpgroup beside the rings (4 x 48 KiB and
      // 4 x 40 KiB). On an H100 the registers kernel's float D took 1.28-1.29x the bf16 D's time at
      // 4096 x 2112 x 7168 (its 128 x 256 tile leaves a quarter-full column of tiles at
      // N = 2112, where the bf16 D runs 128 x 192) and 1.17x at 4096 x 24576 x 1536.
      bf16<KernelConfig<128, 256, 4, 2, 1, kFast, EpilogueKind::tma_store_f32, 2>>(),
      bf16<KernelConfig<128, 192, 4, 1, 1, kFast, EpilogueKind::tma_store_f32, 2>>(),
      // Variants for the sweep (ch09_hopper_mxfp8 --kernels=all).
      bf16<KernelConfig<128, 256, 4, 2, 1, kFast, kTma, 2>>(),
      bf16<KernelConfig<128, 176, 4, 2, 1, kFast, kTma, 11, kPP>>(),
      bf16<KernelConfig<128, 128, 6, 2, 1, kFast, kTma, 2, kPP>>(),
  };
  return all;
}

}  // namespace fp8gemm::ch09
