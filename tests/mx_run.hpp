// Chapter 9's GPU tests: one MXFP8 call (MxGemm, mx_gemm.hpp) of either plan — the Blackwell
// kernel's (ch09::Plan) or the Hopper one's (ch09::HopperPlan) — on host operands, D poisoned
// first, returned as doubles.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <vector>

#include "common/cuda.hpp"
#include "common/reference.hpp"
#include "mx_emulate.hpp"
#include "mx_gemm.hpp"

namespace fp8gemm::ch09::test {

inline double bf16_to_double(std::uint16_t b) {
  const std::uint32_t u = std::uint32_t(b) << 16;
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

/// A packed bf16 D on the device (every element, ldd = N), as doubles.
inline std::vector<double> download_bf16(const DeviceBuffer<std::uint16_t>& d) {
  const std::vector<std::uint16_t> host = d.download();
  std::vector<double> out(host.size());
  for (std::size_t i = 0; i < host.size(); ++i) out[i] = bf16_to_double(host[i]);
  return out;
}

/// Runs PlanT(gemm, options) on o with ldd = N + ldd_pad and returns D (M x N) as doubles. D starts
/// as every byte `d_fill_byte` (0x3C: every bf16 0x3C3C, a finite 0.0115, for a test that expects
/// NaN in D and so must not start from NaN), or with the NaN poison where d_fill_byte < 0.
template <class PlanT, class... Options>
std::vector<double> run_mx_filled(const MxOperands& o, std::int64_t ldd_pad, int d_fill_byte,
                                  const Options&... options) {
  DeviceBuffer<std::uint8_t> a(o.A), b(o.B), sa(o.sa), sb(o.sb);
  const std::int64_t ldd = o.N + ldd_pad;
  DeviceBuffer<std::uint16_t> d(std::size_t(o.M * ldd));
  if (d_fill_byte < 0)
    poison_bf16(d.data(), d.size());
  else
    FP8GEMM_CUDA_CHECK(cudaMemset(d.data(), d_fill_byte, d.size() * 2));
  const MxGemm g = mx_call(o, a.data(), b.data(), sa.data(), sb.data(), d.data(), ldd);
  PlanT plan(g, options...);
  plan.run(nullptr);
  FP8GEMM_CUDA_CHECK(cudaDeviceSynchronize());
  std::vector<std::uint16_t> host(d.size());
  FP8GEMM_CUDA_CHECK(cudaMemcpy(host.data(), d.data(), d.size() * 2, cudaMemcpyDeviceToHost));
  std::vector<double> out(std::size_t(o.M * o.N));
  for (std::int64_t m = 0; m < o.M; ++m)
    for (std::int64_t n = 0; n < o.N; ++n)
      out[std::size_t(m * o.N + n)] = bf16_to_double(host[std::size_t(m * ldd + n)]);
  return out;
}

/// run_mx_filled from the NaN poison: a test that every element of D is written.
template <class PlanT, class... Options>
std::vector<double> run_mx(const MxOperands& o, std::int64_t ldd_pad, const Options&... options) {
  return run_mx_filled<PlanT>(o, ldd_pad, -1, options...);
}

/// A float D (Output::f32): runs PlanT(gemm, options) on o with ldd = N + ldd_pad, D first all NaN
/// (every byte 0xFF) or, given `before` (M x ldd floats), those values and `accumulate`. Returns D's
/// M x N as doubles; `padding_changed` counts the entries of the columns N .. ldd - 1 that are no
/// longer what they were (a kernel must never write them).
template <class PlanT, class... Options>
std::vector<double> run_mx_f32(const MxOperands& o, std::int64_t ldd_pad,
                               const std::vector<float>* before, std::int64_t& padding_changed,
                               const Options&... options) {
  DeviceBuffer<std::uint8_t> a(o.A), b(o.B), sa(o.sa), sb(o.sb);
  const std::int64_t ldd = o.N + ldd_pad;
  DeviceBuffer<float> d(std::size_t(o.M * ldd));
  std::vector<float> start(d.size());
  if (before != nullptr)
    start = *before;
  else
    std::memset(start.data(), 0xFF, start.size() * 4);
  d.upload(start);
  MxGemm g = mx_call(o, a.data(), b.data(), sa.data(), sb.data(), d.data(), ldd);
  g.output = Output::f32;
  g.accumulate = before != nullptr;
  PlanT plan(g, options...);
  plan.run(nullptr);
  FP8GEMM_CUDA_CHECK(cudaDeviceSynchronize());
  const std::vector<float> host = d.download();
  std::vector<double> out(std::size_t(o.M * o.N));
  padding_changed = 0;
  for (std::int64_t m = 0; m < o.M; ++m) {
    for (std::int64_t n = 0; n < o.N; ++n)
      out[std::size_t(m * o.N + n)] = host[std::size_t(m * ldd + n)];
    for (std::int64_t n = o.N; n < ldd; ++n)
      padding_changed += std::memcmp(&host[std::size_t(m * ldd + n)],
                                     &start[std::size_t(m * ldd + n)], 4) != 0;
  }
  return out;
}

/// What run_mx_f32 should return: `product` (M x N, float64), plus with `before` (M x ldd floats,
/// row-major: D's earlier values) those values. Throws std::logic_error when they are too small
/// beside the product for a skipped add to show (< 0.1 of the result; session 65: N(0, 4) beside
/// these products was 2e-8 to 3e-4 of it): draw them at rms(product).
inline std::vector<double> expected_f32(const std::vector<double>& product,
                                        const std::vector<float>* before, std::int64_t M,
                                        std::int64_t N, std::int64_t ldd) {
  std::vector<double> want = product;
  if (before == nullptr) return want;
  EarlierShare share;
  for (std::int64_t m = 0; m < M; ++m)
    for (std::int64_t n = 0; n < N; ++n)
      share.add_to(want[std::size_t(m * N + n)], (*before)[std::size_t(m * ldd + n)]);
  if (!share.visible(0.1))
    throw std::logic_error("expected_f32: D's earlier values are too small beside the product for "
                           "a skipped add to show");
  return want;
}

}  // namespace fp8gemm::ch09::test
