// Runs the README's C++ example (fp8_linear.cpp, shown in README.md verbatim) as a user's program
// would: built against the installed package, no CUDA compiler. Without a GPU it shows that a bad
// call is refused before any GPU work and stops where it says there is no GPU (what the CPU test
// readme_example checks); with one it multiplies random bf16 inputs and checks d against their
// float64 product.
#include <cuda_runtime.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fp8gemm/fp8gemm.hpp>
#include <random>
#include <stdexcept>
#include <vector>

// The example (fp8_linear.cpp).
void fp8_linear(const std::uint16_t* x, const std::uint16_t* w, std::uint16_t* d, std::int64_t M,
                std::int64_t N, std::int64_t K, std::uint8_t* qa, std::uint8_t* qb, float* sa,
                float* sb, cudaStream_t stream);

namespace {
std::uint16_t to_bf16(float x) {  // round to nearest even (finite inputs)
  std::uint32_t u;
  std::memcpy(&u, &x, 4);
  return std::uint16_t((u + 0x7FFFu + ((u >> 16) & 1u)) >> 16);
}
double from_bf16(std::uint16_t b) {
  const std::uint32_t u = std::uint32_t(b) << 16;
  float x;
  std::memcpy(&x, &u, 4);
  return x;
}
void check(cudaError_t e) {
  if (e != cudaSuccess) throw std::runtime_error(cudaGetErrorString(e));
}
template <class T>
T* device(std::size_t count) {
  void* p = nullptr;
  check(cudaMalloc(&p, count * sizeof(T)));
  return static_cast<T*>(p);
}
}  // namespace

int main() {
  std::printf("fp8gemm %s: the README's example\n", fp8gemm::version());
  // A call the rules refuse (no input) throws std::invalid_argument before any GPU work, which is
  // why this part runs on a machine without a GPU too.
  try {
    fp8_linear(nullptr, nullptr, nullptr, 128, 128, 128, nullptr, nullptr, nullptr, nullptr,
               nullptr);
    std::printf("FAIL: a call without inputs was accepted\n");
    return 1;
  } catch (const std::invalid_argument& e) {
    std::printf("refused before any GPU work: %s\n", e.what());
  }
  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
    std::printf("no CUDA GPU: running fp8_linear needs an NVIDIA Hopper GPU (sm_90a)\n");
    return 0;
  }

  const std::int64_t M = 256, N = 384, K = 1024;
  std::mt19937 gen(7);
  std::normal_distribution<float> nd;
  std::vector<std::uint16_t> x(M * K), w(N * K), d(M * N);
  for (auto& v : x) v = to_bf16(nd(gen));
  for (auto& v : w) v = to_bf16(nd(gen));
  const auto la = fp8gemm::GroupScaleLayout::mn_major_tma_aligned(M);
  const auto lb = fp8gemm::BlockScaleLayout::padded(K);
  auto* dx = device<std::uint16_t>(x.size());
  auto* dw = device<std::uint16_t>(w.size());
  auto* dd = device<std::uint16_t>(d.size());
  auto* qa = device<std::uint8_t>(M * K);
  auto* qb = device<std::uint8_t>(N * K);
  auto* sa = device<float>(la.required_elements(M, K));
  auto* sb = device<float>(lb.required_elements(N, K));
  check(cudaMemcpy(dx, x.data(), x.size() * 2, cudaMemcpyHostToDevice));
  check(cudaMemcpy(dw, w.data(), w.size() * 2, cudaMemcpyHostToDevice));
  fp8_linear(dx, dw, dd, M, N, K, qa, qb, sa, sb, nullptr);
  check(cudaDeviceSynchronize());
  check(cudaMemcpy(d.data(), dd, d.size() * 2, cudaMemcpyDeviceToHost));

  double num = 0, den = 0;
  for (std::int64_t m = 0; m < M; m += 8)  // every 8th row against the float64 product
    for (std::int64_t n = 0; n < N; ++n) {
      double ref = 0;
      for (std::int64_t k = 0; k < K; ++k) ref += from_bf16(x[m * K + k]) * from_bf16(w[n * K + k]);
      const double got = from_bf16(d[m * N + n]);
      num += (got - ref) * (got - ref);
      den += ref * ref;
    }
  const double rel = std::sqrt(num / den);
  std::printf("fp8_linear %lldx%lldx%lld: relative error %.2e against the bf16 inputs' product\n",
              static_cast<long long>(M), static_cast<long long>(N), static_cast<long long>(K), rel);
  for (void* p : {static_cast<void*>(dx), static_cast<void*>(dw), static_cast<void*>(dd),
                  static_cast<void*>(qa), static_cast<void*>(qb), static_cast<void*>(sa),
                  static_cast<void*>(sb)})
    check(cudaFree(p));
  return rel < 5e-2 ? 0 : 1;  // e4m3 quantisation of both operands: ~3.7e-2 (chapter 7)
}
