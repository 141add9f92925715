// Asynchronous global -> shared copies by threads (Ampere-style, sm_80+).
// PTX ISA 9.0, §9.7.9.25 "Data Movement and Conversion Instructions: cp.async" and
// cp.async.commit_group / cp.async.wait_group (§9.7.9.25.3); and cp.async.mbarrier.arrive
// ("Parallel Synchronization and Communication Instructions: cp.async.mbarrier.arrive", among the
// mbarrier instructions of §9.7.13.15), which lets an mbarrier track a thread's copies instead of
// a commit group.
#pragma once

#include <cstdint>

namespace fp8gemm::ptx {

/// Copies 16 bytes global -> shared, bypassing L1 (.cg). Only the first src_bytes (0 or 16)
/// are read; the rest of the 16 bytes is zero-filled: out-of-bounds tiles cost no branch.
__device__ __forceinline__ void cp_async_16(std::uint32_t smem_addr, const void* gmem,
                                            std::uint32_t src_bytes) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(smem_addr), "l"(gmem),
               "r"(src_bytes)
               : "memory");
}

/// Copies 4 bytes global -> shared through L1 (.ca: 4-byte copies exist only there). Only the first
/// src_bytes (4 or 0) are read, the rest zero-filled: a row past the tensor costs no branch (and
/// `gmem` is then not read; it must still be a valid address).
__device__ __forceinline__ void cp_async_4(std::uint32_t smem_addr, const void* gmem,
                                           std::uint32_t src_bytes) {
  asm volatile("cp.async.ca.shared.global [%0], [%1], 4, %2;\n" ::"r"(smem_addr), "l"(gmem),
               "r"(src_bytes)
               : "memory");
}

/// cp.async.mbarrier.arrive.shared::cta.b64: an arrive on `bar` once every cp.async that this
/// thread issued before it has completed (the copies' writes are then visible to threads that
/// see the phase complete). Without .noinc the barrier's pending count is raised by one at once
/// and lowered by the arrive: the copies hold the current phase open without counting as one of
/// its expected arrivals, so the barrier's arrive count stays what it was. Issue it before the
/// arrival that could otherwise complete the phase.
__device__ __forceinline__ void cp_async_mbarrier_arrive(std::uint32_t bar) {
  asm volatile("cp.async.mbarrier.arrive.shared::cta.b64 [%0];\n" ::"r"(bar) : "memory");
}

/// Closes the current group of cp.async operations.
__device__ __forceinline__ void cp_async_commit() {
  asm volatile("cp.async.commit_group;\n" ::: "memory");
}

/// Waits until at most `pending` committed groups are still in flight.
template <int pending>
__device__ __forceinline__ void cp_async_wait() {
  asm volatile("cp.async.wait_group %0;\n" ::"n"(pending) : "memory");
}

}  // namespace fp8gemm::ptx
