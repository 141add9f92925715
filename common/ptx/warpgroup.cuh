// Warpgroup-level register reallocation and named barriers (sm_90a / sm_70+).
// PTX ISA 9.0: setmaxnreg (§9.7.19.x "Miscellaneous Instructions: setmaxnreg", sm_90a), bar.sync
// with a barrier id and thread count (§9.7.13.1 "Parallel Synchronization and Communication
// Instructions: bar, barrier"). (Section numbers drift between ISA versions; the titles do not.)
#pragma once

#include <cstdint>

namespace fp8gemm::ptx {

/// setmaxnreg.dec.sync.aligned.u32: this warpgroup gives registers back to the pool, down to
/// kRegs per thread (a multiple of 8 in 24 .. 256). Every thread of the warpgroup executes it.
/// Needs a register cap at kernel entry (__launch_bounds__(threads, 1)), else ptxas ignores it.
template <int kRegs>
__device__ __forceinline__ void setmaxnreg_dec() {
  static_assert(kRegs % 8 == 0 && kRegs >= 24 && kRegs <= 256, "setmaxnreg takes 24..256, step 8");
  asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;\n" ::"n"(kRegs));
}

/// setmaxnreg.inc.sync.aligned.u32: this warpgroup takes registers from the pool, up to kRegs per
/// thread (blocks until the pool has them, i.e. until the other warpgroups' dec has run).
template <int kRegs>
__device__ __forceinline__ void setmaxnreg_inc() {
  static_assert(kRegs % 8 == 0 && kRegs >= 24 && kRegs <= 256, "setmaxnreg takes 24..256, step 8");
  asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;\n" ::"n"(kRegs));
}

/// bar.sync id, threads: a barrier among `threads` threads (a multiple of 32) of the CTA that use
/// the same id (1 .. 15; 0 is __syncthreads). Lets one warpgroup synchronise without the others.
__device__ __forceinline__ void named_barrier_sync(std::uint32_t id, std::uint32_t threads) {
  asm volatile("bar.sync %0, %1;\n" ::"r"(id), "r"(threads) : "memory");
}

/// bar.arrive id, threads: counts this thread's arrival at barrier `id` without waiting; the
/// barrier completes when `threads` threads have arrived or synced on it (a producer / consumer
/// hand-off: one warpgroup arrives, the other bar.syncs with threads = 256).
__device__ __forceinline__ void named_barrier_arrive(std::uint32_t id, std::uint32_t threads) {
  asm volatile("bar.arrive %0, %1;\n" ::"r"(id), "r"(threads) : "memory");
}

}  // namespace fp8gemm::ptx
