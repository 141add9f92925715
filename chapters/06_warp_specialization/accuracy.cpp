#include "accuracy.hpp"

#include <algorithm>
#include <random>
#include <vector>

#include "common/cuda.hpp"
#include "common/fp8.hpp"
#include "common/reference.hpp"

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

  std::vector<std::int64_t> rows = {0, M - 1};
  std::uniform_int_distribution<std::int64_t> pick(0, M - 1);
  while (std::int64_t(rows.size()) < std::min(sample_rows, M)) rows.push_back(pick(gen));
  std::sort(rows.begin(), rows.end());
  rows.erase(std::unique(rows.begin(), rows.end()), rows.end());
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

}  // namespace fp8gemm::ch06
