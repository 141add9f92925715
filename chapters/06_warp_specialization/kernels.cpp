#include "kernels.hpp"

#include <stdexcept>

namespace fp8gemm::ch06 {

const std::vector<engine::KernelInfo>& kernels() {
  static const std::vector<engine::KernelInfo> all = [] {
    std::vector<engine::KernelInfo> v;
    add_kernels_large(v);
    add_kernels_wide(v);
    add_kernels_small(v);
    add_kernels_three(v);
    add_kernels_ablation(v);
    return v;
  }();
  return all;
}

const engine::KernelInfo& kernel_named(const std::string& name) {
  for (const auto& k : kernels())
    if (k.name == name) return k;
  std::string names;
  for (const auto& k : kernels()) names += (names.empty() ? "" : ", ") + k.name;
  throw std::invalid_argument("fp8gemm::ch06: no kernel named '" + name + "'; there are: " + names);
}

}  // namespace fp8gemm::ch06
