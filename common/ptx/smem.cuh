// Shared-memory addresses for inline PTX.
// PTX ISA 9.0, "Generic Addressing" / cvta (§9.7.9.20 "Data Movement and Conversion
// Instructions: cvta"): instructions that take a .shared address want the 32-bit shared-window
// offset, not a generic pointer.
#pragma once

#include <cstdint>

namespace fp8gemm::ptx {

/// The .shared state-space address of a generic pointer into shared memory.
__device__ __forceinline__ std::uint32_t smem_u32(const void* p) {
  return static_cast<std::uint32_t>(__cvta_generic_to_shared(p));
}

}  // namespace fp8gemm::ptx
