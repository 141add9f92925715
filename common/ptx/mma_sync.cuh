// Warp-level FP8 tensor-core MMA.
// PTX ISA 9.0, §9.7.14 "Warp Level Matrix Multiply-Accumulate Instructions", instruction
// "mma" (§9.7.14.5.14), shape .m16n8k32 with .e4m3 operands (sm_89+). Fragment layouts
// (§9.7.14.5.x "Matrix Fragments for mma.m16n8k32"), with g = lane / 4, t = lane % 4:
//   A (16 x 32, row-major, 4 x .b32 = 16 e4m3 per thread):
//     a[0] = A[g][4t .. 4t+3], a[1] = A[g+8][4t .. 4t+3],
//     a[2] = A[g][16+4t .. 16+4t+3], a[3] = A[g+8][16+4t .. 16+4t+3]
//   B (32 x 8, "col": element (k, n) stored as Bt[n][k], K contiguous; 2 x .b32):
//     b[0] = Bt[g][4t .. 4t+3], b[1] = Bt[g][16+4t .. 16+4t+3]
//   C/D (16 x 8 f32): d[0], d[1] = D[g][2t], D[g][2t+1]; d[2], d[3] = D[g+8][2t], D[g+8][2t+1]
// In each .b32 the lowest byte is the lowest k.
#pragma once

#include <cstdint>

namespace fp8gemm::ptx {

/// d += a * b for one m16n8k32 e4m3 x e4m3 -> f32 tile (whole warp, converged).
__device__ __forceinline__ void mma_m16n8k32_e4m3(float (&d)[4], const std::uint32_t (&a)[4],
                                                  const std::uint32_t (&b)[2]) {
  asm volatile(
      "mma.sync.aligned.m16n8k32.row.col.f32.e4m3.e4m3.f32 "
      "{%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
}

}  // namespace fp8gemm::ptx
