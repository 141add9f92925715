// elect.sync (PTX ISA 8.0, "Parallel Synchronization and Communication Instructions: elect.sync";
// sm_90): one lane of the warp elected, the same one for the same mask every time.
#pragma once

#include <cstdint>

namespace fp8gemm::ptx {

/// True in exactly one lane of the (converged) warp, false in the others. Every lane must call it.
/// What it buys over `lane == 0`: ptxas knows that a single thread runs the branch it guards, so
/// an instruction there that needs its operands in uniform registers (a TMA load) is issued once,
/// not inside a loop over the active threads (ELECT / BRA.U.ANY in the SASS).
__device__ __forceinline__ bool elect_one_sync() {
  std::uint32_t elected = 0;
  asm volatile(
      "{\n"
      "  .reg .pred p;\n"
      "  elect.sync _|p, 0xffffffff;\n"
      "  selp.u32 %0, 1, 0, p;\n"
      "}\n"
      : "=r"(elected));
  return elected != 0;
}

}  // namespace fp8gemm::ptx
