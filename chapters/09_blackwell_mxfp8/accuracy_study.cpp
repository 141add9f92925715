#include "accuracy_study.hpp"

#include <cstdio>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "common/accuracy_study.hpp"
#include "common/check.hpp"
#include "common/cuda.hpp"
#include "common/quantize_gpu.hpp"
#include "common/reference.hpp"
#include "hopper_mx.hpp"

namespace fp8gemm::ch09 {

namespace {

constexpr MxExponentRule kRules[] = {MxExponentRule::floor_ocp, MxExponentRule::rceil};

/// s as a JSON string literal (the device name could hold a quote or a backslash).
std::string json_string(const std::string& s) {
  std::string r = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') r += '\\';
    r += c;
  }
  return r + "\"";
}

/// The Hopper MXFP8 GEMM of quantised operands already on the device, writing D.
void hopper_gemm(std::int64_t M, std::int64_t N, std::int64_t K, const std::uint8_t* A,
                 const std::uint8_t* sa, const std::uint8_t* B, const std::uint8_t* sb,
                 std::uint16_t* D) {
  MxGemm g;
  g.M = M;
  g.N = N;
  g.K = K;
  g.A = A;
  g.B = B;
  g.scale_a = sa;
  g.scale_a_bytes = scale_bytes(M, K);  // given, so that the plan checks the buffers' sizes
  g.scale_b = sb;
  g.scale_b_bytes = scale_bytes(N, K);
  g.D = D;
  HopperPlan(g).run(nullptr);
}

/// The GPU quantiser's output for bf16 x (rows x K): codes and the whole swizzled scale buffer.
struct GpuQuantized {
  DeviceBuffer<std::uint8_t> q, scales;
};
GpuQuantized quantize_on_gpu(const std::vector<std::uint16_t>& x, std::int64_t rows, std::int64_t K,
                             MxExponentRule rule) {
  const DeviceBuffer<std::uint16_t> dx(x);
  GpuQuantized r{DeviceBuffer<std::uint8_t>(std::size_t(rows * K)),
                 DeviceBuffer<std::uint8_t>(std::size_t(mx_1x32_scale_bytes(rows, K)))};
  quantize_mx_1x32(dx.data(), rows, K, K, r.q.data(), K, r.scales.data(), rule, nullptr);
  FP8GEMM_CUDA_CHECK(cudaDeviceSynchronize());
  return r;
}

/// Whether the GPU quantiser's bytes equal quantize_mx's on the same bf16 values.
bool same_bytes(const GpuQuantized& got, const MxQuantized& want) {
  return got.q.download() == want.values && got.scales.download() == want.scales;
}

std::vector<std::uint16_t> to_bf16(const std::vector<float>& v) {
  std::vector<std::uint16_t> r(v.size());
  for (std::size_t i = 0; i < v.size(); ++i) r[i] = float_to_bf16(v[i]);
  return r;
}

}  // namespace

MxStudyOperands mx_study_operands(const std::vector<float>& a, const std::vector<float>& b,
                                  std::int64_t M, std::int64_t N, std::int64_t K,
                                  const std::vector<std::int64_t>& rows, MxExponentRule rule,
                                  const std::vector<double>& ref_exact) {
  MxStudyOperands o;
  o.a = quantize_mx(a.data(), M, K, rule);
  o.b = quantize_mx(b.data(), N, K, rule);
  // dequantize_mx is exact (an e4m3 value times a power of two), so this is the project's
  // float64 reference on the dequantised operands, as chapter 7's recipes get theirs.
  o.ref_quantised =
      reference_gemm_rows(M, N, K, dequantize_mx(o.a).data(), dequantize_mx(o.b).data(), rows);
  o.quantisation_only = study::quantisation_only(o.ref_quantised, ref_exact);
  return o;
}

MxOperands to_operands(const MxQuantized& a, const MxQuantized& b) {
  MxOperands o;
  o.M = a.rows;
  o.N = b.rows;
  o.K = a.cols;
  o.A = a.values;
  o.B = b.values;
  o.sa = a.scales;
  o.sb = b.scales;
  return o;
}

std::string recipe_key(MxExponentRule rule) { return std::string("mxfp8_") + to_string(rule); }

