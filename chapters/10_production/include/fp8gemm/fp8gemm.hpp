// fp8gemm: FP8 GEMM on NVIDIA Hopper (and MXFP8 on Blackwell) — the public header of the library
// (chapter 10).
//
//   #include <fp8gemm/fp8gemm.hpp>              // find_package(fp8gemm), fp8gemm::fp8gemm
//
// Every entry point is a plan: the constructor checks the GPU's architecture, chooses the kernel,
// validates the call and builds the tensor maps once; run(stream) only launches. Errors follow
// docs/contract.md: a call the rules accept runs correctly; a call they refuse throws
// std::invalid_argument naming the argument, before any GPU work; an unsupported GPU or a CUDA
// failure throws std::runtime_error naming the device or the call (a GPU these kernels do not
// run on is refused first, so there even a bad call gets std::runtime_error; without any GPU
// the call is validated first).
//   fp8gemm::PerTensorPlan     D = scale_a scale_b A.B^T, e4m3 in, bf16 out (chapter 6), or FP32
//                              out with accumulate (PerTensorGemmF32, the library's kernels); FP32
//                              promotion every 128 K by default, fast accumulation opt-in
//   fp8gemm::BlockScaledPlan   DeepSeek-V3 block scaling, A 1 x 128 and B 128 x 128 scales in
//                              the layouts of fp8gemm/common/scale_layout.hpp, bf16 or FP32
//                              output with accumulate (chapter 7)
//   fp8gemm::GroupedPlan       mixture-of-experts forward (and dgrad): G experts' GEMMs in one
//                              launch, block-scaled, contiguous rows with device offsets or
//                              masked, any rows per expert, capturable in a CUDA graph, bf16 or
//                              FP32 output with accumulate (GroupedOutput::f32; chapter 8)
//   fp8gemm::WeightGradPlan    the experts' weight gradients dB_g = dD_g^T . A_g, k-grouped over
//                              each expert's tokens, FP32 with optional accumulate, or bf16
//                              (WeightGradOutput::bf16; chapter 8)
//   fp8gemm::MxPlan            MXFP8 (e4m3, a UE8M0 scale per 1 x 32): chapter 9's sm_100a kernel
//                              on compute capability 10.0, its Hopper kernels on 9.0; bf16 D, or
//                              on Hopper FP32 with accumulate (MxOutput::f32)
//   quantize_1x128, quantize_128x128, quantize_128x128_dual (W and W^T), quantize_1x128_dual,
//   quantize_tokens_transposed_1x128,
//   quantize_mx_1x32, quantize_mx_1x32_dual, requantize_mx (MXFP8 -> the block-scaled format,
//   not exact), convert_*_scales (common/quantize_gpu.hpp)
// Kernel choice (fp8gemm/dispatch.hpp): Options::kernel, else FP8GEMM_KERNEL_<FAMILY>, else the
// table learned from the committed H200 sweep (chapters/10_production/dispatch_table.md), else
// the chapter's own rule; describe() says which.
// Layouts: A is M x K row-major (activations), B is N x K row-major (weights), D is M x N
// row-major; leading dimensions in elements.
//
// Threads, streams and devices (tests/test_library_threads_gpu.cu runs the per-tensor,
// block-scaled, grouped (also on the counter schedule) and MXFP8 plans this way; python/tests/test_ops_gpu.py rebinds all four
// PyTorch GEMMs, the weight gradient included):
//   - run() is const and changes nothing: any number of host threads may call run() of one plan
//     at once, each on its own stream (a launch copies the plan's parameter block when it is
//     enqueued). Such runs all write the plan's D, so concurrent computations need their own
//     outputs: a plan each, or rebind() between launches (below). Exception: a BlockScaledPlan
//     that converts scale_a (converts_scale_a()) owns a scale workspace that every run writes:
//     one stream at a time for such a plan (the PyTorch ops never build one). So do a split-K
//     BlockScaledPlan (Options::splits >= 1: its workspace of partial tiles), an MxPlan on the
//     requantize_block_scaled path (MxOptions::hopper_requantize_block_scaled: its re-quantised
//     operands; the PyTorch op keeps one such plan per stream), an MxPlan on the
//     dequantize_bf16 path (MxOptions::hopper_dequantize_bf16: its bf16 operands; the PyTorch
//     op keeps one such plan per stream), and a
//     GroupedPlan given one of chapter 8's stream-K comparison kernels by name (_sk, _skr): its
//     workspace of partial tiles and flags is the plan's, and two runs at once may mix partials
//     or leave an owner waiting for a flag the other run consumed; and one given a counter
//     kernel (_dyn): its tile counter is the plan's, and two runs at once would share out the
//     tiles between them, each leaving the tiles the other drew unwritten. No rule or dispatch
//     picks these kernels by name; the PyTorch op that takes a kernel by name
//     (_gemm_grouped_kernel, a benchmark's) keeps one plan of such a kernel per stream. The
//     counter schedule (GroupedOptions::counter_schedule, which the PyTorch grouped ops choose)
//     runs the counter kernel without that restriction: its counter is the caller's, given to
//     each run (run(stream, tile_counter)), one per stream, so such a plan is as thread-safe as
//     the others. A GroupedPlan in checking mode (Options::check_offsets) may be run from
//     several threads; its checks take turns (each synchronises its stream anyway).
//   - rebind(gemm) re-points a plan at other buffers of the same call (same shape, leading
//     dimensions, layouts, options): the new pointers are checked as the constructor checks them
//     (non-null, aligned, device memory of the current device, large enough), the tensor maps'
//     addresses are rewritten (cuTensorMapReplaceAddress), nothing else is redone: host work of a
//     few driver queries, no GPU work. It changes the plan, so it must not overlap run() or
//     rebind() of the same plan on another thread (lock around rebind + run, as the PyTorch ops'
//     plan cache does). Launches already enqueued keep the buffers they were launched with:
//     "rebind(D1), run(s1), rebind(D2), run(s2)" computes both. If rebind() throws, the plan is
//     unchanged.
//   - Construction is thread-safe: plans may be built from several threads at once (the shared
//     caches, the device's architecture and the kernels' shared-memory opt-in, are locked; the
//     dispatch table is immutable). FP8GEMM_KERNEL_* are read at construction: do not change them
//     while another thread builds a plan. A plan belongs to the device that was current when it
//     was built (its kernel was prepared and its grid sized there): run it with that device
//     current, on a stream of that device; build a plan per device. run() and rebind() with
//     another device current throw std::invalid_argument before anything is launched
//     (session 56; tests/test_library_threads_gpu.cu's [other-device] case, two GPUs).
//   - A launch keeps its own copy of the parameters, so a plan may be destroyed as soon as run()
//     returns (the buffers it points at must of course live until the GPU is done with them).
#pragma once

