// Chapter 9, Blackwell: a CPU walk-through of the sm_100a kernel's data flow, for tests.
//
// emulate_kernel() runs the kernel's loops on the CPU with the same index arithmetic
// (sm100_config.hpp): tiles of 128 x 128 (or, for .cta_group::2, 256 x 128 tiles split over a
// CTA pair: each CTA's A rows, B rows and scale tiles loaded into its own "shared memory", the
// MMA reading B's columns from both CTAs' halves), K blocks of 128 loaded as zero-filled TMA
// boxes, the two 512-byte scale tiles fetched from the TMA view of the Mx1x32 tensor, spread
// over TMEM as tcgen05.cp 32x128b.warpx4 spreads them, and per 32-wide k step the scale byte the
// instruction descriptor's scale-factor id selects. For the pair, what each CTA contributes is
// this project's reading of the PTX ISA (and of DeepGEMM's 2-CTA kernel), not a measurement. It accumulates in double, so it checks where every byte
// comes from, not the tensor core's FP32 rounding. reference_f64() computes the same sum straight
// from the definition (Mx1x32::index). Plus random test data (never NaN, never all zero).
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <vector>

#include "common/fp8.hpp"
#include "common/scaling.hpp"
#include "mx_gemm.hpp"
#include "sm100_config.hpp"

