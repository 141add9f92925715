// Chapter 8 end to end: one expert layer's three GEMMs from bf16 tensors, through the GPU
// quantisers, on the chapter's kernels, as training code would call them:
//   forward  Y_g  = X_g . W_g^T        X [T, K] -> quantize_1x128, W [G N, K] -> quantize_128x128,
//                                      the grouped kernel (contiguous, device offsets)
//   dgrad    dX_g = dY_g . W_g         dY [T, N] -> quantize_1x128 (along N), W_g^T [K, N] ->
//                                      quantize_128x128, the same grouped kernel with N <-> K
//   wgrad    dW_g = dY_g^T . X_g       dY and X -> quantize_tokens_transposed_1x128 (tokens padded
//                                      per expert, 1 x 128 scales along the tokens), the
//                                      k-grouped weight-gradient kernel
// Each result is compared per expert with a float64 GEMM of the operands quantised on the CPU by
// the ground-truth quantisers (bit-equal to the GPU's, common/quantize.hpp), within the GEMM
// tolerance of its reduction; a wrong layout, scale convention or offset anywhere in the chain
// fails. The error against the exact bf16 product (what FP8 costs) is printed beside it.
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <random>
#include <vector>

#include "catch.hpp"
#include "common/check.hpp"
#include "common/cuda.hpp"
#include "common/fp8.hpp"
#include "common/quantize.hpp"
#include "common/quantize_gpu.hpp"
#include "common/reference.hpp"
#include "grouped_gemm.hpp"
#include "wgrad.hpp"

using namespace fp8gemm;

namespace {

std::vector<std::uint16_t> random_bf16(std::size_t n, std::uint64_t seed) {
  std::mt19937_64 gen(seed);
  std::normal_distribution<float> nd(0.0f, 1.0f);
  std::vector<std::uint16_t> v(n);
  for (auto& x : v) x = float_to_bf16(nd(gen));
  return v;
}

/// rows x cols of a bf16 matrix (leading dimension ld) as doubles.
std::vector<double> bf16_to_double(const std::uint16_t* x, std::int64_t rows, std::int64_t cols,
                                   std::int64_t ld) {
  std::vector<double> v(std::size_t(rows * cols));
  for (std::int64_t r = 0; r < rows; ++r)
    for (std::int64_t c = 0; c < cols; ++c)
      v[std::size_t(r * cols + c)] = double(bf16_bits_to_float(x[r * ld + c]));
  return v;
}

/// [rows, cols] bf16 -> its transpose [cols, rows].
std::vector<std::uint16_t> transpose(const std::uint16_t* x, std::int64_t rows, std::int64_t cols) {
  std::vector<std::uint16_t> t(std::size_t(rows * cols));
  for (std::int64_t r = 0; r < rows; ++r)
    for (std::int64_t c = 0; c < cols; ++c) t[std::size_t(c * rows + r)] = x[r * cols + c];
  return t;
}

/// Rows r0 .. r0 + n - 1 of an e4m3 [rows, K] operand, dequantised: code times scale_of(row, k).
template <class ScaleOf>
std::vector<double> dequant(const std::vector<std::uint8_t>& q, std::int64_t K, std::int64_t r0,
                            std::int64_t n, ScaleOf scale_of) {
  std::vector<double> v(std::size_t(n * K));
  for (std::int64_t r = 0; r < n; ++r)
    for (std::int64_t k = 0; k < K; ++k)
      v[std::size_t(r * K + k)] =
          double(e4m3_decode(q[std::size_t((r0 + r) * K + k)])) * double(scale_of(r0 + r, k));
  return v;
}
/// ... with 1 x 128 scales (GroupScaleLayout).
std::vector<double> dequant_1x128(const std::vector<std::uint8_t>& q, const std::vector<float>& s,
                                  const GroupScaleLayout& l, std::int64_t K, std::int64_t r0,
                                  std::int64_t n) {
  return dequant(q, K, r0, n, [&](std::int64_t r, std::int64_t k) {
    return s[std::size_t(l.offset(r, k / 128))];
  });
}
/// ... with 128 x 128 scales (BlockScaleLayout; r0 a multiple of 128 here: each expert's rows
/// start a block).
std::vector<double> dequant_128x128(const std::vector<std::uint8_t>& q, const std::vector<float>& s,
                                    const BlockScaleLayout& l, std::int64_t K, std::int64_t r0,
                                    std::int64_t n) {
  return dequant(q, K, r0, n, [&](std::int64_t r, std::int64_t k) {
    return s[std::size_t(l.offset(r / 128, k / 128))];
  });
}

/// Relative Frobenius error of `got` (rows x cols, float or bf16 as float) against `ref`.
double rel_error(const std::vector<float>& got, const std::vector<double>& ref) {
  double e = 0, r = 0;
  for (std::size_t i = 0; i < ref.size(); ++i) {
    e += (double(got[i]) - ref[i]) * (double(got[i]) - ref[i]);
    r += ref[i] * ref[i];
  }
  return std::sqrt(e / r);
}

}  // namespace

