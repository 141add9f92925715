#include "accuracy_study.hpp"

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <functional>
#include <random>
#include <vector>

#include "bs_gemm.hpp"
#include "common/cuda.hpp"
#include "common/quantize.hpp"
#include "common/reference.hpp"
#include "ws_gemm.hpp"

namespace fp8gemm::ch07 {

namespace {

enum class Data { normal, outliers, positive };
const char* name(Data d) {
  return d == Data::normal ? "normal" : d == Data::outliers ? "outlier_channels" : "all_positive";
}

/// rows x cols floats of the given kind (A gets the outlier channels, B never does).
std::vector<float> make_data(Data d, std::int64_t rows, std::int64_t cols, std::uint64_t seed,
                             bool is_a) {
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

std::vector<double> to_double(const std::vector<float>& v) { return {v.begin(), v.end()}; }

struct Errors {
  double vs_exact = 0;      ///< against float64 of the unquantised data
  double vs_quantised = 0;  ///< against float64 of the dequantised operands
};

/// Runs `launch` (which writes D, M x N bf16) and compares `rows` of D with both references.
Errors measure(const std::function<void(std::uint16_t*)>& launch, std::int64_t M, std::int64_t N,
               const std::vector<std::int64_t>& rows, const std::vector<double>& ref_exact,
               const std::vector<double>& ref_quantised) {
  DeviceBuffer<std::uint16_t> D(std::size_t(M * N));
  poison_bf16(D.data(), D.size());
  launch(D.data());
  FP8GEMM_CUDA_CHECK(cudaDeviceSynchronize());
  const std::vector<std::uint16_t> d = D.download();
  Errors e;
  e.vs_exact = compare_bf16_rows(d.data(), N, rows, ref_exact.data()).rel_frobenius;
  e.vs_quantised = compare_bf16_rows(d.data(), N, rows, ref_quantised.data()).rel_frobenius;
  return e;
}

}  // namespace

void run_accuracy_study(const std::string& path, const std::string& commit) {
  const std::int64_t M = 256, N = 256;
  std::vector<std::int64_t> rows;
  for (std::int64_t r = 0; r < M; r += 4) rows.push_back(r);  // 64 rows, every 4th
  std::ofstream out(path);
  out << "{\n  \"commit\": \"" << commit << "\",\n  \"shape\": \"256 x 256 x K\",\n"
      << "  \"rows_compared\": " << rows.size() << ",\n  \"metric\": \"relative Frobenius error "
      << "of bf16 D\",\n  \"results\": [\n";
  std::printf("\naccuracy study, 256 x 256 x K, relative error vs float64 of the unquantised data "
              "(in brackets: vs float64 of the recipe's own dequantised operands)\n");
  std::printf("  %-17s %-6s %22s %22s %22s\n", "data", "K", "per-tensor fast",
              "per-tensor promoted", "block-scaled promoted");
  bool first = true;
  std::uint64_t seed = 900;
  for (Data d : {Data::normal, Data::outliers, Data::positive}) {
    for (std::int64_t K : {1024, 4096, 16384, 65536}) {
      const std::vector<float> a = make_data(d, M, K, seed++, true);
      const std::vector<float> b = make_data(d, N, K, seed++, false);
      const std::vector<double> ref_exact =
          reference_gemm_rows(M, N, K, to_double(a).data(), to_double(b).data(), rows);

      // Per-tensor: one scale per operand (amax / 448).
      const auto pa = quantize<PerTensor>(a.data(), M, K);
      const auto pb = quantize<PerTensor>(b.data(), N, K);
      const std::vector<double> ref_pt = reference_gemm_rows(M, N, K, dequantize(pa).data(),
                                                             dequantize(pb).data(), rows);
      DeviceBuffer<std::uint8_t> dpa(pa.values), dpb(pb.values);
      DeviceBuffer<float> pscales(std::vector<float>{pa.scales[0], 0, 0, 0, pb.scales[0]});
      auto per_tensor = [&](ch06::Accumulation acc) {
        return [&, acc](std::uint16_t* D) {
          ch06::Options o;
          o.accumulation = acc;
          ch06::Plan(PerTensorGemm{M, N, K, dpa.data(), dpb.data(), D, pscales.data(),
                                   pscales.data() + 4},
                     o)
              .run(nullptr);
        };
      };
      const Errors fast = measure(per_tensor(ch06::Accumulation::fast), M, N, rows, ref_exact, ref_pt);
      const Errors prom = measure(per_tensor(ch06::Accumulation::promoted), M, N, rows, ref_exact, ref_pt);

      // Block scaling: A 1 x 128 ([ceil(K/128)][M], mn-major), B 128 x 128 (padded k-major).
      const auto ba = quantize<Group1x128>(a.data(), M, K);
      const auto bb = quantize<Block128x128>(b.data(), N, K);
      const std::vector<double> ref_bs = reference_gemm_rows(M, N, K, dequantize(ba).data(),
                                                             dequantize(bb).data(), rows);
      DeviceBuffer<std::uint8_t> dba(ba.values), dbb(bb.values);
      DeviceBuffer<float> dsa(ba.scales), dsb(bb.scales);
      const Errors block = measure(
          [&](std::uint16_t* D) {
            Plan({.M = M, .N = N, .K = K, .A = dba.data(), .B = dbb.data(),
                  .scale_a = dsa.data(), .scale_a_layout = GroupScaleLayout::mn_major_packed(M),
                  .scale_b = dsb.data(), .scale_b_layout = BlockScaleLayout::padded(K), .D = D})
                .run(nullptr);
          },
          M, N, rows, ref_exact, ref_bs);
      // Quantisation alone: the dequantised operands' exact product against the data's.
      auto quant_only = [&](const std::vector<double>& ref_q) {
        double num = 0, den = 0;
        for (std::size_t i = 0; i < ref_q.size(); ++i) {
          num += (ref_q[i] - ref_exact[i]) * (ref_q[i] - ref_exact[i]);
          den += ref_exact[i] * ref_exact[i];
        }
        return std::sqrt(num / den);
      };
      const double q_pt = quant_only(ref_pt), q_bs = quant_only(ref_bs);
      std::printf("  %-17s %-6lld %10.2e (%8.2e) %10.2e (%8.2e) %10.2e (%8.2e)\n", name(d),
                  static_cast<long long>(K), fast.vs_exact, fast.vs_quantised, prom.vs_exact,
                  prom.vs_quantised, block.vs_exact, block.vs_quantised);
      out << (first ? "" : ",\n") << "    {\"data\": \"" << name(d) << "\", \"K\": " << K
          << ", \"per_tensor_fast\": {\"vs_exact\": " << fast.vs_exact
          << ", \"vs_quantised\": " << fast.vs_quantised << "}"
          << ", \"per_tensor_promoted\": {\"vs_exact\": " << prom.vs_exact
          << ", \"vs_quantised\": " << prom.vs_quantised << "}"
          << ", \"block_scaled_promoted\": {\"vs_exact\": " << block.vs_exact
          << ", \"vs_quantised\": " << block.vs_quantised << "}"
          << ", \"quantisation_only\": {\"per_tensor\": " << q_pt << ", \"block_scaled\": " << q_bs
          << "}}";
      first = false;
      std::fflush(stdout);
    }
  }
  out << "\n  ]\n}\n";
}

}  // namespace fp8gemm::ch07
