// What the engine's host side and its kernel share (plain structs, no device code): the
// accumulation and epilogue choices, the dense tile schedule, and the kernel's parameter block.
#pragma once

#include <cuda.h>  // CUtensorMap (a type only)

#include <cstdint>
#include <stdexcept>
#include <string>

#include "common/engine/grouped_schedule.hpp"

namespace fp8gemm::engine {

/// Chapter 8's grouped tiles start at any row, so a stage's A scales are loaded from row
/// m0 & ~3 (a TMA box must start 16-byte aligned), BlockM + 4 of them: in one box, or, past TMA's
/// 256 elements per box dimension (BlockM = 256), in two boxes of 160 (640 bytes: the second box
/// lands 128-byte aligned in shared memory, as TMA wants). The producer (block_scaled.cuh,
/// grouped.cuh) and the plan's tensor map (chapters/08_grouped_moe/grouped_gemm.cpp) both use it.
constexpr int skewed_scale_box_rows(int block_m) { return block_m + 4 <= 256 ? block_m + 4 : 160; }
constexpr int skewed_scale_boxes(int block_m) { return block_m + 4 <= 256 ? 1 : 2; }

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
  /// FP32 D from registers (bounds-checked, float2 stores where aligned), optionally added to
  /// what D holds (D = A.B + D, GemmParams::accumulate): chapter 7's FP32 output, chapter 8's
  /// weight gradients. Each element of D is read and written by one thread once: deterministic.
  registers_f32 = 2,
  /// FP32 D through shared memory and TMA: each 64 x 32 unit staged (128B swizzle) and written by
  /// a TMA store, or with `accumulate` by a TMA reduce-add (D = A.B + D, one FP32 add per element
  /// in the TMA unit: deterministic, the same rounding as registers_f32's). Not waited for until
  /// its staging buffer is reused, so the FP32 tile drains under the next tile's main loop.
  /// Chapter 8's weight gradient (its 3-D map of dB, kgrouped.cuh) and grouped forward (D's
  /// ragged-rows view, the default where ldd % 4 == 0), the library's per-tensor FP32 D (D's 2-D
  /// map, GemmParams::map_d), chapter 9's default path (the default with accumulate) and, by name,
  /// its dequantize_bf16 path's and chapter 7's FP32 TMA kernels; needs D 16-byte aligned and ldd
  /// a multiple of 4.
  tma_store_f32 = 3,
};

/// Whether an epilogue writes FP32 D (registers_f32, tma_store_f32) rather than bf16.
inline constexpr bool writes_f32(EpilogueKind e) {
  return e == EpilogueKind::registers_f32 || e == EpilogueKind::tma_store_f32;
}

/// Whether an epilogue stores D by TMA through shared memory (tma_store, tma_store_f32): D must
/// then be 16-byte aligned with rows 16 bytes apart, and the kernel holds staging buffers.
inline constexpr bool stores_by_tma(EpilogueKind e) {
  return e == EpilogueKind::tma_store || e == EpilogueKind::tma_store_f32;
}

/// How the consumer warpgroups share the tiles (config.cuh).
enum class ConsumerOrder : int {
  /// Both consumer warpgroups work on one tile, each on its own rows, reading the same ring
  /// stages; their epilogues run together, so the tensor cores idle while the tile is stored
  /// (CUTLASS's "cooperative" kernel, DeepGEMM's). Chapters 6-10's default.
  cooperative = 0,
  /// Each consumer warpgroup works on whole tiles of its own, alternately (tiles 0, 2, 4, ... of
  /// the CTA to the first, 1, 3, 5, ... to the second); the ring holds their K blocks one tile
  /// after the other, so one warpgroup's main loop runs while the other's epilogue stores its
  /// tile (CUTLASS's "ping-pong" kernel). A warpgroup holds a whole tile: at most 128
  /// accumulators per thread (128 x 128, 64 x 256), 192 in fast mode (128 x 192, 128 x 176).
  /// Per-tensor scaling only; chapter 6's fast table and the library's per-tensor fast rows take
  /// it at 8 of the 9 large shapes (chapter 6's NOTEBOOK.md, "Ping-pong consumers").
  pingpong = 1,
};

