// Using fp8gemm from another project (plain C++, no CUDA compiler): quantise bf16 activations and
// weights the DeepSeek-V3 way, multiply them, check the result against the bf16 inputs' product;
// then a mixture-of-experts layer's grouped GEMM (experts of 0, 100 and 157 tokens) the same way.
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
/// Relative Frobenius error of D's rows [m0, m1) (row-major, N columns) against the product of the
/// bf16 inputs: x's rows [m0, m1) (K columns) times the N rows of w from row w0 on, transposed.
double error_against_bf16(const std::vector<std::uint16_t>& d, const std::vector<std::uint16_t>& x,
                          const std::vector<std::uint16_t>& w, std::int64_t m0, std::int64_t m1,
                          std::int64_t w0, std::int64_t N, std::int64_t K) {
  double num = 0, den = 0;
  for (std::int64_t m = m0; m < m1; ++m)
    for (std::int64_t n = 0; n < N; ++n) {
      double ref = 0;
      for (std::int64_t k = 0; k < K; ++k)
        ref += double(from_bf16(x[m * K + k])) * from_bf16(w[(w0 + n) * K + k]);
      const double got = from_bf16(d[m * N + n]);
      num += (got - ref) * (got - ref);
      den += ref * ref;
    }
  return std::sqrt(num / den);
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
  const double rel = error_against_bf16(d, x, w, 0, M, 0, N, K);
  std::printf("block-scaled FP8 GEMM %lldx%lldx%lld: relative error %.2e against the bf16 product\n",
              static_cast<long long>(M), static_cast<long long>(N), static_cast<long long>(K), rel);
  for (void* p : {static_cast<void*>(dx), static_cast<void*>(dw), static_cast<void*>(dd),
                  static_cast<void*>(qa), static_cast<void*>(qb), static_cast<void*>(sa),
                  static_cast<void*>(sb)})
    check(cudaFree(p));

  // A mixture-of-experts layer: tokens sorted by expert, any number per expert (0, 100 and 157
  // here, no padding), the experts' boundaries as int32 offsets on the device, which the host never
  // reads (so the call can be captured in a CUDA graph and replayed with other counts). Expert g's
  // weights are rows g N .. g N + N - 1 of one [G N, K] matrix; N is a multiple of 128, so
  // quantising that matrix at once gives every expert its own 128 x 128 blocks.
  const int G = 3;
  const std::int64_t T = 257, EN = 256, EK = 512;
  const std::vector<int> offsets = {0, 0, 100, 257};
  std::vector<std::uint16_t> tokens(T * EK), experts(G * EN * EK);
  for (auto& v : tokens) v = to_bf16(nd(gen));
  for (auto& v : experts) v = to_bf16(nd(gen));
  const auto lt = fp8gemm::GroupScaleLayout::mn_major_tma_aligned(T);
  const auto le = fp8gemm::BlockScaleLayout::padded(EK);
  int* doff;
  check(cudaMalloc(&doff, offsets.size() * 4));
  check(cudaMalloc(&dx, tokens.size() * 2));
  check(cudaMalloc(&dw, experts.size() * 2));
  check(cudaMalloc(&dd, T * EN * 2));
  check(cudaMalloc(&qa, T * EK));
  check(cudaMalloc(&qb, G * EN * EK));
  check(cudaMalloc(&sa, lt.required_elements(T, EK) * 4));
  check(cudaMalloc(&sb, le.required_elements(G * EN, EK) * 4));
  check(cudaMemcpy(doff, offsets.data(), offsets.size() * 4, cudaMemcpyHostToDevice));
  check(cudaMemcpy(dx, tokens.data(), tokens.size() * 2, cudaMemcpyHostToDevice));
  check(cudaMemcpy(dw, experts.data(), experts.size() * 2, cudaMemcpyHostToDevice));
  fp8gemm::quantize_1x128(dx, T, EK, EK, qa, EK, sa, lt, {}, nullptr);
  fp8gemm::quantize_128x128(dw, G * EN, EK, EK, qb, EK, sb, le, {}, nullptr);
  const fp8gemm::GroupedPlan moe({.groups = G, .rows = T, .N = EN, .K = EK, .offsets = doff,
                                  .A = qa, .B = qb, .scale_a = sa, .scale_a_layout = lt,
                                  .scale_b = sb, .scale_b_layout = le, .D = dd});
  std::printf("grouped plan: %s\n", moe.describe().c_str());
  moe.run(nullptr);
  check(cudaDeviceSynchronize());
  std::vector<std::uint16_t> dm(T * EN);
  check(cudaMemcpy(dm.data(), dd, dm.size() * 2, cudaMemcpyDeviceToHost));
  double worst = 0;
  for (int g = 0; g < G; ++g) {
    if (offsets[g + 1] == offsets[g]) continue;  // an expert without tokens writes no row
    const double e = error_against_bf16(dm, tokens, experts, offsets[g], offsets[g + 1], g * EN,
                                        EN, EK);
    std::printf("  expert %d, %d tokens: relative error %.2e\n", g, offsets[g + 1] - offsets[g], e);
    worst = e > worst ? e : worst;
  }
  for (void* p : {static_cast<void*>(doff), static_cast<void*>(dx), static_cast<void*>(dw),
                  static_cast<void*>(dd), static_cast<void*>(qa), static_cast<void*>(qb),
                  static_cast<void*>(sa), static_cast<void*>(sb)})
    check(cudaFree(p));
  // e4m3 quantisation of both operands: ~3.7e-2 measured (chapter 7).
  return rel < 5e-2 && worst < 5e-2 && worst > 0 ? 0 : 1;
}
