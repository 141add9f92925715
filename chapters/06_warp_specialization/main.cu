// Chapter 6's executable: validate the engine in both accumulation modes against the float64
// reference, then benchmark it beside cuBLASLt (fast accumulation and its default, promoted) on
// the square ladder and the DeepSeek-V3 shapes, in one process, by one method (common/bench.hpp).
//
//   ch06_warp_specialization [--no-bench] [--sizes=1024,...] [--shapes=MxNxK,...] [--json=PATH]
//                            [--ablation] [--sustained=SECONDS] [--accuracy=PATH]
//                            [Google Benchmark flags]
// --ablation      the ablation steps (chapter 5 -> ... -> per-shape tiles -> ping-pong) at 8192^3 and
//                 4096x7168x16384, fast accumulation, beside cuBLASLt fast accumulation
// --sustained=S   every implementation at 8192^3 launched back to back for S seconds (a whole
//                 number >= 1; what a long training step sees: the GPU at its power cap); prints
//                 one line per implementation: "SUSTAINED <name> <TFLOPS> TFLOPS <start> <end>"
//                 (Unix ms), so that clock samples taken beside it (scripts/gpu_loop.sh) can be
//                 matched;
//                 with --kernels, cuBLASLt (both modes) and then those kernels instead of the
//                 table's (e.g. the ablation's steps, each at its own power-capped clock)
// --sizes=...     square sizes only (default: 1024..8192 and the DeepSeek-V3 shapes)
// --accuracy=PATH the all-positive-data accuracy table (256 x 256 x K, K up to 65536), as JSON
// --kernels=a,b   tuning: time these kernels (ch06::kernels() names, optionally with a raster
//                 suffix @g<W> or @g<W>n, see named_options) on the shapes instead of
//                 the table's choice, beside cuBLASLt (fast and promoted), each checked first
//                 on every shape (8 sampled rows); with --no-bench only checked
#include <algorithm>
#include <array>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "accuracy.hpp"
#include "chapters/05_wgmma/wgmma.cuh"
#include "common/bench.hpp"
#include "common/check.hpp"
#include "common/cublaslt.hpp"
#include "common/cuda.hpp"
#include "common/chapter_args.hpp"
#include "ws_gemm.hpp"

using namespace fp8gemm;

