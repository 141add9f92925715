#include "accuracy.hpp"

#include <algorithm>
#include <cstdio>
#include <random>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "common/cuda.hpp"
#include "common/fp8.hpp"
#include "common/check.hpp"
#include "common/reference.hpp"
#include "ws_gemm.hpp"

namespace fp8gemm::ch06 {

AccuracyResult uniform_data_error(const std::function<void(const PerTensorGemm&, cudaStream_t)>& launch,
                                  std::int64_t M, std::int64_t N, std::int64_t K, float lo,
                                  float hi, std::uint64_t seed, std::int64_t sample_rows) {
  std::mt19937_64 gen(seed);
  std::uniform_real_distribution<float> dist(lo, hi);
  auto draw = [&](std::size_t n) {
    std::vector<std::uint8_t> v(n);
    for (auto& x : v) x = fp8_encode(dist(gen), Fp8Format::e4m3, Saturation::finite);
    return v;
  };
  const std::vector<std::uint8_t> a = draw(std::size_t(M * K)), b = draw(std::size_t(N * K));
  DeviceBuffer<std::uint8_t> dA(a), dB(b);
  DeviceBuffer<std::uint16_t> dD(std::size_t(M * N));
  DeviceBuffer<float> scales(std::vector<float>{1.0f, 0, 0, 0, 1.0f});  // 16-byte aligned
  poison_bf16(dD.data(), dD.size());
  launch(PerTensorGemm{M, N, K, dA.data(), dB.data(), dD.data(), scales.data(), scales.data() + 4},
         nullptr);
  FP8GEMM_CUDA_CHECK(cudaDeviceSynchronize());
  const std::vector<std::uint16_t> d = dD.download();

  const std::vector<std::int64_t> rows = fp8gemm::sample_rows(M, sample_rows, seed + 1);
  std::vector<double> a_rows(rows.size() * std::size_t(K));
  for (std::size_t i = 0; i < rows.size(); ++i)
    for (std::int64_t k = 0; k < K; ++k)
      a_rows[i * std::size_t(K) + std::size_t(k)] = double(e4m3_decode(a[std::size_t(rows[i] * K + k)]));
  std::vector<double> b_all(b.size());
  for (std::size_t i = 0; i < b.size(); ++i) b_all[i] = double(e4m3_decode(b[i]));
  std::vector<std::int64_t> local(rows.size());
  for (std::size_t i = 0; i < rows.size(); ++i) local[i] = std::int64_t(i);
  const std::vector<double> ref =
      reference_gemm_rows(std::int64_t(rows.size()), N, K, a_rows.data(), b_all.data(), local);
  const ErrorStats e = compare_bf16_rows(d.data(), N, rows, ref.data());
  AccuracyResult r;
  r.rel_frobenius = e.rel_frobenius;
  r.non_finite = e.non_finite;
  r.worst_tile = worst_tile_error(d.data(), N, rows, ref.data());
  r.rows = std::int64_t(rows.size());
  return r;
}

SampledCheck sampled_check(const PerTensorGemm& g, const Options& options, std::int64_t rows,
                           std::uint64_t seed) {
  // Rows of A, B and D lda, ldb and ldd elements apart (K, K and N when packed); only D's first N
  // entries of each row are poisoned and read, so D's row padding is left as the caller had it.
  const GemmArgs args = g.args();
  const std::int64_t lda = args.lda, ldb = args.ldb, ldd = args.ldd;
  const Plan plan(g, options);
  FP8GEMM_CUDA_CHECK(cudaMemset2D(g.D, std::size_t(ldd) * 2, 0xFF, std::size_t(g.N) * 2,
                                  std::size_t(g.M)));  // 0xFFFF: a bf16 NaN
  plan.run(nullptr);
  FP8GEMM_CUDA_CHECK(cudaDeviceSynchronize());

  const std::vector<std::int64_t> sel = sample_rows(g.M, rows, seed);
  float scales[2];
  FP8GEMM_CUDA_CHECK(cudaMemcpy(&scales[0], g.scale_a, 4, cudaMemcpyDeviceToHost));
  FP8GEMM_CUDA_CHECK(cudaMemcpy(&scales[1], g.scale_b, 4, cudaMemcpyDeviceToHost));
  std::vector<std::uint8_t> b(std::size_t(g.N * g.K));
  FP8GEMM_CUDA_CHECK(cudaMemcpy2D(b.data(), std::size_t(g.K), g.B, std::size_t(ldb),
                                  std::size_t(g.K), std::size_t(g.N), cudaMemcpyDeviceToHost));
  std::vector<std::uint8_t> a(sel.size() * std::size_t(g.K));
  std::vector<std::uint16_t> d(sel.size() * std::size_t(g.N));
  for (std::size_t i = 0; i < sel.size(); ++i) {
    FP8GEMM_CUDA_CHECK(cudaMemcpy(a.data() + i * g.K, g.A + sel[i] * lda, std::size_t(g.K),
                                  cudaMemcpyDeviceToHost));
    FP8GEMM_CUDA_CHECK(cudaMemcpy(d.data() + i * g.N, g.D + sel[i] * ldd, std::size_t(g.N) * 2,
                                  cudaMemcpyDeviceToHost));
  }
  double decode[256];
  for (int v = 0; v < 256; ++v) decode[v] = double(e4m3_decode(std::uint8_t(v)));
  const double scale = double(scales[0]) * double(scales[1]);
  std::vector<double> ref(sel.size() * std::size_t(g.N));
  std::vector<std::thread> workers;
  for (std::size_t i = 0; i < sel.size(); ++i)
    workers.emplace_back([&, i] {
      const std::uint8_t* ar = a.data() + i * g.K;
      for (std::int64_t n = 0; n < g.N; ++n) {
        const std::uint8_t* br = b.data() + n * g.K;
        double acc = 0;
        for (std::int64_t k = 0; k < g.K; ++k) acc += decode[ar[k]] * decode[br[k]];
        ref[i * g.N + n] = acc * scale;
      }
    });
  for (auto& w : workers) w.join();
  // d and ref hold the sampled rows contiguously: compare them as rows 0 .. n-1 of a D whose
  // tile boundaries are those of the sampled rows' own indices.
  std::vector<std::int64_t> local(sel.size());
  for (std::size_t i = 0; i < sel.size(); ++i) local[i] = std::int64_t(i);
  const ErrorStats e = compare_bf16_rows(d.data(), g.N, local, ref.data());
  const double tile = worst_tile_error(d.data(), g.N, local, ref.data(), 1, 128);
  const double tol = per_tensor_tolerance(g.K);
  SampledCheck r;
  r.ok = e.ok(tol) && tile <= tol;
  char buf[200];
  std::snprintf(buf, sizeof buf, "rel %.2e, worst 1x128 piece %.2e, %zu rows", e.rel_frobenius,
                tile, sel.size());
  r.describe = buf;
  return r;
}

}  // namespace fp8gemm::ch06
