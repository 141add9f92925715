// Warp-collective register -> shared-memory matrix stores (sm_90+).
// PTX ISA 9.0, §9.7.14.5.16 "Warp-level matrix store instruction: stmatrix".
// stmatrix.sync.aligned.m8n8.x4.shared.b16 [addr], {r0, r1, r2, r3}: stores four 8 x 8 matrices
// of b16; lanes 8i .. 8i+7 give the 16-byte-aligned addresses of the 8 rows of matrix i; register
// i of lane l holds row l / 4, columns 2 (l % 4), 2 (l % 4) + 1 of matrix i (two b16, the lower
// column in the lower half). That is exactly the layout of an mma / wgmma f32 accumulator pair
// rounded to bf16x2, so an accumulator tile goes to shared memory in 16-byte rows per lane.
#pragma once

#include <cstdint>

namespace fp8gemm::ptx {

__device__ __forceinline__ void stmatrix_x4(std::uint32_t smem_addr, std::uint32_t r0,
                                            std::uint32_t r1, std::uint32_t r2, std::uint32_t r3) {
  asm volatile("stmatrix.sync.aligned.m8n8.x4.shared.b16 [%0], {%1, %2, %3, %4};\n" ::"r"(smem_addr),
               "r"(r0), "r"(r1), "r"(r2), "r"(r3)
               : "memory");
}

/// The .x2 form: two matrices, addresses from lanes 0 .. 15 (lanes 16 .. 31 are ignored).
__device__ __forceinline__ void stmatrix_x2(std::uint32_t smem_addr, std::uint32_t r0,
                                            std::uint32_t r1) {
  asm volatile("stmatrix.sync.aligned.m8n8.x2.shared.b16 [%0], {%1, %2};\n" ::"r"(smem_addr),
               "r"(r0), "r"(r1)
               : "memory");
}

}  // namespace fp8gemm::ptx
