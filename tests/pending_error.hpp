// The GPU tests' helper for the reliability rule's pending-error case (docs/contract.md, "Errors
// that are not the caller's arguments"): an earlier, unrelated CUDA error must be reported as
// such, nothing launched, and left pending for its owner.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <stdexcept>
#include <string>

namespace fp8gemm::gpu_test {

/// What `call()` did with an earlier error pending: the error left pending before it (a failed
/// cudaMalloc of 2^62 bytes: cudaErrorMemoryAllocation, not sticky) and the message of the
/// std::runtime_error it threw ("" if it threw none). The caller checks the message ("from an
/// earlier call", the entry point's name) and that cudaGetLastError() still returns `error`
/// (which also clears it), and that nothing was launched. Synchronise before: the error must be
/// the only one pending.
struct PendingErrorRun {
  cudaError_t error = cudaSuccess;
  std::string message;
};

template <class F>
PendingErrorRun run_with_pending_error(F&& call) {
  PendingErrorRun r;
  void* p = nullptr;
  r.error = cudaMalloc(&p, std::size_t(1) << 62);
  try {
    call();
  } catch (const std::runtime_error& e) {
    r.message = e.what();
  }
  return r;
}

}  // namespace fp8gemm::gpu_test
