// The engine kernels chapter 7 compiles: KernelConfig instances (common/engine/config.cuh) with
// the block-scaled math policy (common/engine/block_scaled.cuh). kernels() lists them; the
// per-shape table (bs_gemm.cpp) and the tuning sweep pick from it by name.
#pragma once

#include <string>
#include <vector>

#include "common/engine/plan.hpp"

namespace fp8gemm::ch07 {

/// Every compiled kernel, in a fixed order (names unique, e.g. "256x128_s3_c1x2_promoted_tma_b4").
const std::vector<engine::KernelInfo>& kernels();

/// The kernel with this name; throws std::invalid_argument listing the names if there is none.
const engine::KernelInfo& kernel_named(const std::string& name);

// One registration function per source file (compiled in parallel).
void add_kernels_large(std::vector<engine::KernelInfo>& out);
void add_kernels_narrow(std::vector<engine::KernelInfo>& out);
void add_kernels_small(std::vector<engine::KernelInfo>& out);
void add_kernels_loops(std::vector<engine::KernelInfo>& out);
void add_kernels_wait(std::vector<engine::KernelInfo>& out);
void add_kernels_timeline(std::vector<engine::KernelInfo>& out);

/// The "_timeline" kernels' stamp buffers (common/engine/timeline.cuh; null: no stamps): the ring's,
/// `capacity` words per CTA and observer, and the consumers' per tile (3 per tile and warpgroup,
/// `tiles_n` tiles along N), set for every such kernel at once; ch07_timeline (timeline.cu) uses
/// them. Not for concurrent runs.
void set_timeline_buffer(unsigned long long* data, int capacity, unsigned long long* tiles = nullptr,
                         int tiles_n = 0);

}  // namespace fp8gemm::ch07
