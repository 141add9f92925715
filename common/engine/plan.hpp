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
  /// A promoted kernel whose loop is not its math policy's default (named _loopN / _2deep): kept
  /// for the same-run loop comparisons only; no dispatch table or rule may choose it.
  bool comparison_only = false;
  /// K blocks the kernel's loop takes at a time, every tile from ring stage 0 (StagedMath,
  /// staged_loop.cuh: its kStages); the plan refuses K that is not a multiple of 128 k_round.
  /// 1: any K.
  int k_round = 1;
  /// A stream-K kernel (common/engine/stream_k.cuh, name ending in _sk or _skr): its plan
  /// allocates the workspace of partial tiles and flags (GroupedParams::sk_partials, sk_flags).
  bool stream_k = false;
  /// A kernel whose CTAs take their tiles from a device counter (common/engine/grouped.cuh,
  /// GroupedDynamicMath; name ending in _dyn): two ints, zero before the first launch, each
  /// launch leaves them zero; the plan's own when the kernel is chosen by name, the caller's
  /// per run under chapter 8's Options::counter_schedule.
  bool dynamic_schedule = false;
  int cluster_size() const { return cluster_m * cluster_n; }
};

/// The kernel named `name` in `list`; throws std::invalid_argument (prefixed by `who`) listing
/// the names if there is none. Chapters keep their compiled kernels in such lists.
const KernelInfo& find_kernel(const std::vector<KernelInfo>& list, const std::string& name,
                              const char* who);

/// The tile order. 0 / -1 mean "choose": bands as wide as balance the A and B panels that the
/// tiles in flight touch (about sqrt(tiles in flight x BlockN / BlockM) units), bands of rows unless
/// along_n says otherwise (engine_plan.cpp).
struct RasterOptions {
  int group = 0;     ///< band width in cluster tiles; 0: choose; 1: no banding
  int along_n = -1;  ///< -1: choose; 0: bands of rows (walk down M); 1: bands of columns
};

/// The plan options every engine plan takes: max_sms >= 0 and raster.along_n in {-1, 0, 1}, else
/// std::invalid_argument prefixed by `who`. Pure C++ (no CUDA call): EnginePlan checks them, and
/// a plan that allocates before it builds its EnginePlan (chapter 7's split-K) calls this first.
void check_plan_options(const char* who, int max_sms, const RasterOptions& raster);

/// The SMs a plan given `max_sms` may use on a GPU of `sm_count` SMs: max_sms, at most sm_count;
/// 0 means all of them. Pure C++.
int usable_sms(int max_sms, int sm_count);

/// The SM count the chapters' kernel tables and rules were measured on (the H200, 132 SMs): what
/// a rule assumes where no GPU answers (rule_sms).
inline constexpr int kReferenceSms = 132;

/// `sms` where it is a count (> 0), else kReferenceSms: the SMs a rule plans for when its caller
/// passes 0 for "not given" (chapter 10's dispatch and its picks tool).
constexpr int sms_or_reference(int sms) { return sms > 0 ? sms : kReferenceSms; }

/// The SMs a kernel-choice rule should plan for: usable_sms(max_sms, the current device's SM
/// count), or usable_sms(max_sms, kReferenceSms) where no device answers (no GPU, no driver: the
/// plan's own device check then refuses the call with its message). A negative max_sms counts as
/// 0 here; the plan refuses it. A plan whose grid is not persistent (one CTA per tile, all SMs)
/// passes 0.
int rule_sms(int max_sms);

/// Waves of the engine's persistent grid for an M x N call of block_m x block_n tiles in clusters
/// of cluster_m x cluster_n CTAs on `sms` SMs: the work units are clusters' worth of tiles,
/// ceil(ceil(M / block_m) / cluster_m) * ceil(ceil(N / block_n) / cluster_n), the grid
/// persistent_grid_clusters' clusters (at least one; the occupancy query's cap, which needs the
/// GPU, taken as sms / cluster size), the waves ceil(units / clusters); 0 for an empty call or a
/// bad tile. Pure C++ (chapter 10's rule table_sms and the chapters' hand-table check count waves
/// with it).
std::int64_t grid_waves(std::int64_t M, std::int64_t N, int block_m, int block_n, int sms,
                        int cluster_m = 1, int cluster_n = 1);

