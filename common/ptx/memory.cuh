// Global-memory accesses between CTAs of one grid (stream-K's hand-over of partial tiles,
// common/engine/stream_k.cuh). PTX ISA 9.0, "Memory Consistency Model" (§8: release and acquire
// patterns, scopes) and "Data Movement and Conversion Instructions: ld" / ": st" (§9.7.9.8,
// §9.7.9.10): a flag written with st.release.gpu and read with ld.acquire.gpu orders everything the
// writer did before the release (made cumulative over its CTA by a barrier first) before
// everything the reader does after the acquire. The partial tiles themselves move with .cg (cache
// in L2 only): the SM that reads a partial never had its lines in its L1.
#pragma once

#include <cstdint>

namespace fp8gemm::ptx {

/// ld.acquire.gpu.global.s32: the flag at `p`, and everything written before its release.
__device__ __forceinline__ int ld_acquire_gpu(const int* p) {
  int v;
  asm volatile("ld.acquire.gpu.global.s32 %0, [%1];" : "=r"(v) : "l"(p) : "memory");
  return v;
}

/// fence.acq_rel.gpu then st.release.gpu.global.s32: publishes `v` at `p` after every write that
/// this thread has made or observed (the CTA barrier before it makes the warpgroup's its own).
__device__ __forceinline__ void st_release_gpu(int* p, int v) {
  asm volatile("fence.acq_rel.gpu;\n\tst.release.gpu.global.s32 [%0], %1;" ::"l"(p), "r"(v)
               : "memory");
}

/// st.relaxed.gpu.global.s32 (a flag's reset, ordered against the next launch by the launch
/// boundary).
__device__ __forceinline__ void st_relaxed_gpu(int* p, int v) {
  asm volatile("st.relaxed.gpu.global.s32 [%0], %1;" ::"l"(p), "r"(v) : "memory");
}

/// st.global.cg.v4.f32 / ld.global.cg.v4.f32: 16 bytes at a 16-byte aligned address, through L2.
__device__ __forceinline__ void st_global_cg_v4(float* p, float a, float b, float c, float d) {
  asm volatile("st.global.cg.v4.f32 [%0], {%1, %2, %3, %4};" ::"l"(p), "f"(a), "f"(b), "f"(c),
               "f"(d)
               : "memory");
}
__device__ __forceinline__ float4 ld_global_cg_v4(const float* p) {
  float4 v;
  asm volatile("ld.global.cg.v4.f32 {%0, %1, %2, %3}, [%4];"
               : "=f"(v.x), "=f"(v.y), "=f"(v.z), "=f"(v.w)
               : "l"(p)
               : "memory");
  return v;
}

}  // namespace fp8gemm::ptx