/// How the engine's threads wait on a ring barrier (full or empty) whose phase is not complete yet.
enum class BarrierWait : int {
  /// mbarrier.try_wait with a 10 ms suspend-time hint (ptx::mbarrier_wait_sleep): the thread
  /// sleeps until the phase completes, as in CUTLASS and DeepGEMM. The default.
  sleep = 0,
  /// mbarrier.try_wait without the hint (ptx::mbarrier_wait): after a system-dependent time the
  /// thread wakes and issues the try_wait again. The engine's wait until session 17; kernels that
  /// keep it carry "_spin" in their names, for the same-run comparison only.
  spin = 1,
};

inline constexpr const char* to_string(Accumulation a) {
  return a == Accumulation::fast ? "fast" : "promoted";
}
inline constexpr const char* to_string(EpilogueKind e) {
  return e == EpilogueKind::registers ? "registers"
         : e == EpilogueKind::tma_store ? "tma_store"
         : e == EpilogueKind::registers_f32 ? "registers_f32"
                                             : "tma_store_f32";
}

/// n / d for 0 <= n < 2^31 and 1 <= d < 2^31 by a multiply-high and a shift instead of a
/// division: m = ceil(2^p / d) with p = 31 + ceil(log2 d), n / d = (n m) >> p (the round-up
/// method; CUTLASS's FastDivmod is the same arithmetic). Why: the dense scheduler's two divisions
/// per tile were a dependent chain of ~450 cycles at every tile change (chapter 7's timeline,
/// session 19), with the tensor cores idle behind it. Host and device; made on the host.
struct FastDiv {
  unsigned d = 1;
  unsigned m = 0;      ///< ceil(2^p / d), < 2^32 (unused for d = 1)
  unsigned shift = 0;  ///< p - 32
  /// Host only; refuses a divisor < 1 (the default FastDiv divides by 1, so a divisor never set
  /// would otherwise pass unnoticed as "divide by 1").
  static FastDiv make(int divisor) {
    if (divisor < 1)
      throw std::invalid_argument("FastDiv: divisor " + std::to_string(divisor) + " (want >= 1)");
    FastDiv f;
    f.d = unsigned(divisor);
    if (divisor > 1) {
      int log2_up = 0;
      while ((1u << log2_up) < f.d) ++log2_up;
      const unsigned p = 31u + unsigned(log2_up);
      f.m = unsigned(((std::uint64_t(1) << p) + f.d - 1) / f.d);
      f.shift = p - 32u;
    }
    return f;
  }
  FP8GEMM_HD inline int div(int n) const {
    if (d == 1) return n;
#ifdef __CUDA_ARCH__
    return int(__umulhi(unsigned(n), m) >> shift);
#else
    return int(((std::uint64_t(unsigned(n)) * m) >> 32) >> shift);
#endif
  }
};

/// Host-computed description of the dense tile space. The plan keeps every count below 2^30, so
/// no int arithmetic in the scheduler can overflow.
struct DenseSchedule {
  int units_m = 0;    ///< cluster tiles along M: ceil(ceil(M / BlockM) / ClusterM)
  int units_n = 0;    ///< cluster tiles along N
  int num_units = 0;  ///< units_m * units_n
  int group = 1;      ///< raster band width in units (1: plain row-major order)
  int along_n = 0;    ///< 0: bands of `group` unit-rows, walked down M inside a band;
                      ///< 1: bands of `group` unit-columns, walked along N inside a band
  // The scheduler's divisors (make_dense_schedule(), from the fields above): units per band, the
  // band width, and the last band's width (narrower when `group` does not divide the units).
  FastDiv per_band, width, last_width;
};

