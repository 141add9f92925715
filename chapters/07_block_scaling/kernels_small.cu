// M <= 128 (decode): narrow tiles with deep rings, so that enough SMs stream the weights.
#include "common/engine/block_scaled.cuh"
#include "common/engine/kernel_info.cuh"
#include "kernels.hpp"

namespace fp8gemm::ch07 {
using namespace engine;

// One staging buffer for the epilogue by default (Buffers = 1: a tile of two or more 64-column
// store units waits for each unit's TMA store to read the buffer before the next).
template <int BM, int BN, int S, int Buffers = 1>
using SmallCfg =
    KernelConfig<BM, BN, S, 1, 1, Accumulation::promoted, EpilogueKind::tma_store, Buffers>;

template <class Cfg>
static KernelInfo bs() {
  return kernel_info<Cfg, BlockScaledMath<Cfg>>();
}

void add_kernels_small(std::vector<KernelInfo>& out) {
  out.push_back(bs<SmallCfg<64, 16, 16>>());
  out.push_back(bs<SmallCfg<64, 32, 14>>());
  out.push_back(bs<SmallCfg<64, 64, 12>>());
  out.push_back(bs<SmallCfg<64, 128, 8>>());
  out.push_back(bs<SmallCfg<128, 32, 10>>());
  out.push_back(bs<SmallCfg<128, 64, 8>>());
  // N = 7168 = 128 x 56 = 64 x 112: 128 tiles, one wave on 132 SMs (DeepGEMM picks 64 x 112).
  out.push_back(bs<SmallCfg<128, 56, 8>>());
  out.push_back(bs<SmallCfg<64, 112, 9>>());
  // Session 44, for the short-K decode shapes where DeepGEMM leads (0.91-0.95x at K = 512 and
  // 1536; chapter 10's sweep picks among them: session 46 moved six of its rows to these and the
  // two-buffer tiles below). N = 24576 = 192 x 128 = 96 x 256:
  // 128 x 192 is one wave of 128 tiles at M = 128 (DeepGEMM's pick at 128 x 24576 x 1536; ours
  // had 128 x 192 only with a 2 x 1 cluster, which at M = 128 pairs each tile with an empty one),
  // with a deeper ring (s5, one staging buffer) or a buffer per store unit (s4, b3); 64 x 192 one
  // wave at M = 64; 64 x 96 two waves of 256 tiles (DeepGEMM's at 64 x 24576 x 1536).
  out.push_back(bs<SmallCfg<128, 192, 5>>());
  out.push_back(bs<SmallCfg<128, 192, 4, 3>>());
  out.push_back(bs<SmallCfg<64, 192, 6, 3>>());
  out.push_back(bs<SmallCfg<64, 96, 10, 3>>());
  // A staging buffer per store unit for the table's two-unit decode tiles (64 x 128, 128 x 128
  // with one stage less to make room): at K = 512 a tile has 4 K blocks, and session 19's
  // timeline put one staging buffer at ~1000 cycles more per tile change on 256 x 128.
  out.push_back(bs<SmallCfg<64, 128, 8, 2>>());
  out.push_back(bs<SmallCfg<128, 128, 5, 2>>());
  // Session 46: DeepGEMM's stage counts on our narrow tiles (../shared/notes/peer_kernels_h200.md:
  // 64 x 32 with 16 stages at 64 x 4096 x 7168 and 128 x 2112 x 7168, 64 x 64 with 13 at
  // 128 x 4096 x 7168 and 64 x 7168 x K), where we run 14 and 12: more bytes in flight per SM on
  // shapes that stream the weights once (0.93x and 0.98x DeepGEMM at 64 / 128 x 4096 x 7168 in
  // session 46). Candidates of chapter 10's dispatch sweep; measured in sessions 47 (H100) and 48
  // (H200): 0.99-1.02x the time of the 14- and 12-stage kernels, chosen by no table row.
  out.push_back(bs<SmallCfg<64, 32, 16>>());
  out.push_back(bs<SmallCfg<64, 64, 13>>());
}

}  // namespace fp8gemm::ch07
