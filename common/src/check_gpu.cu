// The checks' GPU part (common/check.hpp): comparisons made where the data is.
#include <cuda_bf16.h>

#include <cmath>
#include <vector>

#include "common/check.hpp"
#include "common/cuda.hpp"

namespace fp8gemm {

namespace {

__global__ void diff_kernel(const std::uint16_t* d, const std::uint16_t* ref, std::size_t n,
                            double* sums) {
  double num = 0, den = 0;
  for (std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; i < n;
       i += std::size_t(gridDim.x) * blockDim.x) {
    const double a = __bfloat162float(__ushort_as_bfloat16(d[i]));
    const double b = __bfloat162float(__ushort_as_bfloat16(ref[i]));
    num += (a - b) * (a - b);
    den += b * b;
  }
  atomicAdd(&sums[0], num);
  atomicAdd(&sums[1], den);
}

}  // namespace

double relative_difference_bf16(const std::uint16_t* d, const std::uint16_t* ref, std::size_t n) {
  DeviceBuffer<double> sums(std::vector<double>{0.0, 0.0});
  diff_kernel<<<264, 256>>>(d, ref, n, sums.data());
  FP8GEMM_CUDA_CHECK(cudaGetLastError());
  const std::vector<double> s = sums.download();
  return std::sqrt(s[0] / s[1]);
}

}  // namespace fp8gemm
