// Split-K for small M (opt-in: Options::splits; splitk.hpp): the GEMM kernels that write FP32
// partial tiles to the workspace (common/engine/split_k.cuh), with the small-M tiles and stage
// counts of kernels_small.cu, and the kernel that sums the partials into D.
// Measured on the H200 (README, "Small M (decode)"): it helps only 64 x 2112 x 7168.
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <stdexcept>
#include <string>

#include "common/engine/epilogue.cuh"  // pack_bf16x2: the engine's bf16 rounding
#include "common/engine/kernel_info.cuh"
#include "common/engine/split_k.cuh"
#include "common/launch.hpp"
#include "splitk.hpp"

namespace fp8gemm::ch07 {
using namespace engine;

namespace {

template <int BM, int BN, int S>
using SplitCfg = KernelConfig<BM, BN, S, 1, 1, Accumulation::promoted, EpilogueKind::registers_f32>;

template <class Cfg>
KernelInfo splitk() {
  KernelInfo k = kernel_info<Cfg, SplitKBlockScaledMath<Cfg>>();
  k.name += "_splitk";  // "64x32_s14_c1x1_promoted_f32_splitk"
  return k;
}

/// Where D's stores go in a reduce kernel: one element at a time, pairs (4-byte bf16x2 / 8-byte
/// float2: D aligned to them and ldd even), or quads (8-byte 4 x bf16 / 16-byte float4: D aligned
/// to them, ldd a multiple of 4). Pairs and quads need N % 2 / N % 4 == 0 only for the interior
/// of a row: a row's last, partial chunk is stored element by element.
enum StoreWidth : int { kStore1 = 1, kStore2 = 2, kStore4 = 4 };

__device__ __forceinline__ void store_out(std::uint16_t* d, const float (&v)[4], int cols,
                                          bool /*accumulate*/, std::integral_constant<int, 4>) {
  if (cols == 4) {
    *reinterpret_cast<uint2*>(d) = make_uint2(pack_bf16x2(v[0], v[1]), pack_bf16x2(v[2], v[3]));
    return;
  }
#pragma unroll
  for (int j = 0; j < 4; ++j)
    if (j < cols) d[j] = __bfloat16_as_ushort(__float2bfloat16_rn(v[j]));
}
__device__ __forceinline__ void store_out(std::uint16_t* d, const float (&v)[4], int cols,
                                          bool /*accumulate*/, std::integral_constant<int, 2>) {
#pragma unroll
  for (int j = 0; j < 4; j += 2) {
    if (j + 1 < cols)
      *reinterpret_cast<std::uint32_t*>(d + j) = pack_bf16x2(v[j], v[j + 1]);
    else if (j < cols)
      d[j] = __bfloat16_as_ushort(__float2bfloat16_rn(v[j]));
  }
}
__device__ __forceinline__ void store_out(std::uint16_t* d, const float (&v)[4], int cols,
                                          bool /*accumulate*/, std::integral_constant<int, 1>) {
#pragma unroll
  for (int j = 0; j < 4; ++j)
    if (j < cols) d[j] = __bfloat16_as_ushort(__float2bfloat16_rn(v[j]));
}
// FP32 D, D = sum + D with accumulate (the order of the engine's registers_f32 epilogue).
__device__ __forceinline__ void store_out(float* d, const float (&v)[4], int cols, bool accumulate,
                                          std::integral_constant<int, 4>) {
  if (cols == 4) {
    float4 x = make_float4(v[0], v[1], v[2], v[3]);
    if (accumulate) {
      const float4 old = *reinterpret_cast<const float4*>(d);
      x.x += old.x;
      x.y += old.y;
      x.z += old.z;
      x.w += old.w;
    }
    *reinterpret_cast<float4*>(d) = x;
    return;
  }
#pragma unroll
  for (int j = 0; j < 4; ++j)
    if (j < cols) d[j] = accumulate ? v[j] + d[j] : v[j];
}
__device__ __forceinline__ void store_out(float* d, const float (&v)[4], int cols, bool accumulate,
                                          std::integral_constant<int, 2>) {
#pragma unroll
  for (int j = 0; j < 4; j += 2) {
    if (j + 1 < cols) {
      float2 x = make_float2(v[j], v[j + 1]);
      if (accumulate) {
        const float2 old = *reinterpret_cast<const float2*>(d + j);
        x.x += old.x;
        x.y += old.y;
      }
      *reinterpret_cast<float2*>(d + j) = x;
    } else if (j < cols) {
      d[j] = accumulate ? v[j] + d[j] : v[j];
    }
  }
}
__device__ __forceinline__ void store_out(float* d, const float (&v)[4], int cols, bool accumulate,
                                          std::integral_constant<int, 1>) {
#pragma unroll
  for (int j = 0; j < 4; ++j)
    if (j < cols) d[j] = accumulate ? v[j] + d[j] : v[j];
}

/// D[m, n] = ws[0][m][n] + ws[1][m][n] + ... + ws[S-1][m][n], summed in that order (the first
/// partial is the start value, so S = 1 reproduces the FP32 sums bit for bit), then rounded to
/// bf16 as the engine's epilogues round (cvt.rn), or written as float (+ D with accumulate).
/// One thread per 4 consecutive columns of a row: blocks along x cover a row's chunks, along y
/// the rows (both grid-stride; no 64-bit division, whose called routine made ptxas spill).
/// kVecIn: N % 4 == 0, so every chunk is 4 whole, 16-byte aligned floats of each partial
/// (float4 loads).
template <class Out, bool kVecIn, int kStore>
__global__ void __launch_bounds__(256, 1)
    splitk_reduce_kernel(const float* __restrict__ ws, int splits, int M, int N,
                         std::int64_t split_stride, Out* __restrict__ D, std::int64_t ldd,
                         int accumulate) {
  const int chunks_per_row = (N + 3) / 4;
  for (int m = int(blockIdx.y); m < M; m += int(gridDim.y)) {
    for (int chunk = int(blockIdx.x * blockDim.x + threadIdx.x); chunk < chunks_per_row;
         chunk += int(gridDim.x * blockDim.x)) {
      const int c0 = chunk * 4;
      const int cols = min(4, N - c0);
      const float* src = ws + std::int64_t(m) * N + c0;
      float v[4] = {0.0f, 0.0f, 0.0f, 0.0f};
      if constexpr (kVecIn) {
        float4 x = __ldg(reinterpret_cast<const float4*>(src));
        v[0] = x.x;
        v[1] = x.y;
        v[2] = x.z;
        v[3] = x.w;
        for (int s = 1; s < splits; ++s) {
          x = __ldg(reinterpret_cast<const float4*>(src + s * split_stride));
          v[0] += x.x;
          v[1] += x.y;
          v[2] += x.z;
          v[3] += x.w;
        }
      } else {
#pragma unroll
        for (int j = 0; j < 4; ++j) {
          if (j >= cols) continue;
          v[j] = __ldg(src + j);
          for (int s = 1; s < splits; ++s) v[j] += __ldg(src + s * split_stride + j);
        }
      }
      store_out(D + std::int64_t(m) * ldd + c0, v, cols, accumulate != 0,
                std::integral_constant<int, kStore>{});
    }
  }
}

template <class Out, bool kVecIn>
const void* reduce_instance(int store) {
  return store == kStore4   ? reinterpret_cast<const void*>(&splitk_reduce_kernel<Out, kVecIn, 4>)
         : store == kStore2 ? reinterpret_cast<const void*>(&splitk_reduce_kernel<Out, kVecIn, 2>)
                            : reinterpret_cast<const void*>(&splitk_reduce_kernel<Out, kVecIn, 1>);
}

}  // namespace

void add_kernels_splitk(std::vector<KernelInfo>& out) {
  out.push_back(splitk<SplitCfg<64, 32, 14>>());
  out.push_back(splitk<SplitCfg<64, 64, 12>>());
  out.push_back(splitk<SplitCfg<128, 32, 10>>());
  out.push_back(splitk<SplitCfg<128, 64, 8>>());
}

SplitKReduceLaunch make_splitk_reduce(const float* workspace, int splits, std::int64_t M,
                                      std::int64_t N, void* D, std::int64_t ldd, bool f32,
                                      bool accumulate) {
  SplitKReduceLaunch l;
  const auto addr = reinterpret_cast<std::uintptr_t>(D);
  const std::size_t elem = f32 ? 4 : 2;
  // The widest store D's alignment and ldd allow everywhere in the interior of a row (a row's
  // start is ldd elements from the previous one).
  int store = kStore1;
  if (addr % (2 * elem) == 0 && ldd % 2 == 0) store = kStore2;
  if (addr % (4 * elem) == 0 && ldd % 4 == 0) store = kStore4;
  const bool vec_in = N % 4 == 0;  // the workspace's rows are N floats; its base 256-aligned
  l.kernel =
      f32 ? (vec_in ? reduce_instance<float, true>(store) : reduce_instance<float, false>(store))
          : (vec_in ? reduce_instance<std::uint16_t, true>(store)
                    : reduce_instance<std::uint16_t, false>(store));
  l.blocks_x = int(std::min<std::int64_t>(((N + 3) / 4 + 255) / 256, 1024));
  l.blocks_y = int(std::min<std::int64_t>(M, 65535));
  l.workspace = workspace;
  l.splits = splits;
  l.M = int(M);
  l.N = int(N);
  l.split_stride = M * N;
  l.D = D;
  l.ldd = ldd;
  l.accumulate = accumulate ? 1 : 0;
  prepare_kernel(l.kernel, "splitk_reduce_kernel", "sm_90a", 0);
  return l;
}

void launch_splitk_reduce(const SplitKReduceLaunch& l, cudaStream_t stream) {
  // The kernel's parameters, in its order and types (Out* is passed as the void* it points to).
  const float* ws = l.workspace;
  int splits = l.splits, M = l.M, N = l.N, accumulate = l.accumulate;
  std::int64_t split_stride = l.split_stride, ldd = l.ldd;
  void* D = l.D;
  void* args[] = {&ws, &splits, &M, &N, &split_stride, &D, &ldd, &accumulate};
  throw_if_launch_failed(
      cudaLaunchKernel(l.kernel, dim3(unsigned(l.blocks_x), unsigned(l.blocks_y)), dim3(256), args,
                       0, stream),
      "fp8gemm::ch07_block_scaling", "the split-K reduce");
  check_launch("fp8gemm::ch07_block_scaling: split-K reduce");
}

}  // namespace fp8gemm::ch07
