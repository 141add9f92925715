#include "bs_check.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <random>

#include "common/check.hpp"
#include "common/fp8.hpp"
#include "common/reference.hpp"

namespace fp8gemm::ch07 {

namespace {
std::vector<float> random_scales(std::size_t n, std::uint64_t seed) {
  std::mt19937_64 gen(seed);
  std::uniform_real_distribution<float> e(-4.0f, 4.0f);
  std::vector<float> v(n);
  for (auto& x : v) x = std::exp2(e(gen));
  return v;
}
}  // namespace

DeviceOperands::DeviceOperands(std::int64_t M_, std::int64_t N_, std::int64_t K_, std::uint64_t seed)
    : M(M_), N(N_), K(K_), A(std::size_t(M_ * K_)), B(std::size_t(N_ * K_)),
      scale_a(random_scales(std::size_t(ceil_div(K_, 128) * round_up(M_, 4)), seed * 7 + 1)),
      scale_b(random_scales(std::size_t(ceil_div(N_, 128) * round_up(ceil_div(K_, 128), 4)),
                            seed * 7 + 2)),
      D(std::size_t(M_ * N_)) {
  fill_random_e4m3(A.data(), A.size(), seed * 7 + 3, 1.0f);
  fill_random_e4m3(B.data(), B.size(), seed * 7 + 4, 1.0f);
  FP8GEMM_CUDA_CHECK(cudaDeviceSynchronize());
}

BlockScaledGemm DeviceOperands::gemm() const {
  return {.M = M, .N = N, .K = K, .A = A.data(), .B = B.data(), .scale_a = scale_a.data(),
          .scale_a_layout = GroupScaleLayout::mn_major_tma_aligned(M), .scale_b = scale_b.data(),
          .scale_b_layout = BlockScaleLayout::padded(K), .D = D.data()};
}

std::vector<double> reference_rows(const DeviceOperands& ops, const std::vector<std::int64_t>& rows) {
  const std::int64_t M = ops.M, N = ops.N, K = ops.K;
  const std::vector<std::uint8_t> a = ops.A.download(), b = ops.B.download();
  const std::vector<float> sa = ops.scale_a.download(), sb = ops.scale_b.download();
  const GroupScaleLayout la = GroupScaleLayout::mn_major_tma_aligned(M);
  const BlockScaleLayout lb = BlockScaleLayout::padded(K);
  std::vector<double> a_rows(rows.size() * std::size_t(K));
  for (std::size_t i = 0; i < rows.size(); ++i)
    for (std::int64_t k = 0; k < K; ++k)
      a_rows[i * std::size_t(K) + std::size_t(k)] =
          double(e4m3_decode(a[std::size_t(rows[i] * K + k)])) *
          double(sa[std::size_t(la.offset(rows[i], k / 128))]);
  std::vector<double> b_all(b.size());
  for (std::int64_t n = 0; n < N; ++n)
    for (std::int64_t k = 0; k < K; ++k)
      b_all[std::size_t(n * K + k)] = double(e4m3_decode(b[std::size_t(n * K + k)])) *
                                      double(sb[std::size_t(lb.offset(n / 128, k / 128))]);
  std::vector<std::int64_t> local(rows.size());
  for (std::size_t i = 0; i < rows.size(); ++i) local[i] = std::int64_t(i);
  return reference_gemm_rows(std::int64_t(rows.size()), N, K, a_rows.data(), b_all.data(), local);
}

SampledCheck sampled_check(const DeviceOperands& ops, const Plan& plan, std::int64_t sample_rows,
                           std::uint64_t seed) {
  const std::int64_t M = ops.M, N = ops.N, K = ops.K;
  poison_bf16(ops.D.data(), ops.D.size());
  plan.run(nullptr);
  FP8GEMM_CUDA_CHECK(cudaDeviceSynchronize());
  const std::vector<std::uint16_t> d = ops.D.download();
  const std::vector<std::int64_t> rows = fp8gemm::sample_rows(M, sample_rows, seed);
  const std::vector<double> ref = reference_rows(ops, rows);
  const ErrorStats e = compare_bf16_rows(d.data(), N, rows, ref.data());
  SampledCheck r;
  r.rel = e.rel_frobenius;
  r.worst_tile = worst_tile_error(d.data(), N, rows, ref.data());
  const double tol = per_tensor_tolerance(K);
  r.ok = e.non_finite == 0 && r.rel <= tol && r.worst_tile <= tol;
  char buf[160];
  std::snprintf(buf, sizeof buf, "rel %.2e, worst tile %.2e, %zu rows%s", r.rel, r.worst_tile,
                rows.size(), e.non_finite ? ", NON-FINITE entries" : "");
  r.describe = buf;
  return r;
}

}  // namespace fp8gemm::ch07