/// Whether a kernel table's decode row, learned on kReferenceSms SMs, still holds on `sms`: its
/// `tiles` (one-CTA tiles) take as many grid_waves on `sms` SMs as on kReferenceSms. The chapters' hand
/// tables keep a row M <= 128 only where it does; else their decode rule decides (session 46's
/// 112-SM sweep: the hand rows 1.17x the fastest's time geomean there, the rule 1.04x). Pure C++.
bool row_keeps_waves(std::int64_t tiles, int sms);

/// The CTA slots a persistent grid of `cluster_size`-CTA clusters has on `sms` SMs, as the
/// chapters' rules count them: whole clusters only (sms / cluster_size of them, an SM left over
/// takes no tile), at least one cluster. A model: the hardware places a cluster's CTAs within one
/// GPC, so on a GPU whose GPCs have odd SM counts fewer clusters may fit at once. Pure C++. (The
/// chapters' large-tile rules count wave efficiency over these slots.)
std::int64_t cluster_slots(int sms, int cluster_size);

/// The fraction of the SM slots of all waves that hold a tile: tiles / (ceil(tiles / slots) x
/// slots); 1 for whole waves. Pure C++. (The chapters' large-tile rules: wave efficiency times a
/// kernel's measured speed on whole waves.)
double wave_efficiency(std::int64_t tiles, std::int64_t slots);

/// The decode (M <= 128) tile rule of chapters 6 and 7 on `sms` SMs. Of `widths` (BLOCK_N
/// values, widest first) the widest whose tile count ceil(M / block_m) x ceil(N / width) reaches
/// ceil(100 x sms / 132) (about three quarters of the SMs: 100 tiles on the H200, so that enough
/// SMs stream B from memory); but where that count spills into a second wave less than half full
/// (sms < count < 1.5 sms) and the next wider width fits in one wave, that wider width (a thin
/// second wave nearly doubles a memory-bound kernel's time for a few tiles: session 46's 112-SM
/// sweep, 64 x 2112 x 7168, 64 x 16 tiles 1.54x the time of 64 x 32). 0 when no width reaches
/// the threshold. Pure C++.
int decode_tile_width(std::int64_t M, std::int64_t N, int block_m, const std::vector<int>& widths,
                      int sms);

/// Clusters of a persistent grid: as many as fit on the GPU at once (`max_clusters`, the occupancy
/// query's answer), limited by `max_sms` (0: the `sm_count` SMs) as max_sms / cluster_size, but at
/// least one (a kernel with 2-CTA clusters given max_sms = 1 runs one cluster, 2 CTAs), and never
/// more than `work_units` (the clusters' worth of tiles there are). Pure C++: EnginePlan's rule.
std::int64_t persistent_grid_clusters(int max_clusters, int sm_count, int max_sms,
                                      int cluster_size, std::int64_t work_units);

/// Requirements of every engine kernel on a call (validate.hpp): K a multiple of 16 (TMA row
/// strides), 16-byte aligned A and B with lda, ldb multiples of 16 bytes, 2-byte aligned D,
/// M and N at most 2^31 - 1024 (int32 TMA coordinates of the last, cluster-rounded tiles).
GemmRequirements engine_requirements(const char* who);

/// Whether D can be written by a TMA-store epilogue: 16-byte aligned, rows a multiple of 16 bytes
/// apart (ldd x d_element_bytes: ldd % 8 == 0 for bf16 D, ldd % 4 == 0 for FP32 D) and less than
/// 2^40 bytes apart (TMA's global stride limit). Else the plans take a registers-epilogue kernel.
bool tma_store_compatible(const GemmArgs& args);

/// The rule of EnginePlan::rebind(): `next` must be the call `built` in everything but its buffers
/// (the pointers A, B, D, scale_a, scale_b and the allocated sizes scale_a_count,
/// scale_b_count). Throws std::invalid_argument, prefixed by `who`, naming the first other field
/// that differs and both values. Pure C++ (no CUDA call).
void require_same_call_but_pointers(const GemmArgs& built, const GemmArgs& next, const char* who);

/// The same rule for a field of a chapter's call that GemmArgs does not hold (scale layouts,
/// output, accumulate, groups): throws std::invalid_argument "<who>: rebind: <field> differs from
/// the call the plan was built for; ..." unless `same`. Pure C++ (no CUDA call).
void require_same_field(const char* field, bool same, const char* who);

