// The grouped kernels in 2 x 1 clusters (session 14): the two CTAs of a cluster take two row tiles
// of one group, one above the other, in the same column tile, and multicast B, as DeepGEMM's
// grouped kernel does with its 128 x 192 tile. The schedule pairs a group's row tiles
// (grouped_cluster_tile); a group with an odd number of row tiles leaves its last pair's second
// CTA a phantom that loads and multiplies and stores nothing.
// Same-run comparison only: on the H200 each was slower than the plan's default on every case of
// bench/peers_moe.py (session 14, interleaved with DeepGEMM; chapter 8's NOTEBOOK.md, "2 x 1
// clusters and DeepGEMM's tile"): 128 x 192 took 1.06-1.59x the default's time with the cluster or
// without it (1.12-1.14x at the balanced cases); 256 x 128 in 2 x 1 1.00-1.01x the default's
// (the same tile in 1 x 2) at the balanced cases, up to 1.89x where groups are small (a phantom
// CTA beside every group with an odd number of row tiles). Kept: DeepGEMM's tile and cluster, the
// same tile without the cluster (the tile's share of the loss), and the default's tile and stages
// with B multicast instead of A.
#include "grouped_configs.cuh"

namespace fp8gemm::ch08 {

std::vector<KernelInfo> kernels_2x1() {
  return {
      grouped<GroupedTmaRowPairCfg<128, 192, 4, 3>>(),
      grouped<GroupedTmaCfg<128, 192, 4, 3>>(),
      grouped<GroupedTmaRowPairCfg<256, 128, 3, 0>>(),
  };
}

}  // namespace fp8gemm::ch08
