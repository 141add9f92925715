// Bandwidth of the DeepSeek-V3 quantisers (common/quantize_gpu.hpp) against a device-to-device
// copy of the same number of bytes, timed in the same process and run by the same harness
// (common/bench.hpp: L2 flushed before every launch, CUDA events, median).
//
// Bytes counted (the minimum any implementation must move through device memory):
//   quantize_1x128      M K (2 read + 1 written) + 4 M ceil(K/128) scales
//   quantize_128x128    N K (2 + 1)              + 4 ceil(N/128) ceil(K/128)
//   quantize_1x128_dual M K (2 + 1 + 1)          + 4 (M ceil(K/128) + K ceil(M/128))
//   copy_d2d            cudaMemcpyAsync of B / 2 bytes for an operation of B bytes: it reads
//                       B / 2 and writes B / 2, so both sides move the same bytes.
// Inputs are >= 64 MB of bf16 (well beyond the 60 MB L2, and flushed anyway).
//
// Prediction (before measuring): the H200's D2D copy runs at ~4.3 TB/s read + write (FACTS.md).
// The quantisers read 2 bytes and write 1 per element, a 2:1 mix the copy does not have but
// HBM3e serves about as well; their arithmetic (an IEEE division and half a cvt per element,
// ~15 instructions) is ~50 % of the SM issue rate at that bandwidth, so they should stay
// memory-bound: ~3.8-4.0 TB/s (~90 % of the copy) for quantize_1x128 and quantize_128x128
// (whole 32 KB blocks in registers, plenty in flight). The dual variant adds a shared-memory
// round trip and a transposed store of 32-byte pieces: ~3.5 TB/s (~80-85 %).
// Measured (H200, 2026-12-01, per-launch median, L2 flushed; copy ~3.9 TB/s in the same run):
// quantize_128x128 3.43 TB/s (87 %); quantize_1x128 2.95-3.03 TB/s (75-77 % mn-major TMA-aligned
// scales, 80 % k-major: the mn-major scale stores are 4-byte scattered writes); pow2 the same;
// quantize_1x128_dual 1.92-1.97 TB/s (48-50 %). The first versions, with __fdiv_rn per element
// and 8 elements per lane, ran at 49 % / 73 % / 30 %: the kernels were instruction-bound, not
// memory-bound, until the division's reciprocal was hoisted out of the element loop.
//
// Output: quantize_bench.json (or --benchmark_out=...), Google Benchmark JSON with the harness's
// context (GPU, clocks, driver, commit); counters GB/s, median_us and pct_of_copy.
#include <cuda_runtime.h>

#include <cstdint>
#include <cstdio>
#include <map>
#include <string>
#include <vector>

#include "common/bench.hpp"
#include "common/cuda.hpp"
#include "common/quantize_gpu.hpp"

using namespace fp8gemm;

