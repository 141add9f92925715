// The table's large tiles with their ring observed (common/engine/timeline.cuh): the producer
// warpgroup's idle warps stamp each stage's full and empty barriers. A diagnostic for
// ch07_timeline (timeline.cu), never chosen by the table; names end in "_timeline". The consumers
// run their twins' code plus three stamps per tile outside the main loop and compute what their
// twins compute (test_chapter_07 validates these with every kernel); with no buffer set nothing
// is stored.
#include "common/cuda.hpp"
#include "common/engine/kernel_info.cuh"
#include "common/engine/timeline.cuh"
#include "kernels.hpp"

namespace fp8gemm::ch07 {
using namespace engine;

template <int BM, int BN, int S, int CM, int CN, int Buffers>
using TimelineCfg = KernelConfig<BM, BN, S, CM, CN, Accumulation::promoted,
                                 EpilogueKind::tma_store, Buffers>;

template <class Cfg, int kLoop = default_block_scaled_loop<Cfg>()>
static KernelInfo timeline_kernel() {
  KernelInfo k = kernel_info<Cfg, TimelineMath<Cfg, kLoop>>();
  k.name += "_timeline";
  k.comparison_only = true;
  return k;
}

void add_kernels_timeline(std::vector<KernelInfo>& out) {
  // The table's large tiles in session 19, when these twins were made (the table has changed since:
  // bs_gemm.cpp's kTable); the shapes name the rows each tile had then.
  out.push_back(timeline_kernel<TimelineCfg<256, 128, 3, 1, 2, 0>>());  // 8192^3's, DeepGEMM's tile
  out.push_back(timeline_kernel<TimelineCfg<256, 128, 4, 2, 1, 1>>());  // 4096 x 4096 x 7168's
  out.push_back(timeline_kernel<TimelineCfg<128, 256, 3, 1, 2, 0>>());  // 4096 x 32768 x 512's
  // The same without the early first wave (their default until session 23): _loop8 / _loop4.
  out.push_back(timeline_kernel<TimelineCfg<256, 128, 3, 1, 2, 0>, 8>());
  out.push_back(timeline_kernel<TimelineCfg<128, 256, 3, 1, 2, 0>, 4>());
  // The early-wave loop without pinned addresses (their default in session 23): _ew8 / _ew4.
  out.push_back(timeline_kernel<TimelineCfg<256, 128, 3, 1, 2, 0>, kEarlyWaveLoop + 8>());
  out.push_back(timeline_kernel<TimelineCfg<128, 256, 3, 1, 2, 0>, kEarlyWaveLoop + 4>());
}

void set_timeline_buffer(unsigned long long* data, int capacity, unsigned long long* tiles,
                         int tiles_n) {
  const timeline::Buffer b{data, capacity, tiles, tiles_n};
  FP8GEMM_CUDA_CHECK(cudaMemcpyToSymbol(c_timeline, &b, sizeof b));
}

}  // namespace fp8gemm::ch07