namespace {


/// Device operands for one shape, shared by every implementation timed on it.
struct Operands {
  DeviceBuffer<std::uint8_t> A, B;
  DeviceBuffer<std::uint16_t> D;
  DeviceBuffer<float> scales;
  PerTensorGemm gemm;
  explicit Operands(const Shape& s)
      : A(std::size_t(s.M * s.K)), B(std::size_t(s.N * s.K)), D(std::size_t(s.M * s.N)),
        scales(std::vector<float>{0.75f, 0, 0, 0, 1.25f}) {  // 16-byte aligned scalars
    fill_random_e4m3(A.data(), A.size(), 11 + std::uint64_t(s.M * 31 + s.K), 1.0f);
    fill_random_e4m3(B.data(), B.size(), 13 + std::uint64_t(s.N * 37 + s.K), 1.0f);
    gemm = PerTensorGemm{s.M, s.N, s.K, A.data(), B.data(), D.data(), scales.data(),
                         scales.data() + 4};
  }
};

ch06::Options mode_options(engine::Accumulation a) {
  ch06::Options o;
  o.accumulation = a;
  return o;
}

/// The options that run the kernel of this name (ch06::kernels()) in its accumulation mode. A
/// suffix "@g<W>" sets the raster's band width (W cluster tiles; the plan chooses it otherwise),
/// "@g<W>n" bands of columns instead of rows: the tile order is a plan option, not part of the
/// kernel, so the tuning mode can time one kernel in several orders.
ch06::Options named_options(const std::string& name) {
  ch06::Options o;
  const auto at = name.find('@');
  o.kernel = name.substr(0, at);
  if (at != std::string::npos) {
    // "g", 1-4 digits, optionally "n".
    std::string r = name.substr(at + 1);
    const bool along_n = !r.empty() && r.back() == 'n';
    if (along_n) r.pop_back();
    const bool ok = r.size() >= 2 && r.size() <= 5 && r[0] == 'g' &&
                    std::all_of(r.begin() + 1, r.end(), [](char c) { return c >= '0' && c <= '9'; });
    o.raster.group = ok ? std::stoi(r.substr(1)) : 0;
    if (o.raster.group < 1)
      throw std::invalid_argument("--kernels: '" + name + "': the suffix after '@' must be g<W> or "
                                  "g<W>n (W >= 1, the raster's band width)");
    o.raster.along_n = along_n ? 1 : 0;
  }
  o.accumulation = ch06::kernel_named(o.kernel).accumulation;
  return o;
}

/// Times `launch` back to back for `seconds` (chunks of 20 launches between two events, no flush,
/// no host sync between chunks) and returns TFLOPS over the whole run.
double sustained_tflops(const std::function<void(cudaStream_t)>& launch, const Shape& s,
                        double seconds) {
  for (int i = 0; i < 5; ++i) launch(nullptr);
  FP8GEMM_CUDA_CHECK(cudaDeviceSynchronize());
  EventTimer t;
  double total_ms = 0;
  std::int64_t launches = 0;
  while (total_ms < seconds * 1e3) {
    t.start();
    for (int i = 0; i < 20; ++i) launch(nullptr);
    t.stop();
    total_ms += t.elapsed_ms();
    launches += 20;
  }
  return 2.0 * double(s.M) * double(s.N) * double(s.K) * double(launches) / (total_ms * 1e-3) / 1e12;
}

}  // namespace

