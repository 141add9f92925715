// The accuracy study's shared parts (test/benchmark code, header-only, fp8gemm::common): the data,
// the grid of points, the error metrics and the JSON rows of chapter 7's study (README
// "Accuracy"), so that chapter 9 measures its MXFP8 recipe on exactly the same data and writes
// rows plots/plot.py joins with chapter 7's by (data, K). Chapter 7 must not depend on chapter 9
// (chapters come in order), so what both need lives here.
//
// Moved out of chapters/07_block_scaling/accuracy_study.cpp unchanged (the generators, the seeds
// 900, 901, ... in the same order, the metrics, the JSON bytes): chapter 7's numbers do not move.
// tests/test_accuracy_study.cpp pins that: it recomputes the quantisation-only errors of the
// committed plots/data/h200/ch07/accuracy.json from these pieces and checks the JSON bytes.
//
// A study point (data kind, K) is the pair A (M x K), B (N x K) of make_data(); each recipe
// quantises them, runs its GEMM and is compared, on compared_rows() of D, with
//   ref_exact:     the float64 product of the unquantised data (what a user sees), and
//   ref_quantised: the float64 product of the recipe's own dequantised operands (the GEMM's own
//                  error: accumulation and D's bf16 rounding, quantisation excluded),
// and quantisation_only() is the distance between the two references (what the recipe's
// quantisation alone costs).
#pragma once

#include <cmath>
#include <cstdint>
#include <fstream>
#include <functional>
#include <random>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "common/cuda.hpp"
#include "common/reference.hpp"

