// Chapter 7's GPU tests' operands (test_chapter_07.cu, test_chapter_07_splitk.cu): random e4m3
// A (M x K, row-major) and B (N x K, row-major) with FP32 scales 2^[lo, hi] in the given layouts
// (padding NaN, so reading it would show), their float64 reference on the dequantised operands,
// and the device copies a ch07::BlockScaledGemm points at (D poisoned).
#pragma once

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <random>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "bs_gemm.hpp"
#include "common/check.hpp"
#include "common/cuda.hpp"
#include "common/fp8.hpp"
#include "common/quantize.hpp"  // random_e4m3
#include "common/reference.hpp"

namespace fp8gemm::test_ch07 {

struct Shape {
  std::int64_t M, N, K;
};
std::string name(const Shape& s) {
  return std::to_string(s.M) + "x" + std::to_string(s.N) + "x" + std::to_string(s.K);
}

/// Host operands of one call: e4m3 A (M x K), B (N x K), scales in the given layouts (their
/// padding filled with NaN, so reading it would show), values in float64 for the reference.
struct HostCall {
  Shape s;
  std::vector<std::uint8_t> a, b;
  GroupScaleLayout la;
  BlockScaleLayout lb;
  std::vector<float> sa, sb;
  HostCall(Shape s_, GroupScaleLayout la_, BlockScaleLayout lb_, std::uint64_t seed,
           float scale_lo = -4, float scale_hi = 4)
      : s(s_), la(la_), lb(lb_) {
    a = random_e4m3(std::size_t(s.M * s.K), seed);
    b = random_e4m3(std::size_t(s.N * s.K), seed + 1);
    std::mt19937_64 gen(seed + 2);
    std::uniform_real_distribution<float> e(scale_lo, scale_hi);
    const std::int64_t groups = ceil_div(s.K, 128);
    sa.assign(std::size_t(la.required_elements(s.M, s.K)), std::numeric_limits<float>::quiet_NaN());
    for (std::int64_t r = 0; r < s.M; ++r)
      for (std::int64_t g = 0; g < groups; ++g)
        sa[std::size_t(la.offset(r, g))] = std::exp2(e(gen));
    sb.assign(std::size_t(lb.required_elements(s.N, s.K)), std::numeric_limits<float>::quiet_NaN());
    for (std::int64_t i = 0; i < ceil_div(s.N, 128); ++i)
      for (std::int64_t g = 0; g < groups; ++g)
        sb[std::size_t(lb.offset(i, g))] = std::exp2(e(gen));
  }
  /// Operands made elsewhere (e.g. by the GPU quantisers, downloaded), in the given layouts.
  HostCall(Shape s_, GroupScaleLayout la_, BlockScaleLayout lb_, std::vector<std::uint8_t> a_,
           std::vector<std::uint8_t> b_, std::vector<float> sa_, std::vector<float> sb_)
      : s(s_), a(std::move(a_)), b(std::move(b_)), la(la_), lb(lb_), sa(std::move(sa_)),
        sb(std::move(sb_)) {}
  /// Chapter 7's default layouts: A's scales mn-major with TMA-aligned rows, B's padded.
  HostCall(Shape s_, std::uint64_t seed)
      : HostCall(s_, GroupScaleLayout::mn_major_tma_aligned(s_.M), BlockScaleLayout::padded(s_.K),
                 seed) {}
  /// The float64 product of the dequantised operands, all of D (M x N).
  std::vector<double> reference() const {
    std::vector<double> da(a.size()), db(b.size());
    for (std::int64_t r = 0; r < s.M; ++r)
      for (std::int64_t k = 0; k < s.K; ++k)
        da[std::size_t(r * s.K + k)] = double(e4m3_decode(a[std::size_t(r * s.K + k)])) *
                                       double(sa[std::size_t(la.offset(r, k / 128))]);
    for (std::int64_t n = 0; n < s.N; ++n)
      for (std::int64_t k = 0; k < s.K; ++k)
        db[std::size_t(n * s.K + k)] = double(e4m3_decode(b[std::size_t(n * s.K + k)])) *
                                       double(sb[std::size_t(lb.offset(n / 128, k / 128))]);
    return reference_gemm(s.M, s.N, s.K, da.data(), db.data());
  }
  /// The float64 product of the dequantised operands for `rows` (rows.size() x N).
  std::vector<double> reference(const std::vector<std::int64_t>& rows) const {
    double lut[256];
    for (int v = 0; v < 256; ++v) lut[v] = double(e4m3_decode(std::uint8_t(v)));
    const std::int64_t groups = ceil_div(s.K, 128);
    std::vector<double> out(rows.size() * std::size_t(s.N));
    std::vector<double> arow(std::size_t(s.K));
    for (std::size_t i = 0; i < rows.size(); ++i) {
      const std::int64_t r = rows[i];
      for (std::int64_t k = 0; k < s.K; ++k)
        arow[std::size_t(k)] =
            lut[a[std::size_t(r * s.K + k)]] * double(sa[std::size_t(la.offset(r, k / 128))]);
      for (std::int64_t n = 0; n < s.N; ++n) {
        const std::uint8_t* brow = &b[std::size_t(n * s.K)];
        double total = 0;
        for (std::int64_t g = 0; g < groups; ++g) {
          double block = 0;
          for (std::int64_t k = g * 128; k < std::min(s.K, g * 128 + 128); ++k)
            block += arow[std::size_t(k)] * lut[brow[k]];
          total += block * double(sb[std::size_t(lb.offset(n / 128, g))]);
        }
        out[i * std::size_t(s.N) + std::size_t(n)] = total;
      }
    }
    return out;
  }
};

/// Device copies of a HostCall and the D it writes (bf16 or float, NaN-poisoned), with leading
/// dimension ldd (0: N).
struct DeviceCall {
  DeviceBuffer<std::uint8_t> a, b;
  DeviceBuffer<float> sa, sb;
  DeviceBuffer<std::uint16_t> d16;
  DeviceBuffer<float> d32;
  ch07::BlockScaledGemm g;
  DeviceCall(const HostCall& h, ch07::Output out = ch07::Output::bf16, std::int64_t ldd = 0)
      : a(h.a), b(h.b), sa(h.sa), sb(h.sb) {
    g.M = h.s.M;
    g.N = h.s.N;
    g.K = h.s.K;
    g.A = a.data();
    g.B = b.data();
    g.scale_a = sa.data();
    g.scale_a_layout = h.la;
    g.scale_b = sb.data();
    g.scale_b_layout = h.lb;
    g.output = out;
    g.ldd = ldd == 0 ? h.s.N : ldd;
    if (out == ch07::Output::bf16) {
      d16 = DeviceBuffer<std::uint16_t>(std::size_t(h.s.M * g.ldd));
      poison_bf16(d16.data(), d16.size());
      g.D = d16.data();
    } else {
      d32 = DeviceBuffer<float>(std::vector<float>(std::size_t(h.s.M * g.ldd), std::nanf("")));
      g.D = d32.data();
    }
  }
  /// D's M x N bf16 values, packed (the ldd padding dropped).
  std::vector<std::uint16_t> d_packed() const {
    const std::vector<std::uint16_t> all = d16.download();
    std::vector<std::uint16_t> d(std::size_t(g.M * g.N));
    for (std::int64_t r = 0; r < g.M; ++r)
      for (std::int64_t n = 0; n < g.N; ++n)
        d[std::size_t(r * g.N + n)] = all[std::size_t(r * g.ldd + n)];
    return d;
  }
};

std::vector<std::int64_t> all_rows(std::int64_t M) {
  std::vector<std::int64_t> r(static_cast<std::size_t>(M));
  for (std::int64_t i = 0; i < M; ++i) r[std::size_t(i)] = i;
  return r;
}


/// The FP32-output case of chapter 7's tests: D (FP32, NaN-poisoned, or with `accumulate` random
/// values as large as the product, N(0, rms(ref))) computed by a plan with options `o`, against
/// the float64 reference `ref` (all of D; + the values D held, with accumulate). Prints one line
/// naming `label`; returns the error statistics for the caller's assertions. Throws
/// std::logic_error if D's earlier values are too small for a skipped add to show (< 0.1 of the
/// result: never, at this scale; before session 65 D held N(0, 4) values, by the operands'
/// statistics about 0.5-5 % of the result at these shapes: visible, but barely).
inline ErrorStats f32_output_error(const HostCall& h, const std::vector<double>& ref,
                                   bool accumulate, const ch07::Options& o, const char* label) {
  DeviceCall dc(h, ch07::Output::f32);
  dc.g.accumulate = accumulate;
  ch07::Plan plan(dc.g, o);
  // The executables' float D check (common/check.hpp) on every row; its tolerance is not used
  // here (the callers assert on the statistics).
  const FloatDCheck c = check_float_d_rows(dc.d32.data(), h.s.M, h.s.N, all_rows(h.s.M), ref,
                                           accumulate, 5e-4, 5, [&] { plan.run(nullptr); });
  if (c.blind)
    throw std::logic_error(std::string("f32_output_error: D's earlier values are too small for a "
                                       "skipped add to show (") + label + ")");
  std::printf("  f32 %-12s %-10s %-16s rel %.2e  [%s]\n", label,
              accumulate ? "D += A.B" : "D = A.B", name(h.s).c_str(), c.stats.rel_frobenius,
              plan.describe().c_str());
  return c.stats;
}

/// D of `runs` launches of `plan` into dc's bf16 D, each after poisoning it: the determinism
/// tests compare them bit for bit.
inline std::vector<std::vector<std::uint16_t>> repeated_outputs(const ch07::Plan& plan,
                                                                DeviceCall& dc, int runs) {
  std::vector<std::vector<std::uint16_t>> out;
  for (int i = 0; i < runs; ++i) {
    poison_bf16(dc.d16.data(), dc.d16.size());
    plan.run(nullptr);
    FP8GEMM_CUDA_CHECK(cudaDeviceSynchronize());
    out.push_back(dc.d16.download());
  }
  return out;
}

}  // namespace fp8gemm::test_ch07
