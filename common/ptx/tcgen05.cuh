// Blackwell's fifth-generation tensor core (tcgen05) and its tensor memory (TMEM) (sm_100a only).
// PTX ISA 9.0, §9.7.16 "TensorCore 5th Generation Family Instructions" (subsection titles,
// which are stable, rather than numbers, which drift):
//   "Tensor Memory Allocation and Management": tcgen05.alloc, tcgen05.dealloc,
//       tcgen05.relinquish_alloc_permit
//   "tcgen05.ld" and "tcgen05.wait" (wait::ld): tensor memory -> registers
//   "tcgen05.cp": shared memory -> tensor memory (here the 32x128b.warpx4 shape)
//   "tcgen05.mma" with .kind::mxf8f6f4 and .block_scale, its "Instruction descriptor" and the
//       "Shared memory descriptor" (matrix descriptor) it reads A and B through
//   "tcgen05.commit": completion of earlier async tcgen05 operations tracked by an mbarrier
//   "tcgen05.fence": ::before_thread_sync / ::after_thread_sync
// Cross-checked against CUTLASS (include/cute/arch/mma_sm100_umma.hpp, copy_sm100.hpp,
// tmem_allocator_sm100.hpp, cutlass/arch/barrier.h umma_arrive) and DeepGEMM
// (deep_gemm/include/deep_gemm/ptx/tcgen05.cuh), which emit the same PTX strings.
// (Section numbers drift between ISA versions; the instruction names do not. No Blackwell GPU
// has run this file's code in this project: it is compiled and its SASS is inspected only.)
//
// Tensor memory: 512 columns x 128 lanes of 32-bit cells per SM, allocated in columns (a power of
// two >= 32) by one warp; an address is (lane << 16) | column. A warp may only access the 32
// lanes of its quarter: warp w reaches lanes 32 * (w % 4) .. 32 * (w % 4) + 31.
//
// Asynchrony: tcgen05.mma and tcgen05.cp are issued by one thread and run asynchronously;
// tcgen05.commit makes an mbarrier track the completion of every earlier tcgen05 async operation
// of the issuing thread. tcgen05.ld is asynchronous too, completed by tcgen05.wait::ld. Ordering
// tcgen05 operations with thread synchronisation (mbarrier waits, __syncthreads) needs
// tcgen05.fence::before_thread_sync before the synchronising arrive and
// tcgen05.fence::after_thread_sync after the wait.
//
// .cta_group: every tcgen05 instruction of a kernel must name the same group (PTX ISA "tcgen05.mma",
// "Issue Granularity"). ::1: the operation touches the issuing CTA's tensor memory only. ::2: it
// works on a CTA pair (two CTAs of a cluster whose %cluster_ctarank differ in the last bit) and
// on both CTAs' tensor memory: alloc / dealloc / relinquish are issued by one warp in each of the
// two CTAs together, mma / cp / commit by one thread of the pair. Hence the template parameter
// kCtaGroup (1 or 2) on every function that carries the qualifier.
//
// Every function here emits sm_100a-only PTX: call them only from code compiled for sm_100a
// (guard the caller with __CUDA_ARCH_FEAT_SM100_ALL); they are inline and emit nothing unless
// called.
#pragma once

#include <cstdint>

