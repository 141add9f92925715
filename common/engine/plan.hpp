// The engine's host side: plan once, run many times (CUTLASS's initialize() / run(), cuBLASLt's
// plan / matmul). EnginePlan validates the call, checks every pointer and the GPU, opts the
// kernel into its shared memory on this device, sizes the persistent grid from what fits on the
// GPU at once, builds the tensor maps and the tile schedule; run() only launches, so nothing but
// a kernel launch sits between a benchmark's timing events.
//
// A kernel is chosen by the caller (chapter 6: a small per-shape table; chapter 10: dispatch),
// described by a KernelInfo that kernel_info.cuh makes from a KernelConfig.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "common/engine/params.hpp"
#include "common/validate.hpp"

namespace fp8gemm::engine {

/// One compiled kernel of the engine and the facts about it that the host needs.
struct KernelInfo {
  std::string name;             ///< e.g. "128x256_s4_c2x1_fast_tma_b2"
  const void* kernel = nullptr; ///< &gemm_kernel<Cfg>
  int block_m = 0, block_n = 0, stages = 0, cluster_m = 1, cluster_n = 1;
  Accumulation accumulation = Accumulation::promoted;
  EpilogueKind epilogue = EpilogueKind::tma_store;
  int epi_cols = 0;             ///< columns per TMA store unit
  int epi_swizzle_bytes = 0;    ///< 0 (none), 32, 64 or 128
  int epi_buffers = 0;
  int threads = 0;
  std::size_t smem_bytes = 0;   ///< dynamic shared memory
  int cluster_size() const { return cluster_m * cluster_n; }
};

/// The kernel named `name` in `list`; throws std::invalid_argument (prefixed by `who`) listing
/// the names if there is none. Chapters keep their compiled kernels in such lists.
const KernelInfo& find_kernel(const std::vector<KernelInfo>& list, const std::string& name,
                              const char* who);

/// The tile order. 0 / -1 mean "choose": bands as wide as balance the A and B panels that the
/// tiles in flight touch (about sqrt(tiles in flight x BlockN / BlockM) units), along the longer
/// side of the tile grid.
struct RasterOptions {
  int group = 0;     ///< band width in cluster tiles; 0: choose; 1: no banding
  int along_n = -1;  ///< -1: choose; 0: bands of rows (walk down M); 1: bands of columns
};

/// Requirements of every engine kernel on a call (validate.hpp): K a multiple of 16 (TMA row
/// strides), 16-byte aligned A and B with lda, ldb multiples of 16 bytes, 2-byte aligned D,
/// M and N at most 2^31 - 1024 (int32 TMA coordinates of the last, cluster-rounded tiles).
GemmRequirements engine_requirements(const char* who);

/// Whether D can be written by the TMA-store epilogue: 16-byte aligned, ldd * 2 a multiple of 16.
bool tma_store_compatible(const GemmArgs& args);

class EnginePlan {
 public:
  /// Throws std::invalid_argument (bad call; before any GPU work) or std::runtime_error (CUDA
  /// failure, a GPU without sm_90a). `max_sms`: SMs the persistent grid may use (0: all of them;
  /// leaves the rest to kernels running beside it). `persistent = false` launches one CTA per
  /// tile instead (the ablation's first step). `work_tiles`: the tiles the persistent grid is
  /// sized for when they are not the M x N tiles of `args` (chapter 8: the tiles of all groups;
  /// 0: M x N's).
  EnginePlan(const KernelInfo& kernel, const GemmArgs& args, const GemmRequirements& req,
             int max_sms = 0, RasterOptions raster = {}, bool persistent = true,
             std::int64_t work_tiles = 0);

  virtual ~EnginePlan() = default;
  EnginePlan(const EnginePlan&) = default;
  EnginePlan& operator=(const EnginePlan&) = default;

  /// Launches on `stream`. Throws std::runtime_error if a CUDA error was already pending (from
  /// an earlier call) or the launch fails.
  virtual void run(cudaStream_t stream) const { launch(&params_, stream); }

  const KernelInfo& kernel() const { return kernel_; }
  int grid_ctas() const { return grid_ctas_; }
  const DenseSchedule& schedule() const { return params_.schedule; }
  /// "128x256_s4_c2x1_fast_tma_b2, grid 132, raster 8 along M"
  std::string describe() const;
  /// The parameter block the plan made (tensor maps, schedule, D).
  const GemmParams& params() const { return params_; }

 protected:
  /// Launches the kernel with `params`: the plan's GemmParams, or a math policy's Params that
  /// extends them (chapter 7's BlockScaledParams derive from GemmParams and copy params()).
  void launch(const void* params, cudaStream_t stream) const;

 private:
  KernelInfo kernel_;
  GemmParams params_{};
  int grid_ctas_ = 0;
  std::string who_;
};

/// An EnginePlan whose kernel takes a math policy's own parameter block P (derived from
/// GemmParams: chapter 7's BlockScaledParams, chapter 8's GroupedParams / KGroupedParams, chapter
/// 9's MxParams). The plan's GemmParams are copied into it on construction; the chapter's plan
/// fills the rest through policy_params(); run() launches the kernel with it.
template <class P>
class PolicyPlan : public EnginePlan {
 public:
  PolicyPlan(const KernelInfo& kernel, const GemmArgs& args, const GemmRequirements& req,
             int max_sms = 0, RasterOptions raster = {}, bool persistent = true,
             std::int64_t work_tiles = 0)
      : EnginePlan(kernel, args, req, max_sms, raster, persistent, work_tiles) {
    static_cast<GemmParams&>(policy_params_) = EnginePlan::params();
  }
  P& policy_params() { return policy_params_; }
  void run(cudaStream_t stream) const override { launch(&policy_params_, stream); }

 private:
  P policy_params_{};
};

}  // namespace fp8gemm::engine
