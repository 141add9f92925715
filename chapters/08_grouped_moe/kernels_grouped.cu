// The grouped kernels: chapter 7's block-scaled math with the grouped schedule, TMA-store or
// registers epilogue, without clusters or in 1 x 2 clusters; the 2 x 1 clusters are in
// kernels_grouped_2x1.cu (a second translation unit, compiled in parallel).
#include "grouped_configs.cuh"
#include "grouped_gemm.hpp"

namespace fp8gemm::ch08 {

std::vector<KernelInfo> kernels_2x1();     // kernels_grouped_2x1.cu
std::vector<KernelInfo> kernels_staged();  // kernels_grouped_staged.cu
std::vector<KernelInfo> kernels_narrow();  // kernels_grouped_narrow.cu
std::vector<KernelInfo> kernels_wait();    // kernels_grouped_wait.cu
std::vector<KernelInfo> kernels_streamk(); // kernels_grouped_streamk.cu
std::vector<KernelInfo> kernels_f32();     // kernels_grouped_f32.cu

const std::vector<KernelInfo>& kernels() {
  // The plan's default is chosen by default_kernel() (grouped_gemm.cpp: by layout and mean rows
  // per group, from session 12's measurements); without a TMA-compatible D, the first registers
  // kernel (128 x 256 was the fastest on every case of the first tuning run,
  // plots/data/h200/ch08/sweep_acdaf11.json).
  static const std::vector<KernelInfo> all = [] {
    std::vector<KernelInfo> v = {
        grouped<GroupedTmaCfg<128, 256, 4, 1>>(),
        grouped<GroupedCfg<128, 256, 4>>(),
        grouped<GroupedCfg<128, 128, 6>>(),
        grouped<GroupedCfg<64, 128, 8>>(),
        // Chapter 7's 256 x 128 tile (its stage's BlockM + 4 = 260 A scales in two TMA boxes).
        grouped<GroupedTmaCfg<256, 128, 4, 1>>(),
        // 1 x 2 clusters (A multicast; grouped.cuh), both tiles, and chapter 7's table tile
        // 256 x 128 with 3 stages and a staging buffer per unit.
        grouped<GroupedTmaPairCfg<128, 256, 4, 1>>(),
        grouped<GroupedTmaPairCfg<256, 128, 4, 1>>(),
        grouped<GroupedTmaPairCfg<256, 128, 3, 0>>(),
        // 256 x 128 without a cluster, 3 stages and a staging buffer per unit (session 17: for
        // the masked calls, whose 16-block K loops at N = 7168 leave the epilogue a larger share).
        grouped<GroupedTmaCfg<256, 128, 3, 0>>(),
        // Same-run comparison only (README, "The promoted loop"): the first loop (_loop0), the
        // default until session 12, and the lean loop rolled (_loop1).
        grouped<GroupedTmaCfg<128, 256, 4, 1>, 0>(),
        grouped<GroupedTmaCfg<128, 256, 4, 1>, 1>(),
        grouped<GroupedTmaCfg<256, 128, 4, 1>, 0>(),
        grouped<GroupedTmaPairCfg<256, 128, 4, 1>, 0>(),
        // Two default kernels (default_kernel) without the early first wave, their loop until
        // session 23 (_loop4 / _loop8): the same-run comparison.
        grouped<GroupedTmaCfg<128, 256, 4, 1>, 4>(),
        grouped<GroupedTmaPairCfg<256, 128, 3, 0>, 8>(),
        // The masked default's tile without the early first wave, the masked calls' kernel at
        // K <= 2048 (session 23; at c9b063e the same code as the _loop8 twin, cuobjdump; since
        // 6e6f2fc its lean loop's addresses are pinned, as the default loop's are).
        kernel_info<GroupedTmaCfg<256, 128, 4, 1>,
                    GroupedNoEarlyWaveMath<GroupedTmaCfg<256, 128, 4, 1>>>(),
    };
    for (KernelInfo& k : kernels_2x1()) v.push_back(std::move(k));
    for (KernelInfo& k : kernels_staged()) v.push_back(std::move(k));
    for (KernelInfo& k : kernels_narrow()) v.push_back(std::move(k));
    for (KernelInfo& k : kernels_wait()) v.push_back(std::move(k));
    for (KernelInfo& k : kernels_streamk()) v.push_back(std::move(k));
    for (KernelInfo& k : kernels_f32()) v.push_back(std::move(k));
    return v;
  }();
  return all;
}

}  // namespace fp8gemm::ch08
