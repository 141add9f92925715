// Global-memory accesses with cache hints, for the streaming kernels (the quantisers): PTX ISA 9.0,
// §9.7.9.8 "Data Movement and Conversion Instructions: ld" (.nc, .level::eviction_priority
// L1::no_allocate, .level::prefetch_size L2::256B), §9.7.9.10 ": st" (the .cs cache operator) and
// §9.7.9.25 "Asynchronous copy", its "cp.async.bulk.prefetch" part (sm_90). Section numbers drift
// between ISA versions; the titles do not. Every hint is a hint: the values read and written are
// those of plain loads and stores.
#pragma once

#include <cstdint>

namespace fp8gemm::ptx {

/// cp.async.bulk.prefetch.L2.global: asks L2 to fetch `bytes` of global memory from `src`
/// (16-byte aligned; bytes a multiple of 16), without a destination, tracking or wait. It is a
/// uniform-datapath instruction (UBLKPF): issued by several lanes of a warp, ptxas loops over
/// them, so one thread should issue it.
__device__ __forceinline__ void bulk_prefetch_l2(const void* src, std::uint32_t bytes) {
  asm volatile("cp.async.bulk.prefetch.L2.global [%0], %1;\n" ::"l"(
                   reinterpret_cast<std::uint64_t>(src)),
               "r"(bytes)
               : "memory");
}

/// ld.global.nc.L1::no_allocate.L2::256B.v4.u32: 16 read-only bytes (16-byte aligned) that no
/// other thread of the grid writes, not kept in L1 (read once), and the request's L2 miss filled
/// with the whole aligned 256 bytes around it.
__device__ __forceinline__ uint4 ld_global_stream_v4(const void* p) {
  uint4 v;
  asm volatile("ld.global.nc.L1::no_allocate.L2::256B.v4.u32 {%0, %1, %2, %3}, [%4];"
               : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
               : "l"(p));
  return v;
}

/// ld.global.nc.L2::256B.v4.u32: the same without the L1 hint (the line stays in L1 as __ldg's).
__device__ __forceinline__ uint4 ld_global_l2_256b_v4(const void* p) {
  uint4 v;
  asm volatile("ld.global.nc.L2::256B.v4.u32 {%0, %1, %2, %3}, [%4];"
               : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
               : "l"(p));
  return v;
}

/// st.global.cs.v2.u32 / .v4.u32: 8 or 16 bytes (aligned to their size) written once, not read
/// again by this kernel: the lines are marked evict-first in L2.
__device__ __forceinline__ void st_global_stream_v2(void* p, uint2 v) {
  asm volatile("st.global.cs.v2.u32 [%0], {%1, %2};" ::"l"(p), "r"(v.x), "r"(v.y) : "memory");
}
__device__ __forceinline__ void st_global_stream_v4(void* p, uint4 v) {
  asm volatile("st.global.cs.v4.u32 [%0], {%1, %2, %3, %4};" ::"l"(p), "r"(v.x), "r"(v.y),
               "r"(v.z), "r"(v.w)
               : "memory");
}

}  // namespace fp8gemm::ptx
