// The library GPU tests' float64 check of a bf16 D on sampled rows (test_library_gpu.cu,
// test_library_threads_gpu.cu): the reference rows, and the check of a D (M x N, packed) against
// them, globally and per 128 x 128 tile, within the per-tensor tolerance of K.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "common/check.hpp"
#include "common/cuda.hpp"
#include "common/fp8.hpp"
#include "common/reference.hpp"

namespace fp8gemm::test {

struct RowReference {
  std::int64_t N = 0;
  std::vector<std::int64_t> rows;
  std::vector<double> ref;  // rows.size() x N
  double tolerance = 0;
  /// Reference rows computed elsewhere (e.g. chapter 9's MX definition) for a product over K.
  static RowReference of_rows(std::int64_t N, std::vector<std::int64_t> rows,
                              std::vector<double> ref, std::int64_t K) {
    RowReference r;
    r.N = N;
    r.rows = std::move(rows);
    r.ref = std::move(ref);
    r.tolerance = per_tensor_tolerance(K);
    return r;
  }
  /// Fills A (M x K) and B (N x K, packed) with random e4m3 codes (seeds seed + 1, seed + 2),
  /// samples 24 rows of D (seed + 3) and computes their float64 reference from the operands
  /// dequantised by `a_scale(row, k)` and `b_scale(n, k)`, with the per-tensor tolerance.
  using Scale = std::function<double(std::int64_t, std::int64_t)>;
  void init(const DeviceBuffer<std::uint8_t>& A, const DeviceBuffer<std::uint8_t>& B,
            std::int64_t M, std::int64_t n, std::int64_t K, std::uint64_t seed,
            const Scale& a_scale, const Scale& b_scale) {
    fill_random_e4m3(A.data(), A.size(), seed + 1, 1.0f);
    fill_random_e4m3(B.data(), B.size(), seed + 2, 1.0f);
    FP8GEMM_CUDA_CHECK(cudaDeviceSynchronize());
    const auto a = A.download(), b = B.download();
    N = n;
    rows = sample_rows(M, 24, seed + 3);
    std::vector<double> ar(rows.size() * std::size_t(K)), ball(std::size_t(N * K));
    for (std::size_t i = 0; i < rows.size(); ++i)
      for (std::int64_t k = 0; k < K; ++k)
        ar[i * std::size_t(K) + std::size_t(k)] =
            double(e4m3_decode(a[std::size_t(rows[i] * K + k)])) * a_scale(rows[i], k);
    for (std::int64_t j = 0; j < N; ++j)
      for (std::int64_t k = 0; k < K; ++k)
        ball[std::size_t(j * K + k)] =
            double(e4m3_decode(b[std::size_t(j * K + k)])) * b_scale(j, k);
    std::vector<std::int64_t> local(rows.size());
    for (std::size_t i = 0; i < local.size(); ++i) local[i] = std::int64_t(i);
    ref = reference_gemm_rows(std::int64_t(local.size()), N, K, ar.data(), ball.data(), local);
    tolerance = per_tensor_tolerance(K);
  }
  /// "" when every compared entry is finite and the relative and worst-tile errors are within
  /// the tolerance; else what failed.
  std::string check(const std::vector<std::uint16_t>& d) const {
    const ErrorStats e = compare_bf16_rows(d.data(), N, rows, ref.data());
    const double tile = worst_tile_error(d.data(), N, rows, ref.data());
    if (e.non_finite == 0 && e.rel_frobenius <= tolerance && tile <= tolerance) return "";
    return "float64 check failed: rel " + std::to_string(e.rel_frobenius) + ", worst tile " +
           std::to_string(tile) + ", non-finite " + std::to_string(e.non_finite) + ", tolerance " +
           std::to_string(tolerance);
  }
};

}  // namespace fp8gemm::test
