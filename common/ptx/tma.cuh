// The Tensor Memory Accelerator (TMA): bulk tensor copies between global and shared memory,
// described by a CUtensorMap built on the host (common/tensor_map.hpp) (sm_90+).
// PTX ISA 9.0, §9.7.9.25 "Data Movement and Conversion Instructions: Asynchronous copy", its
// tensor-copy part: "cp.async.bulk.tensor" (§9.7.9.25.5.1), "cp.async.bulk.commit_group" and
// "cp.async.bulk.wait_group" (bulk async-group completion); and §9.7.9.15 "prefetch, prefetchu"
// for prefetch.tensormap. (Section numbers drift between ISA versions; the titles do not.)
//
// Coordinates are in elements, innermost (contiguous) dimension first: for a row-major matrix
// with K contiguous, (k, row). Boxes that reach past the tensor's edge are clipped: loads fill the
// out-of-bounds elements with zeros (the map's OOB fill mode), stores skip them. The full box's
// bytes are always counted against the mbarrier, zero-filled ones included.
//
// The map must live in global, constant or kernel-parameter memory: pass it to the kernel as a
// `const __grid_constant__ CUtensorMap` and hand its address to these functions.
#pragma once

#include <cuda.h>  // CUtensorMap (a type only; nothing is linked from libcuda)

#include <cstdint>

