// Thread-block clusters (sm_90+): the CTA's rank in its cluster, mapping a shared-memory address
// to the same offset in another CTA of the cluster, and the cluster-wide barrier.
// PTX ISA 9.0: special registers %cluster_ctarank / %cluster_nctarank (§10 "Special Registers"),
// mapa (§9.7.9.22 "Data Movement and Conversion Instructions: mapa"), barrier.cluster
// (§9.7.13.3 "Parallel Synchronization and Communication Instructions: barrier.cluster").
// (Section numbers drift between ISA versions; the titles do not.)
#pragma once

#include <cstdint>

namespace fp8gemm::ptx {

/// This CTA's rank in its cluster (0 .. cluster size - 1).
__device__ __forceinline__ std::uint32_t cluster_cta_rank() {
  std::uint32_t r;
  asm volatile("mov.u32 %0, %%cluster_ctarank;\n" : "=r"(r));
  return r;
}

/// How many CTAs the cluster has (1 when the kernel was launched without clusters).
__device__ __forceinline__ std::uint32_t cluster_num_ctas() {
  std::uint32_t n;
  asm volatile("mov.u32 %0, %%cluster_nctarank;\n" : "=r"(n));
  return n;
}

/// The .shared::cluster address of the same offset as `smem_addr` (a .shared::cta address of this
/// CTA) in the CTA of rank `cta_rank`.
__device__ __forceinline__ std::uint32_t map_shared_to_cta(std::uint32_t smem_addr,
                                                           std::uint32_t cta_rank) {
  std::uint32_t r;
  asm volatile("mapa.shared::cluster.u32 %0, %1, %2;\n" : "=r"(r) : "r"(smem_addr), "r"(cta_rank));
  return r;
}

/// barrier.cluster.arrive.release + barrier.cluster.wait.acquire: every thread of every CTA of the
/// cluster (all must execute it); orders shared-memory writes (e.g. mbarrier.init) before the
/// other CTAs' later accesses to them.
__device__ __forceinline__ void cluster_sync() {
  asm volatile("barrier.cluster.arrive.release.aligned;\nbarrier.cluster.wait.acquire.aligned;\n" :::
                   "memory");
}

}  // namespace fp8gemm::ptx
