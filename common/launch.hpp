// The shared launch path: what every entry point does between validating its arguments and
// launching its kernel, so that the reliability rule holds everywhere (docs/contract.md):
//
//   a call that requirements() accepts runs correctly; a call it refuses throws
//   std::invalid_argument naming the argument before any GPU work; nothing leaves a sticky CUDA
//   error.
//
// The order inside an entry point (chapters 1-5 per call, through prepare_gemm_launch();
// chapter 6 on in the plan):
//   1. validate_gemm(args, requirements())       pure C++: shapes, alignment, overlap  (validate.hpp)
//      tile_grid(M, N, block_m, block_n, who)    pure C++: the grid in 64-bit arithmetic, at most
//                                                2^31 - 1 blocks
//   2. check_gemm_pointers(args, requirements()) CUDA queries, no GPU work: every pointer is
//                                                memory the kernel can read (or write), on the
//                                                current device, and large enough
//   3. prepare_kernel(...)                       once per kernel and device: the machine code
//                                                exists for this GPU; shared-memory opt-in
//   4. require_no_pending_error(who)             an earlier, unrelated CUDA error is reported as
//                                                such, not as this launch's
//   5. launch, then check_launch(who)
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <string>

#include "common/validate.hpp"

namespace fp8gemm {

/// A driver-API function looked up through the runtime (which loads libcuda at run time), with
/// the ABI version whose prototype the caller compiles against: nothing links against libcuda.
/// Throws std::runtime_error naming the symbol when the driver lacks it.
void* driver_function(const char* symbol, unsigned int abi_version);

/// Makes the CUDA runtime's primary context of the current device current on the calling thread
/// (a worker thread that has made no runtime call yet has none, and driver-API calls such as
/// cuTensorMapEncodeTiled then fail with CUDA_ERROR_INVALID_CONTEXT). Returns the device.
/// Throws std::runtime_error if there is no usable device.
int ensure_context_current();

/// What kind of memory a pointer is, as the kernels see it.
enum class MemoryKind {
  device,       ///< cudaMalloc / cudaMallocAsync memory of some device
  managed,      ///< cudaMallocManaged: readable and writable by the kernels of any device
  host_pinned,  ///< cudaMallocHost / cudaHostRegister: refused (see require_device_accessible)
  host_pageable,///< plain malloc / new / stack: the GPU cannot read it at all
};

struct PointerInfo {
  MemoryKind kind = MemoryKind::host_pageable;
  int device = -1;                 ///< the owning device for device memory, else -1
  std::uintptr_t alloc_begin = 0;  ///< the allocation holding the pointer, when the driver knows
  std::size_t alloc_bytes = 0;     ///< it (0: unknown, no extent check)
};

/// Asks the runtime (cudaPointerGetAttributes) and the driver (cuMemGetAddressRange) what `p` is.
/// Never leaves a CUDA error behind; throws std::runtime_error only if the context is unusable.
PointerInfo query_pointer(const void* p);

/// Throws std::invalid_argument naming `name` (prefixed by `who`) unless the `bytes` bytes at `p`
/// are memory the kernels can access on the current device:
///  - device memory of the current device: accepted (memory of another device is refused, even
///    with peer access: TMA and the kernels assume local memory);
///  - managed memory: accepted (the driver migrates it on first touch; slow, but correct);
///  - pinned host memory (cudaMallocHost, cudaHostRegister): refused. Kernels could read it over
///    PCIe through the unified address space, but TMA over host memory is not something we test,
///    and a GEMM reading its operands over PCIe is never what the caller wants: copy it first;
///  - pageable host memory (malloc, new, the stack): refused; the GPU would fault.
/// When the driver knows the allocation, the whole range [p, p + bytes) must lie inside it.
void require_device_accessible(const void* p, std::size_t bytes, const char* who,
                               const char* name);

/// require_device_accessible() for A, B, D, scale_a and scale_b of a GEMM call, each with the
/// extent the kernel touches (A: ((M-1) lda + K) bytes; B likewise; D: ((M-1) ldd + N) bf16;
/// scales: as many floats as their recipe needs). Call it after validate_gemm().
void check_gemm_pointers(const GemmArgs& args, const GemmRequirements& req);

/// Once per kernel and device (thread-safe): require_kernel_image() (the machine code exists
/// for this GPU, with a clear message otherwise), then, when the kernel needs more than the
/// default 48 KiB of dynamic shared memory, opt in to `dynamic_smem_bytes`
/// (cudaFuncAttributeMaxDynamicSharedMemorySize, a per-device setting). Cheap after the first
/// call on a device (a lookup under a mutex).
void prepare_kernel(const void* kernel, const char* kernel_name, const char* built_for,
                    int dynamic_smem_bytes);

/// Throws std::runtime_error if a CUDA error is already pending on this thread before we launch
/// (cudaPeekAtLastError), saying that it comes from an earlier call and that a sticky error
/// (illegal address, misaligned address, ...) leaves the context unusable. So check_launch()
/// afterwards reports only what this launch caused.
void require_no_pending_error(const char* who);

/// A plan belongs to the device that was current when it was built: its kernel was prepared
/// there (the shared-memory opt-in is per device), its grid sized for that GPU's SMs, its tensor
/// maps and workspaces point at that device's memory. Throws std::invalid_argument "<who>: this
/// plan was built on device P, but device C is current; ..." unless `current` is
/// `plan_device`. Pure C++ (common_test_validate calls it with both numbers).
void require_same_device(int plan_device, int current, const char* who);

/// run()'s and rebind()'s device check, before anything is launched or checked against the
/// current device: require_same_device(plan_device, the calling thread's current device, who).
/// One cudaGetDevice (a thread-local read, well under a microsecond); std::runtime_error if it
/// fails.
void require_plan_device(int plan_device, const char* who);

/// A plan's checks before its first launch of a run(): require_plan_device(), then
/// require_no_pending_error(). For the run() paths that launch a helper (a conversion) before
/// their engine plan's launch, which makes the same two checks (EnginePlan::launch).
void require_ready_to_launch(int plan_device, const char* who);

/// Steps 1-4 above for a kernel with a one-dimensional grid of block_m x block_n output tiles:
/// validate_gemm(), tile_grid(), check_gemm_pointers(), prepare_kernel(),
/// require_no_pending_error(). Returns the grid; the caller launches `grid.blocks` blocks, passes
/// grid.tiles_m / grid.tiles_n to the kernel, then calls check_launch(req.who). Throws
/// std::invalid_argument for a call the kernel refuses (nothing has touched the GPU then) and
/// std::runtime_error for an unusable GPU or a pending error.
TileGrid prepare_gemm_launch(const GemmArgs& args, const GemmRequirements& req,
                             std::int64_t block_m, std::int64_t block_n, const void* kernel,
                             const char* kernel_name, const char* built_for,
                             int dynamic_smem_bytes);

/// After a launch: throws std::runtime_error naming `who` if the launch failed
/// (cudaGetLastError: bad configuration, too much shared memory, no kernel image, ...).
void check_launch(const char* who);

/// The status a cudaLaunchKernel / cudaLaunchKernelExC call returned: if it is an error, clears
/// it (a launch-configuration error is not sticky; report it, leave none) and throws
/// std::runtime_error "<who>: launch of <what> failed: <name> (<description>)".
void throw_if_launch_failed(cudaError_t err, const std::string& who, const std::string& what);

}  // namespace fp8gemm
