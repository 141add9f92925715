// Tiles narrower than 128 columns, for the wave count (session 16). A masked call with N = 7168
// has G x ceil(M_max / 256) x 56 tiles of 256 x 128: 224 at (G, M_max) = (1, 1024), (2, 512) and
// (4, 256), so 132 SMs take two rounds and the second leaves 40 of them idle. With 112 columns
// (7168 = 64 x 112) the same call has 256 tiles: still two rounds, each tile 7/8 of the work.
// 128 x 224 splits the same way along the other side (256 tiles of 128 x 224). The plan's rule
// (default_kernel, grouped_gemm.cpp) compares rounds x tile area; the README's "Session 16"
// gives the measurement. A translation unit of their own, compiled in parallel with the others.
#include "grouped_configs.cuh"

namespace fp8gemm::ch08 {

std::vector<KernelInfo> kernels_narrow() {
  return {
      grouped<GroupedTmaCfg<256, 112, 4, 1>>(),
      grouped<GroupedTmaPairCfg<256, 112, 4, 1>>(),
      grouped<GroupedTmaCfg<128, 224, 4, 1>>(),
  };
}

}  // namespace fp8gemm::ch08