bool run_accuracy_study(const std::string& path, const std::string& commit) {
  using study::Errors;
  const std::int64_t M = study::kM, N = study::kN;
  const std::vector<std::int64_t> rows = study::compared_rows();
  study::JsonWriter out(
      path, commit, rows.size(),
      {{"gpu", json_string(describe_device())},
       {"gemm", json_string("ch09::HopperPlan: the MXFP8 recipe on the chapter-6 engine, a "
                            "promotion per 32 K with 2^(ea-127) 2^(eb-127)")},
       {"quantiser", json_string("quantize_mx (common/mx.hpp, CPU) on the float data; "
                                 "gpu_quantiser: quantize_mx_1x32 on the data rounded to bf16")},
       {"data_source", json_string("chapter 7's study (common/accuracy_study.hpp): the same "
                                   "generators and seeds, so the same data")}});
  std::printf(
      "\nMXFP8 accuracy study (chapter 7's data), 256 x 256 x K, relative error vs float64 "
      "of the unquantised data (in brackets: vs float64 of the dequantised operands)\n");
  std::printf("  %-17s %-6s %22s %22s %10s %10s  %s\n", "data", "K", "MXFP8 floor_ocp",
              "MXFP8 rceil", "quant floor", "quant rceil", "GPU quantiser (bf16 in)");
  bool ok = true;
  for (const study::Point& p : study::points()) {
    const std::int64_t K = p.K;
    const auto [a, b, ref_exact] = study::point_data(p, rows);
    const std::vector<std::uint16_t> a16 = to_bf16(a), b16 = to_bf16(b);
    const double tolerance = per_tensor_tolerance(K);  // the chapter's own validation rule

    std::vector<std::pair<std::string, Errors>> recipes;
    std::vector<std::pair<std::string, double>> quantisation;
    std::ostringstream gpu_json;
    std::string gpu_text;
    gpu_json << ", \"gpu_quantiser\": {";
    for (MxExponentRule rule : kRules) {
      // The row: the float data through the CPU quantiser, the GEMM on the GPU.
      const MxStudyOperands o = mx_study_operands(a, b, M, N, K, rows, rule, ref_exact);
      const DeviceBuffer<std::uint8_t> dA(o.a.values), dB(o.b.values), dsa(o.a.scales),
          dsb(o.b.scales);
      const Errors e = study::measure(
          [&](std::uint16_t* D) {
            hopper_gemm(M, N, K, dA.data(), dsa.data(), dB.data(), dsb.data(), D);
          },
          M, N, rows, ref_exact, o.ref_quantised);
      // The GEMM's own error must be the validation's (bf16 rounding plus FP32 accumulation):
      // a study of a wrong kernel would measure nothing.
      if (!(e.vs_quantised <= tolerance)) {
        std::printf(
            "  FAIL: %s %s K = %lld: error %.3e against its own dequantised operands "
            "exceeds %.3e\n",
            study::name(p.data), to_string(rule), static_cast<long long>(K), e.vs_quantised,
            tolerance);
        ok = false;
      }
      recipes.emplace_back(recipe_key(rule), e);
      quantisation.emplace_back(recipe_key(rule), o.quantisation_only);

      // A user's path: bf16 data, the GPU quantiser, the same GEMM.
      const GpuQuantized ga = quantize_on_gpu(a16, M, K, rule),
                         gb = quantize_on_gpu(b16, N, K, rule);
      const bool bit_exact = same_bytes(ga, quantize_mx(a16.data(), M, K, rule)) &&
                             same_bytes(gb, quantize_mx(b16.data(), N, K, rule));
      const double gpu_vs_exact = study::measure(
                                      [&](std::uint16_t* D) {
                                        hopper_gemm(M, N, K, ga.q.data(), ga.scales.data(),
                                                    gb.q.data(), gb.scales.data(), D);
                                      },
                                      M, N, rows, ref_exact, ref_exact)
                                      .vs_exact;
      if (!bit_exact) {
        std::printf("  FAIL: %s %s K = %lld: quantize_mx_1x32 differs from quantize_mx\n",
                    study::name(p.data), to_string(rule), static_cast<long long>(K));
        ok = false;
      }
      gpu_json << (rule == kRules[0] ? "" : ", ") << "\"" << to_string(rule)
               << "\": {\"bit_exact\": " << (bit_exact ? "true" : "false")
               << ", \"vs_exact\": " << gpu_vs_exact << "}";
      char buf[64];
      std::snprintf(buf, sizeof buf, "%s%s %.2e", gpu_text.empty() ? "" : ", ",
                    bit_exact ? "same bytes" : "DIFFERENT", gpu_vs_exact);
      gpu_text += buf;
    }
    gpu_json << "}";
    std::printf("  %-17s %-6lld %10.2e (%8.2e) %10.2e (%8.2e) %10.2e %10.2e  %s\n",
                study::name(p.data), static_cast<long long>(K), recipes[0].second.vs_exact,
                recipes[0].second.vs_quantised, recipes[1].second.vs_exact,
                recipes[1].second.vs_quantised, quantisation[0].second, quantisation[1].second,
                gpu_text.c_str());
    out.row(study::name(p.data), K, recipes, quantisation, gpu_json.str());
    std::fflush(stdout);
  }
  std::printf(ok ? "MXFP8 accuracy study: every GEMM within its validation tolerance, the GPU "
                   "quantiser byte for byte the CPU one\n"
                 : "MXFP8 ACCURACY STUDY FAILED (see FAIL lines)\n");
  return ok;
}

}  // namespace fp8gemm::ch09