TEST_CASE("ch08 end to end: forward, dgrad and wgrad of an expert layer from bf16", "[ch08][e2e][gpu]") {
  const std::vector<int> counts = {0, 1, 127, 129, 300, 0, 64};
  const int G = int(counts.size());
  const std::int64_t N = 256, K = 384;  // W_g [N, K]: multiples of 128, so W's 128 x 128 blocks
                                        // never straddle two experts in one quantiser call
  std::vector<int> offsets(G + 1, 0);
  for (int g = 0; g < G; ++g) offsets[g + 1] = offsets[g] + counts[g];
  const std::int64_t T = offsets[G];
  const auto x = random_bf16(std::size_t(T * K), 1);
  const auto dy = random_bf16(std::size_t(T * N), 2);
  const auto w = random_bf16(std::size_t(G * N * K), 3);
  std::vector<std::uint16_t> wt(std::size_t(G * K * N));  // W_g^T [K, N], experts stacked
  for (int g = 0; g < G; ++g) {
    const auto t = transpose(w.data() + g * N * K, N, K);
    std::copy(t.begin(), t.end(), wt.begin() + g * K * N);
  }
  DeviceBuffer<std::uint16_t> dx_bf(x), ddy_bf(dy), dw_bf(w), dwt_bf(wt);
  DeviceBuffer<int> doff(offsets);

  // ---- the GPU chain: quantise, then the chapter's kernels ----
  const GroupScaleLayout lx = GroupScaleLayout::mn_major_tma_aligned(T);
  const BlockScaleLayout lw = BlockScaleLayout::padded(K), lwt = BlockScaleLayout::padded(N);
  DeviceBuffer<std::uint8_t> xq(std::size_t(T * K)), dyq(std::size_t(T * N)),
      wq(std::size_t(G * N * K)), wtq(std::size_t(G * K * N));
  DeviceBuffer<float> xs(std::size_t(lx.required_elements(T, K))),
      dys(std::size_t(lx.required_elements(T, N))),
      ws(std::size_t(lw.required_elements(G * N, K))), wts(std::size_t(lwt.required_elements(G * K, N)));
  quantize_1x128(dx_bf.data(), T, K, K, xq.data(), K, xs.data(), lx);
  quantize_1x128(ddy_bf.data(), T, N, N, dyq.data(), N, dys.data(), lx);
  quantize_128x128(dw_bf.data(), G * N, K, K, wq.data(), K, ws.data(), lw);
  quantize_128x128(dwt_bf.data(), G * K, N, N, wtq.data(), N, wts.data(), lwt);
  const std::int64_t cap = max_padded_tokens(T, G);
  const GroupScaleLayout lyt = GroupScaleLayout::mn_major_tma_aligned(N),
                         lxt = GroupScaleLayout::mn_major_tma_aligned(K);
  DeviceBuffer<std::uint8_t> dyt(std::size_t(N * cap)), xt(std::size_t(K * cap));
  DeviceBuffer<float> dyts(std::size_t(lyt.required_elements(N, cap))),
      xts(std::size_t(lxt.required_elements(K, cap)));
  quantize_tokens_transposed_1x128(ddy_bf.data(), T, N, N, doff.data(), G, dyt.data(), cap, cap,
                                   dyts.data(), lyt);
  quantize_tokens_transposed_1x128(dx_bf.data(), T, K, K, doff.data(), G, xt.data(), cap, cap,
                                   xts.data(), lxt);

  DeviceBuffer<std::uint16_t> y(std::size_t(T * N)), dxo(std::size_t(T * K));
  DeviceBuffer<float> dw(std::size_t(G * N * K));
  poison_bf16(y.data(), y.size());
  poison_bf16(dxo.data(), dxo.size());
  FP8GEMM_CUDA_CHECK(cudaMemset(dw.data(), 0xFF, dw.size() * 4));
  const ch08::GroupedGemm fwd{.groups = G, .rows = T, .N = N, .K = K, .offsets = doff.data(),
                              .A = xq.data(), .B = wq.data(), .scale_a = xs.data(),
                              .scale_a_layout = lx, .scale_b = ws.data(), .scale_b_layout = lw,
                              .D = y.data()};
  ch08::Plan(fwd).run(nullptr);
  ch08::GroupedGemm dgrad = fwd;  // dX = dY . W: reduction over N, output K columns
  dgrad.N = K;
  dgrad.K = N;
  dgrad.A = dyq.data();
  dgrad.scale_a = dys.data();
  dgrad.B = wtq.data();
  dgrad.scale_b = wts.data();
  dgrad.scale_b_layout = lwt;
  dgrad.D = dxo.data();
  ch08::Plan(dgrad).run(nullptr);
  const ch08::WeightGradGemm wg{.groups = G, .N = N, .K = K, .token_capacity = cap,
                                .offsets = doff.data(), .dD_t = dyt.data(),
                                .scale_dD_t = dyts.data(), .A_t = xt.data(),
                                .scale_A_t = xts.data(), .dB = dw.data()};
  ch08::WeightGradPlan(wg).run(nullptr);
  FP8GEMM_CUDA_CHECK(cudaDeviceSynchronize());
  std::vector<float> y_got, dx_got;
  for (std::uint16_t v : y.download()) y_got.push_back(bf16_bits_to_float(v));
  for (std::uint16_t v : dxo.download()) dx_got.push_back(bf16_bits_to_float(v));
  const std::vector<float> dw_got = dw.download();

  // ---- the same operands quantised on the CPU (the ground truth), dequantised ----
  std::vector<std::uint8_t> hxq(std::size_t(T * K)), hdyq(std::size_t(T * N)),
      hwq(std::size_t(G * N * K)), hwtq(std::size_t(G * K * N)), hdyt(std::size_t(N * cap)),
      hxt(std::size_t(K * cap));
  std::vector<float> hxs(xs.size()), hdys(dys.size()), hws(ws.size()), hwts(wts.size()),
      hdyts(dyts.size()), hxts(xts.size());
  quantize_1x128_cpu(x.data(), T, K, K, hxq.data(), K, hxs.data(), lx);
  quantize_1x128_cpu(dy.data(), T, N, N, hdyq.data(), N, hdys.data(), lx);
  quantize_128x128_cpu(w.data(), G * N, K, K, hwq.data(), K, hws.data(), lw);
  quantize_128x128_cpu(wt.data(), G * K, N, N, hwtq.data(), N, hwts.data(), lwt);
  std::vector<int> P(G + 1);
  quantize_tokens_transposed_1x128_cpu(dy.data(), T, N, N, offsets.data(), G, hdyt.data(), cap, cap,
                                       hdyts.data(), lyt, P.data());
  quantize_tokens_transposed_1x128_cpu(x.data(), T, K, K, offsets.data(), G, hxt.data(), cap, cap,
                                       hxts.data(), lxt, nullptr);

  double worst[3] = {0, 0, 0}, worst_bf16[3] = {0, 0, 0};
  for (int g = 0; g < G; ++g) {
    const std::int64_t r0 = offsets[g], n = counts[g];
    if (n == 0) {  // the expert's gradient: exactly 0
      std::int64_t nonzero = 0;
      for (std::int64_t i = 0; i < N * K; ++i) nonzero += dw_got[std::size_t(g * N * K + i)] != 0.0f;
      CHECK(nonzero == 0);
      continue;
    }
    // forward: Y_g [n, N] = X_g [n, K] . W_g^T
    const auto a = dequant_1x128(hxq, hxs, lx, K, r0, n);
    const auto b = dequant_128x128(hwq, hws, lw, K, g * N, N);
    const auto ref_y = reference_gemm(n, N, K, a.data(), b.data());
    const auto exact_y = reference_gemm(n, N, K, bf16_to_double(x.data() + r0 * K, n, K, K).data(),
                                        bf16_to_double(w.data() + g * N * K, N, K, K).data());
    const std::vector<float> yg(y_got.begin() + r0 * N, y_got.begin() + (r0 + n) * N);
    // dgrad: dX_g [n, K] = dY_g [n, N] . W_g [N, K] = dY_g . (W_g^T)^T
    const auto a2 = dequant_1x128(hdyq, hdys, lx, N, r0, n);
    const auto b2 = dequant_128x128(hwtq, hwts, lwt, N, g * K, K);
    const auto ref_dx = reference_gemm(n, K, N, a2.data(), b2.data());
    const auto exact_dx = reference_gemm(n, K, N, bf16_to_double(dy.data() + r0 * N, n, N, N).data(),
                                         bf16_to_double(wt.data() + g * K * N, K, N, N).data());
    const std::vector<float> dxg(dx_got.begin() + r0 * K, dx_got.begin() + (r0 + n) * K);
    // wgrad: dW_g [N, K] = dY_g^T . X_g, both operands as the token quantiser laid them out
    std::vector<double> a3(std::size_t(N * n)), b3(std::size_t(K * n));
    for (std::int64_t c = 0; c < N; ++c)
      for (std::int64_t i = 0; i < n; ++i) {
        const std::int64_t j = P[g] + i;
        a3[std::size_t(c * n + i)] = double(e4m3_decode(hdyt[std::size_t(c * cap + j)])) *
                                     double(hdyts[std::size_t(lyt.offset(c, j / 128))]);
      }
    for (std::int64_t c = 0; c < K; ++c)
      for (std::int64_t i = 0; i < n; ++i) {
        const std::int64_t j = P[g] + i;
        b3[std::size_t(c * n + i)] = double(e4m3_decode(hxt[std::size_t(c * cap + j)])) *
                                     double(hxts[std::size_t(lxt.offset(c, j / 128))]);
      }
    const auto ref_dw = reference_gemm(N, K, n, a3.data(), b3.data());
    const auto dy_t = transpose(dy.data() + r0 * N, n, N), x_t = transpose(x.data() + r0 * K, n, K);
    const auto exact_dw = reference_gemm(N, K, n, bf16_to_double(dy_t.data(), N, n, n).data(),
                                         bf16_to_double(x_t.data(), K, n, n).data());
    const std::vector<float> dwg(dw_got.begin() + g * N * K, dw_got.begin() + (g + 1) * N * K);
    const double e[3] = {rel_error(yg, ref_y), rel_error(dxg, ref_dx), rel_error(dwg, ref_dw)};
    const double eb[3] = {rel_error(yg, exact_y), rel_error(dxg, exact_dx), rel_error(dwg, exact_dw)};
    CHECK(e[0] <= per_tensor_tolerance(K));
    CHECK(e[1] <= per_tensor_tolerance(N));
    CHECK(e[2] <= per_tensor_tolerance(n));
    for (int i = 0; i < 3; ++i) {
      worst[i] = std::max(worst[i], e[i]);
      worst_bf16[i] = std::max(worst_bf16[i], eb[i]);
      CHECK(eb[i] < 0.1);  // FP8 quantisation of both operands: a few percent, never more
    }
  }
  std::printf("  end to end, G=%d T=%lld N=%lld K=%lld, worst expert: forward %.2e (vs bf16 %.2e), "
              "dgrad %.2e (%.2e), wgrad %.2e (%.2e)\n", G, static_cast<long long>(T),
              static_cast<long long>(N), static_cast<long long>(K), worst[0], worst_bf16[0],
              worst[1], worst_bf16[1], worst[2], worst_bf16[2]);
}
