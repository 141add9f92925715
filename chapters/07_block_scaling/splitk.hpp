// Chapter 7's split-K path (Options::splits >= 1; bs_gemm.hpp), internal to the chapter's plan:
// the GEMM into an FP32 workspace [S][M][N] owned by the plan (common/engine/split_k.cuh), then
// a reduce kernel that sums the S partials in a fixed order into D (kernels_splitk.cu).
// Measured on the H200 and tested there (README, "Small M (decode)"; test_chapter_07_splitk).
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

/// The reduce launch, decided at plan time (the instance for D's type and alignment).
struct SplitKReduceLaunch {
  const void* kernel = nullptr;
  int blocks_x = 0, blocks_y = 0;  ///< a row's column chunks, rows
  const float* workspace = nullptr;
  int splits = 0, M = 0, N = 0;
  std::int64_t split_stride = 0;  ///< M x N floats
  void* D = nullptr;
  std::int64_t ldd = 0;
  int accumulate = 0;
};
/// Picks the instance (float4 loads where N % 4 == 0; stores as wide as D's alignment and ldd
/// allow) and prepares it on this device. Host work, no launch.
SplitKReduceLaunch make_splitk_reduce(const float* workspace, int splits, std::int64_t M,
                                      std::int64_t N, void* D, std::int64_t ldd, bool f32,
                                      bool accumulate);
/// Launch only (and its check).
void launch_splitk_reduce(const SplitKReduceLaunch& l, cudaStream_t stream);

/// The split-K part of a chapter-7 plan: workspace, engine plan of the split-K kernel, reduce.
class SplitKPart {
 public:
  /// `user`: the caller's call (validated by validate_gemm already); `f32`: Output::f32.
  /// Checks the caller's pointers (check_gemm_pointers), allocates the workspace, builds the
  /// engine plan with D = the workspace (ldd = N, FP32) and a grid sized for tiles x splits;
  /// `max_sms` and `raster` are checked before the workspace exists and passed to that plan.
  SplitKPart(const engine::KernelInfo& kernel, const GemmArgs& user, const GemmRequirements& req,
             int splits, int max_sms, engine::RasterOptions raster, bool f32, bool accumulate);
  /// The block-scaled part of the kernel's parameters, for the chapter's plan to fill (scales).
  engine::BlockScaledParams& params() { return plan_->policy_params(); }
  /// The GEMM, then the reduce, on `stream`: launches only.
  void run(cudaStream_t stream) const;
  /// Re-points at the buffers of `user` (same call but pointers; D's checks and the reduce's
  /// store width redone). If it throws, nothing changed.
  void rebind(const GemmArgs& user);
  const engine::KernelInfo& kernel() const { return plan_->kernel(); }
  int device() const { return plan_->device(); }  ///< the device it was built on
  int splits() const { return splits_; }
  std::string describe() const;

 private:
  GemmArgs workspace_args(const GemmArgs& user) const;
  int splits_ = 0;
  bool f32_ = false, accumulate_ = false;
  GemmArgs user_{};
  GemmRequirements req_{};
  DeviceBuffer<float> workspace_;
  std::unique_ptr<engine::PolicyPlan<engine::SplitKParams>> plan_;
  SplitKReduceLaunch reduce_;
};

}  // namespace fp8gemm::ch07
