#include "accuracy_study.hpp"

#include <cstdio>
#include <vector>

#include "bs_gemm.hpp"
#include "common/accuracy_study.hpp"
#include "common/cuda.hpp"
#include "common/quantize.hpp"
#include "common/reference.hpp"
#include "ws_gemm.hpp"

namespace fp8gemm::ch07 {

// The data, the points, the metrics and the JSON rows are common/accuracy_study.hpp's (shared with
// chapter 9's MXFP8 rows); what stays here is chapter 7's recipes.
void run_accuracy_study(const std::string& path, const std::string& commit) {
  using study::Errors;
  const std::int64_t M = study::kM, N = study::kN;
  const std::vector<std::int64_t> rows = study::compared_rows();
  study::JsonWriter out(path, commit, rows.size());
  std::printf(
      "\naccuracy study, 256 x 256 x K, relative error vs float64 of the unquantised data "
      "(in brackets: vs float64 of the recipe's own dequantised operands)\n");
  std::printf("  %-17s %-6s %22s %22s %22s\n", "data", "K", "per-tensor fast",
              "per-tensor promoted", "block-scaled promoted");
  for (const study::Point& p : study::points()) {
    const std::int64_t K = p.K;
    const auto [a, b, ref_exact] = study::point_data(p, rows);

    // Per-tensor: one scale per operand (amax / 448).
    const auto pa = quantize<PerTensor>(a.data(), M, K);
    const auto pb = quantize<PerTensor>(b.data(), N, K);
    const std::vector<double> ref_pt =
        reference_gemm_rows(M, N, K, dequantize(pa).data(), dequantize(pb).data(), rows);
    DeviceBuffer<std::uint8_t> dpa(pa.values), dpb(pb.values);
    DeviceBuffer<float> pscales(std::vector<float>{pa.scales[0], 0, 0, 0, pb.scales[0]});
    auto per_tensor = [&](ch06::Accumulation acc) {
      return [&, acc](std::uint16_t* D) {
        ch06::Options o;
        o.accumulation = acc;
        ch06::Plan(
            PerTensorGemm{M, N, K, dpa.data(), dpb.data(), D, pscales.data(), pscales.data() + 4},
            o)
            .run(nullptr);
      };
    };
    const Errors fast =
        study::measure(per_tensor(ch06::Accumulation::fast), M, N, rows, ref_exact, ref_pt);
    const Errors prom =
        study::measure(per_tensor(ch06::Accumulation::promoted), M, N, rows, ref_exact, ref_pt);

    // Block scaling: A 1 x 128 ([ceil(K/128)][M], mn-major), B 128 x 128 (padded k-major).
    const auto ba = quantize<Group1x128>(a.data(), M, K);
    const auto bb = quantize<Block128x128>(b.data(), N, K);
    const std::vector<double> ref_bs =
        reference_gemm_rows(M, N, K, dequantize(ba).data(), dequantize(bb).data(), rows);
    DeviceBuffer<std::uint8_t> dba(ba.values), dbb(bb.values);
    DeviceBuffer<float> dsa(ba.scales), dsb(bb.scales);
    const Errors block = study::measure(
        [&](std::uint16_t* D) {
          Plan({.M = M,
                .N = N,
                .K = K,
                .A = dba.data(),
                .B = dbb.data(),
                .scale_a = dsa.data(),
                .scale_a_layout = GroupScaleLayout::mn_major_packed(M),
                .scale_b = dsb.data(),
                .scale_b_layout = BlockScaleLayout::padded(K),
                .D = D})
              .run(nullptr);
        },
        M, N, rows, ref_exact, ref_bs);
    const double q_pt = study::quantisation_only(ref_pt, ref_exact);
    const double q_bs = study::quantisation_only(ref_bs, ref_exact);
    std::printf("  %-17s %-6lld %10.2e (%8.2e) %10.2e (%8.2e) %10.2e (%8.2e)\n",
                study::name(p.data), static_cast<long long>(K), fast.vs_exact, fast.vs_quantised,
                prom.vs_exact, prom.vs_quantised, block.vs_exact, block.vs_quantised);
    out.row(study::name(p.data), K,
            {{"per_tensor_fast", fast},
             {"per_tensor_promoted", prom},
             {"block_scaled_promoted", block}},
            {{"per_tensor", q_pt}, {"block_scaled", q_bs}});
    std::fflush(stdout);
  }
}

}  // namespace fp8gemm::ch07
