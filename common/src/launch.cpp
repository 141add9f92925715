#include "common/launch.hpp"

#include <cuda.h>
#include <cudaTypedefs.h>  // PFN_cuMemGetAddressRange_v3020

#include <mutex>
#include <set>
#include <sstream>
#include <stdexcept>
#include <string>
#include <utility>

#include "common/cuda.hpp"

namespace fp8gemm {

void* driver_function(const char* symbol, unsigned int abi_version) {
  void* fn = nullptr;
  cudaDriverEntryPointQueryResult query = cudaDriverEntryPointSymbolNotFound;
  const cudaError_t err =
      cudaGetDriverEntryPointByVersion(symbol, &fn, abi_version, cudaEnableDefault, &query);
  if (err != cudaSuccess || query != cudaDriverEntryPointSuccess || fn == nullptr) {
    if (err != cudaSuccess) cudaGetLastError();  // not sticky: do not leave it behind
    throw std::runtime_error(std::string("fp8gemm: driver entry point ") + symbol + " (ABI " +
                             std::to_string(abi_version) + ") not available: " +
                             cudaGetErrorName(err) + ", query result " +
                             std::to_string(int(query)) +
                             " (is an NVIDIA driver >= 12.0 installed?)");
  }
  return fn;
}

int ensure_context_current() {
  int device = 0;
  FP8GEMM_CUDA_CHECK(cudaGetDevice(&device));
  // Since CUDA 12.0 cudaSetDevice initialises the device's primary context and makes it current
  // on this thread at once (before, that happened lazily at the first call that needed it, and a
  // driver-API call made first from a new thread found no context).
  FP8GEMM_CUDA_CHECK(cudaSetDevice(device));
  return device;
}

PointerInfo query_pointer(const void* p) {
  PointerInfo info;
  cudaPointerAttributes attr{};
  const cudaError_t err = cudaPointerGetAttributes(&attr, p);
  if (err != cudaSuccess) {
    // cudaErrorInvalidValue: a pointer the runtime has never heard of (older runtimes said so
    // for host memory); anything else means the context is broken.
    cudaGetLastError();
    if (err != cudaErrorInvalidValue)
      throw std::runtime_error(std::string("fp8gemm: cudaPointerGetAttributes failed: ") +
                               cudaGetErrorName(err) + " (" + cudaGetErrorString(err) + ")");
    return info;
  }
  switch (attr.type) {
    case cudaMemoryTypeDevice: info.kind = MemoryKind::device; info.device = attr.device; break;
    case cudaMemoryTypeManaged: info.kind = MemoryKind::managed; break;
    case cudaMemoryTypeHost: info.kind = MemoryKind::host_pinned; break;
    default: info.kind = MemoryKind::host_pageable; break;
  }
  if (info.kind == MemoryKind::device || info.kind == MemoryKind::managed) {
    static const auto range = reinterpret_cast<PFN_cuMemGetAddressRange_v3020>(
        driver_function("cuMemGetAddressRange", 3020));
    CUdeviceptr base = 0;
    size_t size = 0;
    if (range(&base, &size, CUdeviceptr(reinterpret_cast<std::uintptr_t>(p))) == CUDA_SUCCESS) {
      info.alloc_begin = std::uintptr_t(base);
      info.alloc_bytes = size;
    }  // else: unknown extent (driver-API errors do not touch the runtime's error state)
  }
  return info;
}

namespace {
std::string hex(const void* p) {
  std::ostringstream s;
  s << p;
  return s.str();
}
}  // namespace

void require_device_accessible(const void* p, std::size_t bytes, const char* who,
                               const char* name) {
  const int current = ensure_context_current();
  const PointerInfo info = query_pointer(p);
  auto fail = [&](const std::string& why) {
    throw std::invalid_argument(std::string(who) + ": " + name + " = " + hex(p) + " " + why);
  };
  switch (info.kind) {
    case MemoryKind::host_pageable:
      fail("is host memory (malloc, new or the stack) that the GPU cannot read: pass device "
           "memory (cudaMalloc) or managed memory (cudaMallocManaged)");
    case MemoryKind::host_pinned:
      fail("is pinned host memory (cudaMallocHost / cudaHostRegister): the kernels would read it "
           "over PCIe; copy it to device memory (cudaMalloc) first");
    case MemoryKind::device:
      if (info.device != current)
        fail("is memory of device " + std::to_string(info.device) + " but the current device is " +
             std::to_string(current) + ": call cudaSetDevice(" + std::to_string(info.device) +
             ") first, or copy the tensor");
      break;
    case MemoryKind::managed:
      break;
  }
  if (info.alloc_bytes > 0) {
    const std::uintptr_t begin = reinterpret_cast<std::uintptr_t>(p);
    const std::uintptr_t end_alloc = info.alloc_begin + info.alloc_bytes;
    if (begin + bytes > end_alloc || begin + bytes < begin)
      fail("has " + std::to_string(end_alloc - begin) + " bytes left in its allocation but the "
           "call reads or writes " + std::to_string(bytes) + " bytes from it");
  }
}

void check_gemm_pointers(const GemmArgs& a, const GemmRequirements& req) {
  // Extents in bytes, as validate_gemm() checked them (no overflow).
  const GemmExtents e = gemm_extents(a);
  require_device_accessible(a.A, e.a, req.who, "A");
  require_device_accessible(a.B, e.b, req.who, "B");
  require_device_accessible(a.D, e.d, req.who, "D");
  require_device_accessible(a.scale_a, e.scale_a, req.who, "scale_a");
  require_device_accessible(a.scale_b, e.scale_b, req.who, "scale_b");
}

void prepare_kernel(const void* kernel, const char* kernel_name, const char* built_for,
                    int dynamic_smem_bytes) {
  static std::mutex mutex;
  static std::set<std::pair<const void*, int>> prepared;  // (kernel, device)
  const int device = ensure_context_current();
  std::lock_guard<std::mutex> lock(mutex);
  if (prepared.count({kernel, device})) return;
  require_kernel_image(kernel, kernel_name, built_for);
  if (dynamic_smem_bytes > 48 * 1024)
    FP8GEMM_CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                            dynamic_smem_bytes));
  prepared.insert({kernel, device});
}

