// Chapter 7's split-K path (Options::splits >= 1; bs_gemm.hpp), internal to the chapter's plan:
// one launch whose units write FP32 partial tiles to a workspace [S][M][N] owned by the plan, and
// whose last unit per tile sums the S partials in a fixed order into D (common/engine/split_k.cuh
// and split_k.hpp: the counters, the order, why nothing waits).
#pragma once

#include <cuda_runtime.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "common/cuda.hpp"
#include "common/engine/plan.hpp"
#include "common/engine/split_k.hpp"
#include "common/validate.hpp"

namespace fp8gemm::ch07 {

/// The split-K GEMM kernels (names end in "_splitk"). Not in kernels(): they take SplitKParams
/// and write FP32 partial tiles, so only a split-K plan may launch them.
const std::vector<engine::KernelInfo>& splitk_kernels();
/// The split-K kernel named `name`; throws std::invalid_argument listing them otherwise.
const engine::KernelInfo& splitk_kernel_named(const std::string& name);
/// The split-K kernel a plan uses when Options::kernel is empty: BlockM 64 for M <= 64, else
/// 128 (both 64-row halves in one CTA, B read once); BlockN 32 where that gives at most 80 output
/// tiles (64 x 2112, 128 x 2112: 66 tiles, so S = 2 fills 132 SMs), else 64 (64 x 4096,
/// 128 x 4096: 64 tiles).
const engine::KernelInfo& choose_splitk_kernel(std::int64_t M, std::int64_t N);
void add_kernels_splitk(std::vector<engine::KernelInfo>& out);

/// Refuses a bad Options::splits (std::invalid_argument naming "splits"), pure C++: splits < 0;
/// splits > ceil(K / 128) (a split without a K block); a unit space or workspace row index past
/// the kernel's int arithmetic (tiles x splits > 2^30, splits x M > 2^30). 0 (no split) passes.
void validate_splits(int splits, std::int64_t M, std::int64_t N, std::int64_t K, int block_m,
                     int block_n, const char* who);

/// The split-K part of a chapter-7 plan: workspace, counters, engine plan of the split-K kernel.
/// One plan's run() must not overlap itself (two streams): its launches share the workspace and
/// the counters.
class SplitKPart {
 public:
  /// `user`: the caller's call (validated by validate_gemm already); `f32`: Output::f32.
  /// Checks the caller's pointers (check_gemm_pointers), allocates the workspace and the zeroed
  /// counters, builds the engine plan with D = the workspace (ldd = N, FP32) and a grid sized for
  /// tiles x splits, and points the kernel's output at the caller's D.
  SplitKPart(const engine::KernelInfo& kernel, const GemmArgs& user, const GemmRequirements& req,
             int splits, int max_sms, bool f32, bool accumulate);
  /// The block-scaled part of the kernel's parameters, for the chapter's plan to fill (scales).
  engine::BlockScaledParams& params() { return plan_->policy_params(); }
  /// One launch on `stream`.
  void run(cudaStream_t stream) const;
  /// Re-points at the buffers of `user` (same call but pointers; D's checks and its store width
  /// redone). If it throws, nothing changed.
  void rebind(const GemmArgs& user);
  const engine::KernelInfo& kernel() const { return plan_->kernel(); }
  int splits() const { return splits_; }
  std::string describe() const;

 private:
  GemmArgs workspace_args(const GemmArgs& user) const;
  void set_output(const GemmArgs& user);
  int splits_ = 0;
  bool f32_ = false, accumulate_ = false;
  GemmArgs user_{};
  GemmRequirements req_{};
  DeviceBuffer<float> workspace_;
  DeviceBuffer<std::uint32_t> counters_;
  std::unique_ptr<engine::PolicyPlan<engine::SplitKParams>> plan_;
};

}  // namespace fp8gemm::ch07
