// What the engine's host side and its kernel share (plain structs, no device code): the
// accumulation and epilogue choices, the dense tile schedule, and the kernel's parameter block.
#pragma once

#include <cuda.h>  // CUtensorMap (a type only)

#include <cstdint>

namespace fp8gemm::engine {

/// How the FP8 products are summed (docs/fp8_numerics.md, "Accumulation").
enum class Accumulation : int {
  /// Tensor-core accumulation only, across all of K (like cuBLASLt's FAST_ACCUM). Hopper's FP8
  /// tensor cores add into the FP32 accumulator with a reduced alignment, so with same-sign data
  /// the error grows with K (7e-2 at K = 4096 measured). Opt-in.
  fast = 0,
  /// Every 128 K (4 wgmma k32 steps) the tensor-core partial sum is added into a separate FP32
  /// accumulator by the CUDA cores (DeepSeek-V3's promotion; cuBLASLt's default). The default.
  promoted = 1,
};

/// How D leaves the CTA.
enum class EpilogueKind : int {
  /// Each thread stores its accumulators straight from registers (bounds-checked, bf16 or bf16x2
  /// stores): chapter 5's epilogue. Works for any D (any N, any 2-byte-aligned pointer).
  registers = 0,
  /// Accumulators -> bf16 -> stmatrix into swizzled shared memory -> one TMA store per 64-row
  /// unit, issued by one thread and NOT waited for: it drains while the next tile's main loop
  /// runs, and is waited for only before its staging buffer is reused. Needs a TMA-compatible D
  /// (16-byte aligned, row stride a multiple of 16 bytes).
  tma_store = 1,
};

inline constexpr const char* to_string(Accumulation a) {
  return a == Accumulation::fast ? "fast" : "promoted";
}
inline constexpr const char* to_string(EpilogueKind e) {
  return e == EpilogueKind::registers ? "registers" : "tma_store";
}

/// Host-computed description of the dense tile space. The plan keeps every count below 2^30, so
/// no int arithmetic in the scheduler can overflow.
struct DenseSchedule {
  int units_m = 0;    ///< cluster tiles along M: ceil(ceil(M / BlockM) / ClusterM)
  int units_n = 0;    ///< cluster tiles along N
  int num_units = 0;  ///< units_m * units_n
  int group = 1;      ///< raster band width in units (1: plain row-major order)
  int along_n = 0;    ///< 0: bands of `group` unit-rows, walked down M inside a band;
                      ///< 1: bands of `group` unit-columns, walked along N inside a band
};

/// Everything the kernel receives (one __grid_constant__ parameter: TMA wants its tensor maps in
/// parameter, constant or global memory, and a kernel parameter is the cheapest).
struct GemmParams {
  CUtensorMap map_a;  ///< A: M x K e4m3, box (BlockM / ClusterN) rows x 128, 128B swizzle
  CUtensorMap map_b;  ///< B: N x K e4m3, box (BlockN / ClusterM) rows x 128, 128B swizzle
  CUtensorMap map_d;  ///< D: M x N bf16, box 64 rows x kEpiCols (tma_store epilogue only)
  DenseSchedule schedule;
  int M = 0, N = 0, K = 0;
  int k_blocks = 0;                ///< ceil(K / 128); the last block is zero-filled past K
  std::uint16_t* D = nullptr;      ///< for the registers epilogue
  std::int64_t ldd = 0;            ///< elements
  int d_pairs_ok = 0;              ///< D 4-byte aligned and ldd even: bf16x2 stores allowed
  const float* scale_a = nullptr;  ///< device scalar
  const float* scale_b = nullptr;  ///< device scalar
};

}  // namespace fp8gemm::engine
