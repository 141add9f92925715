// Operands and checks for chapter 7's executable and tests: block-scaled operands on the device
// (random e4m3 values, random power-of-two-spread scales) and a float64 check of sampled rows.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "bs_gemm.hpp"
#include "common/cuda.hpp"

namespace fp8gemm::ch07 {

/// Device operands of one M x N x K block-scaled call: A, B (N(0, 1) e4m3), scale_a mn-major
/// TMA-aligned, scale_b padded, D bf16; scales drawn as 2^U(-4, 4) so that a wrong scale index
/// shows. gemm() describes them.
struct DeviceOperands {
  std::int64_t M, N, K;
  DeviceBuffer<std::uint8_t> A, B;
  DeviceBuffer<float> scale_a, scale_b;
  DeviceBuffer<std::uint16_t> D;
  DeviceOperands(std::int64_t M, std::int64_t N, std::int64_t K, std::uint64_t seed);
  BlockScaledGemm gemm() const;
};

struct SampledCheck {
  bool ok = false;
  double rel = 0, worst_tile = 0;
  std::string describe;  ///< "rel 1.7e-03, worst tile 1.8e-03, 8 rows"
};

/// Runs `plan` once with D poisoned, downloads `rows` sampled rows of A (first and last
/// included), all of B and the scales, computes those rows of D in float64 from the dequantised
/// operands and compares: relative and worst-128x128-tile error within per_tensor_tolerance(K),
/// every entry finite.
SampledCheck sampled_check(const DeviceOperands& ops, const Plan& plan, std::int64_t rows,
                           std::uint64_t seed);

/// Rows `rows` of A.B^T in float64 from the dequantised operands (rows.size() x N, row-major):
/// sampled_check's reference, and the float D check's (chapter 7's --float-d).
std::vector<double> reference_rows(const DeviceOperands& ops, const std::vector<std::int64_t>& rows);

}  // namespace fp8gemm::ch07