#include <cuda_runtime.h>

#include <memory>
#include <string>

#include "bs_gemm.hpp"              // chapter 7 (installed under fp8gemm/chapters/07_block_scaling)
#include "common/quantize_gpu.hpp"  // the quantisers
#include "common/scale_layout.hpp"  // GroupScaleLayout, BlockScaleLayout
#include "dispatch.hpp"             // fp8gemm/dispatch.hpp: architecture and kernel choice
#include "grouped_gemm.hpp"         // chapter 8 (installed under fp8gemm/chapters/08_grouped_moe)
#include "hopper_mx.hpp"            // chapter 9, Hopper (fp8gemm/chapters/09_blackwell_mxfp8)
#include "mx_gemm.hpp"              // chapter 9, Blackwell, and the MXFP8 call
#include "wgrad.hpp"                // chapter 8's weight gradient
#include "ws_gemm.hpp"  // chapter 6 (installed under fp8gemm/chapters/06_warp_specialization)

#define FP8GEMM_VERSION_MAJOR 0
#define FP8GEMM_VERSION_MINOR 9
#define FP8GEMM_VERSION_PATCH 0

namespace fp8gemm {

/// "0.9.0": the library's version (CHANGELOG.md).
inline constexpr const char* version() { return "0.9.0"; }

using engine::Accumulation;

// ---- per-tensor scaled FP8 GEMM (chapter 6). PerTensorGemm: common/gemm.hpp ----
// Leading dimensions lda, ldb (multiples of 16 bytes) and ldd (any >= N; a multiple of 8 lets the
// TMA-store kernels take D), 0 meaning packed, as the block-scaled call's.

/// Options::kernel overrides the dispatch (a name of ch06::kernels(), for FP32 D of
/// per_tensor_f32_kernels(), whose accumulation is Options::accumulation); max_sms, raster and
/// persistent as chapter 6's.
using PerTensorOptions = ch06::Options;

/// The per-tensor GEMM with FP32 D (the library's; chapter 6 writes bf16):
///   D = scale_a scale_b A . B^T,  or with `accumulate`  D = scale_a scale_b A . B^T + D,
/// A M x K and B N x K e4m3 row-major as PerTensorGemm's, D M x N float row-major (ldd elements
/// per row, any >= N; 0: N), scale_a and scale_b device pointers to one float each. Each element
/// of D is read (accumulate) and written once by one thread: deterministic, D rounded once to
/// float (with accumulate by TMA: one FP32 add per element in the TMA unit, the same rounding).
/// For training code that sums products into an FP32 buffer (weight gradients over
/// micro-batches). Its kernels (per_tensor_f32_kernels()) are not in the dispatch table: for
/// M <= 128 the FP32 twins (from registers) of chapter 6's decode tiles; above, 128 x 256, 128 x 192 or 128 x 128 (fast
/// with 512 < K <= 3072 also the ping-pong 128 x 128) by wave efficiency x fill x speed per K,
/// stored by TMA where D is 16-byte aligned with ldd % 4 == 0, else from registers (rule
/// `epilogue`; choose_per_tensor_f32, per_tensor_f32_candidates). Measured on the H200 against
/// torch's FP32-output scaled_mm (session 60): 0.880-1.038x at M <= 128, about 0.97-1.04x
/// promoted at M = 4096.
struct PerTensorGemmF32 {
  std::int64_t M = 0, N = 0, K = 0;
  const std::uint8_t* A = nullptr;  ///< M x K e4m3 bytes, row-major
  const std::uint8_t* B = nullptr;  ///< N x K e4m3 bytes, row-major
  float* D = nullptr;               ///< M x N float, row-major
  const float* scale_a = nullptr;   ///< device pointer to 1 float
  const float* scale_b = nullptr;   ///< device pointer to 1 float
  std::int64_t lda = 0;             ///< row stride of A in elements; 0: K
  std::int64_t ldb = 0;             ///< row stride of B in elements; 0: K
  std::int64_t ldd = 0;             ///< row stride of D in elements; 0: N
  bool accumulate = false;          ///< D = scale_a scale_b A . B^T + D

