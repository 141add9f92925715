// Shared-memory transaction barriers (mbarrier) and the fences that go with them (sm_90+).
// PTX ISA 9.0, §9.7.13.15 "Parallel Synchronization and Communication Instructions: mbarrier":
//   mbarrier.init (§9.7.13.15.9), mbarrier.arrive / arrive.expect_tx (§9.7.13.15.13, with
//   the expect-tx operation of §9.7.13.15.11), mbarrier.test_wait / mbarrier.try_wait
//   (§9.7.13.15.16); and §9.7.13.4 "Parallel Synchronization and Communication Instructions:
//   membar / fence" for fence.mbarrier_init and fence.proxy.async.
//
// An mbarrier is one 8-byte object in shared memory (8-byte aligned). It has a phase bit, a
// pending-arrival count (reset to `arrive_count` at every phase change) and a transaction count
// (tx) in bytes. A phase completes when every expected thread has arrived AND tx is back to zero:
// arrive.expect_tx adds bytes to tx, and a TMA copy (cp.async.bulk.tensor ...
// .mbarrier::complete_tx::bytes, see tma.cuh) subtracts the bytes it writes when they land. So a
// ring stage "full" barrier with arrive_count 1 completes exactly when the producer has arrived
// and all of that stage's bytes are in shared memory.
//
// Waiting is by phase parity: the k-th completion of a barrier (k = 0, 1, ...) ends phase k, whose
// parity is k & 1; mbarrier_wait(bar, k & 1) returns once that phase has completed. A freshly
// initialised barrier is in phase 0, so waiting for parity 1 on it returns at once (the usual
// trick for "empty" barriers whose first wait must not block).
//
// Every function takes the barrier's .shared address (ptx::smem_u32(&bar), smem.cuh).
#pragma once

#include <cstdint>

namespace fp8gemm::ptx {

/// mbarrier.init.shared::cta.b64: phase 0, `arrive_count` pending arrivals, tx = 0.
/// One thread; make it visible with fence_barrier_init() + a CTA barrier before any use.
__device__ __forceinline__ void mbarrier_init(std::uint32_t bar, std::uint32_t arrive_count) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" ::"r"(bar), "r"(arrive_count)
               : "memory");
}

/// mbarrier.arrive.expect_tx.shared::cta.b64: adds `tx_bytes` to the expected transaction count,
/// then arrives (release, CTA scope). Issue it before (or with) the TMA copies it accounts for.
__device__ __forceinline__ void mbarrier_arrive_expect_tx(std::uint32_t bar,
                                                          std::uint32_t tx_bytes) {
  asm volatile(
      "{\n"
      ".reg .b64 state;\n"
      "mbarrier.arrive.expect_tx.shared::cta.b64 state, [%0], %1;\n"
      "}\n" ::"r"(bar),
      "r"(tx_bytes)
      : "memory");
}

/// mbarrier.arrive.shared::cta.b64: one arrival (release, CTA scope), e.g. a consumer thread
/// saying "I have finished reading this stage".
__device__ __forceinline__ void mbarrier_arrive(std::uint32_t bar) {
  asm volatile(
      "{\n"
      ".reg .b64 state;\n"
      "mbarrier.arrive.shared::cta.b64 state, [%0];\n"
      "}\n" ::"r"(bar)
      : "memory");
}

/// mbarrier.arrive.shared::cluster.b64: one arrival on a barrier of another CTA of the cluster
/// (`cluster_bar` from map_shared_to_cta(), cluster.cuh), e.g. a consumer telling the peer CTA's
/// producer that its multicast may overwrite this CTA's stage. Default semantics (release at CTA
/// scope), as CUTLASS's ClusterBarrier::arrive(cta_id): the consumer's reads of the stage were
/// made by wgmma and are complete once wgmma.wait_group returned, so nothing needs ordering at
/// cluster scope. Measured on the H200: the `.release.cluster` form made every consumer warp wait
/// on a cluster-scope memory barrier each K block (ncu: 39% of stall cycles "membar"), and the
/// 2-CTA multicast kernel ran 15% slower than without a cluster.
__device__ __forceinline__ void mbarrier_arrive_cluster(std::uint32_t cluster_bar) {
  asm volatile("mbarrier.arrive.shared::cluster.b64 _, [%0];\n" ::"r"(cluster_bar) : "memory");
}

/// Blocks until the phase with parity `phase_parity` has completed (acquire, CTA scope): loops on
/// mbarrier.try_wait.parity, which itself suspends the thread for a system-dependent time before
/// returning false, so the loop does not hammer shared memory.
__device__ __forceinline__ void mbarrier_wait(std::uint32_t bar, std::uint32_t phase_parity) {
  asm volatile(
      "{\n"
      ".reg .pred done;\n"
      "WAIT_%=:\n"
      "mbarrier.try_wait.parity.shared::cta.b64 done, [%0], %1;\n"
      "@!done bra WAIT_%=;\n"
      "}\n" ::"r"(bar),
      "r"(phase_parity)
      : "memory");
}

/// The same wait with try_wait's suspendTimeHint operand (§9.7.13.15.16: "the time limit, in
/// nanoseconds, that may be used for the time limit instead of the system-dependent limit"), set
/// to 10 ms as CUTLASS's ClusterBarrier::wait and DeepGEMM's waits set it (0x989680). A waiting
/// thread then sleeps until the phase completes (ptxas: TRYWAIT, then NANOSLEEP.SYNCS 0x989680 and
/// a re-check on the slow path) instead of re-issuing TRYWAIT in a loop whenever the
/// system-dependent limit runs out (mbarrier_wait: TRYWAIT and a branch back, nothing else). The
/// engine's waits take this form by default (engine::BarrierWait, chapter 6's NOTEBOOK.md:
/// "Waits that sleep").
__device__ __forceinline__ void mbarrier_wait_sleep(std::uint32_t bar,
                                                    std::uint32_t phase_parity) {
  asm volatile(
      "{\n"
      ".reg .pred done;\n"
      "WAIT_%=:\n"
      "mbarrier.try_wait.parity.shared::cta.b64 done, [%0], %1, %2;\n"
      "@!done bra WAIT_%=;\n"
      "}\n" ::"r"(bar),
      "r"(phase_parity), "r"(0x989680u)
      : "memory");
}

/// fence.mbarrier_init.release.cluster: makes preceding mbarrier.init visible to the async proxy
/// (TMA) and to other CTAs of the cluster. Follow it with __syncthreads() (or a cluster barrier).
__device__ __forceinline__ void fence_barrier_init() {
  asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
}

/// fence.proxy.async.shared::cta: orders this thread's generic-proxy shared-memory accesses with
/// later async-proxy accesses (TMA, wgmma operand reads), e.g. after writing shared memory with
/// st.shared that a TMA store or a wgmma will then read.
__device__ __forceinline__ void fence_proxy_async_shared() {
  asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
}

}  // namespace fp8gemm::ptx
