#include "common/reference.hpp"

#include <algorithm>
#include <random>

#include <algorithm>
#include <cmath>
#include <map>
#include <cstring>
#include <numeric>

#include "common/quantize.hpp"

namespace fp8gemm {

static void reference_row(std::int64_t N, std::int64_t K, const double* a_row, const double* B,
                          double* d_row) {
  for (std::int64_t n = 0; n < N; ++n) {
    const double* b_row = B + n * K;
    double acc = 0.0;
    for (std::int64_t k = 0; k < K; ++k) acc += a_row[k] * b_row[k];
    d_row[n] = acc;
  }
}

std::vector<double> reference_gemm(std::int64_t M, std::int64_t N, std::int64_t K,
                                   const double* A, const double* B) {
  std::vector<std::int64_t> rows(static_cast<std::size_t>(M));
  std::iota(rows.begin(), rows.end(), 0);
  return reference_gemm_rows(M, N, K, A, B, rows);
}

std::vector<double> reference_gemm_rows(std::int64_t /*M*/, std::int64_t N, std::int64_t K,
                                        const double* A, const double* B,
                                        const std::vector<std::int64_t>& rows) {
  std::vector<double> D(rows.size() * static_cast<std::size_t>(N));
  for (std::size_t i = 0; i < rows.size(); ++i)
    reference_row(N, K, A + rows[i] * K, B, D.data() + i * N);
  return D;
}

float bf16_to_float(std::uint16_t bits) {
  const std::uint32_t u = std::uint32_t(bits) << 16;
  float f;
  std::memcpy(&f, &u, sizeof f);
  return f;
}

std::uint16_t float_to_bf16(float x) { return float_to_bf16_bits(x); }

namespace {
struct Accum {
  double diff2 = 0, ref2 = 0, got2 = 0, dot = 0, max_abs = 0;
  std::int64_t non_finite = 0;
  void add(double g, double r) {
    if (!std::isfinite(g)) {
      ++non_finite;
      return;
    }
    const double d = g - r;
    diff2 += d * d;
    ref2 += r * r;
    got2 += g * g;
    dot += g * r;
    max_abs = std::max(max_abs, std::fabs(d));
  }
  ErrorStats finish() const {
    ErrorStats s;
    s.non_finite = non_finite;
    s.max_abs = max_abs;
    if (non_finite > 0) {
      s.rel_frobenius = INFINITY;
      s.deepgemm_diff = INFINITY;
      return s;
    }
    s.rel_frobenius = ref2 > 0 ? std::sqrt(diff2 / ref2) : (diff2 > 0 ? INFINITY : 0.0);
    const double denom = ref2 + got2;
    s.deepgemm_diff = denom > 0 ? 1.0 - 2.0 * dot / denom : 0.0;
    return s;
  }
};
}  // namespace

ErrorStats compare(const float* got, const double* ref, std::int64_t count) {
  Accum a;
  for (std::int64_t i = 0; i < count; ++i) a.add(got[i], ref[i]);
  return a.finish();
}

ErrorStats compare_bf16(const std::uint16_t* got, const double* ref, std::int64_t count) {
  Accum a;
  for (std::int64_t i = 0; i < count; ++i) a.add(bf16_to_float(got[i]), ref[i]);
  return a.finish();
}

namespace {
/// An element of D as the comparison reads it: bf16 bits or float.
double value_of(std::uint16_t bf16_bits) { return bf16_to_float(bf16_bits); }
double value_of(float x) { return x; }

template <class T>
ErrorStats compare_rows_of(const T* got, std::int64_t N, const std::vector<std::int64_t>& rows,
                           const double* ref_rows) {
  Accum a;
  for (std::size_t i = 0; i < rows.size(); ++i)
    for (std::int64_t n = 0; n < N; ++n)
      a.add(value_of(got[rows[i] * N + n]), ref_rows[i * N + n]);
  return a.finish();
}

template <class T>
double worst_tile_error_of(const T* got, std::int64_t N, const std::vector<std::int64_t>& rows,
                           const double* ref_rows, std::int64_t tile_m, std::int64_t tile_n) {
  struct Tile {
    double diff2 = 0, ref2 = 0;
    std::int64_t count = 0;
  };
  const std::int64_t tiles_n = (N + tile_n - 1) / tile_n;
  std::map<std::int64_t, std::vector<Tile>> tiles;  // by tile row; the rows may be sparse
  double ref2_all = 0;
  std::int64_t count_all = 0;
  for (std::size_t i = 0; i < rows.size(); ++i) {
    std::vector<Tile>& band = tiles[rows[i] / tile_m];
    band.resize(std::size_t(tiles_n));
    for (std::int64_t n = 0; n < N; ++n) {
      const double g = value_of(got[rows[i] * N + n]);
      const double r = ref_rows[i * N + n];
      if (!std::isfinite(g)) return INFINITY;
      Tile& t = band[std::size_t(n / tile_n)];
      t.diff2 += (g - r) * (g - r);
      t.ref2 += r * r;
      ++t.count;
      ref2_all += r * r;
      ++count_all;
    }
  }
  if (count_all == 0) return 0.0;
  const double rms = std::sqrt(ref2_all / double(count_all));
  double worst = 0;
  for (const auto& [band_index, band] : tiles)
    for (const Tile& t : band) {
      if (t.count == 0 || t.diff2 == 0) continue;
      const double denom = std::max(std::sqrt(t.ref2), rms * std::sqrt(double(t.count)));
      worst = std::max(worst, denom > 0 ? std::sqrt(t.diff2) / denom : INFINITY);
    }
  return worst;
}
}  // namespace

ErrorStats compare_bf16_rows(const std::uint16_t* got, std::int64_t N,
                             const std::vector<std::int64_t>& rows, const double* ref_rows) {
  return compare_rows_of(got, N, rows, ref_rows);
}
ErrorStats compare_f32_rows(const float* got, std::int64_t N, const std::vector<std::int64_t>& rows,
                            const double* ref_rows) {
  return compare_rows_of(got, N, rows, ref_rows);
}

double worst_tile_error(const std::uint16_t* got, std::int64_t N,
                        const std::vector<std::int64_t>& rows, const double* ref_rows,
                        std::int64_t tile_m, std::int64_t tile_n) {
  return worst_tile_error_of(got, N, rows, ref_rows, tile_m, tile_n);
}
double worst_tile_error(const float* got, std::int64_t N, const std::vector<std::int64_t>& rows,
                        const double* ref_rows, std::int64_t tile_m, std::int64_t tile_n) {
  return worst_tile_error_of(got, N, rows, ref_rows, tile_m, tile_n);
}

double rms(const std::vector<double>& values) {
  double sum = 0;
  for (const double v : values) sum += v * v;
  return values.empty() ? 0.0 : std::sqrt(sum / double(values.size()));
}

double EarlierShare::share() const {
  return want_sq > 0 ? std::sqrt(before_sq / want_sq) : 0.0;
}

std::vector<std::int64_t> sample_rows(std::int64_t M, std::int64_t count, std::uint64_t seed) {
  std::mt19937_64 gen(seed);
  std::vector<std::int64_t> rows = {0, M - 1};
  std::uniform_int_distribution<std::int64_t> pick(0, M - 1);
  while (std::int64_t(rows.size()) < std::min(count, M)) rows.push_back(pick(gen));
  std::sort(rows.begin(), rows.end());
  rows.erase(std::unique(rows.begin(), rows.end()), rows.end());
  return rows;
}

}  // namespace fp8gemm