  /// The same call as GemmArgs (leading dimensions filled in, 4-byte D), for validate_gemm().
  GemmArgs args() const {
    GemmArgs a = PerTensorGemm{M, N, K, A, B, nullptr, scale_a, scale_b, lda, ldb, ldd}.args();
    a.D = D;
    a.d_element_bytes = 4;
    return a;
  }
};

class PerTensorPlan {
 public:
  /// Throws std::invalid_argument (bad call or kernel name; before any GPU work) or
  /// std::runtime_error (not a compute capability 9.0 GPU, CUDA failure).
  explicit PerTensorPlan(const PerTensorGemm& gemm, const PerTensorOptions& options = {});
  /// FP32 D (PerTensorGemmF32); Options::kernel names one of per_tensor_f32_kernels(). The same
  /// errors.
  explicit PerTensorPlan(const PerTensorGemmF32& gemm, const PerTensorOptions& options = {});
  ~PerTensorPlan();
  PerTensorPlan(PerTensorPlan&&) noexcept;
  PerTensorPlan& operator=(PerTensorPlan&&) noexcept;

  /// Launches on `stream`; nothing else (no validation, no allocation, no host sync). Thread-safe
  /// (the header's "Threads, streams and devices").
  void run(cudaStream_t stream) const;
  /// Re-points the plan at the buffers of `gemm`, the same call in everything but A, B, D,
  /// scale_a and scale_b (the header's "Threads, streams and devices"). Throws
  /// std::invalid_argument for anything else that differs, or a new pointer the plan cannot use
  /// (a TMA-store kernel needs D 16-byte aligned), std::runtime_error for a CUDA failure; the
  /// plan is then unchanged.
  void rebind(const PerTensorGemm& gemm);
  /// The same for a plan built for FP32 D (accumulate must be the plan's). Each form refuses the
  /// other's plan (std::invalid_argument: the output differs).
  void rebind(const PerTensorGemmF32& gemm);
  /// Whether the plan writes FP32 D (built from a PerTensorGemmF32).
  bool writes_f32() const { return f32_ != nullptr; }
  const engine::EnginePlan& engine() const;
  const engine::KernelInfo& kernel() const;
  /// How the kernel was chosen, and the one-line reason.
  const KernelChoice& choice() const;
  /// "<kernel>, grid 132, raster ...; kernel by <rule>: <why>"
  std::string describe() const;

