// Using fp8gemm from another project (plain C++, no CUDA compiler): quantise bf16 activations and
// weights the DeepSeek-V3 way, multiply them, check the result against the bf16 inputs' product.
// Without a GPU it stops after showing that a bad call is refused before any GPU work.
#include <cuda_runtime.h>
#include <fp8gemm/fp8gemm.hpp>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <random>
#include <stdexcept>
#include <vector>

namespace {
std::uint16_t to_bf16(float x) {  // round to nearest even (finite inputs)
  std::uint32_t u;
  std::memcpy(&u, &x, 4);
  return std::uint16_t((u + 0x7FFFu + ((u >> 16) & 1u)) >> 16);
}
float from_bf16(std::uint16_t b) {
  const std::uint32_t u = std::uint32_t(b) << 16;
  float x;
  std::memcpy(&x, &u, 4);
  return x;
}
void check(cudaError_t e) {
  if (e != cudaSuccess) throw std::runtime_error(cudaGetErrorString(e));
}
}  // namespace

int main() {
  std::printf("fp8gemm %s\n", fp8gemm::version());

  // A call the rules refuse throws before any GPU work (K must be a multiple of 16).
  try {
    fp8gemm::BlockScaledPlan refused(fp8gemm::BlockScaledGemm{.M = 128, .N = 128, .K = 100});
    std::printf("FAIL: K = 100 was accepted\n");
    return 1;
  } catch (const std::invalid_argument& e) {
    std::printf("refused as it should be: %s\n", e.what());
  }
  // The grouped (mixture-of-experts) entry point refuses before any GPU work too: no experts.
  try {
    fp8gemm::GroupedPlan refused(fp8gemm::GroupedGemm{.groups = 0, .rows = 128, .N = 128, .K = 128});
    std::printf("FAIL: groups = 0 was accepted\n");
    return 1;
  } catch (const std::invalid_argument& e) {
    std::printf("refused as it should be: %s\n", e.what());
  }
  // MXFP8 likewise, before looking for a GPU to run it on (K must be a multiple of 32).
  try {
    fp8gemm::MxGemm mx;
    mx.M = 128;
    mx.N = 128;
    mx.K = 48;
    fp8gemm::MxPlan refused(mx);
    std::printf("FAIL: an MXFP8 call with K = 48 was accepted\n");
    return 1;
  } catch (const std::invalid_argument& e) {
    std::printf("refused as it should be: %s\n", e.what());
  }
  // The dispatch is host code: which kernel a DeepSeek-V3 shape gets, and why.
  const fp8gemm::KernelChoice c =
      fp8gemm::choose_block_scaled(4096, 7168, 2048, false, true, "", nullptr);
  std::printf("4096x7168x2048 block-scaled: %s (%s)\n", c.kernel.c_str(), c.why.c_str());
  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
    std::printf("no CUDA GPU: the rest needs an NVIDIA Hopper GPU (sm_90a)\n");
    return 0;
  }

  // The example of the README: bf16 x (M x K) and w (N x K) -> e4m3 + scales -> D = x . w^T.
  const std::int64_t M = 256, N = 384, K = 1024;
  std::mt19937 gen(1);
  std::normal_distribution<float> nd;
  std::vector<std::uint16_t> x(M * K), w(N * K);
  for (auto& v : x) v = to_bf16(nd(gen));
  for (auto& v : w) v = to_bf16(nd(gen));
  std::uint16_t *dx, *dw, *dd;
  std::uint8_t *qa, *qb;
  float *sa, *sb;
  const auto la = fp8gemm::GroupScaleLayout::mn_major_tma_aligned(M);
  const auto lb = fp8gemm::BlockScaleLayout::padded(K);
  check(cudaMalloc(&dx, x.size() * 2));
  check(cudaMalloc(&dw, w.size() * 2));
  check(cudaMalloc(&dd, M * N * 2));
  check(cudaMalloc(&qa, M * K));
  check(cudaMalloc(&qb, N * K));
  check(cudaMalloc(&sa, la.required_elements(M, K) * 4));
  check(cudaMalloc(&sb, lb.required_elements(N, K) * 4));
  check(cudaMemcpy(dx, x.data(), x.size() * 2, cudaMemcpyHostToDevice));
  check(cudaMemcpy(dw, w.data(), w.size() * 2, cudaMemcpyHostToDevice));

  fp8gemm::quantize_1x128(dx, M, K, K, qa, K, sa, la, {}, nullptr);
  fp8gemm::quantize_128x128(dw, N, K, K, qb, K, sb, lb, {}, nullptr);
  const fp8gemm::BlockScaledPlan plan({.M = M, .N = N, .K = K, .A = qa, .B = qb, .scale_a = sa,
                                       .scale_a_layout = la, .scale_b = sb,
                                       .scale_b_layout = lb, .D = dd});
  std::printf("plan: %s\n", plan.describe().c_str());
  plan.run(nullptr);
  check(cudaDeviceSynchronize());

  std::vector<std::uint16_t> d(M * N);
  check(cudaMemcpy(d.data(), dd, d.size() * 2, cudaMemcpyDeviceToHost));
  double num = 0, den = 0;
  for (std::int64_t m = 0; m < M; ++m)
    for (std::int64_t n = 0; n < N; ++n) {
      double ref = 0;
      for (std::int64_t k = 0; k < K; ++k) ref += double(from_bf16(x[m * K + k])) * from_bf16(w[n * K + k]);
      const double got = from_bf16(d[m * N + n]);
      num += (got - ref) * (got - ref);
      den += ref * ref;
    }
  const double rel = std::sqrt(num / den);
  std::printf("block-scaled FP8 GEMM %lldx%lldx%lld: relative error %.2e against the bf16 product\n",
              static_cast<long long>(M), static_cast<long long>(N), static_cast<long long>(K), rel);
  for (void* p : {static_cast<void*>(dx), static_cast<void*>(dw), static_cast<void*>(dd),
                  static_cast<void*>(qa), static_cast<void*>(qb), static_cast<void*>(sa),
                  static_cast<void*>(sb)})
    check(cudaFree(p));
  return rel < 5e-2 ? 0 : 1;  // e4m3 quantisation of both operands: ~3.7e-2 measured (chapter 7)
}
