// Chapter 6: the persistent, warp-specialised FP8 GEMM, the engine of chapters 6-10
// (common/engine/). This header is the chapter's entry point:
//
//   D (M x N, bf16, row-major) = scale_a * scale_b * A (M x K, e4m3, row-major)
//                                                  . B (N x K, e4m3, row-major)^T
//
//   fp8gemm::ch06::Plan plan(gemm);          // validate, check pointers and GPU, pick a kernel,
//                                            // build tensor maps: once
//   plan.run(stream);                        // launch only: any number of times, any stream
//
// Accumulation is promoted to FP32 every 128 K by default (numerically safe); fast (tensor-core
// accumulation only, like cuBLASLt's FAST_ACCUM) is opt-in: Options{.accumulation = fast}.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>
#include <string>

#include "common/engine/plan.hpp"
#include "common/gemm.hpp"
#include "kernels.hpp"

namespace fp8gemm::ch06 {

using engine::Accumulation;

struct Options {
  /// promoted (default): FP32 promotion every 128 K; fast: tensor-core accumulation only.
  Accumulation accumulation = Accumulation::promoted;
  /// SMs the persistent grid may use (0: all), to leave room for kernels running beside it.
  int max_sms = 0;
  /// A kernel by name (kernels()), overriding the per-shape table; "" = the table's choice.
  std::string kernel;
  /// Tile order; defaults choose (common/engine/plan.hpp).
  engine::RasterOptions raster;
  /// false: one CTA per tile instead of a persistent grid (the ablation's first step).
  bool persistent = true;
};

/// The SM cap the grid honours: max_sms on a persistent grid, 0 (all SMs) for one CTA per tile,
/// which ignores it. What a kernel choice for these options plans for (this chapter's rule and
/// the library's dispatch).
inline int grid_max_sms(const Options& o) { return o.persistent ? o.max_sms : 0; }

/// The rules of chapter 6's entry point (engine_requirements() with this chapter's name): any
/// M, N >= 1; K a multiple of 16; A and B 16-byte aligned; D 2-byte aligned.
GemmRequirements requirements();

/// The per-shape table: the kernel the plan uses for an M x N x K call (names in kernels()).
/// `tma_store_ok`: whether D can be stored by TMA (else a registers-epilogue kernel). `sms`: the
/// SMs its grid may use (the plan passes engine::rule_sms(Options::max_sms)); shapes outside the
/// hand table get the rules (the decode tile rule, wave efficiency) on that many SMs; the hand
/// table is the H200's 132-SM sweep, its decode rows (M <= 128) kept on `sms` only where their
/// tiles take as many waves (engine::row_keeps_waves).
const engine::KernelInfo& choose_kernel(std::int64_t M, std::int64_t N, std::int64_t K,
                                        Accumulation accumulation, bool tma_store_ok,
                                        int sms = engine::kReferenceSms);

class Plan {
 public:
  /// Throws std::invalid_argument (bad arguments, before any GPU work) or std::runtime_error
  /// (CUDA failure, no sm_90a GPU).
  explicit Plan(const PerTensorGemm& gemm, const Options& options = {});
  /// Launches on `stream`; nothing else (no validation, no allocation, no host sync).
  void run(cudaStream_t stream) const { plan_.run(stream); }
  /// Re-points the plan at the buffers of `gemm`, the same call in everything but its pointers
  /// (engine::EnginePlan::rebind(): the new pointers are checked, the tensor maps' addresses
  /// rewritten; host work only). Not concurrently with run() of this plan on another thread.
  void rebind(const PerTensorGemm& gemm) { plan_.rebind(gemm.args()); }
  const engine::EnginePlan& engine() const { return plan_; }

 private:
  engine::EnginePlan plan_;
};

/// Plan + run in one call (promoted accumulation): the form chapters 1-5 take.
void gemm(const PerTensorGemm& gemm, cudaStream_t stream);
/// The same with fast accumulation.
void gemm_fast(const PerTensorGemm& gemm, cudaStream_t stream);

}  // namespace fp8gemm::ch06
