// Global-memory counters shared by the CTAs of one grid (sm_70+), for the split-K epilogue's
// "last unit of a tile sums the partials" hand-off (common/engine/split_k.cuh).
// PTX ISA 9.0: atom (§9.7.13.5 "Parallel Synchronization and Communication Instructions: atom")
// with the .acq_rel semantics and .gpu scope of §8 "Memory Consistency Model"; st with .relaxed
// (§9.7.9.9 "Data Movement and Conversion Instructions: st"). (Section numbers drift between ISA
// versions; the titles do not.)
#pragma once

#include <cstdint>

namespace fp8gemm::ptx {

/// atom.acq_rel.gpu.global.add.u32: adds `v` to *counter and returns the old value. Release: this
/// thread's earlier writes (and, through a bar.sync before it, those of the threads it
/// synchronised with: the model's cumulativity) are visible to any thread that later acquires the
/// counter; acquire: the writes released by earlier atomics on it are visible to this thread (and,
/// through a bar.sync after it, to those it then synchronises with).
__device__ __forceinline__ std::uint32_t atom_add_acq_rel_gpu(std::uint32_t* counter,
                                                              std::uint32_t v) {
  std::uint32_t old;
  asm volatile("atom.acq_rel.gpu.global.add.u32 %0, [%1], %2;\n"
               : "=r"(old)
               : "l"(counter), "r"(v)
               : "memory");
  return old;
}

/// st.relaxed.gpu.global.u32: a plain store that other CTAs may read concurrently without a data
/// race (relaxed, GPU scope).
__device__ __forceinline__ void st_relaxed_gpu(std::uint32_t* p, std::uint32_t v) {
  asm volatile("st.relaxed.gpu.global.u32 [%0], %1;\n" ::"l"(p), "r"(v) : "memory");
}

}  // namespace fp8gemm::ptx
