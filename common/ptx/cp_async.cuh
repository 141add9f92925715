// Asynchronous global -> shared copies by threads (Ampere-style, sm_80+).
// PTX ISA 9.0, §9.7.9.25 "Data Movement and Conversion Instructions: cp.async" and
// cp.async.commit_group / cp.async.wait_group (§9.7.9.25.3).
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
