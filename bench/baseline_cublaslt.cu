// The cuBLASLt baseline on the standard shapes of docs/design.md: the square ladder (1024^3 .. 8192^3)
// and the DeepSeek-V3 set (M in {64, 128, 4096} x (N, K) in six weight shapes), for
//   cublaslt_per_tensor           per-tensor scales, FP32 fast accumulation (like chapters 3-6)
//   cublaslt_per_tensor_promoted  per-tensor scales, cuBLASLt's default (periodic promotion)
//   cublaslt_block_scaled         A 1x128 (VEC128_32F), B 128x128 (BLK128x128_32F)
// Every benchmark first checks its result against the float64 CPU reference on sampled rows
// (fresh random data, D poisoned), then times with the harness (L2 flushed, median).
// Output: baseline_cublaslt.json (or --benchmark_out=...), committed under plots/data/h200/.
#include <array>
#include <map>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include "common/bench.hpp"
#include "common/check.hpp"
#include "common/cublaslt.hpp"
#include "common/cuda.hpp"
#include "common/quantize.hpp"
#include "common/reference.hpp"
#include "common/scaling.hpp"

using namespace fp8gemm;

namespace {

enum class Mode { fast, promoted, block };
const char* mode_name(Mode m) {
  return m == Mode::fast ? "cublaslt_per_tensor"
         : m == Mode::promoted ? "cublaslt_per_tensor_promoted"
                               : "cublaslt_block_scaled";
}

// Random positive scales in [0.5, 1.5) in the recipe's layout (padding slots set too: they are
// never read, and a non-zero value there would show up if they were).
std::vector<float> random_scales(std::int64_t count, std::uint64_t seed) {
  std::mt19937_64 gen(seed);
  std::uniform_real_distribution<float> dist(0.5f, 1.5f);
  std::vector<float> s(static_cast<std::size_t>(count));
  for (auto& v : s) v = dist(gen);
  return s;
}

// Float64 reference for a few rows of D, from the device copies of A, B and the scales.
double sampled_error(Mode mode, std::int64_t M, std::int64_t N, std::int64_t K,
                     const DeviceBuffer<std::uint8_t>& A, const DeviceBuffer<std::uint8_t>& B,
                     const DeviceBuffer<std::uint16_t>& D, const std::vector<float>& sa,
                     const std::vector<float>& sb) {
  const auto a = A.download(), b = B.download();
  const auto d = D.download();
  const std::vector<std::int64_t> rows = {0, M / 3, M / 2, M - 1};
  const Group1x128 la(M, K);
  const Block128x128 lb(N, K);
  std::vector<double> bd(static_cast<std::size_t>(N * K));
  for (std::int64_t n = 0; n < N; ++n)
    for (std::int64_t k = 0; k < K; ++k)
      bd[n * K + k] = double(e4m3_decode(b[n * K + k])) *
                      (mode == Mode::block ? sb[lb.index(n, k)] : sb[0]);
  std::vector<double> ad(rows.size() * static_cast<std::size_t>(K));
  for (std::size_t i = 0; i < rows.size(); ++i)
    for (std::int64_t k = 0; k < K; ++k)
      ad[i * K + k] = double(e4m3_decode(a[rows[i] * K + k])) *
                      (mode == Mode::block ? sa[la.index(rows[i], k)] : sa[0]);
  std::vector<std::int64_t> local = {0, 1, 2, 3};
  const auto ref = reference_gemm_rows(4, N, K, ad.data(), bd.data(), local);
  return compare_bf16_rows(d.data(), N, rows, ref.data()).rel_frobenius;
}

std::map<std::string, double> g_errors;  // "<impl>/<shape>" -> relative error

void bench_one(benchmark::State& state, CublasLtGemm* cublas, Mode mode, std::int64_t M,
               std::int64_t N, std::int64_t K) {
  try {
    DeviceBuffer<std::uint8_t> A(std::size_t(M * K)), B(std::size_t(N * K));
    DeviceBuffer<std::uint16_t> D(std::size_t(M * N));
    const std::uint64_t seed = std::uint64_t(M * 1000003 + N * 1009 + K);
    fill_random_e4m3(A.data(), A.size(), seed, 1.0f);
    fill_random_e4m3(B.data(), B.size(), seed + 1, 1.0f);
    const std::int64_t na = mode == Mode::block ? Group1x128(M, K).size() : 1;
    const std::int64_t nb = mode == Mode::block ? Block128x128(N, K).size() : 1;
    const std::vector<float> sa = random_scales(na, seed + 2), sb = random_scales(nb, seed + 3);
    DeviceBuffer<float> dsa(sa), dsb(sb);
    auto launch = [&](cudaStream_t s) {
      if (mode == Mode::block)
        cublas->block_scaled(M, N, K, A.data(), B.data(), D.data(), dsa.data(), dsb.data(), s);
      else
        cublas->per_tensor(M, N, K, A.data(), B.data(), D.data(), dsa.data(), dsb.data(),
                           mode == Mode::fast, s);
    };
    poison_bf16(D.data(), D.size());
    launch(nullptr);
    FP8GEMM_CUDA_CHECK(cudaDeviceSynchronize());
    const double err = sampled_error(mode, M, N, K, A, B, D, sa, sb);
    g_errors[std::string(mode_name(mode)) + "/" + std::to_string(M) + "x" + std::to_string(N) +
             "x" + std::to_string(K)] = err;
    if (!(err < per_tensor_tolerance(K))) {  // common/check.hpp
      state.SkipWithError(("result check failed: relative error " + std::to_string(err)).c_str());
      return;
    }
    state.counters["rel_error"] = err;
    time_gpu(state, launch, fp8_gemm_cost(M, N, K, double(na + nb) * 4));
  } catch (const std::exception& e) {
    state.SkipWithError(e.what());
  }
}

}  // namespace