namespace fp8gemm::ptx {

/// Loads one 2-D box global -> shared and completes its bytes on the mbarrier `bar` (the issuing
/// CTA's barrier; .shared::cluster addressing of the own CTA). `smem_dst` must be 128-byte aligned
/// (1024-byte aligned for a 128B-swizzled box, so that the swizzle pattern starts at the box).
/// One thread issues it; the barrier must expect the box's bytes (mbarrier_arrive_expect_tx).
__device__ __forceinline__ void tma_load_2d(std::uint32_t smem_dst, const CUtensorMap* map,
                                            std::uint32_t bar, std::int32_t k_coord,
                                            std::int32_t row_coord) {
  asm volatile(
      "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes"
      " [%0], [%1, {%3, %4}], [%2];\n" ::"r"(smem_dst),
      "l"(reinterpret_cast<std::uint64_t>(map)), "r"(bar), "r"(k_coord), "r"(row_coord)
      : "memory");
}

/// The CTA-pair form (.cta_group::2, sm_100a): the box lands in this CTA's shared memory at
/// `smem_dst`, and its bytes complete on the mbarrier at `pair_bar`, a .shared::cluster address
/// that may lie in this CTA or in its peer of the CTA pair (map_shared_to_cta(), cluster.cuh).
/// Blackwell's 2-CTA MMA uses it so that the even CTA's one full barrier counts both CTAs'
/// loads of a stage. ("cp.async.bulk.tensor": ".cta_group::2 ... the mbarrier object mbar can be
/// in shared memory of either the same CTA as the shared memory destination dstMem or in its
/// peer-CTA".)
__device__ __forceinline__ void tma_load_2d_pair(std::uint32_t smem_dst, const CUtensorMap* map,
                                                 std::uint32_t pair_bar, std::int32_t k_coord,
                                                 std::int32_t row_coord) {
  asm volatile(
      "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes"
      ".cta_group::2 [%0], [%1, {%3, %4}], [%2];\n" ::"r"(smem_dst),
      "l"(reinterpret_cast<std::uint64_t>(map)), "r"(pair_bar), "r"(k_coord), "r"(row_coord)
      : "memory");
}

/// Copies `bytes` contiguous bytes global -> shared (the non-tensor bulk copy, PTX ISA 8.0
/// §9.7.9.25.4.1 "cp.async.bulk") and completes them on the mbarrier `bar`. Both addresses
/// 16-byte aligned, `bytes` a multiple of 16. One thread issues it; the barrier must expect the
/// bytes. Chapter 9's Hopper MXFP8 kernel loads its 512-byte scale tiles with it.
__device__ __forceinline__ void bulk_load(std::uint32_t smem_dst, const void* src,
                                          std::uint32_t bytes, std::uint32_t bar) {
  asm volatile(
      "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];\n" ::
          "r"(smem_dst), "l"(reinterpret_cast<std::uint64_t>(src)), "r"(bytes), "r"(bar)
      : "memory");
}

/// The multicast form (.multicast::cluster): the box lands at the same shared-memory offset
/// `smem_dst` in every CTA of the cluster whose bit is set in `cta_mask`, and each of them gets
/// the box's bytes completed on its own mbarrier at offset `bar`. Each destination CTA's barrier
/// must expect those bytes; the copy may complete before that CTA's expect_tx (the transaction
/// count then runs negative until the expectation arrives, and the phase cannot complete while
/// the producer's arrival is still pending). Issued by one thread of one CTA.
__device__ __forceinline__ void tma_load_2d_multicast(std::uint32_t smem_dst, const CUtensorMap* map,
                                                      std::uint32_t bar, std::int32_t k_coord,
                                                      std::int32_t row_coord,
                                                      std::uint16_t cta_mask) {
  asm volatile(
      "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes"
      ".multicast::cluster [%0], [%1, {%3, %4}], [%2], %5;\n" ::"r"(smem_dst),
      "l"(reinterpret_cast<std::uint64_t>(map)), "r"(bar), "r"(k_coord), "r"(row_coord),
      "h"(cta_mask)
      : "memory");
}

/// Stores one 2-D box shared -> global (out-of-bounds parts of the box are not written). Make the
/// shared-memory writes visible to the async proxy first (fence_proxy_async_shared(), then a
/// barrier among the writers), then one thread issues the store and tma_store_commit().
__device__ __forceinline__ void tma_store_2d(const CUtensorMap* map, std::uint32_t smem_src,
                                             std::int32_t inner_coord, std::int32_t row_coord) {
  asm volatile(
      "cp.async.bulk.tensor.2d.global.shared::cta.tile.bulk_group [%0, {%2, %3}], [%1];\n" ::"l"(
          reinterpret_cast<std::uint64_t>(map)),
      "r"(smem_src), "r"(inner_coord), "r"(row_coord)
      : "memory");
}

/// The 3-D form of tma_store_2d: the box at (inner, row, plane) of a 3-D map (chapter 8's weight
/// gradient: dB's G matrices as planes, so a box is clipped at its own matrix's last row).
__device__ __forceinline__ void tma_store_3d(const CUtensorMap* map, std::uint32_t smem_src,
                                             std::int32_t inner_coord, std::int32_t row_coord,
                                             std::int32_t plane_coord) {
  asm volatile(
      "cp.async.bulk.tensor.3d.global.shared::cta.tile.bulk_group [%0, {%2, %3, %4}], [%1];\n" ::"l"(
          reinterpret_cast<std::uint64_t>(map)),
      "r"(smem_src), "r"(inner_coord), "r"(row_coord), "r"(plane_coord)
      : "memory");
}

/// The 4-D form of tma_store_2d (same section): the box at (inner, c1, c2, c3) of a 4-D map
/// (chapter 8's grouped kernels: D's "ragged rows" view, common/ragged_rows.hpp, in which a box is
/// clipped at a row bound given in its coordinates).
__device__ __forceinline__ void tma_store_4d(const CUtensorMap* map, std::uint32_t smem_src,
                                             std::int32_t inner_coord, std::int32_t c1,
                                             std::int32_t c2, std::int32_t c3) {
  asm volatile(
      "cp.async.bulk.tensor.4d.global.shared::cta.tile.bulk_group [%0, {%2, %3, %4, %5}], [%1];\n" ::"l"(
          reinterpret_cast<std::uint64_t>(map)),
      "r"(smem_src), "r"(inner_coord), "r"(c1), "r"(c2), "r"(c3)
      : "memory");
}

/// cp.reduce.async.bulk.tensor .add (PTX ISA 9.0, §9.7.9.25.5.2 "cp.reduce.async.bulk.tensor"):
/// as tma_store_2d, but each element of the box is added to global memory (D += box) by the TMA
/// unit, in the map's element type (FP32 here: one round-to-nearest add per element; the
/// per-tensor GEMM's FP32 D with accumulate).
__device__ __forceinline__ void tma_reduce_add_2d(const CUtensorMap* map, std::uint32_t smem_src,
                                                  std::int32_t inner_coord, std::int32_t row_coord) {
  asm volatile(
      "cp.reduce.async.bulk.tensor.2d.global.shared::cta.add.tile.bulk_group [%0, {%2, %3}], "
      "[%1];\n" ::"l"(reinterpret_cast<std::uint64_t>(map)),
      "r"(smem_src), "r"(inner_coord), "r"(row_coord)
      : "memory");
}

/// The 3-D form of tma_reduce_add_2d (same section), at the box tma_store_3d addresses (chapter 8's
/// weight gradient with accumulate).
__device__ __forceinline__ void tma_reduce_add_3d(const CUtensorMap* map, std::uint32_t smem_src,
                                                  std::int32_t inner_coord, std::int32_t row_coord,
                                                  std::int32_t plane_coord) {
  asm volatile(
      "cp.reduce.async.bulk.tensor.3d.global.shared::cta.add.tile.bulk_group [%0, {%2, %3, %4}], "
      "[%1];\n" ::"l"(reinterpret_cast<std::uint64_t>(map)),
      "r"(smem_src), "r"(inner_coord), "r"(row_coord), "r"(plane_coord)
      : "memory");
}

/// The 4-D form of tma_reduce_add_2d (same section), at the box tma_store_4d addresses (chapter
/// 8's grouped forward with a float D and accumulate, through D's ragged-rows view: rows past the
/// bound are out of bounds, and a reduce skips them as a store does).
__device__ __forceinline__ void tma_reduce_add_4d(const CUtensorMap* map, std::uint32_t smem_src,
                                                  std::int32_t inner_coord, std::int32_t c1,
                                                  std::int32_t c2, std::int32_t c3) {
  asm volatile(
      "cp.reduce.async.bulk.tensor.4d.global.shared::cta.add.tile.bulk_group "
      "[%0, {%2, %3, %4, %5}], [%1];\n" ::"l"(reinterpret_cast<std::uint64_t>(map)),
      "r"(smem_src), "r"(inner_coord), "r"(c1), "r"(c2), "r"(c3)
      : "memory");
}

/// cp.async.bulk.commit_group: closes the group of preceding bulk stores of this thread.
__device__ __forceinline__ void tma_store_commit() {
  asm volatile("cp.async.bulk.commit_group;\n" ::: "memory");
}

/// cp.async.bulk.wait_group.read N: waits until at most `pending` store groups still read shared
/// memory (their source buffers may be reused after this).
template <int pending>
__device__ __forceinline__ void tma_store_wait_read() {
  asm volatile("cp.async.bulk.wait_group.read %0;\n" ::"n"(pending) : "memory");
}

/// cp.async.bulk.wait_group N (without .read): waits until at most `pending` store groups are
/// still in flight at all, i.e. their writes to global memory are done (before the CTA exits).
template <int pending>
__device__ __forceinline__ void tma_store_wait_all() {
  asm volatile("cp.async.bulk.wait_group %0;\n" ::"n"(pending) : "memory");
}

/// prefetch.tensormap: pulls the 128-byte descriptor into the cache ahead of the first copy
/// (the map is in kernel-parameter space; a generic address of it is allowed).
__device__ __forceinline__ void tma_prefetch_descriptor(const CUtensorMap* map) {
  asm volatile("prefetch.tensormap [%0];\n" ::"l"(reinterpret_cast<std::uint64_t>(map))
               : "memory");
}

}  // namespace fp8gemm::ptx
