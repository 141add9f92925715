// Operands and checks of chapter 8's weight gradient for the executable (test and benchmark
// code: links the float64 reference of fp8gemm::common).
//
// Operands are made on the device in the layout the kernel reads (wgrad.hpp): random e4m3 on
// every expert's real tokens, zero codes on its padding to the next multiple of 128, scales
// 2^U(-3, 3) per (row, token block), so a scale read for the wrong row, block or group shows in
// the error. The check compares sampled rows of every dB_g (all K columns) with a float64
// reduction over the expert's tokens of the dequantised operands; an empty expert's sampled rows
// must be exactly 0.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "common/cuda.hpp"
#include "common/scale_layout.hpp"
#include "wgrad.hpp"

namespace fp8gemm::ch08 {

/// One weight-gradient problem: tokens per expert and the N x K of each dB_g.
/// Name as bench/peers_moe.py's: wgrad_g<G>_t<T>_n<N>_k<K>.
struct WgradShape {
  std::string name;
  std::vector<int> counts;
  std::int64_t N = 0, K = 0;
  int groups() const { return int(counts.size()); }
  std::int64_t tokens() const;
  /// P_0 .. P_G: each expert's first column in the padded token layout.
  std::vector<std::int64_t> padded_offsets() const;
  std::vector<int> offsets() const;  ///< 0, then the running sums of counts
};

struct WgradOperands {
  WgradShape shape;
  std::int64_t capacity = 0;  ///< P_G: the columns of dD_t and A_t
  DeviceBuffer<std::uint8_t> dD_t, A_t;  ///< [N, capacity], [K, capacity] e4m3
  DeviceBuffer<float> scale_dD_t, scale_A_t;  ///< [capacity / 128][round_up(N or K, 4)]
  DeviceBuffer<float> dB;  ///< [G N, K] (WeightGradOutput::f32)
  DeviceBuffer<std::uint16_t> dB_bf16;  ///< [G N, K] (WeightGradOutput::bf16; allocated on first use)
  DeviceBuffer<int> offsets;

  WgradOperands(const WgradShape& shape, std::uint64_t seed);
  /// The call over these operands, writing `output` into dB or dB_bf16.
  WeightGradGemm gemm(bool accumulate = false, WeightGradOutput output = WeightGradOutput::f32);
};

struct WgradCheck {
  bool ok = false;
  double worst_rel = 0;      ///< the worst expert's relative Frobenius error over its sampled rows
  int worst_group = -1;
  std::int64_t non_finite = 0;
  std::int64_t empty_nonzero = 0;  ///< sampled entries of empty experts that are not 0
  std::string describe;
};

/// Fills dB (or dB_bf16, as `output` says) with NaN, runs `launch` on the legacy stream, then
/// compares `rows_per_group` sampled rows of every dB_g (its first and last among them) with the
/// float64 reference; tolerance per_tensor_tolerance(count_g) for expert g (it covers bf16's
/// rounding of the result, as for every bf16 output of the chapters). Synchronous.
WgradCheck run_and_check_wgrad(const WgradOperands& ops,
                               const std::function<void(cudaStream_t)>& launch,
                               int rows_per_group, std::uint64_t seed,
                               WeightGradOutput output = WeightGradOutput::f32);

}  // namespace fp8gemm::ch08
