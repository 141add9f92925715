// bf16 operands on the engine: chapter 9's second Hopper path for MXFP8, where the operands are
// first dequantised to bf16 (exactly: e4m3's 4 significant bits times a power of two fit bf16's
// 8 significant bits and float's exponent range; dequantize_mx_1x32_bf16 in
// common/quantize_gpu.hpp) and then multiplied here, so the tensor cores apply the scales and the
// CUDA cores do nothing per accumulator.
//
//   D (M x N, bf16) = A (M x K, bf16, row-major) . B (N x K, bf16, row-major)^T
//
// The ring, the producer, the scheduler and the epilogues are the engine's, unchanged, because a
// bf16 row is just twice as many bytes: the plan describes A and B to the engine as byte matrices
// of 2 K columns (TMA moves bytes; its zero fill past K is bf16 zero), so a ring stage of 128
// bytes along K holds 64 bf16, and each of its four 32-byte steps is one wgmma m64nNk16 bf16
// instead of one m64nNk32 e4m3, with the same descriptors. A bf16 stage is half the K of an e4m3
// stage for the same bytes and tensor-core time (bf16 runs at half the FP8 rate), so the
// pipeline's timing is chapter 6's.
//
// Accumulation: the tensor cores' FP32 sums over the whole K (the fast loop). Hopper's FP8 sums
// need promotion because the tensor cores keep too few bits of them (chapter 6); the bf16 ones
// were measured not to: at K = 65536 on all-positive data every element of D is within one bf16
// ulp of the float64 sum on the H200 (test_chapter_09_hopper; chapter 9's README).
#pragma once

#include <cstdint>

#include "common/engine/kernel.cuh"

namespace fp8gemm::engine {

template <class Cfg>
struct Bf16Math : PerTensorMath<Cfg> {
  static_assert(Cfg::kAccumulation == Accumulation::fast,
                "bf16 operands: the tensor cores' FP32 sums over the whole K (no promotion loop)");
  using Base = PerTensorMath<Cfg>;
  using State = PipelineState<Cfg::kStages>;

  /// Chapter 6's fast loop with the bf16 instruction: per ring stage (64 bf16 of K) four wgmma
  /// k16 steps per 64-row slab, one commit group per stage.
  __device__ __forceinline__ static void mainloop(float (&acc)[Cfg::kWavesM][Cfg::kBlockN / 2],
                                                  State& st, const GemmParams& p, const Tile&,
                                                  std::uint32_t ring, std::uint32_t,
                                                  const std::uint64_t* full,
                                                  const std::uint64_t* empty, int wg,
                                                  std::uint32_t rank) {
    Base::template fast_loop<ptx::Bf16Mma>(acc, st, p, ring, full, empty, wg, rank);
  }
};

}  // namespace fp8gemm::engine