namespace {

// Deterministic bf16 test data on the device: uniform in (-1, 1) times 2^e, e in [-10, 9]
// varying per 128-element group (so scales differ), from a hash of the index.
__device__ std::uint32_t hash32(std::uint64_t v) {
  v ^= v >> 33;
  v *= 0xff51afd7ed558ccdull;
  v ^= v >> 33;
  v *= 0xc4ceb9fe1a85ec53ull;
  v ^= v >> 33;
  return std::uint32_t(v);
}
__global__ void fill_bf16_kernel(std::uint16_t* x, std::uint64_t n, std::uint64_t seed) {
  for (std::uint64_t i = blockIdx.x * std::uint64_t(blockDim.x) + threadIdx.x; i < n;
       i += std::uint64_t(gridDim.x) * blockDim.x) {
    const float u = (float(hash32(seed ^ (i * 0x9E3779B97F4A7C15ull)) >> 8) + 0.5f) / 16777216.0f;
    const int e = int(hash32(seed + (i >> 7)) % 20) - 10;
    const float v = ldexpf(2.0f * u - 1.0f, e);
    x[i] = std::uint16_t(__float_as_uint(v) >> 16);  // truncation is fine for test data
  }
}

enum class Op { q1x128, q1x128_kmajor, q1x128_pow2, q128x128, dual };
const char* op_name(Op op) {
  switch (op) {
    case Op::q1x128: return "quantize_1x128";
    case Op::q1x128_kmajor: return "quantize_1x128_kmajor";
    case Op::q1x128_pow2: return "quantize_1x128_pow2";
    case Op::q128x128: return "quantize_128x128";
    case Op::dual: return "quantize_1x128_dual";
  }
  return "?";
}

double op_bytes(Op op, std::int64_t R, std::int64_t K) {
  const double e = double(R) * double(K);
  switch (op) {
    case Op::q128x128: return 3 * e + 4.0 * double(ceil_div(R, 128) * ceil_div(K, 128));
    case Op::dual: return 4 * e + 4.0 * double(R * ceil_div(K, 128) + K * ceil_div(R, 128));
    default: return 3 * e + 4.0 * double(R * ceil_div(K, 128));
  }
}

std::string shape_name(std::int64_t R, std::int64_t K) {
  return std::to_string(R) + "x" + std::to_string(K);
}

std::map<std::string, double> g_copy_gbs;  // "<op>/<shape>" -> copy GB/s for the same bytes
std::map<std::string, double> g_op_gbs;

double median_gbs(benchmark::State& state) {
  const auto it = state.counters.find("GB/s");
  return it == state.counters.end() ? 0.0 : double(it->second);
}

void bench_copy(benchmark::State& state, Op op, std::int64_t R, std::int64_t K) {
  try {
    const std::size_t half = std::size_t(op_bytes(op, R, K) / 2);
    DeviceBuffer<std::uint8_t> src(half), dst(half);
    FP8GEMM_CUDA_CHECK(cudaMemset(src.data(), 1, half));
    time_gpu(state, [&](cudaStream_t s) {
      FP8GEMM_CUDA_CHECK(cudaMemcpyAsync(dst.data(), src.data(), half, cudaMemcpyDeviceToDevice, s));
    }, GemmCost{0.0, 2.0 * double(half)});
    g_copy_gbs[std::string(op_name(op)) + "/" + shape_name(R, K)] = median_gbs(state);
  } catch (const std::exception& e) {
    state.SkipWithError(e.what());
  }
}

void bench_op(benchmark::State& state, Op op, std::int64_t R, std::int64_t K) {
  try {
    DeviceBuffer<std::uint16_t> x(std::size_t(R * K));
    fill_bf16_kernel<<<4096, 256>>>(x.data(), x.size(), std::uint64_t(R * 131 + K));
    FP8GEMM_CUDA_CHECK(cudaGetLastError());
    DeviceBuffer<std::uint8_t> q(std::size_t(R * K));
    std::function<void(cudaStream_t)> launch;
    DeviceBuffer<std::uint8_t> qt;
    DeviceBuffer<float> s, st;
    const QuantizeOptions opt{op == Op::q1x128_pow2};
    if (op == Op::q128x128) {
      const auto L = BlockScaleLayout::padded(K);
      s = DeviceBuffer<float>(std::size_t(L.required_elements(R, K)));
      launch = [&, L](cudaStream_t st_) {
        quantize_128x128(x.data(), R, K, K, q.data(), K, s.data(), L, opt, st_);
      };
    } else if (op == Op::dual) {
      const auto L = GroupScaleLayout::mn_major_tma_aligned(R);
      const auto Lt = GroupScaleLayout::mn_major_tma_aligned(K);
      s = DeviceBuffer<float>(std::size_t(L.required_elements(R, K)));
      st = DeviceBuffer<float>(std::size_t(Lt.required_elements(K, R)));
      qt = DeviceBuffer<std::uint8_t>(std::size_t(R * K));
      launch = [&, L, Lt](cudaStream_t st_) {
        quantize_1x128_dual(x.data(), R, K, K, q.data(), K, s.data(), L, qt.data(), R, st.data(),
                            Lt, opt, st_);
      };
    } else {
      const auto L = op == Op::q1x128_kmajor ? GroupScaleLayout::k_major_packed(K)
                                             : GroupScaleLayout::mn_major_tma_aligned(R);
      s = DeviceBuffer<float>(std::size_t(L.required_elements(R, K)));
      launch = [&, L](cudaStream_t st_) {
        quantize_1x128(x.data(), R, K, K, q.data(), K, s.data(), L, opt, st_);
      };
    }
    time_gpu(state, launch, GemmCost{0.0, op_bytes(op, R, K)});
    const std::string key = std::string(op_name(op)) + "/" + shape_name(R, K);
    const double gbs = median_gbs(state);
    g_op_gbs[key] = gbs;
    const auto c = g_copy_gbs.find(key);
    if (c != g_copy_gbs.end() && c->second > 0) state.counters["pct_of_copy"] = 100.0 * gbs / c->second;
  } catch (const std::exception& e) {
    state.SkipWithError(e.what());
  }
}

}  // namespace