/// The checks of a kernel against a call that need neither a GPU nor the call's memory, in the
/// order EnginePlan makes them after validate_gemm(): a TMA-store kernel needs a D that TMA can
/// store, an FP32 kernel an FP32 D, a staged kernel K in whole rounds; check_plan_options(); the
/// tile units fit the scheduler's int arithmetic. Throws std::invalid_argument prefixed by
/// `who`. For a plan that must refuse before it allocates what its EnginePlan will read
/// (chapter 9's dequantize_bf16 path).
void check_kernel_fits(const KernelInfo& kernel, const GemmArgs& args, const std::string& who,
                       int max_sms = 0, RasterOptions raster = {});

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

  /// Launches on `stream`. Throws std::invalid_argument if the calling thread's current device
  /// is not the plan's (require_plan_device(): nothing is launched), std::runtime_error if a CUDA
  /// error was already pending (from an earlier call) or the launch fails. Const and free of
  /// shared mutable state: the launch copies the parameter block, so any number of threads may
  /// call run() of one plan at once, each on its own stream of the plan's device.
  virtual void run(cudaStream_t stream) const { launch(&params_, stream); }

  /// Re-points the plan at the buffers of `args`, the call the plan was built for in everything
  /// but its pointers (require_same_call_but_pointers()); nothing else is recomputed (kernel,
  /// grid, schedule stay). Checks what the constructor checks of a pointer, for those that
  /// changed: validate_gemm() (non-null, alignment, D overlapping an input), a TMA-store kernel's
  /// 16-byte aligned D, and device memory of the current device large enough for the call
  /// (check_gemm_pointers()); then rewrites the global address of the tensor maps whose tensor
  /// moved (cuTensorMapReplaceAddress) and the plain pointers, in the plan's parameter block and
  /// in a derived plan's policy block (policy_gemm_params()). Throws std::invalid_argument (a
  /// refused call) or std::runtime_error (CUDA failure); if it throws, the plan is unchanged.
  /// Host work only (no GPU work, no allocation, no synchronisation). Not thread-safe against
  /// run() or rebind() of the same plan on another thread: launches already enqueued keep the
  /// pointers they were launched with.
  void rebind(const GemmArgs& args);
  /// The call the plan is bound to now (the constructor's, then the last rebind()'s).
  const GemmArgs& args() const { return args_; }

  const KernelInfo& kernel() const { return kernel_; }
  int grid_ctas() const { return grid_ctas_; }
  /// The device the plan was built on (current at construction); run() refuses any other.
  int device() const { return device_; }
  const DenseSchedule& schedule() const { return params_.schedule; }
  /// "128x256_s4_c2x1_fast_tma_b2, grid 132, raster 8 along M"
  std::string describe() const;
  /// The parameter block the plan made (tensor maps, schedule, D).
  const GemmParams& params() const { return params_; }

 protected:
  /// Launches the kernel with `params`: the plan's GemmParams, or a math policy's Params that
  /// extends them (chapter 7's BlockScaledParams derive from GemmParams and copy params()).
  void launch(const void* params, cudaStream_t stream) const;
  /// The GemmParams part of the block that run() launches with when it is not params() (a
  /// PolicyPlan's P), so that rebind() re-points it too; nullptr: params() itself.
  virtual GemmParams* policy_gemm_params() { return nullptr; }

 private:
  KernelInfo kernel_;
  GemmParams params_{};
  int grid_ctas_ = 0;
  int device_ = -1;
  std::string who_;
  GemmArgs args_{};         // the call the plan is bound to (rebind() compares against it)
  GemmRequirements req_{};  // the rules it was validated with
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
  const P& policy_params() const { return policy_params_; }
  void run(cudaStream_t stream) const override { launch(&policy_params_, stream); }
  /// Launches with `params` in place of the plan's block: a copy of policy_params() with a
  /// per-run field changed (chapter 8's caller-owned tile counter, GroupedParams::tile_counter).
  /// The launch copies the block, so `params` may go out of scope once this returns.
  void run_with(const P& params, cudaStream_t stream) const { launch(&params, stream); }

 protected:
  GemmParams* policy_gemm_params() override { return &policy_params_; }

 private:
  P policy_params_{};
};

}  // namespace fp8gemm::engine
