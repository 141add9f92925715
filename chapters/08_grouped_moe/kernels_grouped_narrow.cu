// Tiles narrower than 128 columns, for the wave count (session 16). A masked call with N = 7168
// has G x ceil(M_max / 256) x 56 tiles of 256 x 128: 224 at (G, M_max) = (1, 1024), (2, 512) and
// (4, 256), so 132 SMs take two rounds and the second leaves 40 of them idle. With 112 columns
// (7168 = 64 x 112) the same call has 256 tiles: still two rounds, each tile 7/8 of the work.
// 128 x 224 is the same cut of 128 x 256 (256 tiles of 128 x 224). The plan's rule
// (default_kernel, grouped_gemm.cpp) compares rounds x tile area; the README's "Session 16"
// gives the measurement. A translation unit of their own, compiled in parallel with the others.
#include "grouped_configs.cuh"

namespace fp8gemm::ch08 {

std::vector<KernelInfo> kernels_narrow() {
  // A unit of the TMA-store epilogue is 64 rows x 16 columns at 112 (112 is no multiple of 32)
  // and 64 x 32 at 224: 14 and 7 units per warpgroup. With one staging buffer (b1, the first
  // two) each unit waits for the previous unit's store to be read: 256 x 112 b1 took 1.7x the
  // time of 256 x 128 for 7/8 of the work (README, "Session 16"); the others stage more units.
  return {
      grouped<GroupedTmaCfg<256, 112, 4, 1>>(),
      grouped<GroupedTmaCfg<128, 224, 4, 1>>(),
      grouped<GroupedTmaCfg<256, 112, 4, 7>>(),
      grouped<GroupedTmaCfg<256, 112, 3, 0>>(),  // a buffer per unit (14), one stage fewer
      grouped<GroupedTmaCfg<128, 224, 4, 3>>(),
      grouped<GroupedTmaCfg<128, 224, 3, 0>>(),  // a buffer per unit (7), one stage fewer
  };
}

}  // namespace fp8gemm::ch08