 private:
  std::unique_ptr<ch06::Plan> plan_;  // bf16 D: chapter 6's plan
  std::unique_ptr<engine::PolicyPlan<engine::GemmParams>> f32_;  // FP32 D: the engine's, directly
  bool accumulate_ = false;  // the FP32 call's (rebind() compares)
  KernelChoice choice_;
};

// ---- block-scaled FP8 GEMM (chapter 7) ----

using BlockScaledGemm = ch07::BlockScaledGemm;
/// Options::kernel overrides the dispatch (a name of ch07::kernels() that can write the call's
/// D); max_sms and raster as chapter 7's. Options::splits >= 1 (opt-in, for small M) runs chapter
/// 7's split-K path: its own kernels (Options::kernel then names one of ch07::splitk_kernels(),
/// "" its rule), neither the dispatch table nor FP8GEMM_KERNEL_BLOCK_SCALED applies, and the
/// plan owns the partials' workspace (S x M x N floats): one stream at a time for such a plan.
using BlockScaledOptions = ch07::Options;
using BlockScaledOutput = ch07::Output;

class BlockScaledPlan {
 public:
  /// Throws std::invalid_argument (bad call or kernel name; before any GPU work) or
  /// std::runtime_error (not a compute capability 9.0 GPU, CUDA failure).
  explicit BlockScaledPlan(const BlockScaledGemm& gemm, const BlockScaledOptions& options = {});
  ~BlockScaledPlan();
  BlockScaledPlan(BlockScaledPlan&&) noexcept;
  BlockScaledPlan& operator=(BlockScaledPlan&&) noexcept;

  /// Launches on `stream`: the A-scale conversion if the layout needs it, then the GEMM (chapter
  /// 7's Plan::run). Thread-safe, except a converting plan (converts_scale_a()) and a split-K
  /// one (Options::splits >= 1), which own a workspace: one stream at a time.
  void run(cudaStream_t stream) const;
  /// Re-points the plan at the buffers of `gemm`, the same call in everything but A, B, scale_a,
  /// scale_b and D (the header's "Threads, streams and devices"). Throws std::invalid_argument
  /// for anything else that differs, or a new pointer the plan cannot use (a TMA-store kernel
  /// needs D 16-byte aligned; a plan that reads scale_a in place, scale_a 16-byte aligned),
  /// std::runtime_error for a CUDA failure; the plan is then unchanged.
  void rebind(const BlockScaledGemm& gemm);
  const engine::KernelInfo& kernel() const;
  bool converts_scale_a() const;
  const KernelChoice& choice() const;
  std::string describe() const;

 private:
  std::unique_ptr<ch07::Plan> plan_;
  KernelChoice choice_;
};

// ---- grouped GEMM and k-grouped weight gradient (chapter 8) ----

using GroupedGemm = ch08::GroupedGemm;
using GroupedLayout = ch08::Layout;
/// D's type: bf16 (the default) or float, optionally D = A.B^T + D in each group's rows (chapter
/// 8's FP32 kernels, kernels_grouped_f32.cu: by TMA where D is 16-byte aligned with ldd % 4 == 0,
/// else from registers; rows of no group untouched).
using GroupedOutput = ch08::Output;
using GroupedOptions = ch08::Options;
using WeightGradGemm = ch08::WeightGradGemm;
using WeightGradOptions = ch08::WeightGradOptions;
using WeightGradOutput = ch08::WeightGradOutput;  ///< dB float (default) or bf16

/// Chapter 8's grouped plan behind the library's architecture check. Its kernel is chapter 8's
/// default (ch08::default_kernel: by layout, mean rows per group, K and whether TMA can store D),
/// ch08::counter_schedule_kernel with Options::counter_schedule, or Options::kernel; no per-shape
/// table yet.
class GroupedPlan {
 public:
  explicit GroupedPlan(const GroupedGemm& gemm, const GroupedOptions& options = {});
  ~GroupedPlan();
  GroupedPlan(GroupedPlan&&) noexcept;
  GroupedPlan& operator=(GroupedPlan&&) noexcept;
  /// Thread-safe (the header's "Threads, streams and devices"). A plan built with
  /// GroupedOptions::counter_schedule that took the counter kernel (takes_tile_counter()) refuses
  /// it: give such a plan run(stream, tile_counter).
  void run(cudaStream_t stream) const;
  /// The same launch, the tiles drawn from `tile_counter` where the plan takes a counter
  /// (GroupedOptions::counter_schedule, ch08::Plan::run(stream, tile_counter)): two ints of
  /// device memory, zero before their first run, left zero by every run; one per stream (runs
  /// on one stream are ordered and may share it; two runs at once must not), a CUDA graph's
  /// own. Ignored (may be null) by a plan that takes none. Its value is read by the host only
  /// in checking mode (GroupedOptions::check_offsets refuses one that is not {0, 0}); otherwise
  /// a count left in it skips tiles silently.
  void run(cudaStream_t stream, int* tile_counter) const;
  /// Whether run() needs a tile counter.
  bool takes_tile_counter() const;
  /// Re-points the plan at the buffers of `gemm` (offsets or masked_m, A, B, scale_a, scale_b,
  /// D), the same call otherwise; as PerTensorPlan::rebind.
  void rebind(const GroupedGemm& gemm);
  std::string describe() const;

