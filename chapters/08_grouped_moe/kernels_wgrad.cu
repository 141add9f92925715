// The k-grouped weight-gradient kernels (common/engine/kgrouped.cuh): FP32 output (names with
// _f32), or bf16 (WeightGradOutput::bf16); 2 x 1 clusters only with a TMA epilogue.
#include "common/engine/kernel_info.cuh"
#include "common/engine/kgrouped.cuh"
#include "wgrad.hpp"

namespace fp8gemm::ch08 {
using namespace engine;

template <int BM, int BN, int S>
using WgradCfg =
    KernelConfig<BM, BN, S, 1, 1, Accumulation::promoted, EpilogueKind::registers_f32>;
/// FP32 dB by TMA (kgrouped.cuh): Buffers staging units of 64 x 32 floats per warpgroup.
template <int BM, int BN, int S, int Buffers>
using WgradTmaCfg =
    KernelConfig<BM, BN, S, 1, 1, Accumulation::promoted, EpilogueKind::tma_store_f32, Buffers>;

/// The same with a 2 x 1 cluster: the pair's row tiles share the second operand's tokens, one
/// multicast load (what cuBLASLt's kernel for this recipe does: chapter 8's NOTEBOOK.md, "The
/// weight gradient against cuBLASLt's").
template <int BM, int BN, int S, int Buffers>
using WgradTmaPairCfg =
    KernelConfig<BM, BN, S, 2, 1, Accumulation::promoted, EpilogueKind::tma_store_f32, Buffers>;

/// bf16 dB: by TMA (units of 64 x 64 bf16, 128B swizzle, into dB's 3-D map) or from registers.
template <int BM, int BN, int S, int Buffers>
using WgradBf16TmaCfg =
    KernelConfig<BM, BN, S, 1, 1, Accumulation::promoted, EpilogueKind::tma_store, Buffers>;
template <int BM, int BN, int S>
using WgradBf16Cfg = KernelConfig<BM, BN, S, 1, 1, Accumulation::promoted, EpilogueKind::registers>;

template <class Cfg, int kLoop = default_kgrouped_loop<Cfg>()>
static KernelInfo wgrad() {
  return kernel_info<Cfg, KGroupedMath<Cfg, kLoop>>();
}

const std::vector<KernelInfo>& wgrad_kernels() {
  static const std::vector<KernelInfo> all = {
      // The plan's FP32 defaults until session 31 (default_wgrad_kernel, wgrad.cpp; the lean loop
      // since session 29, default_kgrouped_loop): 128 x 192 with 5 stages and one FP32 staging
      // unit per warpgroup, or 128 x 256 (below) where its tiles cover dB as efficiently, when TMA
      // can store dB (session 7's sweeps, plots/data/h200/ch08/wgrad_session7/: 1.050-1.059x and
      // 1.076-1.077x the registers epilogue's geomean over ten cases; since session 31 the plan
      // takes the two-staging-unit kernels of session 30, below); else, still, the registers
      // epilogue's 128 x 192 (the fastest at 65536 tokens in
      // plots/data/h200/ch08/wgrad_sweep.json: 618 / 612 TFLOPS against 571 / 567 for 128 x 128).
      wgrad<WgradTmaCfg<128, 192, 5, 1>>(),
      wgrad<WgradCfg<128, 192, 5>>(),
      // bf16 dB (WeightGradOutput::bf16), the same three choices (default_wgrad_kernel; the two TMA
      // ones the plan's until session 31, the registers one still): the FP32 kernels' tiles and
      // stages, a bf16 staging unit of 64 x 64 in place of 64 x 32 floats.
      wgrad<WgradBf16TmaCfg<128, 192, 5, 1>>(),
      wgrad<WgradBf16TmaCfg<128, 256, 4, 1>>(),
      wgrad<WgradBf16Cfg<128, 192, 5>>(),
      wgrad<WgradCfg<128, 128, 6>>(),
      wgrad<WgradCfg<128, 64, 8>>(),
      wgrad<WgradCfg<128, 160, 5>>(),
      wgrad<WgradTmaCfg<128, 192, 4, 3>>(),
      wgrad<WgradTmaCfg<128, 192, 4, 2>>(),
      wgrad<WgradTmaCfg<128, 160, 5, 2>>(),
      wgrad<WgradTmaCfg<128, 128, 5, 2>>(),
      // Wider and taller tiles, possible with the TMA epilogue (the registers one spilled on
      // 128 x 256): fewer A re-reads per column, measured beside the default.
      wgrad<WgradTmaCfg<128, 256, 4, 1>>(),
      wgrad<WgradTmaCfg<128, 224, 4, 1>>(),
      wgrad<WgradTmaCfg<256, 128, 3, 2>>(),
      // Three consumer warpgroups of 64 rows (152 registers each: 64 totals + one 64-register
      // partial sum): while one promotes, two have wgmma queued.
      wgrad<WgradTmaCfg<192, 128, 4, 2>>(),
      wgrad<WgradTmaCfg<192, 128, 4, 1>>(),
      // The two-deep loops (kgrouped.cuh), for the same-run comparison.
      wgrad<WgradCfg<128, 192, 5>, kTwoDeepHalvesLoop>(),
      wgrad<WgradCfg<128, 128, 6>, kTwoDeepLoop>(),
      wgrad<WgradTmaCfg<128, 192, 4, 2>, kTwoDeepHalvesLoop>(),
      wgrad<WgradTmaCfg<128, 128, 5, 2>, kTwoDeepLoop>(),
      // The first loop with the first 4 or 8 column-scale pairs read before the wait (10, 12 and
      // 16 spill on 128 x 192).
      wgrad<WgradTmaCfg<128, 192, 5, 1>, kPrefetchScalesLoop + 4>(),
      wgrad<WgradTmaCfg<128, 192, 5, 1>, kPrefetchScalesLoop + 8>(),
      // 2 x 1 clusters (session 8), on the default tiles and on cuBLASLt's 128 x 128 two-deep.
      wgrad<WgradTmaPairCfg<128, 256, 4, 1>>(),
      wgrad<WgradTmaPairCfg<128, 192, 5, 1>>(),
      wgrad<WgradTmaPairCfg<128, 128, 5, 2>, kTwoDeepLoop>(),
      // Session 29. The default of the two-warpgroup TMA tiles is the lean loop (kgrouped.cuh,
      // default_kgrouped_loop); the first loop stays on the defaults' tiles as _loop0 twins, the
      // lean loop unrolled once on 128 x 192 as _pin_loop1, and the staggered first loop (the
      // two warpgroups take turns at the tensor cores; measured no faster) as _stag, on the
      // defaults' tiles and on cuBLASLt's 128 x 128.
      wgrad<WgradBf16TmaCfg<128, 192, 5, 1>, 0>(),
      wgrad<WgradBf16TmaCfg<128, 256, 4, 1>, 0>(),
      wgrad<WgradTmaCfg<128, 192, 5, 1>, 0>(),
      wgrad<WgradTmaCfg<128, 256, 4, 1>, 0>(),
      wgrad<WgradBf16TmaCfg<128, 192, 5, 1>, kPinnedLoop + 1>(),
      wgrad<WgradTmaCfg<128, 192, 5, 1>, kPinnedLoop + 1>(),
      wgrad<WgradBf16TmaCfg<128, 192, 5, 1>, kStaggeredLoop>(),
      wgrad<WgradBf16TmaCfg<128, 256, 4, 1>, kStaggeredLoop>(),
      wgrad<WgradTmaCfg<128, 192, 5, 1>, kStaggeredLoop>(),
      wgrad<WgradTmaCfg<128, 256, 4, 1>, kStaggeredLoop>(),
      wgrad<WgradTmaCfg<128, 128, 6, 1>, 0>(),
      wgrad<WgradTmaCfg<128, 128, 6, 1>, kStaggeredLoop>(),
      // Session 30: the lean loop with each tile's first partial sum issued before the previous
      // tile's epilogue (kgrouped.cuh, kPinnedLoop + kEarlyWaveLoop + u): the default of the bf16
      // dB tiles (plain names; their lean loop without it stays as _pin_loop4 / _pin_loop1), and
      // on the FP32 ones, where it was not faster, the comparison twins _pin_ew2 and _pin_ew1
      // (128 x 192: unrolled 4x it spills, 28 bytes; _pin_ew1 is _pin_loop1 with the early wave)
      // and _pin_ew1 (128 x 256).
      wgrad<WgradBf16TmaCfg<128, 192, 5, 1>, kPinnedLoop + 4>(),
      wgrad<WgradBf16TmaCfg<128, 256, 4, 1>, kPinnedLoop + 1>(),
      wgrad<WgradTmaCfg<128, 192, 5, 1>, kPinnedLoop + kEarlyWaveLoop + 2>(),
      wgrad<WgradTmaCfg<128, 192, 5, 1>, kPinnedLoop + kEarlyWaveLoop + 1>(),
      wgrad<WgradTmaCfg<128, 256, 4, 1>, kPinnedLoop + kEarlyWaveLoop + 1>(),
      // Session 30: FP32 dB with two staging units per warpgroup (a unit's store need not have
      // read its buffer before the next unit is written), whose default is the early wave
      // (128 x 192 s4 b2 above: the plan's grouped FP32 pick), beside their lean loop
      // (_pin_loop2 / _pin_loop1) and the first loop (_loop0, for the bit-for-bit test).
      wgrad<WgradTmaCfg<128, 192, 4, 2>, kPinnedLoop + 2>(),
      wgrad<WgradTmaCfg<128, 192, 4, 2>, 0>(),
      wgrad<WgradTmaCfg<128, 256, 3, 2>>(),
      wgrad<WgradTmaCfg<128, 256, 3, 2>, kPinnedLoop + 1>(),
      // Session 31: bf16 dB with two staging units per warpgroup (a 64 x 64 bf16 unit is 8 KB, as
      // a 64 x 32 FP32 one; 128 x 192 keeps 4 stages, 128 x 256 3), the early wave by default as
      // the one-unit bf16 kernels; the plan's bf16 pair since then (default_wgrad_kernel): the
      // bf16 epilogue's shorter chain of unit stores (3 or 4 per warpgroup and tile instead of 6
      // or 8) still gained ~2 % from the second unit on 128 x 192, nothing measurable on 128 x 256.
      wgrad<WgradBf16TmaCfg<128, 192, 4, 2>>(),
      wgrad<WgradBf16TmaCfg<128, 256, 3, 2>>(),
  };
  return all;
}

}  // namespace fp8gemm::ch08
