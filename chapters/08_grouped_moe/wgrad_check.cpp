#include "wgrad_check.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <random>
#include <stdexcept>

#include "common/check.hpp"
#include "common/fp8.hpp"
#include "common/reference.hpp"

namespace fp8gemm::ch08 {

namespace {
std::int64_t round_up128(std::int64_t x) { return (x + 127) / 128 * 128; }
}  // namespace

std::int64_t WgradShape::tokens() const {
  std::int64_t t = 0;
  for (int c : counts) t += c;
  return t;
}

std::vector<std::int64_t> WgradShape::padded_offsets() const {
  std::vector<std::int64_t> p(counts.size() + 1, 0);
  for (std::size_t g = 0; g < counts.size(); ++g) p[g + 1] = p[g] + round_up128(counts[g]);
  return p;
}

std::vector<int> WgradShape::offsets() const {
  std::vector<int> o(counts.size() + 1, 0);
  for (std::size_t g = 0; g < counts.size(); ++g) o[g + 1] = o[g] + counts[g];
  return o;
}

WgradOperands::WgradOperands(const WgradShape& s, std::uint64_t seed)
    : shape(s), capacity(std::max<std::int64_t>(128, s.padded_offsets().back())) {
  const std::int64_t N = s.N, K = s.K, blocks = capacity / 128;
  dD_t = DeviceBuffer<std::uint8_t>(std::size_t(N * capacity));
  A_t = DeviceBuffer<std::uint8_t>(std::size_t(K * capacity));
  fill_random_e4m3(dD_t.data(), dD_t.size(), seed, 1.0f);
  fill_random_e4m3(A_t.data(), A_t.size(), seed + 1, 1.0f);
  // Each expert's padding columns: zero codes (what the token quantiser writes there).
  const auto P = s.padded_offsets();
  for (int g = 0; g < s.groups(); ++g) {
    const std::int64_t first = P[std::size_t(g)] + s.counts[std::size_t(g)];
    const std::int64_t width = P[std::size_t(g) + 1] - first;
    if (width == 0) continue;
    FP8GEMM_CUDA_CHECK(cudaMemset2D(dD_t.data() + first, std::size_t(capacity), 0,
                                    std::size_t(width), std::size_t(N)));
    FP8GEMM_CUDA_CHECK(cudaMemset2D(A_t.data() + first, std::size_t(capacity), 0,
                                    std::size_t(width), std::size_t(K)));
  }
  std::mt19937_64 gen(seed + 2);
  std::uniform_real_distribution<float> e(-3.0f, 3.0f);
  auto scales = [&](std::int64_t rows) {
    std::vector<float> v(std::size_t(blocks * GroupScaleLayout::mn_major_tma_aligned(rows).ld));
    for (auto& x : v) x = std::exp2(e(gen));
    return DeviceBuffer<float>(v);
  };
  scale_dD_t = scales(N);
  scale_A_t = scales(K);
  dB = DeviceBuffer<float>(std::size_t(std::int64_t(s.groups()) * N * K));
  offsets = DeviceBuffer<int>(s.offsets());
  FP8GEMM_CUDA_CHECK(cudaDeviceSynchronize());
}

WeightGradGemm WgradOperands::gemm(bool accumulate, WeightGradOutput output) {
  const bool bf16 = output == WeightGradOutput::bf16;
  if (bf16 && dB_bf16.size() == 0) dB_bf16 = DeviceBuffer<std::uint16_t>(dB.size());
  WeightGradGemm g;
  g.groups = shape.groups();
  g.N = shape.N;
  g.K = shape.K;
  g.token_capacity = capacity;
  g.offsets = offsets.data();
  g.dD_t = dD_t.data();
  g.scale_dD_t = scale_dD_t.data();
  g.A_t = A_t.data();
  g.scale_A_t = scale_A_t.data();
  g.dB = bf16 ? static_cast<void*>(dB_bf16.data()) : static_cast<void*>(dB.data());
  g.output = output;
  g.accumulate = accumulate;
  return g;
}

WgradCheck run_and_check_wgrad(const WgradOperands& ops,
                               const std::function<void(cudaStream_t)>& launch,
                               int rows_per_group, std::uint64_t seed, WeightGradOutput output) {
  const WgradShape& s = ops.shape;
  const std::int64_t N = s.N, K = s.K, cap = ops.capacity;
  const bool bf16 = output == WeightGradOutput::bf16;
  if (bf16 && ops.dB_bf16.size() != ops.dB.size())
    throw std::invalid_argument("run_and_check_wgrad: bf16 output, but dB_bf16 is not allocated");
  // NaN in either type (0xFFFF...: all exponent and mantissa bits set)
  if (bf16)
    FP8GEMM_CUDA_CHECK(cudaMemset(const_cast<std::uint16_t*>(ops.dB_bf16.data()), 0xFF, ops.dB_bf16.size() * 2));
  else
    FP8GEMM_CUDA_CHECK(cudaMemset(const_cast<float*>(ops.dB.data()), 0xFF, ops.dB.size() * 4));
  launch(nullptr);
  FP8GEMM_CUDA_CHECK(cudaDeviceSynchronize());
  const auto dd = ops.dD_t.download();
  const auto at = ops.A_t.download();
  const auto sd = ops.scale_dD_t.download();
  const auto sa = ops.scale_A_t.download();
  const std::int64_t ld_d = GroupScaleLayout::mn_major_tma_aligned(N).ld;
  const std::int64_t ld_a = GroupScaleLayout::mn_major_tma_aligned(K).ld;
  std::array<double, 256> decode{};
  for (int c = 0; c < 256; ++c) decode[std::size_t(c)] = double(e4m3_decode(std::uint8_t(c)));
  const auto P = s.padded_offsets();
  WgradCheck r;
  r.ok = true;
  std::vector<float> got(static_cast<std::size_t>(K));
  std::vector<std::uint16_t> got_bf16(static_cast<std::size_t>(K));
  for (int g = 0; g < s.groups(); ++g) {
    const std::int64_t count = s.counts[std::size_t(g)], p0 = P[std::size_t(g)];
    const auto rows = sample_rows(N, std::min<std::int64_t>(rows_per_group, N), seed + std::uint64_t(g));
    double err2 = 0, ref2 = 0;
    for (std::int64_t n : rows) {
      if (bf16) {
        FP8GEMM_CUDA_CHECK(cudaMemcpy(got_bf16.data(), ops.dB_bf16.data() + (g * N + n) * K,
                                      std::size_t(K) * 2, cudaMemcpyDeviceToHost));
        for (std::int64_t k = 0; k < K; ++k) got[std::size_t(k)] = bf16_to_float(got_bf16[std::size_t(k)]);
      } else {
        FP8GEMM_CUDA_CHECK(cudaMemcpy(got.data(), ops.dB.data() + (g * N + n) * K, std::size_t(K) * 4,
                                      cudaMemcpyDeviceToHost));
      }
      if (count == 0) {
        for (float v : got) r.empty_nonzero += v != 0.0f;
        continue;
      }
      // ref[k] = sum over the expert's tokens i of dD_t[n][p0 + i] sd . A_t[k][p0 + i] sa
      std::vector<double> a(static_cast<std::size_t>(count));
      for (std::int64_t i = 0; i < count; ++i) {
        const std::int64_t j = p0 + i;
        a[std::size_t(i)] = decode[dd[std::size_t(n * cap + j)]] * sd[std::size_t((j / 128) * ld_d + n)];
      }
      for (std::int64_t k = 0; k < K; ++k) {
        double acc = 0;
        const std::uint8_t* b = at.data() + std::size_t(k * cap + p0);
        for (std::int64_t i = 0; i < count; ++i)
          acc += a[std::size_t(i)] * decode[b[i]] * double(sa[std::size_t(((p0 + i) / 128) * ld_a + k)]);
        const double v = double(got[std::size_t(k)]);
        if (!std::isfinite(v)) ++r.non_finite;
        err2 += (v - acc) * (v - acc);
        ref2 += acc * acc;
      }
    }
    if (count == 0) continue;
    const double rel = ref2 > 0 ? std::sqrt(err2 / ref2) : std::sqrt(err2);
    if (!(rel <= per_tensor_tolerance(count))) r.ok = false;
    if (!(rel <= r.worst_rel)) {
      r.worst_rel = rel;
      r.worst_group = g;
    }
  }
  r.ok = r.ok && r.non_finite == 0 && r.empty_nonzero == 0;
  char buf[200];
  std::snprintf(buf, sizeof buf, "worst expert %d rel %.2e, %d rows per expert, %lld non-finite, "
                "%lld non-zero in empty experts", r.worst_group, r.worst_rel, rows_per_group,
                static_cast<long long>(r.non_finite), static_cast<long long>(r.empty_nonzero));
  r.describe = buf;
  return r;
}

}  // namespace fp8gemm::ch08
