#include "common/check.hpp"

#include <algorithm>
#include <cstdio>
#include <random>

#include "common/cuda.hpp"
#include "common/quantize.hpp"

namespace fp8gemm {

std::string CheckResult::describe() const {
  char buf[160];
  std::snprintf(buf, sizeof buf, "rel %.2e, diff %.1e, %lld rows%s", error.rel_frobenius,
                error.deepgemm_diff, static_cast<long long>(rows_checked),
                error.non_finite ? ", NaN/inf present" : "");
  return buf;
}

namespace {
struct Operands {
  std::vector<std::uint8_t> a, b;
  float scale_a, scale_b;
  DeviceBuffer<std::uint8_t> dA, dB;
  DeviceBuffer<std::uint16_t> dD;
  DeviceBuffer<float> dScaleA, dScaleB;
  Operands(std::int64_t M, std::int64_t N, std::int64_t K, std::uint64_t seed)
      : a(random_e4m3(std::size_t(M * K), seed * 4 + 1)),
        b(random_e4m3(std::size_t(N * K), seed * 4 + 2)) {
    std::mt19937_64 gen(seed * 4 + 3);
    std::uniform_real_distribution<float> dist(0.25f, 2.0f);
    scale_a = dist(gen);
    scale_b = dist(gen);
    dA = DeviceBuffer<std::uint8_t>(a);
    dB = DeviceBuffer<std::uint8_t>(b);
    dD = DeviceBuffer<std::uint16_t>(std::size_t(M * N));
    dScaleA = DeviceBuffer<float>(std::vector<float>{scale_a});
    dScaleB = DeviceBuffer<float>(std::vector<float>{scale_b});
  }
  PerTensorGemm gemm(std::int64_t M, std::int64_t N, std::int64_t K) const {
    return PerTensorGemm{M, N, K, dA.data(), dB.data(), dD.data(), dScaleA.data(), dScaleB.data()};
  }
};
}  // namespace

CheckResult check_per_tensor(const PerTensorKernel& kernel, std::int64_t M, std::int64_t N,
                             std::int64_t K, const CheckOptions& opt) {
  Operands ops(M, N, K, opt.seed);
  poison_bf16(ops.dD.data(), ops.dD.size());
  kernel(ops.gemm(M, N, K), nullptr);
  FP8GEMM_CUDA_CHECK(cudaDeviceSynchronize());
  CheckResult r;
  r.d = ops.dD.download();
  r.scale_a = ops.scale_a;
  r.scale_b = ops.scale_b;
  r.tolerance = per_tensor_tolerance(K);

  std::vector<std::int64_t> rows;
  if (M <= opt.full_reference_max_m) {
    for (std::int64_t m = 0; m < M; ++m) rows.push_back(m);
  } else {
    std::mt19937_64 gen(opt.seed * 7 + 5);
    std::uniform_int_distribution<std::int64_t> pick(0, M - 1);
    rows.push_back(0);
    rows.push_back(M - 1);
    while (std::int64_t(rows.size()) < opt.sample_rows) rows.push_back(pick(gen));
    std::sort(rows.begin(), rows.end());
    rows.erase(std::unique(rows.begin(), rows.end()), rows.end());
  }
  // Dequantise only the rows of A we need; B whole.
  std::vector<double> a_rows(rows.size() * std::size_t(K));
  for (std::size_t i = 0; i < rows.size(); ++i)
    for (std::int64_t k = 0; k < K; ++k)
      a_rows[i * K + k] = double(e4m3_decode(ops.a[rows[i] * K + k])) * ops.scale_a;
  const std::vector<double> b = dequantize_e4m3(ops.b, ops.scale_b);
  std::vector<std::int64_t> local(rows.size());
  for (std::size_t i = 0; i < rows.size(); ++i) local[i] = std::int64_t(i);
  const std::vector<double> ref =
      reference_gemm_rows(std::int64_t(rows.size()), N, K, a_rows.data(), b.data(), local);
  r.error = compare_bf16_rows(r.d.data(), N, rows, ref.data());
  // Unwritten entries outside the sampled rows must still be caught: count NaNs over all of D.
  std::int64_t nan_all = 0;
  for (std::uint16_t v : r.d) nan_all += ((v & 0x7F80) == 0x7F80) ? 1 : 0;
  if (nan_all > 0) {
    r.error.non_finite = std::max(r.error.non_finite, nan_all);
    r.error.rel_frobenius = INFINITY;
  }
  r.rows_checked = std::int64_t(rows.size());
  return r;
}

bool check_deterministic(const PerTensorKernel& kernel, std::int64_t M, std::int64_t N,
                         std::int64_t K, int runs, std::uint64_t seed) {
  Operands ops(M, N, K, seed);
  std::vector<std::uint16_t> first;
  for (int i = 0; i < runs; ++i) {
    poison_bf16(ops.dD.data(), ops.dD.size());
    kernel(ops.gemm(M, N, K), nullptr);
    FP8GEMM_CUDA_CHECK(cudaDeviceSynchronize());
    std::vector<std::uint16_t> d = ops.dD.download();
    if (i == 0) first = std::move(d);
    else if (d != first) return false;
  }
  return true;
}

}  // namespace fp8gemm
