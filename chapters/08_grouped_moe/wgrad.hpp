// Chapter 8's weight gradient of a mixture-of-experts layer, k-grouped: for every expert g,
//
//   dB_g [N, K] (FP32, or bf16) = dD_g^T . A_g   (+ dB_g when accumulate: FP32 only)
//
// where A_g [count_g, K] are expert g's input tokens and dD_g [count_g, N] the gradient of its
// output, the reduction running over the expert's count_g tokens (any number: 0, 1, 129, ...).
// One launch for all experts; the counts are read on the device only (capturable in a CUDA graph).
//
// Operands: the transposed, token-padded FP8 tensors that quantize_tokens_transposed_1x128
// (common/quantize_gpu.hpp) writes from the bf16 tokens sorted by expert, 1 x 128 scales along
// the tokens (DeepSeek-V3's recipe for the weight gradient):
//   dD_t  [N, ld_dD_t] e4m3 row-major: dD^T; expert g's tokens at columns P_g .. P_g + count_g - 1,
//         zeros from there to P_{g+1}, P_g = sum over j < g of round_up(count_j, 128)
//   A_t   [K, ld_A_t] e4m3 row-major: A^T, the same columns
//   scale_dD_t, scale_A_t: the scale of row c and token block tb = column / 128 at
//         layout.offset(c, tb), mn-major with ld % 4 == 0 (TMA): [token_capacity / 128][ld]
//   token_capacity: the columns the operands hold (>= P_G; max_padded_tokens(T, G) is always
//         enough): the kernel never reads past it.
//   offsets: G + 1 int32 on the device, the REAL (unpadded) token offsets of the forward pass:
//         offsets[0] = 0, monotone. The kernel derives P_g from them.
//   dB    [G * N, lddb] row-major, FP32 or (WeightGradOutput::bf16) bf16: dB_g at rows g N ..
//         bf16 is a training step's weight gradient in the weight's own dtype, each element rounded
//         once from the FP32 sum: half the bytes written, and no FP32 dB converted afterwards.
// An expert with no tokens: dB_g is written 0 (its gradient), or, with accumulate, left untouched
// (not read, not written).
// Preconditions the host cannot check without reading the offsets (it never does, except in the
// checking mode, WeightGradOptions::check_offsets): offsets monotone from 0, and P_G <=
// token_capacity. A decreasing offset makes an empty group (never a write outside dB); blocks past
// token_capacity read as zeros (the experts there get a truncated or zero gradient, silently).
#pragma once

#include <cuda_runtime.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "common/engine/plan.hpp"
#include "common/scale_layout.hpp"