/// The one way to build a DenseSchedule: the counts checked and the scheduler's divisors filled
/// from them (a schedule whose divisors were left at their default would map units to the wrong
/// tiles without any error). units_m, units_n >= 1 with at most 2^30 units in all; 1 <= group
/// <= the units the bands cut (units_m for bands of rows, along_n = 0; units_n for bands of
/// columns, along_n = 1). Throws std::invalid_argument otherwise.
inline DenseSchedule make_dense_schedule(int units_m, int units_n, int group, int along_n) {
  const auto refuse = [&](const char* what) {
    throw std::invalid_argument(std::string("dense schedule: ") + what + " (units " +
                                std::to_string(units_m) + " x " + std::to_string(units_n) +
                                ", group " + std::to_string(group) + ", along_n " +
                                std::to_string(along_n) + ")");
  };
  if (units_m < 1 || units_n < 1) refuse("no units");
  if (std::int64_t(units_m) * units_n > (std::int64_t(1) << 30)) refuse("more than 2^30 units");
  if (along_n != 0 && along_n != 1) refuse("along_n is not 0 or 1");
  const int across = along_n == 0 ? units_n : units_m;  // units along a band
  const int inner = along_n == 0 ? units_m : units_n;   // units the bands cut
  if (group < 1 || group > inner) refuse("group outside 1 .. the units the bands cut");
  DenseSchedule s;
  s.units_m = units_m;
  s.units_n = units_n;
  s.num_units = units_m * units_n;
  s.group = group;
  s.along_n = along_n;
  s.per_band = FastDiv::make(group * across);
  s.width = FastDiv::make(group);
  const int last = inner % group;
  s.last_width = FastDiv::make(last == 0 ? group : last);
  return s;
}

/// Everything the kernel receives (one __grid_constant__ parameter: TMA wants its tensor maps in
/// parameter, constant or global memory, and a kernel parameter is the cheapest).
struct GemmParams {
  CUtensorMap map_a;  ///< A: M x K e4m3, box (BlockM / ClusterN) rows x 128, 128B swizzle
  CUtensorMap map_b;  ///< B: N x K e4m3, box (BlockN / ClusterM) rows x 128, 128B swizzle
  CUtensorMap map_d;  ///< D: M x N, box 64 rows x kEpiCols, bf16 (tma_store) or FP32
                      ///< (tma_store_f32); a policy may replace it with its own (chapter 8's
                      ///< weight gradient: a 3-D map, kgrouped.cuh)
  DenseSchedule schedule;
  int M = 0, N = 0, K = 0;
  int k_blocks = 0;                ///< ceil(K / 128); the last block is zero-filled past K
  std::uint16_t* D = nullptr;      ///< for the registers epilogue
  std::int64_t ldd = 0;            ///< elements
  int d_pairs_ok = 0;              ///< D 4-byte aligned and ldd even: bf16x2 stores allowed
                                   ///< (registers_f32: D 8-byte aligned, ldd even: float2)
  const float* scale_a = nullptr;  ///< device scalar
  const float* scale_b = nullptr;  ///< device scalar
  float* D_f32 = nullptr;          ///< for the registers_f32 epilogue (ldd elements per row)
  int accumulate = 0;              ///< FP32 D (registers_f32, tma_store_f32): D = A.B + D
};

/// Rows of 128 x 128 B-scale blocks that a BlockN-wide tile can touch (tiles start at multiples
/// of BlockN, so at (n0 % 128) in {0, gcd(BlockN, 128), 2 gcd, ...}): 1 for BlockN dividing 128,
/// 2 for 256 or 192, 3 for 176. The chapter-7 kernel reads that many B scales per K block.
constexpr int sfb_rows_for(int block_n) {
  int g = block_n, h = 128;
  while (h != 0) {
    const int r = g % h;
    g = h;
    h = r;
  }
  int most = 1;
  for (int off = 0; off < 128; off += g) {
    const int rows = (off + block_n + 127) / 128;
    most = rows > most ? rows : most;
  }
  return most;
}

