// The engine kernels chapter 6 compiles: each a KernelConfig instance (common/engine/config.cuh)
// in fast and promoted accumulation. kernels() lists them; the per-shape table (ws_gemm.cpp) and
// the tuning sweep pick from this list by name.
#pragma once

#include <string>
#include <vector>

#include "common/engine/plan.hpp"

namespace fp8gemm::ch06 {

/// Every compiled kernel, in a fixed order (names are unique, e.g. "128x256_s4_c2x1_fast_tma_b2").
const std::vector<engine::KernelInfo>& kernels();

/// The kernel with this name; throws std::invalid_argument listing the names if there is none.
const engine::KernelInfo& kernel_named(const std::string& name);

// One registration function per source file (the instances are spread over several files so that
// they compile in parallel).
void add_kernels_large(std::vector<engine::KernelInfo>& out);
void add_kernels_wide(std::vector<engine::KernelInfo>& out);
void add_kernels_small(std::vector<engine::KernelInfo>& out);
void add_kernels_loops(std::vector<engine::KernelInfo>& out);
void add_kernels_three(std::vector<engine::KernelInfo>& out);
void add_kernels_ablation(std::vector<engine::KernelInfo>& out);
void add_kernels_pingpong(std::vector<engine::KernelInfo>& out);
void add_kernels_wait(std::vector<engine::KernelInfo>& out);

}  // namespace fp8gemm::ch06
