#include "common/chapter_main.hpp"

#include <cstdio>
#include <array>
#include <cstring>
#include <map>
#include <sstream>
#include <string>

#include "common/bench.hpp"
#include "common/chapter_args.hpp"  // Shape::name
#include "common/check.hpp"
#include "common/cublaslt.hpp"
#include "common/cuda.hpp"

namespace fp8gemm {

int chapter_main(int argc, char** argv, const ChapterInfo& chapter) {
  std::printf("%s\n", chapter.title);
  // The arguments first, so that a bad one is refused with a message, GPU or not.
  std::vector<std::int64_t> sizes = {1024, 2048, 4096, 8192};
  bool bench = true;
  std::string json = std::string(chapter.name) + ".json";
  std::vector<char*> rest = {argv[0]};  // what Google Benchmark sees
  const bool args_ok = parse_arguments(chapter.name, [&] {
    for (int i = 1; i < argc; ++i) {
      if (std::strncmp(argv[i], "--sizes=", 8) == 0) {
        sizes.clear();
        std::stringstream ss(argv[i] + 8);
        for (std::string t; std::getline(ss, t, ',');)
          sizes.push_back(parse_count("--sizes=" + t, "--sizes=", 1));
      } else if (std::strcmp(argv[i], "--no-bench") == 0) {
        bench = false;
      } else if (std::strncmp(argv[i], "--json=", 7) == 0) {
        json = argv[i] + 7;
      } else {
        rest.push_back(argv[i]);
      }
    }
  });
  if (!args_ok) return 1;
  if (cuda_device_count() == 0) {
    std::printf(
        "No CUDA GPU found: %s was built, but running it needs an NVIDIA Hopper GPU (sm_90a).\n"
        "On a machine with one, run this binary again; see README.md, 'Running on a GPU'.\n",
        chapter.name);
    return 2;
  }
  std::printf("GPU: %s\ncommit: %s\n", describe_device().c_str(), git_commit());

  // 1. Correctness: edge shapes (tails in every dimension), then every benchmark shape.
  const std::int64_t k = chapter.k_multiple;
  std::vector<std::array<std::int64_t, 3>> shapes = {
      {1, 1, k * 3}, {127, 129, k * 5}, {200, 264, 640 + k}, {333, 77, 1024 + k}};
  for (auto s : sizes) shapes.push_back({s, s, s});
  std::map<std::string, std::string> errors;
  bool all_ok = true;
  std::printf("\nvalidation against the float64 CPU reference (tolerance 2^-8 + 2.5e-7 K):\n");
  std::uint64_t seed = 1000;
  for (const auto& s : shapes) {
    CheckOptions opt;
    opt.seed = seed++;
    const CheckResult r = check_per_tensor(chapter.kernel, s[0], s[1], s[2], opt);
    const bool ok = r.ok();
    all_ok &= ok;
    errors[Shape{s[0], s[1], s[2]}.name()] = r.describe();
    std::printf("  %-20s %s  %s\n", Shape{s[0], s[1], s[2]}.name().c_str(), ok ? "ok  " : "FAIL",
                r.describe().c_str());
  }
  if (!all_ok) {
    std::printf("\nVALIDATION FAILED: not benchmarking a wrong kernel.\n");
    return 1;
  }
  if (!bench) return 0;

  // 2. Benchmarks: the chapter and cuBLASLt, same shapes, same process, fresh random data.
  CublasLtGemm cublas;
  struct Buffers {
    DeviceBuffer<std::uint8_t> A, B;
    DeviceBuffer<std::uint16_t> D;
    DeviceBuffer<float> sa, sb;
  };
  std::map<std::int64_t, Buffers> buffers;
  for (auto s : sizes) {
    Buffers b{DeviceBuffer<std::uint8_t>(std::size_t(s * s)),
              DeviceBuffer<std::uint8_t>(std::size_t(s * s)),
              DeviceBuffer<std::uint16_t>(std::size_t(s * s)),
              DeviceBuffer<float>(std::vector<float>{0.75f}),
              DeviceBuffer<float>(std::vector<float>{1.25f})};
    fill_random_e4m3(b.A.data(), b.A.size(), 11 + s, 1.0f);
    fill_random_e4m3(b.B.data(), b.B.size(), 13 + s, 1.0f);
    buffers.emplace(s, std::move(b));
  }
  FP8GEMM_CUDA_CHECK(cudaDeviceSynchronize());
  for (auto s : sizes) {
    Buffers* b = &buffers.at(s);
    const PerTensorGemm g{s, s, s, b->A.data(), b->B.data(), b->D.data(), b->sa.data(), b->sb.data()};
    const GemmCost cost = fp8_gemm_cost(s, s, s);
    const std::string shape = Shape{s, s, s}.name();
    add_gpu_benchmark(chapter.name, shape, [g, &chapter](cudaStream_t str) { chapter.kernel(g, str); },
                      cost);
    add_gpu_benchmark("cublaslt_per_tensor", shape, [g, &cublas](cudaStream_t str) {
      cublas.per_tensor(g.M, g.N, g.K, g.A, g.B, g.D, g.scale_a, g.scale_b, true, str);
    }, cost);
  }
  const auto results = run_benchmarks(int(rest.size()), rest.data(), json);
  std::printf("JSON: %s\n", json.c_str());
  print_summary(results, "cublaslt_per_tensor", [&](const std::string& impl, const std::string& shape) {
    if (impl == "cublaslt_per_tensor") return std::string("(peer)");
    auto it = errors.find(shape);
    return it == errors.end() ? std::string("-") : it->second;
  });
  return 0;
}

}  // namespace fp8gemm
