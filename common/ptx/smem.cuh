// Shared-memory addresses and accesses for inline PTX.
// PTX ISA 9.0, "Generic Addressing" / cvta (§9.7.9.20 "Data Movement and Conversion
// Instructions: cvta"): instructions that take a .shared address want the 32-bit shared-window
// offset, not a generic pointer. The loads and stores below are "Data Movement and Conversion
// Instructions: ld" and ": st" on the .shared state space (asm volatile with a memory clobber, so
// they keep their order against the barriers and wgmma around them), and the broadcast is "ld"
// with "shfl.sync" (same chapter).
#pragma once

#include <cstdint>

namespace fp8gemm::ptx {

/// The .shared state-space address of a generic pointer into shared memory.
__device__ __forceinline__ std::uint32_t smem_u32(const void* p) {
  return static_cast<std::uint32_t>(__cvta_generic_to_shared(p));
}

/// ld.shared.f32 / .v2.f32 / .v4.f32 / .u32 / .v4.u32 at a .shared address.
__device__ __forceinline__ float ld_shared_f32(std::uint32_t addr) {
  float v;
  asm volatile("ld.shared.f32 %0, [%1];" : "=f"(v) : "r"(addr) : "memory");
  return v;
}
__device__ __forceinline__ float2 ld_shared_v2_f32(std::uint32_t addr) {
  float2 v;
  asm volatile("ld.shared.v2.f32 {%0, %1}, [%2];" : "=f"(v.x), "=f"(v.y) : "r"(addr) : "memory");
  return v;
}
__device__ __forceinline__ float4 ld_shared_v4_f32(std::uint32_t addr) {
  float4 v;
  asm volatile("ld.shared.v4.f32 {%0, %1, %2, %3}, [%4];"
               : "=f"(v.x), "=f"(v.y), "=f"(v.z), "=f"(v.w)
               : "r"(addr)
               : "memory");
  return v;
}
__device__ __forceinline__ std::uint32_t ld_shared_u32(std::uint32_t addr) {
  std::uint32_t v;
  asm volatile("ld.shared.u32 %0, [%1];" : "=r"(v) : "r"(addr) : "memory");
  return v;
}
__device__ __forceinline__ uint4 ld_shared_v4_u32(std::uint32_t addr) {
  uint4 v;
  asm volatile("ld.shared.v4.u32 {%0, %1, %2, %3}, [%4];"
               : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
               : "r"(addr)
               : "memory");
  return v;
}

/// st.shared.f32 / .v2.f32 / .v4.f32 / .v4.s32 at a .shared address.
__device__ __forceinline__ void st_shared_f32(std::uint32_t addr, float a) {
  asm volatile("st.shared.f32 [%0], %1;" ::"r"(addr), "f"(a) : "memory");
}
__device__ __forceinline__ void st_shared_v2_f32(std::uint32_t addr, float a, float b) {
  asm volatile("st.shared.v2.f32 [%0], {%1, %2};" ::"r"(addr), "f"(a), "f"(b) : "memory");
}
__device__ __forceinline__ void st_shared_v4_f32(std::uint32_t addr, float a, float b, float c,
                                                 float d) {
  asm volatile("st.shared.v4.f32 [%0], {%1, %2, %3, %4};" ::"r"(addr), "f"(a), "f"(b), "f"(c),
               "f"(d)
               : "memory");
}
__device__ __forceinline__ void st_shared_v4_s32(std::uint32_t addr, int a, int b, int c, int d) {
  asm volatile("st.shared.v4.s32 [%0], {%1, %2, %3, %4};" ::"r"(addr), "r"(a), "r"(b), "r"(c),
               "r"(d)
               : "memory");
}

/// Four s32 at a .shared address, loaded by lane 0 of the (fully converged) warp alone and handed
/// to every lane by shfl.sync: the only thread that touches shared memory is lane 0, so a lane 0
/// that later releases the bytes (an mbarrier arrive) orders the read itself (chapter 8's tile
/// hand-over, common/engine/grouped.cuh). One asm block: written as a C++ branch and __shfl_sync
/// calls, ptxas spilled 16-316 bytes in four of chapter 8's grouped kernels.
__device__ __forceinline__ int4 ld_shared_v4_s32_lane0(std::uint32_t addr) {
  int4 v;
  asm volatile(
      "{\n\t.reg .pred p;\n\t.reg .b32 g, m, r, n;\n\t"
      "mov.b32 g, 0;\n\tmov.b32 m, 0;\n\tmov.b32 r, 0;\n\tmov.b32 n, 0;\n\t"
      "setp.eq.u32 p, %4, 0;\n\t"
      "@p ld.shared.v4.s32 {g, m, r, n}, [%5];\n\t"
      "shfl.sync.idx.b32 %0, g, 0, 31, -1;\n\t"
      "shfl.sync.idx.b32 %1, m, 0, 31, -1;\n\t"
      "shfl.sync.idx.b32 %2, r, 0, 31, -1;\n\t"
      "shfl.sync.idx.b32 %3, n, 0, 31, -1;\n\t}"
      : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
      : "r"(threadIdx.x % 32u), "r"(addr)
      : "memory");
  return v;
}

}  // namespace fp8gemm::ptx
