// The grouped kernels in 2 x 1 clusters (session 14): the two CTAs of a cluster take two row tiles
// of one group, one above the other, in the same column tile, and multicast B, as DeepGEMM's
// grouped kernel does with its 128 x 192 tile (chapter 8's README, "2 x 1 clusters"). The
// schedule pairs a group's row tiles (grouped_cluster_tile); a group with an odd number of row
// tiles leaves its last pair's second CTA a phantom that loads and multiplies and stores nothing.
// Beside them, the 128 x 192 tile without a cluster, to tell the tile's effect from the cluster's.
#include "grouped_configs.cuh"

namespace fp8gemm::ch08 {

std::vector<KernelInfo> kernels_2x1() {
  return {
      grouped<GroupedTmaRowPairCfg<128, 192, 4, 3>>(),
      grouped<GroupedTmaCfg<128, 192, 4, 3>>(),
      grouped<GroupedTmaRowPairCfg<128, 256, 4, 1>>(),
      grouped<GroupedTmaRowPairCfg<256, 128, 4, 1>>(),
      grouped<GroupedTmaRowPairCfg<256, 128, 3, 0>>(),
  };
}

}  // namespace fp8gemm::ch08