void require_no_pending_error(const char* who) {
  const cudaError_t pending = cudaPeekAtLastError();
  if (pending == cudaSuccess) return;
  throw std::runtime_error(
      std::string(who) + ": not launched: a CUDA error from an earlier call is pending: " +
      cudaGetErrorName(pending) + " (" + cudaGetErrorString(pending) +
      "). It was not caused by this call. If it is a sticky error (illegal or misaligned address, "
      "launch failure) the CUDA context is unusable until the process restarts; otherwise clear "
      "it with cudaGetLastError()");
}

void require_same_device(int plan_device, int current, const char* who) {
  if (current == plan_device) return;
  throw std::invalid_argument(
      std::string(who) + ": this plan was built on device " + std::to_string(plan_device) +
      ", but device " + std::to_string(current) +
      " is current; a plan runs only on the device it was built on (its kernel, grid, tensor "
      "maps and workspaces are that device's): make device " + std::to_string(plan_device) +
      " current (cudaSetDevice) with a stream of that device, or build a plan on device " +
      std::to_string(current));
}

void require_plan_device(int plan_device, const char* who) {
  int current = -1;
  const cudaError_t e = cudaGetDevice(&current);
  if (e != cudaSuccess)  // named here, rather than reported later as an earlier call's error
    throw std::runtime_error(std::string(who) + ": cannot query the current device (cudaGetDevice: " +
                             cudaGetErrorName(e) + ")");
  require_same_device(plan_device, current, who);
}

void require_ready_to_launch(int plan_device, const char* who) {
  require_plan_device(plan_device, who);
  require_no_pending_error(who);
}

TileGrid prepare_gemm_launch(const GemmArgs& args, const GemmRequirements& req,
                             std::int64_t block_m, std::int64_t block_n, const void* kernel,
                             const char* kernel_name, const char* built_for,
                             int dynamic_smem_bytes) {
  validate_gemm(args, req);
  const TileGrid grid = tile_grid(args.M, args.N, block_m, block_n, req.who);
  check_gemm_pointers(args, req);
  prepare_kernel(kernel, kernel_name, built_for, dynamic_smem_bytes);
  require_no_pending_error(req.who);
  return grid;
}

void check_launch(const char* who) {
  const cudaError_t err = cudaGetLastError();
  if (err != cudaSuccess)
    throw std::runtime_error(std::string(who) + ": kernel launch failed: " +
                             cudaGetErrorName(err) + " (" + cudaGetErrorString(err) + ")");
}

void throw_if_launch_failed(cudaError_t err, const std::string& who, const std::string& what) {
  if (err == cudaSuccess) return;
  cudaGetLastError();
  throw std::runtime_error(who + ": launch of " + what + " failed: " + cudaGetErrorName(err) +
                           " (" + cudaGetErrorString(err) + ")");
}

}  // namespace fp8gemm