 private:
  std::unique_ptr<ch08::Plan> plan_;
};

class WeightGradPlan {
 public:
  explicit WeightGradPlan(const WeightGradGemm& gemm, const WeightGradOptions& options = {});
  ~WeightGradPlan();
  WeightGradPlan(WeightGradPlan&&) noexcept;
  WeightGradPlan& operator=(WeightGradPlan&&) noexcept;
  /// Thread-safe (the header's "Threads, streams and devices").
  void run(cudaStream_t stream) const;
  /// Re-points the plan at the buffers of `gemm` (offsets, dD_t, scale_dD_t, A_t, scale_A_t,
  /// dB), the same call otherwise; as PerTensorPlan::rebind.
  void rebind(const WeightGradGemm& gemm);
  std::string describe() const;

 private:
  std::unique_ptr<ch08::WeightGradPlan> plan_;
};

// ---- MXFP8 (chapter 9) ----

/// A [M, K] and B [N, K] e4m3, UE8M0 scales per 1 x 32 block in the Mx1x32 layout, bf16 D (or
/// float: MxOutput; mx_gemm.hpp). K a multiple of 32. The scales' padding (to whole 128 x 128
/// tiles) is never read as data: it may hold any bytes (Hopper: tested; the sm_100a kernel, never
/// run, issues no MMA past K, by its code).
using MxGemm = ch09::MxGemm;
/// D's type: bf16 (the default) or float with optional accumulate (Hopper, every path; the
/// sm_100a kernel since session 65: compiled and SASS-checked, never run, as that whole kernel).
using MxOutput = ch09::Output;

struct MxOptions {
  /// A Hopper kernel by name (ch09::hopper_kernels(), with hopper_dequantize_bf16 one of
  /// ch09::hopper_bf16_kernels(), with hopper_requantize_block_scaled one of chapter 7's
  /// ch07::kernels()), overriding the dispatch; for a float D (MxOutput::f32) an FP32 kernel, f32
  /// in its name (a kernel of the other D type is refused). On Blackwell the library runs
  /// chapter 9's single-CTA kernel (its CTA-pair instance, ch09::Options::cta_group = 2, is
  /// opt-in at the chapter level only, unmeasured): a name there is refused
  /// (std::invalid_argument).
  std::string kernel;
  /// Hopper only, opt-in: chapter 9's dequantize_bf16 path (ch09::HopperPath) instead of the
  /// dispatched MXFP8 kernel: A and B dequantised to bf16 (exact for every value bf16 holds)
  /// into a workspace the plan owns, (M + N) K 2 bytes (+ 16), then a bf16 GEMM whose kernel is
  /// chapter 9's bf16 rule or `kernel` (not FP8GEMM_KERNEL_MXFP8_HOPPER, not the table); 1.60-1.87x the default
  /// kernel on the H200 at M = 4096 and 8192^3 (chapter 9's README, "The second Hopper path"), at
  /// the cost of that memory and a second launch per run(), which writes the workspace: one
  /// stream at a time for such a plan. Refused on Blackwell (its kernel scales in the tensor
  /// cores already).
  bool hopper_dequantize_bf16 = false;
  /// Hopper only, opt-in, NOT EXACT: chapter 9's requantize_block_scaled path (ch09::HopperPath)
  /// instead of the dispatched MXFP8 kernel: A and B re-quantised into chapter 7's format (one
  /// power-of-two scale per 1 x 128 group of A and per 128 x 128 block of B, that of the group's
  /// largest MX block; common/mx.hpp's rule) into a workspace the plan owns, (M + N) K bytes
  /// plus the scales, then chapter 7's GEMM (chapter 7's per-shape table, or `kernel`, one of
  /// ch07::kernels(); not FP8GEMM_KERNEL_MXFP8_HOPPER, not the library's dispatch table; the
  /// rule is reported as `chapter` even where chapter 7 picks its registers-epilogue kernel for
  /// a D that TMA cannot store). Elements about 2^14 or more below their group's largest value
  /// lose bits or flush to zero: on chapter 7's study data that adds 1e-7 to 2e-6 to D's
  /// relative error, on data whose quiet blocks meet the other operand's loud ones it loses much
  /// of D
  /// (docs/fp8_numerics.md). 0.73-0.88x chapter 7's speed on an H100 (chapter 9's README, "A
  /// third Hopper path"): 2.4-3.7x the default kernel. A second launch per run() writes the
  /// workspace: one stream at a time for such a plan. Refused on Blackwell, and together with
  /// hopper_dequantize_bf16.
  bool hopper_requantize_block_scaled = false;
  /// SMs the persistent grid may use (0: all), as the other plans' max_sms: on Hopper the GEMM's
  /// grid (on the dequantize_bf16 and requantize paths not the conversion launch before it), on
  /// Blackwell chapter 9's ch09::Options::max_sms (the same rule: at least one unit, a CTA pair
  /// for cta_group = 2).
  int max_sms = 0;
};

/// The architecture dispatch of MXFP8: on compute capability 10.0 chapter 9's sm_100a kernel
/// (tcgen05 block-scaled MMA; built with FP8GEMM_BUILD_SM100=ON; NEVER RUN on hardware in this
/// project), on 9.0 its Hopper kernels (chosen like the other families: option, environment,
/// table, chapter default; on the dequantize_bf16 path the option or chapter 9's bf16 rule; on
/// the requantize_block_scaled path the option or chapter 7's per-shape table; for a float D the
/// option or chapter 9's FP32 default where D is 16-byte aligned with ldd % 4 == 0 by TMA (on
/// the default path with accumulate only; on the dequantize_bf16 path always; on the requantize
/// path chapter 7's rule, with accumulate), else from registers, neither
/// FP8GEMM_KERNEL_MXFP8_HOPPER nor the table, which hold bf16 kernels), anywhere else
/// std::runtime_error naming the GPU and what is supported (mx_kernel_arch()).
class MxPlan {
 public:
  /// Throws std::invalid_argument (bad call, before any GPU work; also without a GPU) or
  /// std::runtime_error (unsupported GPU, no GPU, CUDA failure).
  explicit MxPlan(const MxGemm& gemm, const MxOptions& options = {});
  ~MxPlan();
  MxPlan(MxPlan&&) noexcept;
  MxPlan& operator=(MxPlan&&) noexcept;

