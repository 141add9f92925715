// Chapter 9's Hopper half: the MXFP8 recipe on the H200 (sm_90a), on the chapter-6 engine
// (common/engine/mx_scaled.cuh: a fresh tensor-core partial sum per 32-K MX block, promoted into
// FP32 with the product of the block scales). The same call as the Blackwell kernel (MxGemm,
// mx_gemm.hpp: A [M, K] and B [N, K] e4m3, UE8M0 scales in the Mx1x32 layout, K a multiple of
// 32, bf16 D, or here also a float D with accumulate: Output::f32, every path), so a model
// quantised for Blackwell runs here unchanged.
// Runs on the H200: correct, ~0.3x chapter 7 (README, "The Hopper half", says why); the opt-in
// dequantize_bf16 path (HopperPath) trades a workspace for bf16 tensor cores that apply the scales,
// exactly; the opt-in requantize_block_scaled path trades exactness for chapter 7's kernel.
//
//   fp8gemm::ch09::HopperPlan plan(gemm);   // validate, prepare the kernel, tensor maps: once
//   plan.run(stream);                       // launch only
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include "common/engine/plan.hpp"
#include "mx_gemm.hpp"

namespace fp8gemm::ch07 {
class Plan;  // chapter 7's plan (bs_gemm.hpp): the requantize_block_scaled path's GEMM
}  // namespace fp8gemm::ch07

namespace fp8gemm::ch09 {

/// Which of the two Hopper recipes a plan runs (README, "The Hopper half").
enum class HopperPath {
  /// The default: FP8 wgmma per 32-K MX block, each partial sum promoted into FP32 with the
  /// product of its row's and its column's scales (common/engine/mx_scaled.cuh). No workspace.
  promote_per_block,
  /// A and B dequantised to bf16 (exact for every value bf16 holds: quantize_gpu.hpp's
  /// dequantize_mx_1x32_bf16) into a workspace the plan owns, (M + N) x K x 2 bytes, then a bf16
  /// GEMM on the engine (common/engine/bf16_operands.cuh): the tensor cores apply the scales, at
  /// bf16's rate (half of FP8's). Two launches per run().
  dequantize_bf16,
  /// NOT EXACT, opt-in: A and B re-quantised into chapter 7's DeepSeek-V3 format (common/mx.hpp's
  /// rule: per 1 x 128 group of A, per 128 x 128 block of B, one power-of-two scale, that of the
  /// group's largest MX block; every element shifted down to it and rounded to e4m3) into a
  /// workspace the plan owns, (M + N) K bytes plus the FP32 scales, then chapter 7's GEMM
  /// (ch07::Plan, its kernel table) on them. Elements more than about 2^14 below their group's
  /// largest value lose bits or flush to zero (README, "A third Hopper path", measures what
  /// that does to D). Two launches per run().
  requantize_block_scaled,
};

struct HopperOptions {
  /// By name: of hopper_kernels() (or hopper_earlier_kernels(), for the chapter's comparison) on
  /// the default path, of hopper_bf16_kernels() on the dequantize_bf16 path, of chapter 7's
  /// ch07::kernels() on the requantize_block_scaled path; "" = the path's own choice (the first
  /// TMA-store kernel where D allows it; on the last path chapter 7's per-shape table). A float
  /// D (Output::f32) takes the path's FP32 kernel, f32 in its name: on the default path
  /// 128x128_s5_c1x1_promoted_f32 from registers, but with accumulate where D is 16-byte aligned
  /// with ldd % 4 == 0 128x128_s5_c1x1_promoted_f32_tma_b2 (a TMA reduce-add: 0.61-0.98x the
  /// time); on the dequantize_bf16 path its bf16 rule's tile by TMA where D is 16-byte aligned
  /// with ldd % 4 == 0 (128x256_s4_c2x1_fast_f32_tma_b2_bf16 or
  /// 128x192_s4_c1x1_fast_f32_tma_b2_bf16), else 128x256_s4_c1x1_fast_f32_bf16 from registers;
  /// chapter 7's FP32 kernels by its rule on the requantize path. A kernel named for the other
  /// D type is refused.
  std::string kernel;
  HopperPath path = HopperPath::promote_per_block;
  /// SMs the GEMM's persistent grid may use (0: all), as chapter 7's Options::max_sms. On the
  /// dequantize_bf16 path it limits the bf16 GEMM, not the dequantisation launch before it; on
  /// the requantize_block_scaled path chapter 7's GEMM, not the re-quantisation launch.
  int max_sms = 0;
};

/// The Hopper MXFP8 kernels of the current version (MxScaledMath version 3): what plans choose
/// from, and all the library offers.
const std::vector<engine::KernelInfo>& hopper_kernels();
/// The earlier versions (kernel names ending "_v1", "_v2"), compiled only so that the chapter's
/// executable and tests can compare them with the current one; slower by construction.
const std::vector<engine::KernelInfo>& hopper_earlier_kernels();
/// The bf16 GEMM kernels of the dequantize_bf16 path (names end in "_bf16").
const std::vector<engine::KernelInfo>& hopper_bf16_kernels();

class HopperPlan {
 public:
  /// Throws std::invalid_argument (bad call, before any GPU work; the rules of mx_gemm.hpp) or
  /// std::runtime_error (CUDA failure, a GPU without sm_90a).
  explicit HopperPlan(const MxGemm& gemm, const HopperOptions& options = {});
  ~HopperPlan();
  HopperPlan(const HopperPlan&) = delete;
  HopperPlan& operator=(const HopperPlan&) = delete;
  void run(cudaStream_t stream) const;
  /// The device the plan was built on; run() and rebind() refuse any other current device.
  int device() const;
  /// Re-points the plan at the buffers of `gemm`: the call the plan was built for in everything
  /// but its pointers (A, B, scale_a, scale_b, D; the scales' allocated sizes may differ too);
  /// anything else that differs is refused (std::invalid_argument naming it). The new pointers
  /// are checked as the constructor checks them; the tensor maps' addresses are rewritten (host
  /// work only). If it throws, the plan is unchanged. Not concurrently with run() of this plan on
  /// another thread.
  void rebind(const MxGemm& gemm);
  /// The engine plan run() launches: the MXFP8 kernel, or on the dequantize_bf16 path the bf16
  /// GEMM (its run() is then the GEMM alone, without the dequantisation before it). On the
  /// requantize_block_scaled path there is none: throws std::logic_error (see block_scaled()).
  const engine::EnginePlan& engine() const;
  /// On the requantize_block_scaled path, chapter 7's plan run() launches after the
  /// re-quantisation (its run() is the GEMM alone, on the operands the last run re-quantised);
  /// nullptr on the other paths.
  const ch07::Plan* block_scaled() const;
  /// Bytes of device memory the plan owns for the re-encoded operands: the dequantize_bf16 path's
  /// bf16 operands, the requantize_block_scaled path's e4m3 operands and scales (0 on the
  /// default path).
  std::size_t workspace_bytes() const;
  std::string describe() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace fp8gemm::ch09
