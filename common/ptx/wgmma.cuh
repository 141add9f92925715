// Warpgroup-level asynchronous MMA (wgmma) with FP8 operands in shared memory (sm_90a only).
// PTX ISA 9.0, §9.7.15 "Asynchronous Warpgroup Level Matrix Multiply-Accumulate Instructions":
//   the shared-memory matrix descriptor (§9.7.15.5.1.2 "Shared Memory Matrix Layout", its part
//   "Matrix Descriptor Format"), wgmma.mma_async (§9.7.15.5.2), wgmma.fence (§9.7.15.6.1),
//   wgmma.commit_group (§9.7.15.6.2), wgmma.wait_group (§9.7.15.6.3). (Section numbers drift
//   between ISA versions; the titles do not.)
//
// A warpgroup is 4 consecutive warps (128 threads, the first warp index a multiple of 4). One
// wgmma.mma_async.m64nNk32.f32.e4m3.e4m3 computes D (64 x N, f32) (+)= A (64 x 32) . B (N x 32)^T,
// A and B read straight from shared memory through 64-bit descriptors (for 8-bit types both must
// be K-major: each row of A / of B holds consecutive k). The f32 accumulators stay in registers,
// N / 2 per thread, in this layout (thread t of the warpgroup, warp w = t / 32, lane l = t % 32):
//   d[4j + 0], d[4j + 1] = D[16w + l/4    ][8j + 2(l%4)], D[16w + l/4    ][8j + 2(l%4) + 1]
//   d[4j + 2], d[4j + 3] = D[16w + l/4 + 8][8j + 2(l%4)], D[16w + l/4 + 8][8j + 2(l%4) + 1]
// for j = 0 .. N/8 - 1 (the mma.sync m16n8 C layout, repeated over N and stacked over the 4 warps).
//
// Discipline (the instruction is asynchronous):
//   wgmma_fence()             before the first wgmma that touches accumulators written by other
//                             instructions (every k-block, to be safe; it is cheap);
//   wgmma_m64nNk32_e4m3 ...   any number of MMAs, same accumulators (they chain in order);
//   wgmma_commit_group()      closes them into one group;
//   wgmma_wait_group<n>()     waits until at most n groups are pending; only then may the
//                             shared-memory operands of the completed groups be overwritten or
//                             the accumulators read;
//   wgmma_fence_operands(d)   after the wait, so the compiler does not move reads of d above it.
#pragma once

#include <cstdint>

