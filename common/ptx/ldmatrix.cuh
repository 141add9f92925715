// Warp-collective shared-memory -> register fragment loads.
// PTX ISA 9.0, §9.7.14.5.15 "Warp-level matrix load instruction: ldmatrix" (sm_75+).
// ldmatrix.sync.aligned.m8n8.x{1,2,4}.shared.b16: each 8 x 8 b16 matrix is 8 rows of 16 bytes;
// lanes 8i .. 8i+7 give the row addresses of matrix i (16-byte aligned); afterwards lane l holds,
// in register i, the 4 bytes at row l / 4, bytes 4 (l % 4) .. 4 (l % 4) + 3 of matrix i. For
// 8-bit data that is exactly the mma.m16n8k32 A/B fragment (see mma_sync.cuh): a row of 16 bytes
// is 16 consecutive k of one m (or n).
#pragma once

#include <cstdint>

namespace fp8gemm::ptx {

__device__ __forceinline__ void ldmatrix_x4(std::uint32_t (&r)[4], std::uint32_t smem_addr) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(smem_addr));
}

__device__ __forceinline__ void ldmatrix_x2(std::uint32_t (&r)[2], std::uint32_t smem_addr) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x2.shared.b16 {%0, %1}, [%2];\n"
               : "=r"(r[0]), "=r"(r[1])
               : "r"(smem_addr));
}

}  // namespace fp8gemm::ptx