namespace fp8gemm::ptx {

/// tcgen05.alloc.cta_group::N.sync.aligned.shared::cta.b32: the whole warp allocates `columns`
/// columns of tensor memory (a power of two in [32, 512]) and the hardware writes the base
/// address to the 4-byte shared-memory slot `smem_slot` (a .shared address). Blocks while the
/// columns are taken by another CTA on the SM. kCtaGroup = 2: one warp in each CTA of the pair
/// executes it; together they allocate the same columns in both CTAs' tensor memory.
template <int kCtaGroup = 1>
__device__ __forceinline__ void tmem_alloc(std::uint32_t smem_slot, std::uint32_t columns) {
  static_assert(kCtaGroup == 1 || kCtaGroup == 2);
  if constexpr (kCtaGroup == 1)
    asm volatile("tcgen05.alloc.cta_group::1.sync.aligned.shared::cta.b32 [%0], %1;\n" ::"r"(
                     smem_slot),
                 "r"(columns)
                 : "memory");
  else
    asm volatile("tcgen05.alloc.cta_group::2.sync.aligned.shared::cta.b32 [%0], %1;\n" ::"r"(
                     smem_slot),
                 "r"(columns)
                 : "memory");
}

/// tcgen05.relinquish_alloc_permit.cta_group::N.sync.aligned: this CTA (pair) will allocate no
/// more (lets other CTAs' allocations proceed without waiting on us). Whole warp.
template <int kCtaGroup = 1>
__device__ __forceinline__ void tmem_relinquish_alloc_permit() {
  static_assert(kCtaGroup == 1 || kCtaGroup == 2);
  if constexpr (kCtaGroup == 1)
    asm volatile("tcgen05.relinquish_alloc_permit.cta_group::1.sync.aligned;\n" ::: "memory");
  else
    asm volatile("tcgen05.relinquish_alloc_permit.cta_group::2.sync.aligned;\n" ::: "memory");
}

/// tcgen05.dealloc.cta_group::N.sync.aligned.b32: frees what tmem_alloc returned (same column
/// count). Whole warp; every use of those columns must be complete (fences + a CTA barrier; for
/// kCtaGroup = 2 a cluster barrier, and both CTAs' warps deallocate together).
template <int kCtaGroup = 1>
__device__ __forceinline__ void tmem_dealloc(std::uint32_t tmem_addr, std::uint32_t columns) {
  static_assert(kCtaGroup == 1 || kCtaGroup == 2);
  if constexpr (kCtaGroup == 1)
    asm volatile("tcgen05.dealloc.cta_group::1.sync.aligned.b32 %0, %1;\n" ::"r"(tmem_addr),
                 "r"(columns)
                 : "memory");
  else
    asm volatile("tcgen05.dealloc.cta_group::2.sync.aligned.b32 %0, %1;\n" ::"r"(tmem_addr),
                 "r"(columns)
                 : "memory");
}

/// tcgen05.fence::before_thread_sync: orders this thread's earlier tcgen05 operations before a
/// following synchronisation (mbarrier arrive, bar.sync).
__device__ __forceinline__ void tcgen05_fence_before_thread_sync() {
  asm volatile("tcgen05.fence::before_thread_sync;\n" ::: "memory");
}

/// tcgen05.fence::after_thread_sync: orders this thread's later tcgen05 operations after a
/// preceding synchronisation (mbarrier wait, bar.sync).
__device__ __forceinline__ void tcgen05_fence_after_thread_sync() {
  asm volatile("tcgen05.fence::after_thread_sync;\n" ::: "memory");
}

/// tcgen05.commit.cta_group::1.mbarrier::arrive::one.shared::cluster.b64: when every tcgen05
/// async operation this thread issued before (mma, cp) has completed, arrive once on `bar` (a
/// .shared::cta address, valid as the own CTA's .shared::cluster address). Implies
/// tcgen05.fence::before_thread_sync. One thread.
__device__ __forceinline__ void tcgen05_commit(std::uint32_t bar) {
  asm volatile("tcgen05.commit.cta_group::1.mbarrier::arrive::one.shared::cluster.b64 [%0];\n" ::"r"(
                   bar)
               : "memory");
}

/// tcgen05.commit.cta_group::2.mbarrier::arrive::one.shared::cluster.multicast::cluster.b64: the
/// pair form. When every tcgen05 async operation this thread issued before has completed, arrive
/// once on the mbarrier at offset `bar` (a .shared::cta address of this CTA) in every CTA of the
/// cluster whose bit (%cluster_ctarank) is set in `cta_mask`. One thread of the pair (the one
/// that issued the MMAs).
__device__ __forceinline__ void tcgen05_commit_pair_multicast(std::uint32_t bar,
                                                              std::uint16_t cta_mask) {
  asm volatile(
      "tcgen05.commit.cta_group::2.mbarrier::arrive::one.shared::cluster.multicast::cluster.b64"
      " [%0], %1;\n" ::"r"(bar),
      "h"(cta_mask)
      : "memory");
}

/// tcgen05.cp.cta_group::1.32x128b.warpx4: copies a 32-row x 128-bit matrix from shared memory
/// (described by the shared memory descriptor `smem_desc`) into tensor memory at
/// `tmem_addr`: row r to lane r, 128 bits = 4 consecutive columns, and .warpx4 broadcasts it to
/// the same columns of all four 32-lane quarters (lanes r, 32 + r, 64 + r, 96 + r). This is the
/// copy that places one 512-byte 128 x 4 UE8M0 scale tile where the block-scaled MMA reads it.
/// One thread; asynchronous (ordered before a later tcgen05.mma of the same thread).
/// kCtaGroup = 2: one thread of the pair copies into both CTAs' tensor memory, each CTA's from
/// the tile at the same shared-memory offset in its own CTA (how DeepGEMM's 2-CTA kernel, whose
/// two CTAs load different A-scale rows to the same offset, reads it).
template <int kCtaGroup = 1>
__device__ __forceinline__ void tmem_copy_32x128b_warpx4(std::uint32_t tmem_addr,
                                                         std::uint64_t smem_desc) {
  static_assert(kCtaGroup == 1 || kCtaGroup == 2);
  if constexpr (kCtaGroup == 1)
    asm volatile("tcgen05.cp.cta_group::1.32x128b.warpx4 [%0], %1;\n" ::"r"(tmem_addr),
                 "l"(smem_desc)
                 : "memory");
  else
    asm volatile("tcgen05.cp.cta_group::2.32x128b.warpx4 [%0], %1;\n" ::"r"(tmem_addr),
                 "l"(smem_desc)
                 : "memory");
}

/// tcgen05.mma.cta_group::N.kind::mxf8f6f4.block_scale: D[tmem] (+)= (A * 2^(sfa - 127)) x
/// (B * 2^(sfb - 127))^T for one M x N x 32 step, A and B read from shared memory through the
/// matrix descriptors `a_desc`, `b_desc`, the scales from tensor memory at `tmem_sfa`,
/// `tmem_sfb` (which byte of each 32-bit cell: the descriptor's scale-factor ids), the shape and
/// types from the instruction descriptor `idesc`. `accumulate` = false
/// overwrites D (the first K step of a tile). One thread; asynchronous.
/// kCtaGroup = 2 (M = 256): issued by one thread of the pair; each CTA's half of the tensor core
/// reads its 128 rows of A at the descriptor's offset in its own shared memory, B's N rows are
/// split N / 2 per CTA at the same offset (the even CTA's first), and each CTA's tensor memory
/// holds its 128 rows of D and the scales of its A rows and of all N B columns.
template <int kCtaGroup = 1>
__device__ __forceinline__ void tcgen05_mma_mxf8f6f4_block_scale(std::uint32_t tmem_d,
                                                                 std::uint64_t a_desc,
                                                                 std::uint64_t b_desc,
                                                                 std::uint32_t idesc,
                                                                 std::uint32_t tmem_sfa,
                                                                 std::uint32_t tmem_sfb,
                                                                 bool accumulate) {
  static_assert(kCtaGroup == 1 || kCtaGroup == 2);
  if constexpr (kCtaGroup == 1)
    asm volatile(
        "{\n"
        ".reg .pred p;\n"
        "setp.ne.b32 p, %4, 0;\n"
        "tcgen05.mma.cta_group::1.kind::mxf8f6f4.block_scale [%0], %1, %2, %3, [%5], [%6], p;\n"
        "}\n" ::"r"(tmem_d),
        "l"(a_desc), "l"(b_desc), "r"(idesc), "r"(std::uint32_t(accumulate)), "r"(tmem_sfa),
        "r"(tmem_sfb)
        : "memory");
  else
    asm volatile(
        "{\n"
        ".reg .pred p;\n"
        "setp.ne.b32 p, %4, 0;\n"
        "tcgen05.mma.cta_group::2.kind::mxf8f6f4.block_scale [%0], %1, %2, %3, [%5], [%6], p;\n"
        "}\n" ::"r"(tmem_d),
        "l"(a_desc), "l"(b_desc), "r"(idesc), "r"(std::uint32_t(accumulate)), "r"(tmem_sfa),
        "r"(tmem_sfb)
        : "memory");
}

/// tcgen05.ld.sync.aligned.32x32b.x32.b32: each of the warp's 32 threads reads 32 consecutive
/// 32-bit columns of its own lane (thread t: lane (tmem_addr >> 16) + t) starting at column
/// (tmem_addr & 0xFFFF). Whole warp; asynchronous: the registers are valid after
/// tcgen05_wait_ld().
__device__ __forceinline__ void tmem_load_32x32b_x32(std::uint32_t tmem_addr, std::uint32_t (&r)[32]) {
  asm volatile(
      "tcgen05.ld.sync.aligned.32x32b.x32.b32 "
      "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, "
      "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31}, [%32];\n"
      : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3]), "=r"(r[4]), "=r"(r[5]), "=r"(r[6]),
        "=r"(r[7]), "=r"(r[8]), "=r"(r[9]), "=r"(r[10]), "=r"(r[11]), "=r"(r[12]), "=r"(r[13]),
        "=r"(r[14]), "=r"(r[15]), "=r"(r[16]), "=r"(r[17]), "=r"(r[18]), "=r"(r[19]),
        "=r"(r[20]), "=r"(r[21]), "=r"(r[22]), "=r"(r[23]), "=r"(r[24]), "=r"(r[25]),
        "=r"(r[26]), "=r"(r[27]), "=r"(r[28]), "=r"(r[29]), "=r"(r[30]), "=r"(r[31])
      : "r"(tmem_addr)
      : "memory");
}

/// tcgen05.wait::ld.sync.aligned: waits until this thread's earlier tcgen05.ld have completed.
__device__ __forceinline__ void tcgen05_wait_ld() {
  asm volatile("tcgen05.wait::ld.sync.aligned;\n" ::: "memory");
}

}  // namespace fp8gemm::ptx
