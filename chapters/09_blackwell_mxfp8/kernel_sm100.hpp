// Chapter 9: the launch interface of the sm_100a kernel (kernel_sm100.cu). Declared always,
// defined only when the target is built with FP8GEMM_HAS_SM100 (the `full` preset).
#pragma once

#include <cuda.h>
#include <cuda_runtime.h>

#include <cstdint>

namespace fp8gemm::ch09 {

struct KernelArgs {
  CUtensorMap map_a, map_b, map_sfa, map_sfb;
  /// D (when tma_store): bf16 in boxes of kEpiBoxRows x kEpiBoxCols, or (f32) float in boxes of
  /// kEpiBoxRows x kEpiBoxColsF32
  CUtensorMap map_d;
  void* D = nullptr;  ///< bf16, or float (f32)
  std::int64_t ldd = 0;
  std::int32_t M = 0, N = 0, K = 0;
  std::int32_t tiles_m = 0, tiles_n = 0;  ///< tiles of 128 * cta_group x kBlockN
  int cta_group = 1;           ///< 1: CTAs alone; 2: clusters of two CTAs, one M = 256 MMA per pair
  bool vector_stores = false;  ///< D and ldd allow 16-byte stores
  bool tma_store = false;      ///< D by TMA store through map_d (else stores from registers)
  bool f32 = false;            ///< D is float: the tensor memory's FP32 as is (Output::f32)
  bool accumulate = false;     ///< f32 only: D = A.B^T + D (TMA: reduce-add; else load, add, store)
};

/// The kernel's address (for prepare_kernel / require_kernel_image): the instance for
/// .cta_group::1 or ::2.
const void* mxfp8_sm100_kernel(int cta_group);
/// cudaOccupancyMaxActiveClusters for the pair instance: how many clusters of two CTAs of `block`
/// threads and `smem_bytes` each the current GPU can hold at once (0: none).
int max_active_pairs(int grid, int block, int smem_bytes);
/// Launches grid x block with smem_bytes of dynamic shared memory on `stream` (cta_group 2:
/// clusters of two along x, grid even).
void launch_mxfp8_sm100(const KernelArgs& args, int grid, int block, int smem_bytes,
                        cudaStream_t stream);

}  // namespace fp8gemm::ch09
