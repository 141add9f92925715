// The grouped kernels with a float D (Output::f32, optionally D = A.B^T + D; session 64): chapter
// 7's FP32 epilogue from registers (EpilogueKind::registers_f32) on the grouped schedule, each
// tile's rows cut at its group's end (Math::row_end) as the bf16 registers kernels cut them, so
// no row of another group, or of a masked group's padding, is read or written. No cluster: the
// engine's FP32 store is per CTA. Two tiles: 128 x 256 (default_kernel's, the bf16 registers
// fallback's tile) and 128 x 128 (by name), each with chapter 7's FP32 kernels' stages.
#include "grouped_configs.cuh"

namespace fp8gemm::ch08 {

template <int BM, int BN, int S>
using GroupedF32Cfg =
    KernelConfig<BM, BN, S, 1, 1, Accumulation::promoted, EpilogueKind::registers_f32>;

std::vector<KernelInfo> kernels_f32() {
  return {
      grouped<GroupedF32Cfg<128, 256, 4>>(),
      grouped<GroupedF32Cfg<128, 128, 6>>(),
  };
}

}  // namespace fp8gemm::ch08
