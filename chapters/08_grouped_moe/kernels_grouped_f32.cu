// The grouped kernels with a float D (Output::f32, optionally D = A.B^T + D; session 64), no
// cluster:
//  - by TMA (EpilogueKind::tma_store_f32): units of 64 rows x 32 floats staged in shared memory
//    and stored (or with accumulate reduce-added) through D's ragged-rows view, each box clipped
//    at its group's end (GroupedBlockScaledMath::store_tile_f32), as the bf16 TMA kernels store;
//    128 x 256 with one staging unit per warpgroup (two do not fit beside 4 stages and the A
//    scales' side ring), the default where D is 16-byte aligned with ldd % 4 == 0 (the same kernel
//    in 1 x 2 clusters, A multicast as the bf16 default for large groups does, was no faster at
//    the balanced cases and 1.03-1.13x slower at the masked ones: session 69, an H100; dropped);
//  - from registers (EpilogueKind::registers_f32, chapter 7's FP32 epilogue): each tile's rows
//    cut at its group's end (Math::row_end) as the bf16 registers kernels cut them; 128 x 256 (the
//    default for any other D) and 128 x 128 (by name), with chapter 7's FP32 kernels' stages.
// No row of another group, or of a masked group's padding, is read or written.
#include "grouped_configs.cuh"

namespace fp8gemm::ch08 {

template <int BM, int BN, int S>
using GroupedF32Cfg =
    KernelConfig<BM, BN, S, 1, 1, Accumulation::promoted, EpilogueKind::registers_f32>;
template <int BM, int BN, int S, int Buffers>
using GroupedF32TmaCfg =
    KernelConfig<BM, BN, S, 1, 1, Accumulation::promoted, EpilogueKind::tma_store_f32, Buffers>;

std::vector<KernelInfo> kernels_f32() {
  return {
      grouped<GroupedF32TmaCfg<128, 256, 4, 1>>(),
      grouped<GroupedF32Cfg<128, 256, 4>>(),
      grouped<GroupedF32Cfg<128, 128, 6>>(),
  };
}

}  // namespace fp8gemm::ch08