  /// Thread-safe (the header's "Threads, streams and devices"), except on the dequantize_bf16
  /// and requantize_block_scaled paths: one stream at a time (the workspace).
  void run(cudaStream_t stream) const;
  /// Re-points the plan at the buffers of `gemm` (A, B, scale_a, scale_b, D; the scales'
  /// allocated sizes may change too), the same call otherwise; as PerTensorPlan::rebind. On
  /// compute capability 10.0 the sm_100a plan is rebuilt on the new buffers (its own rebind is
  /// not written yet).
  void rebind(const MxGemm& gemm);
  MxKernelArch arch() const { return arch_; }
  const KernelChoice& choice() const { return choice_; }
  std::string describe() const;

 private:
  MxKernelArch arch_ = MxKernelArch::hopper_sm90a;
  KernelChoice choice_;
  std::unique_ptr<ch09::HopperPlan> hopper_;
  std::unique_ptr<ch09::Plan> blackwell_;
  const engine::EnginePlan* engine_ = nullptr;  // hopper_'s engine plan: what run() launches
                                                // (null on the converting paths: hopper_)
  MxGemm gemm_;                                 // the call bound now (defaults filled in)
  int max_sms_ = 0;                             // MxOptions::max_sms, for the sm_100a re-plan
};

}  // namespace fp8gemm