namespace fp8gemm::ptx {

// ---------------------------------------------------------------------------------------------
// Shared-memory matrix descriptor ("Matrix Descriptor Format"), 64 bits:
//   bits  0-13  start address        >> 4   (the .shared address; 16-byte aligned)
//   bits 16-29  leading byte offset  >> 4   (LBO)
//   bits 32-45  stride byte offset   >> 4   (SBO)
//   bits 49-51  matrix base offset          (0 when the swizzle pattern starts on its boundary,
//                                            1024 B for 128B swizzle)
//   bits 62-63  swizzle mode: 0 none, 1 128B, 2 64B, 3 32B
// For a K-major operand in the 128B-swizzle layout that TMA writes with CU_TENSOR_MAP_SWIZZLE_128B
// and a box 128 bytes wide (one row of 128 e4m3 per M/N index, the 16-byte chunks of row r XORed
// with r % 8), the "core matrices" are 8 rows x 16 bytes and a swizzle atom is 8 rows x 128 B =
// 1024 B:
//   SBO = 1024 B: the distance between consecutive groups of 8 rows (M or N direction);
//   LBO: the distance between core matrices along K; unused for swizzled K-major layouts (one
//        wgmma reads 32 bytes of K, inside one 128-byte swizzle row), set to 1 (16 B) by
//        convention;
//   K advance: the k32 step s (s = 0..3) of a 128-byte-wide tile starts at byte 32 s of row 0,
//        i.e. start address + 32 s (+2 s in the encoded field). The hardware applies the XOR
//        swizzle to the full address, so the tile base must be 1024-byte aligned (base offset 0).
// ---------------------------------------------------------------------------------------------

/// Bytes between 8-row groups of a K-major 128B-swizzled tile (8 rows x 128 B).
inline constexpr std::uint32_t kSw128AtomBytes = 1024;

/// Descriptor of a K-major, 128B-swizzled operand tile starting at `smem_addr` (.shared address,
/// 1024-byte aligned; rows of 128 bytes, 8-row groups 1024 bytes apart).
__device__ __forceinline__ std::uint64_t make_desc_k_major_sw128(std::uint32_t smem_addr) {
  constexpr std::uint64_t kLbo = 16;  // unused for this layout (see above); 1 once encoded
  std::uint64_t desc = 0;
  desc |= std::uint64_t((smem_addr & 0x3FFFF) >> 4);      // bits 0-13: start address
  desc |= std::uint64_t(kLbo >> 4) << 16;                 // bits 16-29: LBO
  desc |= std::uint64_t(kSw128AtomBytes >> 4) << 32;      // bits 32-45: SBO = 1024 B
  desc |= std::uint64_t(1) << 62;                         // bits 62-63: 128B swizzle
  return desc;
}

/// The same descriptor moved `bytes` further in shared memory (a multiple of 16: along K inside
/// the swizzle row, k-step s of 32 e4m3 is 32 s bytes; or to another row group, stage or tile,
/// which keeps the 1024-byte swizzle alignment when `bytes` is a multiple of 1024). Only the
/// start-address field changes; it cannot carry into bit 14 because shared-memory addresses are
/// < 256 KiB.
__device__ __forceinline__ std::uint64_t advance_desc(std::uint64_t desc, std::uint32_t bytes) {
  return desc + (bytes >> 4);
}

// ---------------------------------------------------------------------------------------------
// Ordering and completion
// ---------------------------------------------------------------------------------------------

/// wgmma.fence.sync.aligned: orders earlier register (accumulator) and shared-memory accesses of
/// this warpgroup before the following wgmma.mma_async. All threads of the warpgroup, converged.
__device__ __forceinline__ void wgmma_fence() {
  asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory");
}

/// wgmma.commit_group.sync.aligned: closes the pending wgmma.mma_async ops into one group.
__device__ __forceinline__ void wgmma_commit_group() {
  asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory");
}

/// wgmma.wait_group.sync.aligned N: waits until at most `pending` groups are still running.
template <int pending>
__device__ __forceinline__ void wgmma_wait_group() {
  static_assert(pending >= 0 && pending <= 7, "wgmma.wait_group takes 0..7");
  asm volatile("wgmma.wait_group.sync.aligned %0;\n" ::"n"(pending) : "memory");
}

/// A compiler-only fence on accumulator registers: an empty asm that "reads and writes" every
/// element, so no ordinary instruction that uses d is moved across it (asm volatile statements
/// keep their relative order, ordinary code does not). Emits no instruction.
template <int kRegs>
__device__ __forceinline__ void wgmma_fence_operands(float (&d)[kRegs]) {
#pragma unroll
  for (int i = 0; i < kRegs; ++i) asm volatile("" : "+f"(d[i])::"memory");
}

// ---------------------------------------------------------------------------------------------
// wgmma.mma_async.sync.aligned.m64nNk32.f32.e4m3.e4m3 d, desc-a, desc-b, scale-d, 1, 1
// scale_d = 0: D = A . B^T (the first MMA of a tile overwrites whatever the registers hold);
// scale_d != 0: D += A . B^T. The two immediates are the (+1) scales of A and B.
// ---------------------------------------------------------------------------------------------

/// One specialisation per supported N (wgmma_e4m3_shapes.inc, generated by tools/gen_wgmma.py:
/// each is one asm statement listing N / 2 accumulator registers).
template <int N>
struct WgmmaE4m3;

#include "common/ptx/wgmma_e4m3_shapes.inc"

/// D (64 x N, f32, N / 2 registers per thread) = A . B^T (+ D when scale_d != 0), A 64 x 32 and
/// B N x 32 e4m3, both K-major in shared memory, given by descriptors.
template <int N>
__device__ __forceinline__ void wgmma_m64nNk32_e4m3(float (&d)[N / 2], std::uint64_t desc_a,
                                                    std::uint64_t desc_b, std::uint32_t scale_d) {
  WgmmaE4m3<N>::mma(d, desc_a, desc_b, scale_d);
}

// ---------------------------------------------------------------------------------------------
// wgmma.mma_async.sync.aligned.m64nNk16.f32.bf16.bf16 d, desc-a, desc-b, scale-d, 1, 1, 0, 0
// (chapter 9's MXFP8 operands dequantised to bf16). The same descriptors as e4m3: a k16 step of
// bf16 is 32 bytes of a 128-byte swizzle row, as a k32 step of e4m3 is, so a ring stage of 128
// bytes along K holds 64 bf16 and the same four steps; the accumulator layout is the same. The
// two last immediates say that A and B are K-major (not transposed).
// ---------------------------------------------------------------------------------------------

template <int N>
struct WgmmaBf16;

#include "common/ptx/wgmma_bf16_shapes.inc"

/// The two instructions as types, for loops written once for both (engine/kernel.cuh's fast loop):
/// D (64 x N, f32) = A . B^T (+ D when scale_d != 0), A 64 x 32 and B N x 32 e4m3 (E4m3Mma) or
/// A 64 x 16 and B N x 16 bf16 (Bf16Mma), both K-major in shared memory, given by descriptors.
struct E4m3Mma {
  template <int N>
  __device__ __forceinline__ static void mma(float (&d)[N / 2], std::uint64_t desc_a,
                                             std::uint64_t desc_b, std::uint32_t scale_d) {
    WgmmaE4m3<N>::mma(d, desc_a, desc_b, scale_d);
  }
};
struct Bf16Mma {
  template <int N>
  __device__ __forceinline__ static void mma(float (&d)[N / 2], std::uint64_t desc_a,
                                             std::uint64_t desc_b, std::uint32_t scale_d) {
    WgmmaBf16<N>::mma(d, desc_a, desc_b, scale_d);
  }
};

}  // namespace fp8gemm::ptx