int main(int argc, char** argv) {
  std::printf("Chapter 6: persistent warp-specialised FP8 GEMM (the engine): producer/consumer "
              "warpgroups, TMA-store epilogue, 2-CTA multicast, per-shape tiles, ping-pong\n");

  // The arguments first, so that a bad one is refused with a message, GPU or not.
  bool ablation = false;
  double sustained = 0;
  ChapterArgs args;
  const bool args_ok = parse_arguments("ch06_warp_specialization", [&] {
    args = parse_chapter_args(
        argc, argv, {1024, 2048, 4096, 8192}, "ch06_warp_specialization.json",
        [&](const std::string& a) {
          if (a == "--ablation") return ablation = true;
          if (a.rfind("--sustained=", 0) == 0)
            return (sustained = double(parse_count(a, "--sustained=", 1))), true;
          return false;
        });
  });
  if (!args_ok) return 1;
  if (cuda_device_count() == 0) {
    std::printf("No CUDA GPU found: ch06_warp_specialization was built, but running it needs an "
                "NVIDIA Hopper GPU (sm_90a).\nOn a machine with one, run this binary again; see "
                "README.md, 'Running on a GPU'.\n");
    return 2;
  }
  std::printf("GPU: %s\ncommit: %s\n", describe_device().c_str(), git_commit());
  const std::vector<Shape> shapes = args.shapes();
  const std::vector<std::string>& kernels = args.kernels;
  for (const auto& name : kernels) {  // an unknown kernel or a bad suffix: say so, before any work
    try {
      named_options(name);
    } catch (const std::exception& e) {
      std::fprintf(stderr, "ch06_warp_specialization: %s\n", e.what());
      return 2;
    }
  }
  const bool bench = args.bench;
  const std::string& json = args.json;
  const std::string& accuracy_json = args.accuracy_json;
  std::vector<char*> rest = args.rest;

  // 1. Correctness, both modes: edge shapes (fresh host data, every row), then every benchmark
  //    shape on the benchmark's own operands (GPU-generated) with 8 sampled rows of the float64
  //    reference computed on the host (threads over rows: the DeepSeek shapes have up to 117 MB
  //    of B, too much to draw and dequantise on the host per check).
  std::map<std::string, std::string> errors;
  bool all_ok = true;
  std::printf("\nvalidation against the float64 CPU reference (tolerance 2^-8 + 2.5e-7 K, every "
              "128x128 tile too):\n");
  const std::vector<Shape> edges = {{1, 1, 16}, {127, 129, 80}, {200, 264, 656}, {333, 77, 1040}};
  std::uint64_t seed = 6000;
  for (const auto& s : edges) {
    for (auto mode : {engine::Accumulation::fast, engine::Accumulation::promoted}) {
      CheckOptions opt;
      opt.seed = seed++;
      const PerTensorKernel k = mode == engine::Accumulation::fast ? PerTensorKernel(ch06::gemm_fast)
                                                                   : PerTensorKernel(ch06::gemm);
      const CheckResult r = check_per_tensor(k, s.M, s.N, s.K, opt);
      all_ok &= r.ok();
      std::printf("  %-9s %-20s %s  %s  [%s]\n", engine::to_string(mode), s.name().c_str(),
                  r.ok() ? "ok  " : "FAIL", r.describe().c_str(),
                  ch06::choose_kernel(s.M, s.N, s.K, mode, s.N % 8 == 0, engine::rule_sms(0))
                        .name.c_str());
    }
  }
  std::map<std::string, std::unique_ptr<Operands>> operands;
  auto ops_for = [&](const Shape& s) -> Operands& {
    auto& p = operands[s.name()];
    if (!p) p = std::make_unique<Operands>(s);
    return *p;
  };
  if (!ablation && sustained == 0 && bench && kernels.empty()) {
    for (const auto& s : shapes) {
      Operands& ops = ops_for(s);
      for (auto mode : {engine::Accumulation::fast, engine::Accumulation::promoted}) {
        const auto r = ch06::sampled_check(ops.gemm, mode_options(mode), 8, seed++);
        const std::string impl = std::string("ch06_") + engine::to_string(mode);
        all_ok &= r.ok;
        errors[impl + "/" + s.name()] = r.describe;
        std::printf("  %-9s %-20s %s  %s  [%s]\n", engine::to_string(mode), s.name().c_str(),
                    r.ok ? "ok  " : "FAIL", r.describe.c_str(),
                    ch06::choose_kernel(s.M, s.N, s.K, mode, s.N % 8 == 0, engine::rule_sms(0))
                        .name.c_str());
      }
    }
  }
  if (!kernels.empty()) {
    // The named kernels on the shapes, 8 sampled rows each: the edge shapes of test_chapter_06
    // keep K short, and a kernel can be right there and wrong (or hang) on a long K (the first
    // ping-pong version did). With --no-bench this is all the run does (compute-sanitizer).
    for (const auto& s : shapes) {
      Operands& ops = ops_for(s);
      for (const auto& name : kernels) {
        const auto r = ch06::sampled_check(ops.gemm, named_options(name), 8, seed++);
        all_ok &= r.ok;
        std::printf("  %-34s %-20s %s  %s\n", name.c_str(), s.name().c_str(), r.ok ? "ok  " : "FAIL",
                    r.describe.c_str());
      }
    }
  }
  if (!all_ok) {
    std::printf("\nVALIDATION FAILED: not benchmarking a wrong kernel.\n");
    return 1;
  }

  if (!accuracy_json.empty()) {
    // All-positive data (e4m3 of U[0.5, 1]), 256 x 256 x K: fast accumulation drifts low as K
    // grows; promotion every 128 K does not. cuBLASLt in both modes beside ours.
    CublasLtGemm cublas;
    std::ofstream out(accuracy_json);
    out << "{\n  \"commit\": \"" << git_commit() << "\",\n  \"data\": \"A, B = e4m3(U[0.5, 1]), "
        << "scales 1, 256 x 256 x K, 32 sampled rows\",\n  \"rows\": [\n";
    std::printf("\naccuracy on all-positive data (e4m3 of U[0.5, 1]), 256 x 256 x K, relative "
                "Frobenius error vs float64:\n  %-8s %12s %12s %12s %12s\n", "K", "ch06 fast",
                "ch06 promoted", "cuBLASLt fast", "cuBLASLt prom.");
    bool first = true;
    for (std::int64_t K : {1024, 4096, 16384, 65536}) {
      auto cub = [&](bool fast) {
        return [&cublas, fast](const PerTensorGemm& g, cudaStream_t s) {
          cublas.per_tensor(g.M, g.N, g.K, g.A, g.B, g.D, g.scale_a, g.scale_b, fast, s);
        };
      };
      const auto f = ch06::uniform_data_error(ch06::gemm_fast, 256, 256, K, 0.5f, 1.0f, 42);
      const auto p = ch06::uniform_data_error(ch06::gemm, 256, 256, K, 0.5f, 1.0f, 42);
      const auto cf = ch06::uniform_data_error(cub(true), 256, 256, K, 0.5f, 1.0f, 42);
      const auto cp = ch06::uniform_data_error(cub(false), 256, 256, K, 0.5f, 1.0f, 42);
      std::printf("  %-8lld %12.2e %12.2e %12.2e %12.2e\n", static_cast<long long>(K),
                  f.rel_frobenius, p.rel_frobenius, cf.rel_frobenius, cp.rel_frobenius);
      out << (first ? "" : ",\n") << "    {\"K\": " << K << ", \"ch06_fast\": " << f.rel_frobenius
          << ", \"ch06_promoted\": " << p.rel_frobenius << ", \"cublaslt_fast\": "
          << cf.rel_frobenius << ", \"cublaslt_promoted\": " << cp.rel_frobenius << "}";
      first = false;
    }
    out << "\n  ]\n}\n";
  }

  if (sustained > 0) {
    const Shape s{8192, 8192, 8192};
    Operands ops(s);
    CublasLtGemm cublas;
    const PerTensorGemm g = ops.gemm;
    auto cublas_run = [&cublas, g](bool fast) {
      return [&cublas, g, fast](cudaStream_t st) {
        cublas.per_tensor(g.M, g.N, g.K, g.A, g.B, g.D, g.scale_a, g.scale_b, fast, st);
      };
    };
    // The table's plans, each mode beside cuBLASLt's; with --kernels, cuBLASLt (both modes) and
    // then those kernels instead (checked above on the --shapes given): e.g. the ablation's steps,
    // each at its own power-capped clock (the interleaved harness gives them one shared clock).
    std::vector<std::unique_ptr<ch06::Plan>> plans;
    std::vector<std::pair<std::string, std::function<void(cudaStream_t)>>> impls;
    auto add_plan = [&](const std::string& name, const ch06::Options& o) {
      plans.push_back(std::make_unique<ch06::Plan>(g, o));
      const ch06::Plan* p = plans.back().get();
      impls.push_back({name, [p](cudaStream_t st) { p->run(st); }});
    };
    if (kernels.empty()) {
      add_plan("ch06_fast", mode_options(engine::Accumulation::fast));
      impls.push_back({"cublaslt_fast", cublas_run(true)});
      add_plan("ch06_promoted", mode_options(engine::Accumulation::promoted));
      impls.push_back({"cublaslt_promoted", cublas_run(false)});
    } else {
      impls.push_back({"cublaslt_fast", cublas_run(true)});
      impls.push_back({"cublaslt_promoted", cublas_run(false)});
      for (const auto& name : kernels) add_plan(name, named_options(name));
    }
    std::printf("\nsustained, 8192^3, %.0f s each, back-to-back launches:\n", sustained);
    auto unix_ms = [] {
      return static_cast<long long>(std::chrono::duration_cast<std::chrono::milliseconds>(
                                        std::chrono::system_clock::now().time_since_epoch())
                                        .count());
    };
    for (const auto& [name, launch] : impls) {
      const long long t0 = unix_ms();
      const double tf = sustained_tflops(launch, s, sustained);
      std::printf("SUSTAINED %-20s %8.1f TFLOPS %lld %lld\n", name.c_str(), tf, t0, unix_ms());
      std::fflush(stdout);
    }
  }

  if (!bench) return 0;

  // 2. Benchmarks: every implementation on every shape in the same process, same method.
  CublasLtGemm cublas;
  std::vector<std::unique_ptr<ch06::Plan>> plans;  // alive until the benchmarks ran
  auto add = [&](const std::string& impl, const Shape& s, std::function<void(cudaStream_t)> f) {
    const GemmCost cost = fp8_gemm_cost(s.M, s.N, s.K);
    add_gpu_benchmark(impl, s.name(), std::move(f), cost);
  };
  auto plan = [&](const PerTensorGemm& g, const ch06::Options& o) -> const ch06::Plan* {
    plans.push_back(std::make_unique<ch06::Plan>(g, o));
    return plans.back().get();
  };
  auto add_cublas = [&](const Shape& s, bool fast) {
    const PerTensorGemm g = ops_for(s).gemm;
    add(fast ? "cublaslt_per_tensor" : "cublaslt_per_tensor_promoted", s, [g, &cublas, fast](cudaStream_t st) {
      cublas.per_tensor(g.M, g.N, g.K, g.A, g.B, g.D, g.scale_a, g.scale_b, fast, st);
    });
  };
  if (!kernels.empty()) {
    // Tuning by the harness's own method: every named kernel on every shape (each checked
    // above), beside cuBLASLt in both modes.
    for (const Shape& s : shapes) {
      const PerTensorGemm g = ops_for(s).gemm;
      for (const auto& name : kernels) {
        const ch06::Plan* p = plan(g, named_options(name));
        std::printf("%s at %s: %s\n", name.c_str(), s.name().c_str(), p->engine().describe().c_str());
        add(name, s, [p](cudaStream_t st) { p->run(st); });
      }
      add_cublas(s, true);
      add_cublas(s, false);
    }
  } else if (ablation) {
    // Fast accumulation throughout: the steps change the structure, not the arithmetic.
    for (const Shape& s : {Shape{8192, 8192, 8192}, Shape{4096, 7168, 16384}}) {
      const PerTensorGemm g = ops_for(s).gemm;
      add("ch05_wgmma", s, [g](cudaStream_t st) { ch05::gemm(g, st); });
      auto step = [&](const char* impl, const char* kernel, bool persistent) {
        ch06::Options o = mode_options(engine::Accumulation::fast);
        o.kernel = kernel;
        o.persistent = persistent;
        const ch06::Plan* p = plan(g, o);
        std::printf("%s at %s: %s\n", impl, s.name().c_str(), p->engine().describe().c_str());
        add(impl, s, [p](cudaStream_t st) { p->run(st); });
      };
      step("ch06_1_warp_specialized", "128x256_s4_c1x1_fast_reg", false);
      step("ch06_2_persistent", "128x256_s4_c1x1_fast_reg", true);
      step("ch06_3_tma_store", "128x256_s4_c1x1_fast_tma_b2", true);
      step("ch06_4_multicast", "128x256_s4_c2x1_fast_tma_b2", true);
      // The sweep's fastest cooperative kernel at both shapes (the table's until the ping-pong
      // kernels were swept): three deeper stages traded for four staging buffers.
      step("ch06_5_tiles", "128x256_s3_c2x1_fast_tma_b4", true);
      // The table: ping-pong consumers at both shapes (128 x 192 at 8192^3, 128 x 176 at
      // 4096x7168x16384), one warpgroup's epilogue beside the other's main loop.
      const ch06::Plan* p = plan(g, mode_options(engine::Accumulation::fast));
      std::printf("ch06_6_pingpong at %s: %s\n", s.name().c_str(), p->engine().describe().c_str());
      add("ch06_6_pingpong", s, [p](cudaStream_t st) { p->run(st); });
      add_cublas(s, true);
    }
  } else {
    for (const Shape& s : shapes) {
      const PerTensorGemm g = ops_for(s).gemm;
      for (auto mode : {engine::Accumulation::fast, engine::Accumulation::promoted}) {
        const ch06::Plan* p = plan(g, mode_options(mode));
        std::printf("ch06_%s at %s: %s\n", engine::to_string(mode), s.name().c_str(),
                    p->engine().describe().c_str());
        add(std::string("ch06_") + engine::to_string(mode), s, [p](cudaStream_t st) { p->run(st); });
      }
      add_cublas(s, true);
      add_cublas(s, false);
    }
  }
  FP8GEMM_CUDA_CHECK(cudaDeviceSynchronize());
  const auto results = run_benchmarks(int(rest.size()), rest.data(), json);
  std::printf("JSON: %s\n", json.c_str());

  // 3. The closing table: each mode against cuBLASLt's same mode, same run.
  std::map<std::string, std::map<std::string, double>> tf;  // shape -> impl -> TFLOPS
  std::vector<std::string> order;
  for (const auto& r : results) {
    if (!tf.count(r.shape)) order.push_back(r.shape);
    tf[r.shape][r.implementation] = r.tflops;
  }
  auto pct = [](double a, double b) {
    char buf[16] = "-";
    if (a > 0 && b > 0) std::snprintf(buf, sizeof buf, "%.1f%%", 100.0 * a / b);
    return std::string(buf);
  };
  if (!kernels.empty()) {
    // Per shape: each kernel against cuBLASLt in its own accumulation mode, best first.
    for (const auto& shape : order) {
      auto& m = tf[shape];
      std::vector<std::pair<double, std::string>> v;
      for (const auto& [impl, t] : m) {
        if (impl.rfind("cublaslt", 0) == 0) continue;
        const bool fast = impl.find("_fast_") != std::string::npos;
        const double peer = m[fast ? "cublaslt_per_tensor" : "cublaslt_per_tensor_promoted"];
        v.push_back({peer > 0 ? t / peer : 0.0, impl});
      }
      std::sort(v.rbegin(), v.rend());
      for (const auto& [ratio, impl] : v)
        std::printf("TUNE %-18s %-34s %8.1f TFLOPS %6.3fx cuBLASLt\n", shape.c_str(), impl.c_str(),
                    m[impl], ratio);
    }
    return 0;
  }
  if (ablation) {
    std::printf("\n%-26s %-18s %10s %12s\n", "step", "shape (MxNxK)", "TFLOPS", "% of cuBLASLt");
    for (const auto& shape : order)
      for (const auto& [impl, t] : tf[shape])
        if (impl != "cublaslt_per_tensor")
          std::printf("%-26s %-18s %10.1f %12s\n", impl.c_str(), shape.c_str(), t,
                      pct(t, tf[shape]["cublaslt_per_tensor"]).c_str());
    return 0;
  }
  std::printf("\n%-20s %10s %10s %8s %12s %12s %8s  %s\n", "shape (MxNxK)", "ch06 fast",
              "cuBLASLt", "ratio", "ch06 promo.", "cuBLASLt pr.", "ratio",
              "error (promoted) vs float64");
  for (const auto& shape : order) {
    auto& m = tf[shape];
    auto e = errors.find("ch06_promoted/" + shape);
    std::printf("%-20s %10.1f %10.1f %8s %12.1f %12.1f %8s  %s\n", shape.c_str(), m["ch06_fast"],
                m["cublaslt_per_tensor"], pct(m["ch06_fast"], m["cublaslt_per_tensor"]).c_str(),
                m["ch06_promoted"], m["cublaslt_per_tensor_promoted"],
                pct(m["ch06_promoted"], m["cublaslt_per_tensor_promoted"]).c_str(),
                e == errors.end() ? "-" : e->second.c_str());
  }
  return 0;
}