namespace fp8gemm::ch09 {

struct MxOperands {
  std::int64_t M = 0, N = 0, K = 0;
  std::vector<std::uint8_t> A, B;    // packed row-major e4m3
  std::vector<std::uint8_t> sa, sb;  // Mx1x32 layout, zero padding
};

/// Random UE8M0 exponents in [127 - spread, 127 + spread] for a rows x K operand, in the Mx1x32
/// layout (padding zero), drawn from rng row by row, block by block.
inline std::vector<std::uint8_t> random_mx_scales(std::int64_t rows, std::int64_t K,
                                                  std::mt19937_64& rng, int spread = 6) {
  const Mx1x32 l(rows, K);
  std::vector<std::uint8_t> v(std::size_t(l.size()), 0);
  std::uniform_int_distribution<int> e(127 - spread, 127 + spread);
  for (std::int64_t r = 0; r < rows; ++r)
    for (std::int64_t j = 0; j < l.scale_cols(); ++j)
      v[std::size_t(l.block_index(r, j))] = std::uint8_t(e(rng));
  return v;
}

/// Random e4m3 bytes (every finite code, both signs; never the NaN codes 0x7F / 0xFF) and
/// random UE8M0 exponents in [127 - spread, 127 + spread] (random_mx_scales).
inline MxOperands random_operands(std::int64_t M, std::int64_t N, std::int64_t K,
                                  std::uint64_t seed, int spread = 6) {
  MxOperands o;
  o.M = M;
  o.N = N;
  o.K = K;
  std::mt19937_64 rng(seed);
  auto e4m3 = [&]() {
    std::uint8_t b;
    do b = std::uint8_t(rng() & 0xFF);
    while ((b & 0x7F) == 0x7F);
    return b;
  };
  o.A.resize(std::size_t(M * K));
  o.B.resize(std::size_t(N * K));
  for (auto& x : o.A) x = e4m3();
  for (auto& x : o.B) x = e4m3();
  o.sa = random_mx_scales(M, K, rng, spread);
  o.sb = random_mx_scales(N, K, rng, spread);
  return o;
}

/// The call on device copies of o's operands (packed A and B, D with leading dimension ldd; 0:
/// N), the scale sizes given so that the plan checks them.
inline MxGemm mx_call(const MxOperands& o, const std::uint8_t* A, const std::uint8_t* B,
                      const std::uint8_t* scale_a, const std::uint8_t* scale_b, void* D,
                      std::int64_t ldd = 0) {
  MxGemm g;
  g.M = o.M;
  g.N = o.N;
  g.K = o.K;
  g.A = A;
  g.B = B;
  g.scale_a = scale_a;
  g.scale_a_bytes = std::int64_t(o.sa.size());
  g.scale_b = scale_b;
  g.scale_b_bytes = std::int64_t(o.sb.size());
  g.D = D;
  g.ldd = ldd;
  return g;
}

/// Rows `rows` of D = sum_kb 2^(sa - 127) 2^(sb - 127) A_blk . B_blk in double, from the
/// definition: rows.size() x N.
inline std::vector<double> reference_f64_rows(const MxOperands& o,
                                              const std::vector<std::int64_t>& rows) {
  const Mx1x32 la(o.M, o.K), lb(o.N, o.K);
  // Every e4m3 and UE8M0 code decoded once; a sampled row of A and a row of B dequantised once
  // (each product e4m3 x 2^e is exact in double, so this is the definition, in k order).
  double e4[256], ue[256];
  for (int c = 0; c < 256; ++c) {
    e4[c] = double(e4m3_decode(std::uint8_t(c)));
    ue[c] = double(ue8m0_decode(std::uint8_t(c)));
  }
  const std::size_t K = std::size_t(o.K);
  std::vector<double> a(rows.size() * K), b(K);
  for (std::size_t i = 0; i < rows.size(); ++i)
    for (std::int64_t k = 0; k < o.K; ++k)
      a[i * K + std::size_t(k)] =
          e4[o.A[std::size_t(rows[i] * o.K + k)]] * ue[o.sa[std::size_t(la.index(rows[i], k))]];
  std::vector<double> d(rows.size() * std::size_t(o.N), 0.0);
  for (std::int64_t n = 0; n < o.N; ++n) {
    for (std::int64_t k = 0; k < o.K; ++k)
      b[std::size_t(k)] = e4[o.B[std::size_t(n * o.K + k)]] * ue[o.sb[std::size_t(lb.index(n, k))]];
    for (std::size_t i = 0; i < rows.size(); ++i) {
      const double* ai = a.data() + i * K;
      double acc = 0;
      for (std::size_t k = 0; k < K; ++k) acc += ai[k] * b[k];
      d[i * std::size_t(o.N) + std::size_t(n)] = acc;
    }
  }
  return d;
}

/// All of D (M x N), as reference_f64_rows over every row.
inline std::vector<double> reference_f64(const MxOperands& o) {
  std::vector<std::int64_t> rows(static_cast<std::size_t>(o.M));
  for (std::int64_t m = 0; m < o.M; ++m) rows[std::size_t(m)] = m;
  return reference_f64_rows(o, rows);
}

namespace emulate_detail {
/// A TMA box of box_rows x box_cols bytes at (col0, row0) of a rows x cols row-major byte tensor;
/// out-of-bounds bytes read as zero (the map's fill mode).
inline std::vector<std::uint8_t> tma_box(const std::uint8_t* t, std::int64_t rows, std::int64_t cols,
                                         std::int64_t ld, std::int64_t col0, std::int64_t row0,
                                         int box_rows, int box_cols) {
  std::vector<std::uint8_t> box(std::size_t(box_rows * box_cols), 0);
  for (int r = 0; r < box_rows; ++r)
    for (int c = 0; c < box_cols; ++c)
      if (row0 + r < rows && col0 + c < cols)
        box[std::size_t(r * box_cols + c)] = t[(row0 + r) * ld + col0 + c];
  return box;
}

/// tcgen05.cp 32x128b.warpx4 of a 512-byte tile: tmem[lane][column][byte].
struct TmemScales {
  std::uint8_t cell[128][4][4];
};
inline TmemScales utccp_warpx4(const std::uint8_t* tile) {
  TmemScales t{};
  for (int lane = 0; lane < 128; ++lane)
    for (int col = 0; col < 4; ++col)
      for (int b = 0; b < 4; ++b) t.cell[lane][col][b] = tile[(lane % 32) * 16 + col * 4 + b];
  return t;
}
}  // namespace emulate_detail

/// The kernel's loops on the CPU (see the file comment), cta_group 1 or 2. Returns M x N doubles.
inline std::vector<double> emulate_kernel(const MxOperands& o, int cta_group = 1) {
  using namespace emulate_detail;
  const Sm100Layout L = sm100_layout(cta_group);
  std::vector<double> d(std::size_t(o.M * o.N), 0.0);
  const std::int64_t tiles_m = ceil_div(o.M, std::int64_t(L.umma_m)), tiles_n = ceil_div(o.N, kBlockN);
  const std::int64_t k_blocks = ceil_div(o.K, kBlockK);
  const std::int64_t view_cols_bytes = sf_view_cols_u32(o.K) * 4;
  // One K block as one CTA's shared and tensor memory hold it.
  struct Cta {
    std::vector<std::uint8_t> a, b;  // kBlockM x kBlockK and L.b_rows x kBlockK
    TmemScales sfa, sfb;
  };
  for (std::int64_t tile = 0; tile < tiles_m * tiles_n; ++tile) {
    const std::int64_t m_blk = tile % tiles_m, n_blk = tile / tiles_m;
    // acc[r]: CTA r's accumulator, TMEM lane i = row m_blk * umma_m + 128 r + i, column j.
    std::vector<std::vector<double>> acc(std::size_t(cta_group),
                                         std::vector<double>(std::size_t(kBlockM * kBlockN), 0.0));
    for (std::int64_t kb = 0; kb < k_blocks; ++kb) {
      std::vector<Cta> cta(static_cast<std::size_t>(cta_group));
      for (int r = 0; r < cta_group; ++r) {  // the producer of CTA r
        const std::int64_t a_row = m_blk * L.umma_m + r * kBlockM;
        const std::int64_t b_row = n_blk * kBlockN + r * L.b_rows;
        Cta& c = cta[std::size_t(r)];
        c.a = tma_box(o.A.data(), o.M, o.K, o.K, kb * kBlockK, a_row, kBlockM, kBlockK);
        c.b = tma_box(o.B.data(), o.N, o.K, o.K, kb * kBlockK, b_row, L.b_rows, kBlockK);
        // The scale boxes: uint32 column kb * 128 (bytes kb * 512), tile row a_row / 128 for A,
        // n_blk (all kBlockN columns, in both CTAs of a pair) for B.
        const auto sfa_box = tma_box(o.sa.data(), sf_view_rows(o.M), view_cols_bytes, view_cols_bytes,
                                     kb * 512, a_row / 128, 1, 512);
        const auto sfb_box = tma_box(o.sb.data(), sf_view_rows(o.N), view_cols_bytes, view_cols_bytes,
                                     kb * 512, n_blk, 1, 512);
        // tcgen05.cp: each CTA's tiles into its own TMEM.
        c.sfa = utccp_warpx4(sfa_box.data());
        c.sfb = utccp_warpx4(sfb_box.data());
      }
      const std::int64_t steps = std::min<std::int64_t>((o.K - kb * kBlockK) / kUmmaK, kBlockK / kUmmaK);
      for (int s = 0; s < steps; ++s) {
        const std::uint32_t idesc = with_sf_ids(instr_desc(cta_group), std::uint32_t(s), std::uint32_t(s));
        const int a_sf_id = int((idesc >> 29) & 3), b_sf_id = int((idesc >> 4) & 3);
        for (int r = 0; r < cta_group; ++r) {  // CTA r's half of the M = 128 * cta_group MMA
          const Cta& c = cta[std::size_t(r)];
          for (int i = 0; i < kBlockM; ++i) {
            const TmemScaleCell ca = tmem_scale_cell(i, a_sf_id);
            const double sa = ue8m0_decode(c.sfa.cell[ca.lane][ca.column][ca.byte]);
            for (int j = 0; j < kBlockN; ++j) {
              // Column j of B: row j % b_rows of CTA (j / b_rows)'s half; its scale from this
              // CTA's own copy of the B-scale tile.
              const std::vector<std::uint8_t>& b = cta[std::size_t(j / L.b_rows)].b;
              const int jb = j % L.b_rows;
              const TmemScaleCell cb = tmem_scale_cell(j, b_sf_id);
              const double sb = ue8m0_decode(c.sfb.cell[cb.lane][cb.column][cb.byte]);
              double dot = 0;
              for (int k = 0; k < kUmmaK; ++k)
                dot += double(e4m3_decode(c.a[std::size_t(i * kBlockK + s * kUmmaK + k)])) *
                       double(e4m3_decode(b[std::size_t(jb * kBlockK + s * kUmmaK + k)]));
              acc[std::size_t(r)][std::size_t(i * kBlockN + j)] += sa * sb * dot;
            }
          }
        }
      }
    }
    // The epilogue of each CTA: its own rows.
    for (int r = 0; r < cta_group; ++r)
      for (int i = 0; i < kBlockM; ++i)
        for (int j = 0; j < kBlockN; ++j) {
          const std::int64_t m = m_blk * L.umma_m + r * kBlockM + i, n = n_blk * kBlockN + j;
          if (m < o.M && n < o.N)
            d[std::size_t(m * o.N + n)] = acc[std::size_t(r)][std::size_t(i * kBlockN + j)];
        }
  }
  return d;
}

/// ||x - y|| / ||y||.
inline double relative_frobenius(const std::vector<double>& x, const std::vector<double>& y) {
  double num = 0, den = 0;
  for (std::size_t i = 0; i < x.size(); ++i) {
    num += (x[i] - y[i]) * (x[i] - y[i]);
    den += y[i] * y[i];
  }
  return std::sqrt(num / den);
}

}  // namespace fp8gemm::ch09
