// Chapter 7: the DeepSeek-V3 block-scaled FP8 GEMM on the engine (common/engine/ with the
// block-scaled math policy, common/engine/block_scaled.cuh). This header is the chapter's entry
// point:
//
//   D (M x N, row-major, bf16 or float) = sum over 128-wide K blocks kb of
//       scale_a[m, kb] * scale_b[n / 128, kb] * (A[m, kb-block] . B[n, kb-block])   (+ D)
//   A: M x K e4m3, row-major (lda); 1 x 128 scales (activations), layout GroupScaleLayout
//   B: N x K e4m3, row-major (ldb); 128 x 128 scales (weights), layout BlockScaleLayout
//
//   fp8gemm::ch07::Plan plan(gemm);   // validate, check pointers and GPU, pick a kernel, build
//                                     // tensor maps, allocate a scale workspace if needed: once
//   plan.run(stream);                 // launch only (a scale-layout conversion, then the GEMM)
//
// Scale layouts (common/scale_layout.hpp): the kernel reads A's scales by TMA, mn-major with
// ld % 4 == 0 and a 16-byte aligned pointer (DeepGEMM's "TMA-aligned" layout). Any other A-scale
// layout (k-major, mn-major with ld = M odd) is accepted too: the plan allocates a workspace and
// run() converts the scales into it with a small kernel first (cost in README). B's scales are
// read with plain loads in any k-major layout with ld >= ceil(K / 128) (cuBLASLt's padded one,
// DeepGEMM's packed one).
#pragma once

#include <cuda_runtime.h>

#include <cstdint>
#include <memory>
#include <string>

#include "common/engine/plan.hpp"
#include "common/scale_layout.hpp"
#include "kernels.hpp"

