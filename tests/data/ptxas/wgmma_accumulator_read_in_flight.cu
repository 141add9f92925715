// A deliberately bad kernel for the ptxas_check self-test (tests/chapter_06.cmake): it reads
// wgmma accumulators between an MMA and its wait, which ptxas answers by injecting a wait
// (C7517) or serialising the wgmma (C7514). tools/ptxas_check.py must report it.
#include "common/ptx/wgmma.cuh"
#include "common/ptx/warpgroup.cuh"
__global__ void __launch_bounds__(128, 1) bad_kernel(float* out, unsigned a, unsigned b) {
  float d[64];
  for (int i = 0; i < 64; ++i) d[i] = 0.f;
  fp8gemm::ptx::wgmma_fence();
  fp8gemm::ptx::wgmma_m64nNk32_e4m3<128>(d, a, b, 1);
  fp8gemm::ptx::wgmma_commit_group();
  float s = d[0] + d[1];           // read before the wait: ptxas must serialise
  fp8gemm::ptx::wgmma_m64nNk32_e4m3<128>(d, a, b, 1);
  fp8gemm::ptx::wgmma_commit_group();
  fp8gemm::ptx::wgmma_wait_group<0>();
  out[threadIdx.x] = s + d[2];
}
