// Stream-K over the last round (session 18; README, "Stream-K"): the masked rule's tile
// 256 x 128 and the contiguous one 128 x 256, with the tiles of the last round cut into K ranges
// spread over every CTA (common/engine/stream_k.cuh). Names end in "_sk"; their plans allocate
// the workspace of partial tiles.
#include "common/engine/stream_k.cuh"
#include "grouped_configs.cuh"

namespace fp8gemm::ch08 {

template <class Cfg, StreamKReads kReads = StreamKReads::staged>
KernelInfo stream_k() {
  return kernel_info<Cfg, StreamKGroupedMath<Cfg, default_block_scaled_loop<Cfg>(), kReads>>();
}

std::vector<KernelInfo> kernels_streamk() {
  return {
      stream_k<GroupedTmaCfg<256, 128, 4, 1>>(),
      stream_k<GroupedTmaCfg<128, 256, 4, 1>>(),
      // The owner's first reads, straight into registers ("_skr"; session 18's first runs).
      stream_k<GroupedTmaCfg<256, 128, 4, 1>, StreamKReads::registers>(),
  };
}

}  // namespace fp8gemm::ch08
