// Chapter 6's tuning sweep: every compiled engine kernel (kernels()) on the standard shapes,
// both accumulation modes, plus tile-order variants for the big tiles; cuBLASLt (fast and
// promoted) timed in the same process by the same method. Each result is first compared on the
// GPU with cuBLASLt's D (relative Frobenius difference; a wrong kernel cannot win the sweep).
//
// Method (as common/bench.hpp): 3 warm-up launches, then `reps` launches each with the L2 flushed
// before it (outside the timed region), CUDA events around each launch, the median.
//
//   ch06_sweep [--json=PATH] [--reps=N] [--filter=SUBSTRING] [--shapes=MxNxK,...]
#include <algorithm>
#include <array>
#include <cstdio>
#include <fstream>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

#include "common/bench.hpp"
#include "common/cublaslt.hpp"
#include "common/cuda.hpp"
#include "common/chapter_args.hpp"
#include "common/check.hpp"
#include "ws_gemm.hpp"

using namespace fp8gemm;

namespace {

double median_ms(const std::function<void(cudaStream_t)>& launch, int reps, L2Flush& l2) {
  for (int i = 0; i < 3; ++i) launch(nullptr);
  EventTimer t;
  std::vector<double> ms;
  for (int i = 0; i < reps; ++i) {
    l2.flush(nullptr);
    t.start();
    launch(nullptr);
    t.stop();
    ms.push_back(t.elapsed_ms());
  }
  std::sort(ms.begin(), ms.end());
  return ms[ms.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  // The arguments first, so that a bad or unknown one is refused with a message, GPU or not.
  std::string json = "ch06_sweep.json", filter;
  int reps = 20;
  std::vector<Shape> shapes;
  const bool args_ok = parse_arguments("ch06_sweep", [&] {
    for (int i = 1; i < argc; ++i) {
      const std::string a = argv[i];
      if (a.rfind("--json=", 0) == 0) json = a.substr(7);
      else if (a.rfind("--reps=", 0) == 0) reps = int(parse_count(a, "--reps=", 1));
      else if (a.rfind("--filter=", 0) == 0) filter = a.substr(9);
      else if (a.rfind("--shapes=", 0) == 0) {
        for (const auto& t : split_list(a.substr(9))) shapes.push_back(parse_shape(t));
      } else {
        throw std::invalid_argument(
            "unknown argument " + a +
            " (want --json=PATH, --reps=N, --filter=S, --shapes=MxNxK,...)");
      }
    }
  });
  if (!args_ok) return 1;
  if (cuda_device_count() == 0) {
    std::printf("No CUDA GPU found: ch06_sweep needs an NVIDIA Hopper GPU (sm_90a).\n");
    return 2;
  }
  if (shapes.empty()) shapes = standard_shapes({2048, 4096, 8192}, true);
  std::printf("GPU: %s\ncommit: %s\n", describe_device().c_str(), git_commit());
  std::ofstream out(json);
  out << "{\n  \"gpu\": \"" << describe_device() << "\",\n  \"commit\": \"" << git_commit()
      << "\",\n  \"method\": \"3 warm-up launches, then " << reps
      << " launches each after an L2 flush, CUDA events around each launch, median\",\n"
      << "  \"results\": [\n";
  bool first = true;
  auto record = [&](const Shape& s, const std::string& impl, const std::string& mode,
                    const std::string& raster, double ms, double diff) {
    const double tflops = 2.0 * double(s.M) * double(s.N) * double(s.K) / (ms * 1e-3) / 1e12;
    out << (first ? "" : ",\n") << "    {\"shape\": \"" << s.name() << "\", \"impl\": \"" << impl
        << "\", \"mode\": \"" << mode << "\", \"raster\": \"" << raster
        << "\", \"median_us\": " << ms * 1e3 << ", \"tflops\": " << tflops
        << ", \"diff_vs_cublaslt\": " << diff << "}";
    first = false;
    out.flush();
    return tflops;
  };

  CublasLtGemm cublas;
  L2Flush l2;
  for (const Shape& s : shapes) {
    DeviceBuffer<std::uint8_t> A(std::size_t(s.M * s.K)), B(std::size_t(s.N * s.K));
    DeviceBuffer<std::uint16_t> D(std::size_t(s.M * s.N)), ref(std::size_t(s.M * s.N));
    DeviceBuffer<float> scales(std::vector<float>{0.75f, 0, 0, 0, 1.25f});  // 16-byte aligned
    fill_random_e4m3(A.data(), A.size(), 100 + std::uint64_t(s.M + s.K), 1.0f);
    fill_random_e4m3(B.data(), B.size(), 200 + std::uint64_t(s.N + s.K), 1.0f);
    const PerTensorGemm g{s.M, s.N, s.K, A.data(), B.data(), D.data(), scales.data(), scales.data() + 4};
    cublas.per_tensor(s.M, s.N, s.K, g.A, g.B, ref.data(), g.scale_a, g.scale_b, false, nullptr);
    FP8GEMM_CUDA_CHECK(cudaDeviceSynchronize());
    std::map<std::string, double> best;  // mode -> best TFLOPS
    std::map<std::string, std::string> best_name;
    for (bool fast : {true, false}) {
      const double ms = median_ms([&](cudaStream_t st) {
        cublas.per_tensor(s.M, s.N, s.K, g.A, g.B, g.D, g.scale_a, g.scale_b, fast, st);
      }, reps, l2);
      const double tf = record(s, fast ? "cublaslt_fast" : "cublaslt_promoted",
                               fast ? "fast" : "promoted", "-", ms, 0.0);
      std::printf("%-18s %-34s %-8s %8.1f TFLOPS\n", s.name().c_str(),
                  fast ? "cublaslt_fast" : "cublaslt_promoted", "-", tf);
    }
    for (const auto& k : ch06::kernels()) {
      if (!filter.empty() && k.name.find(filter) == std::string::npos) continue;
      const bool small_m = s.M <= 128;
      // Narrow tiles only where M is small; 64-row tiles only for M <= 128.
      if (!small_m && (k.block_n < 112 || k.block_m < 128)) continue;
      if (small_m && k.block_m > 128) continue;
      if (k.block_m == 64 && s.M > 128) continue;
      std::vector<engine::RasterOptions> rasters = {{}};
      const bool raster_sweep = !small_m && (k.name.rfind("128x256_s4_c2x1", 0) == 0 ||
                                             k.name.rfind("256x128_s4_c1x2", 0) == 0);
      if (raster_sweep)
        for (int along : {0, 1})
          for (int group : {1, 2, 4, 8, 16}) rasters.push_back({group, along});
      for (const auto& r : rasters) {
        ch06::Options o;
        o.accumulation = k.accumulation;
        o.kernel = k.name;
        o.raster = r;
        try {
          const ch06::Plan plan(g, o);
          poison_bf16(D.data(), D.size());
          plan.run(nullptr);
          FP8GEMM_CUDA_CHECK(cudaDeviceSynchronize());
          const double diff = relative_difference_bf16(D.data(), ref.data(), D.size());
          const double ms = median_ms([&](cudaStream_t st) { plan.run(st); }, reps, l2);
          const std::string raster = std::to_string(plan.engine().schedule().group) +
                                     (plan.engine().schedule().along_n ? "n" : "m") +
                                     (r.group == 0 ? "(auto)" : "");
          const double tf = record(s, k.name, engine::to_string(k.accumulation), raster, ms, diff);
          const bool ok = diff < 2e-2;
          std::printf("%-18s %-34s %-8s %8.1f TFLOPS  diff %.1e%s\n", s.name().c_str(),
                      k.name.c_str(), raster.c_str(), tf, diff, ok ? "" : "  WRONG");
          const std::string mode = engine::to_string(k.accumulation);
          if (ok && tf > best[mode]) {
            best[mode] = tf;
            best_name[mode] = k.name + " " + raster;
          }
        } catch (const std::exception& e) {
          std::printf("%-18s %-34s ERROR %s\n", s.name().c_str(), k.name.c_str(), e.what());
        }
      }
    }
    for (const auto& [mode, tf] : best)
      std::printf("BEST %-18s %-8s %8.1f  %s\n", s.name().c_str(), mode.c_str(), tf,
                  best_name[mode].c_str());
  }
  out << "\n  ]\n}\n";
  return 0;
}