namespace fp8gemm::ch08 {

/// dB's element type.
enum class WeightGradOutput : int {
  f32 = 0,   ///< float; with `accumulate`, dB = dD^T . A + dB
  bf16 = 1,  ///< bf16 (std::uint16_t bits), round to nearest even from the FP32 sum; no accumulate
};

struct WeightGradGemm {
  int groups = 0;                    ///< G >= 1
  std::int64_t N = 0, K = 0;         ///< dB_g is N x K
  std::int64_t token_capacity = 0;   ///< columns of dD_t and A_t (multiple of 16)
  const int* offsets = nullptr;      ///< G + 1 device int32
  const std::uint8_t* dD_t = nullptr;
  std::int64_t ld_dD_t = 0;          ///< 0: token_capacity
  const float* scale_dD_t = nullptr;
  GroupScaleLayout scale_dD_t_layout{};  ///< mn-major only; ld 0: TMA-aligned over N rows
  const std::uint8_t* A_t = nullptr;
  std::int64_t ld_A_t = 0;           ///< 0: token_capacity
  const float* scale_A_t = nullptr;
  GroupScaleLayout scale_A_t_layout{};   ///< mn-major only; ld 0: TMA-aligned over K rows
  void* dB = nullptr;                ///< float or bf16, as `output` says
  std::int64_t lddb = 0;             ///< 0: K
  WeightGradOutput output = WeightGradOutput::f32;
  bool accumulate = false;           ///< only with WeightGradOutput::f32
};

struct WeightGradOptions {
  std::string kernel;  ///< by name (wgrad_kernels()); "" = the default
  /// SMs the persistent grid may use (0: all), as Options::max_sms of the grouped plan; the
  /// default kernel's choice counts waves over these SMs.
  int max_sms = 0;
  /// Validate the offsets on the device before every run() (session 55): offsets[0] == 0,
  /// non-decreasing, and P_G (each count rounded up to 128, summed) <= token_capacity; a violation
  /// throws std::runtime_error naming it, and nothing is launched. As the grouped plan's
  /// Options::check_offsets: a copy to the host and a synchronisation per call, for debugging and
  /// tests; run() on a capturing stream throws std::invalid_argument.
  bool check_offsets = false;
};

/// Every compiled weight-gradient kernel.
const std::vector<engine::KernelInfo>& wgrad_kernels();

/// The dB type a weight-gradient kernel writes (FP32: _f32 in its name; else bf16).
inline WeightGradOutput wgrad_output_of(const engine::KernelInfo& k) {
  return engine::writes_f32(k.epilogue) ? WeightGradOutput::f32 : WeightGradOutput::bf16;
}

/// The plan's default kernel for dB_g of N x K, G groups, on a GPU of `sms` SMs, writing
/// `output`: with a dB that TMA can store (`tma_ok`), 128 x 256 or 128 x 192 (TMA epilogue),
/// whichever covers the G x N x K tiles with the higher efficiency, counting 128 x 192 4% cheaper
/// per element (its measured advantage where neither wastes anything): efficiency = (N x K) / (the
/// area of the tiles covering it) x tiles / (full waves x sms), the tiles being those of all G
/// groups (the host does not read the token counts). Otherwise the registers-epilogue 128 x 192.
/// Both dB types take the kernels with two staging units per warpgroup and the early first wave
/// (128 x 192 with 4 stages, 128 x 256 with 3): FP32 dB of several groups since session 30, of one
/// group and bf16 dB since session 31. wgrad.cpp has the measurements behind each choice (chapter
/// 8's README, "The weight gradient in session 7", "Session 30" and "Session 31", for the history).
const engine::KernelInfo& default_wgrad_kernel(std::int64_t N, std::int64_t K, int groups, int sms,
                                               bool tma_ok,
                                               WeightGradOutput output = WeightGradOutput::f32);

class WeightGradPlan {
 public:
  /// Throws std::invalid_argument (bad arguments, before any GPU work) or std::runtime_error.
  explicit WeightGradPlan(const WeightGradGemm& gemm, const WeightGradOptions& options = {});
  ~WeightGradPlan();
  WeightGradPlan(const WeightGradPlan&) = delete;
  WeightGradPlan& operator=(const WeightGradPlan&) = delete;
  /// Launches on `stream` (no host read of the offsets: capturable in a CUDA graph). In checking
  /// mode (WeightGradOptions::check_offsets) the device check, a copy of its verdict and a stream
  /// synchronisation first.
  void run(cudaStream_t stream) const;
  /// Re-points the plan at the buffers of `gemm`: the call the plan was built for in everything
  /// but its pointers (offsets, dD_t, scale_dD_t, A_t, scale_A_t, dB); anything else that differs
  /// is refused (std::invalid_argument naming it). The new pointers are checked as the
  /// constructor checks them; the tensor maps' addresses are rewritten (host work only, nothing
  /// launched). If it throws, the plan is unchanged. Not concurrently with run() of this plan on
  /// another thread.
  void rebind(const WeightGradGemm& gemm);
  std::string describe() const;
  /// CTAs of the persistent grid.
  int grid_ctas() const;
  /// The kernel the plan runs.
  const engine::KernelInfo& kernel() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace fp8gemm::ch08
