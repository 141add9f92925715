#include <fp8gemm/fp8gemm.hpp>

// d = x . w^T in DeepSeek-V3 block-scaled FP8: x (M x K) and w (N x K) bf16 in, d (M x N) bf16
// out. All device memory; qa, qb receive x and w in e4m3, sa, sb their scales.
void fp8_linear(const std::uint16_t* x, const std::uint16_t* w, std::uint16_t* d, std::int64_t M,
                std::int64_t N, std::int64_t K, std::uint8_t* qa, std::uint8_t* qb, float* sa,
                float* sb, cudaStream_t stream) {
  const auto la = fp8gemm::GroupScaleLayout::mn_major_tma_aligned(M);  // x: 1 x 128 groups
  const auto lb = fp8gemm::BlockScaleLayout::padded(K);                // w: 128 x 128 blocks
  fp8gemm::quantize_1x128(x, M, K, K, qa, K, sa, la, {}, stream);
  fp8gemm::quantize_128x128(w, N, K, K, qb, K, sb, lb, {}, stream);
  const fp8gemm::BlockScaledPlan plan({.M = M, .N = N, .K = K, .A = qa, .B = qb, .scale_a = sa,
                                       .scale_a_layout = la, .scale_b = sb, .scale_b_layout = lb,
                                       .D = d});  // validates, picks the kernel: keep it per shape
  plan.run(stream);                               // launches only
}
