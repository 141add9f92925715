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
  // and 64 x 32 at 224: 14 and 7 units per warpgroup; b1 stages one at a time, b7 and b3 more
  // (measured within 2-4% of each other, README "Session 16"). Each tile of these straddles
  // B-scale blocks, so each kernel holds one copy of its loop per n0 % 128 (8 at 112, 4 at 224;
  // BlockScaledMath::mainloop_range): 17,280 instructions at 256 x 112 with the 8x-unrolled
  // loop. The rolled loop (_loop1) and the 2x-unrolled one (_loop2) hold the same copies in a
  // fraction of that, to see what the code's size costs.
  return {
      grouped<GroupedTmaCfg<256, 112, 4, 1>>(),
      grouped<GroupedTmaCfg<128, 224, 4, 1>>(),
      grouped<GroupedTmaCfg<256, 112, 4, 7>>(),
      grouped<GroupedTmaCfg<128, 224, 4, 3>>(),
      grouped<GroupedTmaCfg<256, 112, 4, 7>, 1>(),
      grouped<GroupedTmaCfg<256, 112, 4, 7>, 2>(),
      grouped<GroupedTmaCfg<128, 224, 4, 3>, 1>(),
  };
}

}  // namespace fp8gemm::ch08
