#include "kernels.hpp"

namespace fp8gemm::ch07 {

const std::vector<engine::KernelInfo>& kernels() {
  static const std::vector<engine::KernelInfo> all = [] {
    std::vector<engine::KernelInfo> v;
    add_kernels_large(v);
    add_kernels_narrow(v);
    add_kernels_small(v);
    add_kernels_loops(v);
    add_kernels_wait(v);
    add_kernels_timeline(v);
    return v;
  }();
  return all;
}

const engine::KernelInfo& kernel_named(const std::string& name) {
  return engine::find_kernel(kernels(), name, "fp8gemm::ch07");
}

}  // namespace fp8gemm::ch07
