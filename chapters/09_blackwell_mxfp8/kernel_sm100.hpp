// Chapter 9: the launch interface of the sm_100a kernel (kernel_sm100.cu). Declared always,
// defined only when the target is built with FP8GEMM_HAS_SM100 (the `full` preset).
#pragma once

#include <cuda.h>
#include <cuda_runtime.h>

#include <cstdint>

namespace fp8gemm::ch09 {

struct KernelArgs {
  CUtensorMap map_a, map_b, map_sfa, map_sfb;
  CUtensorMap map_d;  ///< D bf16, boxes of kEpiBoxRows x kEpiBoxCols (when tma_store)
  void* D = nullptr;
  std::int64_t ldd = 0;
  std::int32_t M = 0, N = 0, K = 0;
  std::int32_t tiles_m = 0, tiles_n = 0;
  bool vector_stores = false;  ///< D and ldd allow 16-byte stores
  bool tma_store = false;      ///< D by TMA store through map_d (else stores from registers)
};

/// The kernel's address (for prepare_kernel / require_kernel_image).
const void* mxfp8_sm100_kernel();
/// Launches grid x block with smem_bytes of dynamic shared memory on `stream`.
void launch_mxfp8_sm100(const KernelArgs& args, int grid, int block, int smem_bytes,
                        cudaStream_t stream);

}  // namespace fp8gemm::ch09