namespace fp8gemm::study {

/// The three kinds of data: N(0, 1); N(0, 1) with four columns of A 100x larger (outlier
/// channels, what LLM activations look like and why block scaling exists); U[0.5, 1] (all
/// positive, where reduced-precision accumulation drifts).
enum class Data { normal, outliers, positive };

/// The name the JSON and the tables use.
inline const char* name(Data d) {
  return d == Data::normal ? "normal" : d == Data::outliers ? "outlier_channels" : "all_positive";
}

/// rows x cols floats of the given kind (A gets the outlier channels, B never does).
inline std::vector<float> make_data(Data d, std::int64_t rows, std::int64_t cols,
                                    std::uint64_t seed, bool is_a) {
  std::mt19937_64 gen(seed);
  std::vector<float> v(std::size_t(rows * cols));
  if (d == Data::positive) {
    std::uniform_real_distribution<float> u(0.5f, 1.0f);
    for (auto& x : v) x = u(gen);
    return v;
  }
  std::normal_distribution<float> n(0.0f, 1.0f);
  for (auto& x : v) x = n(gen);
  if (d == Data::outliers && is_a) {
    // 4 channels (columns of A, i.e. positions along K) 100x larger in every row.
    for (std::int64_t c : {cols / 7, cols / 3, cols / 2 + 5, cols - 3})
      for (std::int64_t r = 0; r < rows; ++r) v[std::size_t(r * cols + c)] *= 100.0f;
  }
  return v;
}

inline std::vector<double> to_double(const std::vector<float>& v) { return {v.begin(), v.end()}; }

/// The study's shape: 256 x 256 x K (small enough for float64 references at K = 65536, large
/// enough for two 128-row tiles).
inline constexpr std::int64_t kM = 256, kN = 256;

/// The rows of D compared: every 4th (64 of 256).
inline std::vector<std::int64_t> compared_rows() {
  std::vector<std::int64_t> rows;
  for (std::int64_t r = 0; r < kM; r += 4) rows.push_back(r);
  return rows;
}

/// One point of the study: the data kind, K and the seeds of A and B.
struct Point {
  Data data;
  std::int64_t K;
  std::uint64_t seed_a, seed_b;
};

/// Every point in chapter 7's order: data kinds outer, K in {1024, 4096, 16384, 65536} inner,
/// seeds 900, 901, ... (A then B). Every K is a multiple of 128 (the 1 x 128 recipe) and so of 32
/// (MXFP8).
inline std::vector<Point> points() {
  std::vector<Point> v;
  std::uint64_t seed = 900;
  for (Data d : {Data::normal, Data::outliers, Data::positive})
    for (std::int64_t K : {1024, 4096, 16384, 65536}) {
      v.push_back({d, K, seed, seed + 1});
      seed += 2;
    }
  return v;
}

/// A point's data: A (kM x K) and B (kN x K) of make_data(), and ref_exact, their float64 product
/// on `rows` of D (rows.size() x kN): what every recipe at that point starts from.
struct PointData {
  std::vector<float> a, b;
  std::vector<double> ref_exact;
};
inline PointData point_data(const Point& p, const std::vector<std::int64_t>& rows) {
  PointData d;
  d.a = make_data(p.data, kM, p.K, p.seed_a, true);
  d.b = make_data(p.data, kN, p.K, p.seed_b, false);
  d.ref_exact =
      reference_gemm_rows(kM, kN, p.K, to_double(d.a).data(), to_double(d.b).data(), rows);
  return d;
}

/// A recipe's error at one point.
struct Errors {
  double vs_exact = 0;      ///< against float64 of the unquantised data
  double vs_quantised = 0;  ///< against float64 of the dequantised operands
};

/// The errors of a downloaded D (M x N bf16, ldd = N) on `rows` against both references
/// (rows.size() x N each): relative Frobenius errors (infinite if D holds a non-finite entry).
inline Errors errors_of(const std::uint16_t* d, std::int64_t N,
                        const std::vector<std::int64_t>& rows, const std::vector<double>& ref_exact,
                        const std::vector<double>& ref_quantised) {
  Errors e;
  e.vs_exact = compare_bf16_rows(d, N, rows, ref_exact.data()).rel_frobenius;
  e.vs_quantised = compare_bf16_rows(d, N, rows, ref_quantised.data()).rel_frobenius;
  return e;
}

/// Runs `launch` (which writes D, M x N bf16, on the default stream) into a NaN-poisoned buffer
/// and returns errors_of() its `rows`. Needs a GPU.
inline Errors measure(const std::function<void(std::uint16_t*)>& launch, std::int64_t M,
                      std::int64_t N, const std::vector<std::int64_t>& rows,
                      const std::vector<double>& ref_exact,
                      const std::vector<double>& ref_quantised) {
  DeviceBuffer<std::uint16_t> D(std::size_t(M * N));
  poison_bf16(D.data(), D.size());
  launch(D.data());
  FP8GEMM_CUDA_CHECK(cudaDeviceSynchronize());
  const std::vector<std::uint16_t> d = D.download();
  return errors_of(d.data(), N, rows, ref_exact, ref_quantised);
}

/// Quantisation alone: ||ref_quantised - ref_exact|| / ||ref_exact||, the dequantised operands'
/// exact product against the data's.
inline double quantisation_only(const std::vector<double>& ref_quantised,
                                const std::vector<double>& ref_exact) {
  double num = 0, den = 0;
  for (std::size_t i = 0; i < ref_quantised.size(); ++i) {
    num += (ref_quantised[i] - ref_exact[i]) * (ref_quantised[i] - ref_exact[i]);
    den += ref_exact[i] * ref_exact[i];
  }
  return std::sqrt(num / den);
}

/// The study's JSON, written as it goes (a run that dies leaves a truncated file, which
/// plots/plot.py reports instead of reading half a table):
///   {"commit", "shape", "rows_compared", "metric", (extra header fields), "results": [
///     {"data", "K", "RECIPE": {"vs_exact", "vs_quantised"}, ...,
///      "quantisation_only": {"RECIPE": x, ...}(, extra fields)}, ...]}
/// Numbers as std::ostream prints them by default (6 significant digits); a non-finite error
/// comes out as nan / inf, which plot.py reads.
class JsonWriter {
 public:
  /// `extra_header`: (key, JSON value as text) pairs after "metric". Throws std::runtime_error
  /// if `path` cannot be opened.
  JsonWriter(const std::string& path, const std::string& commit, std::size_t rows_compared,
             const std::vector<std::pair<std::string, std::string>>& extra_header = {})
      : out_(path) {
    if (!out_) throw std::runtime_error("accuracy study: cannot write " + path);
    out_ << "{\n  \"commit\": \"" << commit << "\",\n  \"shape\": \"" << kM << " x " << kN
         << " x K\",\n"
         << "  \"rows_compared\": " << rows_compared << ",\n  \"metric\": \"relative Frobenius "
         << "error of bf16 D\",\n";
    for (const auto& [key, value] : extra_header) out_ << "  \"" << key << "\": " << value << ",\n";
    out_ << "  \"results\": [\n";
  }
  JsonWriter(const JsonWriter&) = delete;
  JsonWriter& operator=(const JsonWriter&) = delete;
  /// Closes the list and the object.
  ~JsonWriter() { out_ << "\n  ]\n}\n"; }

  /// One result. `extra`: more fields as JSON text, starting with ", " (or empty).
  void row(const char* data, std::int64_t K,
           const std::vector<std::pair<std::string, Errors>>& recipes,
           const std::vector<std::pair<std::string, double>>& quantisation,
           const std::string& extra = "") {
    out_ << (first_ ? "" : ",\n") << "    {\"data\": \"" << data << "\", \"K\": " << K;
    for (const auto& [key, e] : recipes)
      out_ << ", \"" << key << "\": {\"vs_exact\": " << e.vs_exact
           << ", \"vs_quantised\": " << e.vs_quantised << "}";
    out_ << ", \"quantisation_only\": {";
    for (std::size_t i = 0; i < quantisation.size(); ++i)
      out_ << (i ? ", " : "") << "\"" << quantisation[i].first << "\": " << quantisation[i].second;
    out_ << "}" << extra << "}";
    out_.flush();
    first_ = false;
  }

 private:
  std::ofstream out_;
  bool first_ = true;
};

}  // namespace fp8gemm::study
