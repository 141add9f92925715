// The library's architecture rules (dispatch.hpp): which compute capabilities run which kernels.
// The decisions are pure functions of DeviceArch, so they are tested without a GPU; only
// current_device_arch() asks the driver.
#include <cuda_runtime.h>

#include <map>
#include <mutex>
#include <stdexcept>
#include <string>

#include "fp8gemm/dispatch.hpp"

namespace fp8gemm {

namespace {

std::string describe(const DeviceArch& a) {
  return "GPU " + std::to_string(a.device) + " is " + (a.name.empty() ? "?" : a.name) +
         " (compute capability " + std::to_string(a.major) + "." + std::to_string(a.minor) + ")";
}

}  // namespace

DeviceArch current_device_arch() {
  DeviceArch a;
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess || count == 0) {
    cudaGetLastError();  // no GPU / no driver: not an error of the caller's
    return a;
  }
  int device = 0;
  if (cudaGetDevice(&device) != cudaSuccess) {
    cudaGetLastError();
    return a;
  }
  // Properties never change for a device; cudaGetDeviceProperties is slow (milliseconds on some
  // drivers), so each device is asked once.
  static std::mutex mutex;
  static std::map<int, DeviceArch> cache;
  std::lock_guard<std::mutex> lock(mutex);
  const auto it = cache.find(device);
  if (it != cache.end()) return it->second;
  cudaDeviceProp p{};
  if (cudaGetDeviceProperties(&p, device) != cudaSuccess) {
    cudaGetLastError();
    return a;
  }
  a.device = device;
  a.major = p.major;
  a.minor = p.minor;
  a.sm_count = p.multiProcessorCount;
  a.name = p.name;
  cache[device] = a;
  return a;
}

void require_hopper(const DeviceArch& a, const char* who) {
  if (a.device < 0 || (a.major == 9 && a.minor == 0)) return;
  std::string hint;
  if (a.major == 10 || a.major == 11 || a.major == 12)
    hint =
        "; on Blackwell, fp8gemm::MxPlan (MXFP8) has an sm_100a kernel for compute "
        "capability 10.0";
  throw std::runtime_error(std::string(who) + ": " + describe(a) +
                           "; this entry point's kernels are sm_90a code (wgmma, setmaxnreg, TMA "
                           "multicast), which runs only on compute capability 9.0 (H100, H200, "
                           "H800, GH200)" +
                           hint);
}

const char* to_string(MxKernelArch a) {
  return a == MxKernelArch::hopper_sm90a ? "hopper_sm90a" : "blackwell_sm100a";
}

MxKernelArch mx_kernel_arch(const DeviceArch& a, bool sm100_compiled) {
  constexpr const char* kWho = "fp8gemm::MxPlan";
  constexpr const char* kSupported =
      "MXFP8 runs on compute capability 9.0 (Hopper: H100, H200, H800, GH200; chapter 9's "
      "sm_90a kernels) and 10.0 (B200, GB200; chapter 9's sm_100a kernel, in builds with "
      "FP8GEMM_BUILD_SM100=ON)";
  if (a.device < 0)
    throw std::runtime_error(std::string(kWho) + ": no CUDA GPU present; " + kSupported);
  if (a.major == 9 && a.minor == 0) return MxKernelArch::hopper_sm90a;
  if (a.major == 10 && a.minor == 0) {
    if (!sm100_compiled)
      throw std::runtime_error(std::string(kWho) + ": " + describe(a) +
                               ", but this build has no sm_100a code: configure with "
                               "-DFP8GEMM_BUILD_SM100=ON (the `full` preset, nvcc >= 12.8)");
    return MxKernelArch::blackwell_sm100a;
  }
  std::string why;
  if (a.major == 10)
    why =
        "; sm_100a code (tcgen05, tensor memory) runs on compute capability 10.0 only, and no "
        "kernel for 10." +
        std::to_string(a.minor) + " is built";
  throw std::runtime_error(std::string(kWho) + ": " + describe(a) + why + "; " + kSupported);
}

}  // namespace fp8gemm