int main(int argc, char** argv) {
  std::printf("fp8gemm baseline: cuBLASLt FP8 e4m3 -> bf16 on the standard shapes\n");
  if (cuda_device_count() == 0) {
    std::printf("No CUDA GPU found: this benchmark needs an NVIDIA GPU with FP8 (sm_89+).\n");
    return 2;
  }
  std::printf("GPU: %s\ncommit: %s\ncuBLASLt %zu\n", describe_device().c_str(), git_commit(),
              CublasLtGemm::version());
  CublasLtGemm cublas;
  std::vector<std::array<std::int64_t, 3>> shapes;
  for (std::int64_t s : {1024, 2048, 4096, 8192}) shapes.push_back({s, s, s});
  const std::array<std::array<std::int64_t, 2>, 6> nk = {
      {{2112, 7168}, {24576, 1536}, {32768, 512}, {7168, 16384}, {4096, 7168}, {7168, 2048}}};
  for (std::int64_t M : {64, 128, 4096})
    for (const auto& [N, K] : nk) shapes.push_back({M, N, K});
  for (Mode mode : {Mode::fast, Mode::promoted, Mode::block})
    for (const auto& [M, N, K] : shapes) {
      const std::string name = std::string(mode_name(mode)) + "/" + std::to_string(M) + "x" +
                               std::to_string(N) + "x" + std::to_string(K);
      benchmark::RegisterBenchmark(name.c_str(), [&cublas, mode, M = M, N = N, K = K](
                                                     benchmark::State& st) {
        bench_one(st, &cublas, mode, M, N, K);
      })->UseManualTime()->Iterations(1)->Unit(benchmark::kMicrosecond);
    }
  const auto results = run_benchmarks(argc, argv, "baseline_cublaslt.json");
  print_summary(results, "cublaslt_per_tensor", [](const std::string& impl, const std::string& shape) {
    auto it = g_errors.find(impl + "/" + shape);
    char buf[64] = "-";
    if (it != g_errors.end()) std::snprintf(buf, sizeof buf, "rel %.2e (4 rows)", it->second);
    return std::string(buf);
  });
  return 0;
}