namespace fp8gemm::ch07 {

enum class Output : int {
  bf16 = 0,  ///< D is M x N bf16 (std::uint16_t bits)
  f32 = 1,   ///< D is M x N float; with `accumulate`, D = A.B + D
};

/// One block-scaled GEMM call. Leading dimensions in elements; 0 means packed (lda = ldb = K,
/// ldd = N). A layout's ld of 0 means its default: scale_a mn-major TMA-aligned
/// (ld = round_up(M, 4)) or, k-major, packed (ld = ceil(K / 128)), by the major given; scale_b
/// padded (ld = round_up(ceil(K / 128), 4)).
struct BlockScaledGemm {
  std::int64_t M = 0, N = 0, K = 0;
  const std::uint8_t* A = nullptr;
  std::int64_t lda = 0;
  const std::uint8_t* B = nullptr;
  std::int64_t ldb = 0;
  const float* scale_a = nullptr;  ///< 1 x 128 groups: ceil(K/128) per row of A
  GroupScaleLayout scale_a_layout{};
  const float* scale_b = nullptr;  ///< 128 x 128 blocks: ceil(N/128) x ceil(K/128)
  BlockScaleLayout scale_b_layout{};
  void* D = nullptr;
  std::int64_t ldd = 0;
  Output output = Output::bf16;
  bool accumulate = false;  ///< only with Output::f32
};

struct Options {
  /// SMs the persistent grid may use (0: all).
  int max_sms = 0;
  /// A kernel by name (kernels()), overriding the per-shape table; "" = the table's choice
  /// (choose_kernel; a float D: its FP32 rule there).
  std::string kernel;
  /// Tile order; defaults choose (common/engine/plan.hpp).
  engine::RasterOptions raster;
  /// Split-K, opt-in (for small M, where M x N has fewer output tiles than SMs): 0 = off (the
  /// per-shape table's kernel; the default). S >= 1: the ceil(K / 128) K blocks of every output
  /// tile are divided into S contiguous ranges, one work unit each; each unit writes its FP32
  /// partial tile to a workspace [S][M][N] that the plan allocates (S x M x N floats), and a
  /// second kernel sums the S partials in a fixed order (deterministic) into D. `kernel` then
  /// names a split-K kernel (names ending in "_splitk"; "": splitk.hpp's choose_splitk_kernel,
  /// 64 or 128 rows x 32 or 64 columns). S = 1 is the same path with one split (for tests);
  /// S must be <= ceil(K / 128). run() launches two kernels, and the workspace is the plan's:
  /// two runs of one split-K plan on different streams at once would share it (give each stream
  /// its own plan). Measured: chapter 7's README, "Small M (decode)".
  int splits = 0;
};

/// The rules of chapter 7's entry point: any M, N >= 1 (up to 2^31 - 1024); K a multiple of 16
/// (the last K block may be partial); A and B 16-byte aligned with lda, ldb multiples of 16;
/// D 2-byte aligned (bf16) or 4-byte aligned (float); scale pointers 4-byte aligned and their
/// layouts' ld large enough; device or managed memory of the current device.
GemmRequirements requirements();

/// The per-shape table: the kernel a plan uses for an M x N x K call. `sms`: the SMs its grid
/// may use (the plan passes engine::rule_sms(Options::max_sms)); shapes outside the hand table
/// get the rules (the decode tile rule, wave efficiency) on that many SMs; the hand table is the
/// H200's 132-SM sweep, its decode rows (M <= 128) kept on `sms` only where their tiles take as
/// many waves (engine::row_keeps_waves). A float D (Output::f32) takes neither: an FP32 kernel,
/// 128 x 128 where M <= 128, else 128 x 256, from registers, but with `accumulate`
/// (D = A.B^T + D) by TMA (a reduce-add) where `tma_store_ok` (D 16-byte aligned, ldd % 4 == 0).
const engine::KernelInfo& choose_kernel(std::int64_t M, std::int64_t N, std::int64_t K,
                                        Output output, bool tma_store_ok,
                                        int sms = engine::kReferenceSms, bool accumulate = false);

/// The call with its defaults filled in (packed leading dimensions, default scale layouts).
BlockScaledGemm with_defaults(const BlockScaledGemm& gemm);

class Plan {
 public:
  /// Throws std::invalid_argument (bad arguments, before any GPU work) or std::runtime_error
  /// (CUDA failure, no sm_90a GPU).
  explicit Plan(const BlockScaledGemm& gemm, const Options& options = {});
  ~Plan();
  Plan(const Plan&) = delete;
  Plan& operator=(const Plan&) = delete;
  Plan(Plan&&) noexcept;
  Plan& operator=(Plan&&) noexcept;

  /// Launches on `stream`: the A-scale conversion (if the layout needs it), then the GEMM (with
  /// Options::splits, then the split-K reduce).
  /// No validation, no allocation, no host sync. Plans own a scale workspace when they convert:
  /// two runs of one such plan on different streams at once would share it; give each stream
  /// its own plan then.
  void run(cudaStream_t stream) const;
  /// The device the plan was built on; run() refuses to launch with any other current
  /// (std::invalid_argument).
  int device() const;

  /// Re-points the plan at the buffers of `gemm`: the call the plan was built for in everything
  /// but its pointers (A, B, scale_a, scale_b, D); a different shape, leading dimension, scale
  /// layout, output or accumulate is refused (std::invalid_argument naming it). The new pointers
  /// are checked as the constructor checks them (engine::EnginePlan::rebind()); a plan that reads
  /// scale_a in place by TMA needs the new scale_a 16-byte aligned too. Host work only: the
  /// tensor maps' addresses are rewritten, nothing is re-encoded, allocated or launched. If it
  /// throws, the plan is unchanged. Not concurrently with run() of this plan on another thread.
  void rebind(const BlockScaledGemm& gemm);

  const engine::KernelInfo& kernel() const;
  /// Whether run() converts A's scales before the GEMM (their layout is not TMA-readable).
  bool converts_scale_a() const;
  std::string describe() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

/// Plan + run in one call.
void gemm(const BlockScaledGemm& gemm, cudaStream_t stream);

}  // namespace fp8gemm::ch07
