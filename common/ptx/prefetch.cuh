// Prefetches into L2 without a destination: PTX ISA 9.0, §9.7.9.25 "Data Movement and Conversion
// Instructions: Asynchronous copy", its "cp.async.bulk.prefetch" part (sm_90; §9.7.9.25.4 in 9.0,
// section numbers drift between ISA versions, the titles do not). A hint: nothing is guaranteed to
// be in L2 when it is read, nothing is tracked and nothing waits for it.
#pragma once

#include <cstdint>

namespace fp8gemm::ptx {

/// cp.async.bulk.prefetch.L2.global: asks L2 to fetch `bytes` of global memory from `src`
/// (16-byte aligned; bytes a multiple of 16). It is a uniform-datapath instruction (UBLKPF): issued
/// by several lanes of a warp, ptxas loops over them, so one thread should issue it.
__device__ __forceinline__ void bulk_prefetch_l2(const void* src, std::uint32_t bytes) {
  asm volatile("cp.async.bulk.prefetch.L2.global [%0], %1;\n" ::"l"(
                   reinterpret_cast<std::uint64_t>(src)),
               "r"(bytes)
               : "memory");
}

}  // namespace fp8gemm::ptx
