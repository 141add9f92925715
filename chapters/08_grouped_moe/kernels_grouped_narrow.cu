// Tiles narrower than 128 columns, measured for the masked calls' rounds in session 16 (README,
// "Session 16"): a masked call with N = 7168 has G x ceil(M_max / 256) x 56 tiles of 256 x 128,
// 224 at G M_max = 1024, two rounds of 132 SMs with 40 idle in the second; 256 x 112 (7168 =
// 64 x 112) or 128 x 224 have 256 tiles, still two rounds, each tile 7/8 of the work. Measured:
// no faster than 256 x 128 (the rolled loop's cost eats the 1/8), so the plan's default does not
// take them; kept for the same-run comparison of code size. Each tile of these straddles B-scale
// blocks, so each kernel holds one copy of its loop per n0 % 128 (8 at 112, 4 at 224;
// BlockScaledMath::mainloop_range): with the 8x-unrolled loop 256 x 112 has 17,280 instructions
// and took 1.6x 256 x 128's time; rolled (then _loop1, the default since session 17), about
// 2,200, and 1.04x.
#include "grouped_configs.cuh"

namespace fp8gemm::ch08 {

std::vector<KernelInfo> kernels_narrow() {
  // 7 and 3 staging buffers: a TMA-store unit is 64 x 16 at 112 columns, 64 x 32 at 224.
  // Since session 17 a tile with four or more loop copies runs the rolled loop by default
  // (default_block_scaled_loop): the default instances below are the rolled ones, and the loops
  // that were their defaults in session 16 (8x on 256 x 112, 4x on 128 x 224) are named _loop8
  // and _loop4.
  return {
      grouped<GroupedTmaCfg<256, 112, 4, 7>, 8>(),
      grouped<GroupedTmaCfg<256, 112, 4, 7>>(),
      grouped<GroupedTmaCfg<128, 224, 4, 3>, 4>(),
      grouped<GroupedTmaCfg<128, 224, 4, 3>>(),
  };
}

}  // namespace fp8gemm::ch08