/// The parameter block of chapter 7's block-scaled kernel (DeepSeek-V3 recipe): the per-tensor
/// block plus the two scale tensors. scale_a / scale_b of the base are unused.
struct BlockScaledParams : GemmParams {
  /// A's 1 x 128 scales, mn-major [ceil(K/128)][ld] float, ld % 4 == 0: a 2-D map of
  /// ceil(K/128) rows x M columns, box 1 x BlockM (the stage's rows), no swizzle.
  CUtensorMap map_sfa;
  /// B's 128 x 128 scales, k-major: sfb[i * sfb_ld + j] for block row i < sfb_rows (= ceil(N/128))
  /// and K block j. Read by the consumers with plain loads one K block ahead (a 16-byte TMA box
  /// of them faulted with an illegal instruction on the H200; see chapter 7's README).
  const float* sfb = nullptr;
  std::int64_t sfb_ld = 0;
  int sfb_rows = 0;
  /// Chapter 8: floats between two groups' B-scale tensors (B is [G][N][K]); 0 for one group.
  std::int64_t sfb_group_stride = 0;
};

/// Chapter 8's parameters: chapter 7's plus the groups (common/engine/grouped.cuh).
struct GroupedParams : BlockScaledParams {
  GroupedLayout layout;  ///< device offsets (contiguous) or counts (masked)
  int n_tiles = 0;       ///< ceil(N / BlockN)
  /// Stream-K kernels only (common/engine/stream_k.cuh; null otherwise): one slot of
  /// BlockM x BlockN floats per CTA of the grid for a partial tile, and one int flag per CTA and
  /// consumer warpgroup, zero before the launch (each launch leaves them zero).
  float* sk_partials = nullptr;
  int* sk_flags = nullptr;
  /// Dynamically scheduled kernels only (grouped.cuh, GroupedDynamicMath; null otherwise): [0]
  /// the next tile to hand out, [1] the CTAs that have run out of tiles; zero before the launch,
  /// and the last CTA to run out zeroes both again.
  int* tile_counter = nullptr;
};

/// Chapter 8's weight gradient (common/engine/kgrouped.cuh), dB_g = dD_g^T . A_g for every group,
/// in the engine's terms: "A" = dD^T [N, T_pad] e4m3 (map_a), "B" = A^T [K, T_pad] e4m3 (map_b),
/// the reduction over tokens; D = dB [G * N, K] FP32 (D_f32, ldd = K's leading dimension; M, N of
/// the base are the N and K of one dB_g). Both operands have 1 x 128 scales along the tokens,
/// mn-major: [T_pad / 128][ld] floats, a 2-D map of T_pad / 128 rows x (N or K) columns, box
/// 1 x BlockM (map_sfa) and 1 x BlockN (map_sfb), loaded by TMA into the stage's side ring.
struct KGroupedParams : GemmParams {
  CUtensorMap map_sfa;
  CUtensorMap map_sfb;
  const int* offsets = nullptr;  ///< G + 1 device int32 token offsets (real counts, unpadded)
  int groups = 0;
  int tiles_m = 0;               ///< ceil(N / BlockM) tiles per dB_g down its rows
  int tiles_n = 0;               ///< ceil(K / BlockN) across its columns
  int skip_empty = 0;            ///< accumulating: empty groups' dB_g left untouched
};

/// Chapter 9's MXFP8 GEMM on Hopper (common/engine/mx_scaled.cuh): the per-tensor block plus the
/// two UE8M0 scale tensors in the Mx1x32 layout (common/mx.hpp: 128-row x 4-block tiles of 512
/// bytes, tiles row-major, padded to whole tiles), read a tile per stage by bulk copy.
struct MxParams : GemmParams {
  const std::uint8_t* sfa = nullptr;  ///< A's scales: ceil(M/128) x sf_tiles_k tiles
  const std::uint8_t* sfb = nullptr;  ///< B's scales: sf_tiles_n x sf_tiles_k tiles
  int sf_tiles_k = 0;                 ///< ceil(K / 128): tiles per row of tiles
  int sf_tiles_n = 0;                 ///< ceil(N / 128)
};

}  // namespace fp8gemm::engine