int main(int argc, char** argv) {
  std::printf("fp8gemm quantisers (DeepSeek-V3 1x128 / 128x128 / dual) vs a D2D copy of the same bytes\n");
  if (cuda_device_count() == 0) {
    std::printf("No CUDA GPU found: this benchmark needs an NVIDIA Hopper GPU (sm_90a).\n");
    return 2;
  }
  std::printf("GPU: %s\ncommit: %s\n", describe_device().c_str(), git_commit());
  struct Item {
    Op op;
    std::int64_t R, K;
  };
  // >= 64 MB of bf16 input each: 8192 x 7168 = 117 MB, 4096 x 16384 = 134 MB,
  // 7168 x 16384 = 235 MB, 16384 x 7168 = 235 MB.
  const std::vector<Item> items = {
      {Op::q1x128, 8192, 7168},        {Op::q1x128, 4096, 16384},
      {Op::q1x128_kmajor, 8192, 7168}, {Op::q1x128_pow2, 8192, 7168},
      {Op::q128x128, 7168, 16384},     {Op::q128x128, 16384, 7168},
      {Op::dual, 8192, 7168},          {Op::dual, 4096, 16384},
  };
  for (const auto& it : items) {
    const std::string shape = shape_name(it.R, it.K);
    // The copy first: bench_op reads its result for pct_of_copy.
    benchmark::RegisterBenchmark(("copy_d2d_as_" + std::string(op_name(it.op)) + "/" + shape).c_str(),
                                 [it](benchmark::State& st) { bench_copy(st, it.op, it.R, it.K); })
        ->UseManualTime()->Iterations(1)->Unit(benchmark::kMicrosecond);
    benchmark::RegisterBenchmark((std::string(op_name(it.op)) + "/" + shape).c_str(),
                                 [it](benchmark::State& st) { bench_op(st, it.op, it.R, it.K); })
        ->UseManualTime()->Iterations(1)->Unit(benchmark::kMicrosecond);
  }
  run_benchmarks(argc, argv, "quantize_bench.json");
  std::printf("\n%-24s %-12s %10s %10s %9s\n", "quantiser", "shape", "GB/s", "copy GB/s", "% copy");
  for (const auto& [key, gbs] : g_op_gbs) {
    const auto c = g_copy_gbs.find(key);
    const double copy = c == g_copy_gbs.end() ? 0.0 : c->second;
    const auto slash = key.find('/');
    std::printf("%-24s %-12s %10.0f %10.0f %8.1f%%\n", key.substr(0, slash).c_str(),
                key.substr(slash + 1).c_str(), gbs, copy, copy > 0 ? 100.0 * gbs / copy : 0.0);
  }
  return 0;
}
