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

/// The same descriptor moved `bytes` further along K inside the swizzle row (bytes a multiple of
/// 16 and < 128: for e4m3, k-step s of 32 elements is bytes = 32 s). Only the start-address field
/// changes; it cannot carry into bit 14 because the tile base is 1024-byte aligned and
/// shared-memory addresses are < 256 KiB.
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

/// D (64 x 256, f32, 128 registers per thread) = A . B^T (+ D when scale_d != 0), A 64 x 32 and
/// B 256 x 32 e4m3, both K-major in shared memory, given by descriptors.
__device__ __forceinline__ void wgmma_m64n256k32_e4m3(float (&d)[128], std::uint64_t desc_a,
                                                   std::uint64_t desc_b, std::uint32_t scale_d) {
  asm volatile(
      "{\n"
      ".reg .pred p;\n"
      "setp.ne.b32 p, %130, 0;\n"
      "wgmma.mma_async.sync.aligned.m64n256k32.f32.e4m3.e4m3 "
      "{"
      "%0, %1, %2, %3, %4, %5, %6, %7, "
      "%8, %9, %10, %11, %12, %13, %14, %15, "
      "%16, %17, %18, %19, %20, %21, %22, %23, "
      "%24, %25, %26, %27, %28, %29, %30, %31, "
      "%32, %33, %34, %35, %36, %37, %38, %39, "
      "%40, %41, %42, %43, %44, %45, %46, %47, "
      "%48, %49, %50, %51, %52, %53, %54, %55, "
      "%56, %57, %58, %59, %60, %61, %62, %63, "
      "%64, %65, %66, %67, %68, %69, %70, %71, "
      "%72, %73, %74, %75, %76, %77, %78, %79, "
      "%80, %81, %82, %83, %84, %85, %86, %87, "
      "%88, %89, %90, %91, %92, %93, %94, %95, "
      "%96, %97, %98, %99, %100, %101, %102, %103, "
      "%104, %105, %106, %107, %108, %109, %110, %111, "
      "%112, %113, %114, %115, %116, %117, %118, %119, "
      "%120, %121, %122, %123, %124, %125, %126, %127"
      "}, %128, %129, p, 1, 1;\n"
      "}\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]),
        "+f"(d[6]), "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]),
        "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), "+f"(d[16]), "+f"(d[17]),
        "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]),
        "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]),
        "+f"(d[30]), "+f"(d[31]), "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]),
        "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]), "+f"(d[40]), "+f"(d[41]),
        "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]),
        "+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]),
        "+f"(d[54]), "+f"(d[55]), "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]),
        "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63]), "+f"(d[64]), "+f"(d[65]),
        "+f"(d[66]), "+f"(d[67]), "+f"(d[68]), "+f"(d[69]), "+f"(d[70]), "+f"(d[71]),
        "+f"(d[72]), "+f"(d[73]), "+f"(d[74]), "+f"(d[75]), "+f"(d[76]), "+f"(d[77]),
        "+f"(d[78]), "+f"(d[79]), "+f"(d[80]), "+f"(d[81]), "+f"(d[82]), "+f"(d[83]),
        "+f"(d[84]), "+f"(d[85]), "+f"(d[86]), "+f"(d[87]), "+f"(d[88]), "+f"(d[89]),
        "+f"(d[90]), "+f"(d[91]), "+f"(d[92]), "+f"(d[93]), "+f"(d[94]), "+f"(d[95]),
        "+f"(d[96]), "+f"(d[97]), "+f"(d[98]), "+f"(d[99]), "+f"(d[100]), "+f"(d[101]),
        "+f"(d[102]), "+f"(d[103]), "+f"(d[104]), "+f"(d[105]), "+f"(d[106]), "+f"(d[107]),
        "+f"(d[108]), "+f"(d[109]), "+f"(d[110]), "+f"(d[111]), "+f"(d[112]), "+f"(d[113]),
        "+f"(d[114]), "+f"(d[115]), "+f"(d[116]), "+f"(d[117]), "+f"(d[118]), "+f"(d[119]),
        "+f"(d[120]), "+f"(d[121]), "+f"(d[122]), "+f"(d[123]), "+f"(d[124]), "+f"(d[125]),
        "+f"(d[126]), "+f"(d[127])
      : "l"(desc_a), "l"(desc_b), "r"(scale_d));
}

/// The MMA for a compile-time N (the shapes this project uses).
template <int N>
__device__ __forceinline__ void wgmma_m64nNk32_e4m3(float (&d)[N / 2], std::uint64_t desc_a,
                                                    std::uint64_t desc_b, std::uint32_t scale_d) {
  // Only the shape a chapter uses has a wrapper (each is one long asm operand list); a chapter
  // that needs another N adds its wrapper here.
  static_assert(N == 256, "add a wgmma_m64n<N>k32_e4m3 wrapper for this N");
  wgmma_m64n256k32_e4m3(d, desc_a, desc_b, scale_d);
}

}  // namespace fp8gemm::ptx
