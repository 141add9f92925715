// The engine's epilogues: a consumer warpgroup's FP32 accumulators -> scaled -> bf16 -> D.
//
// Accumulator layout (common/ptx/wgmma.cuh): for one 64-row slab and N columns, thread t of the
// warpgroup (warp w = t / 32, lane l = t % 32) holds, for j = 0 .. N/8 - 1,
//   acc[4j + 0], acc[4j + 1] = D[16w + l/4    ][8j + 2(l%4)], D[16w + l/4    ][8j + 2(l%4) + 1]
//   acc[4j + 2], acc[4j + 3] = D[16w + l/4 + 8][8j + 2(l%4)], D[16w + l/4 + 8][8j + 2(l%4) + 1]
#pragma once

#include <cuda.h>
#include <cuda_bf16.h>

#include <cstdint>
#include <type_traits>
#include <utility>

#include "common/engine/config.cuh"
#include "common/output_scale.cuh"
#include "common/ragged_rows.hpp"
#include "common/ptx/mbarrier.cuh"
#include "common/ptx/smem.cuh"
#include "common/ptx/stmatrix.cuh"
#include "common/ptx/tma.cuh"
#include "common/ptx/warpgroup.cuh"

namespace fp8gemm::engine {

/// Calls f(std::integral_constant<int, I>{}) for I = 0 .. kCount - 1: loop indices that must be
/// compile-time constants (register-array indices, template arguments).
template <int kCount, class F>
__device__ __forceinline__ void static_for(F&& f) {
  [&]<int... I>(std::integer_sequence<int, I...>) {
    (f(std::integral_constant<int, I>{}), ...);
  }(std::make_integer_sequence<int, kCount>{});
}

/// Two scaled accumulators as a bf16x2, round to nearest even (`lo` in the low half: the lower
/// column). An asm volatile on purpose: volatile asm keeps its program order, so the epilogue's
/// conversions stay next to the stmatrix that stores them instead of being hoisted all at once
/// (which kept 64 more registers live next to the accumulators and made ptxas spill).
/// PTX ISA 9.0, §9.7.9.21 "cvt" (.bf16x2.f32: d = {a -> upper half, b -> lower half}).
__device__ __forceinline__ std::uint32_t pack_bf16x2(float lo, float hi) {
  std::uint32_t r;
  asm volatile("cvt.rn.bf16x2.f32 %0, %1, %2;\n" : "=r"(r) : "f"(hi), "f"(lo));
  return r;
}

/// Visits this thread's accumulators of one 64-row slab of kN columns whose first element is
/// D[row0][col0], as pairs of neighbouring columns: store(r, c, v0, v1, both) with the scaled
/// values of D[r][c] and D[r][c + 1], `both` false when c + 1 is past N (then only v0 belongs to
/// D). Elements outside M x N are skipped; the interior path (the whole slab inside D) drops the
/// bounds checks.
template <int kN, class Scale, class Store>
__device__ __forceinline__ void for_each_slab_pair(const float (&acc)[kN / 2], const Scale& scale,
                                                   int row0, int col0, int M, int N,
                                                   Store&& store) {
  const int warp = int(threadIdx.x / 32) % 4;
  const int lane = int(threadIdx.x % 32);
  const int row = row0 + 16 * warp + lane / 4;
  const int col = col0 + 2 * (lane % 4);
  const bool interior = row0 + 64 <= M && col0 + kN <= N;
#pragma unroll
  for (int j = 0; j < kN / 8; ++j) {
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      const int r = row + 8 * h;
      const int c = col + 8 * j;
      if (!interior && (r >= M || c >= N)) continue;
      store(r, c, scale.apply(acc[4 * j + 2 * h]), scale.apply(acc[4 * j + 2 * h + 1]),
            interior || c + 1 < N);
    }
  }
}

/// Direct bf16 stores from registers (EpilogueKind::registers). `pairs_ok` (D 4-byte aligned and
/// ldd even) allows bf16x2 stores.
template <int kN, class Scale>
__device__ __forceinline__ void store_slab_registers(const float (&acc)[kN / 2],
                                                     const Scale& scale, int row0, int col0,
                                                     int M, int N, std::uint16_t* __restrict__ D,
                                                     std::int64_t ldd, bool pairs_ok) {
  for_each_slab_pair<kN>(acc, scale, row0, col0, M, N,
                         [&](int r, int c, float v0, float v1, bool both) {
                           std::uint16_t* out = D + std::int64_t(r) * ldd + c;
                           if (pairs_ok && both) {
                             *reinterpret_cast<std::uint32_t*>(out) = pack_bf16x2(v0, v1);
                           } else {
                             out[0] = __bfloat16_as_ushort(__float2bfloat16_rn(v0));
                             if (both) out[1] = __bfloat16_as_ushort(__float2bfloat16_rn(v1));
                           }
                         });
}

/// FP32 D from registers (EpilogueKind::registers_f32), float row-major with ldd elements per
/// row; with `accumulate`, each element becomes acc + D (one read and one write by its owning
/// thread). float2 stores where D is 8-byte aligned and ldd even (`pairs_ok`). The add is
/// __fadd_rn, never contracted with the scale's multiply into an FMA: the scaled sum is rounded
/// to float first, as the TMA epilogue's reduce-add sees it (the same bits by either path).
template <int kN, class Scale>
__device__ __forceinline__ void store_slab_f32(const float (&acc)[kN / 2], const Scale& scale,
                                               int row0, int col0, int M, int N,
                                               float* __restrict__ D, std::int64_t ldd,
                                               bool accumulate, bool pairs_ok) {
  for_each_slab_pair<kN>(acc, scale, row0, col0, M, N,
                         [&](int r, int c, float v0, float v1, bool both) {
                           float* out = D + std::int64_t(r) * ldd + c;
                           if (pairs_ok && both) {
                             float2* out2 = reinterpret_cast<float2*>(out);
                             if (accumulate) {
                               const float2 old = *out2;
                               v0 = __fadd_rn(v0, old.x);
                               v1 = __fadd_rn(v1, old.y);
                             }
                             *out2 = make_float2(v0, v1);
                           } else {
                             out[0] = accumulate ? __fadd_rn(v0, out[0]) : v0;
                             if (both) out[1] = accumulate ? __fadd_rn(v1, out[1]) : v1;
                           }
                         });
}

/// The identity scale needs no dispatch.
template <class F>
__device__ __forceinline__ void with_output_scale(const IdentityOutputScale& s, F&& f) {
  f(s);
}

/// Calls f(scale) with the OutputScale's float or exact form: one uniform branch per tile, and
/// each epilogue compiled with only its own arithmetic (output_scale.cuh).
template <class F>
__device__ __forceinline__ void with_output_scale(const OutputScale& s, F&& f) {
  if (s.use_float) f(FloatOutputScale{s.product});
  else f(ExactOutputScale{s.exact});
}

/// Byte offset `o` of a staging unit with the TMA swizzle of kSwizzleBytes (0: none) applied:
/// the 16-byte chunk bits [4, 4 + log2(kSwizzleBytes / 16)) are XORed with the bits just above
/// 128 bytes (CU_TENSOR_MAP_SWIZZLE_128B / 64B / 32B on a 1024-byte-aligned buffer).
template <int kSwizzleBytes>
__device__ __forceinline__ std::uint32_t swizzle_offset(std::uint32_t o) {
  if constexpr (kSwizzleBytes == 0) {
    return o;
  } else {
    constexpr std::uint32_t kMask = kSwizzleBytes / 16 - 1;
    return o ^ (((o >> 7) & kMask) << 4);
  }
}

/// stmatrix of the columns [c * kEpiCols, (c + 1) * kEpiCols) of one 64-row slab (accumulators
/// `acc` of a BlockN-wide slab) into the staging unit at shared address `unit`, rows of
/// kEpiCols bf16, swizzled as the D tensor map expects.
template <class Cfg, int kChunk, class Scale>
__device__ __forceinline__ void stage_unit(const float (&acc)[Cfg::kBlockN / 2],
                                           const Scale& scale, std::uint32_t unit) {
  constexpr int kGroups = Cfg::kEpiCols / 8;  // 16-byte row pieces (8 bf16) per unit row
  constexpr std::uint32_t kRowBytes = Cfg::kEpiCols * 2;
  const int warp = int(threadIdx.x / 32) % 4;
  const int lane = int(threadIdx.x % 32);
  const int matrix = lane / 8;  // which of the 4 (or 2) 8 x 8 matrices this lane addresses
  static_for<(kGroups + 1) / 2>([&](auto pair) {
    constexpr int g = 2 * pair;               // first 8-column group of this stmatrix in the unit
    constexpr int j = kChunk * kGroups + g;   // ... and in the slab (the accumulator index / 4)
    if constexpr (g + 1 < kGroups) {
      // Matrices (j, rows 0-7), (j, rows 8-15), (j+1, rows 0-7), (j+1, rows 8-15) of the warp's
      // 16-row strip.
      const int group = g + matrix / 2;
      const int row = 16 * warp + 8 * (matrix % 2) + lane % 8;
      const std::uint32_t addr =
          unit + swizzle_offset<Cfg::kEpiSwizzleBytes>(std::uint32_t(row) * kRowBytes +
                                                       std::uint32_t(group) * 16u);
      ptx::stmatrix_x4(addr, pack_bf16x2(scale.apply(acc[4 * j]), scale.apply(acc[4 * j + 1])),
                       pack_bf16x2(scale.apply(acc[4 * j + 2]), scale.apply(acc[4 * j + 3])),
                       pack_bf16x2(scale.apply(acc[4 * j + 4]), scale.apply(acc[4 * j + 5])),
                       pack_bf16x2(scale.apply(acc[4 * j + 6]), scale.apply(acc[4 * j + 7])));
    } else {
      // An odd last group (unswizzled units whose width is an odd number of 8 columns).
      const int row = 16 * warp + 8 * (matrix % 2) + lane % 8;
      const std::uint32_t addr =
          unit + swizzle_offset<Cfg::kEpiSwizzleBytes>(std::uint32_t(row) * kRowBytes +
                                                       std::uint32_t(g) * 16u);
      ptx::stmatrix_x2(addr, pack_bf16x2(scale.apply(acc[4 * j]), scale.apply(acc[4 * j + 1])),
                       pack_bf16x2(scale.apply(acc[4 * j + 2]), scale.apply(acc[4 * j + 3])));
    }
  });
}

/// The staging ring both TMA epilogues share: for each of a consumer warpgroup's units (slab w,
/// chunk c of kChunks) in order, stage(w, c, unit) writes the unit into its staging buffer `unit`
/// (kEpiBuffers x kEpiUnitBytes of this warpgroup at `staging`), then, once every thread's writes
/// are visible to the TMA unit, the warpgroup's first thread calls store(w, c, unit) and commits
/// one bulk group. A buffer is waited for only before it is written again, so the stores drain
/// under the next tile's main loop. One buffer per unit: the previous tile's stores must have
/// finished reading them (issued a whole main loop ago: normally free). Fewer, a ring: the store
/// that last read this buffer (kEpiBuffers stores ago, counting across tiles) must be done
/// reading it; each tile starts the ring at buffer 0, so where a tile's units are not a whole
/// number of rings the previous tile's last store may have used buffer 0, and the tile's first
/// unit waits for all of them (without it, a 128 x 160 FP32 kernel wrote stale data for empty
/// experts, whose tiles have no main loop between two epilogues). The barrier between units also
/// keeps the compiler from converting every unit's accumulators at once (64 more registers).
/// `barrier_id` is the warpgroup's named barrier (1 + warpgroup index).
template <class Cfg, int kChunks, class Stage, class Store>
__device__ __forceinline__ void for_each_staged_unit(std::uint32_t staging,
                                                     std::uint32_t barrier_id, Stage&& stage,
                                                     Store&& store) {
  constexpr int kUnits = Cfg::kEpiUnitsPerWG;
  constexpr bool kBufferPerUnit = Cfg::kEpiBuffers >= kUnits;
  const bool leader = threadIdx.x % 128 == 0;
  if constexpr (kBufferPerUnit) {
    if (leader) ptx::tma_store_wait_read<0>();
    ptx::named_barrier_sync(barrier_id, 128);
  }
  static_for<Cfg::kWavesM>([&](auto w) {
    static_for<kChunks>([&](auto c) {
      constexpr int u = w * kChunks + c;
      const std::uint32_t unit = staging + std::uint32_t(u % Cfg::kEpiBuffers) * Cfg::kEpiUnitBytes;
      if constexpr (!kBufferPerUnit) {
        if (leader) {
          if constexpr (kUnits % Cfg::kEpiBuffers != 0 && u == 0) ptx::tma_store_wait_read<0>();
          else ptx::tma_store_wait_read<Cfg::kEpiBuffers - 1>();
        }
        ptx::named_barrier_sync(barrier_id, 128);
      }
      stage(w, c, unit);
      ptx::fence_proxy_async_shared();  // st.shared / stmatrix writes -> visible to the TMA unit
      ptx::named_barrier_sync(barrier_id, 128);
      if (leader) {
        store(w, c, unit);
        ptx::tma_store_commit();
      }
    });
  });
}

/// Which map store_tile_tma (bf16) and store_tile_tma_f32 (FP32) write through, and what their
/// `bound` argument is.
enum class StoreMap {
  rows,         ///< D's 2-D map (columns, rows); `bound` unused
  planes,       ///< a 3-D map (columns, rows, planes): the units go to plane `bound`, a box
                ///< clipped at the plane's last row (chapter 8's weight gradient, bf16 or FP32
                ///< dB, kgrouped.cuh, whose tiles may run past a group's N rows)
  ragged_rows,  ///< D's ragged-rows view (common/ragged_rows.hpp): rows at or past `bound` are
                ///< not written (chapter 8's grouped forward: a tile's rows past its expert's)
};

/// The TMA-store epilogue of one consumer warpgroup (EpilogueKind::tma_store) for its kWavesM
/// slabs of 64 rows (`acc[w]`), rows `row0` + 64 w of D, columns `col0` ...: each unit (64 rows x
/// kEpiCols bf16) stmatrix'd into its staging buffer, swizzled as D's tensor map expects, and
/// stored by TMA (for_each_staged_unit) through the map kMap says.
template <class Cfg, StoreMap kMap = StoreMap::rows, class Scale>
__device__ __forceinline__ void store_tile_tma(const float (&acc)[Cfg::kWavesM][Cfg::kBlockN / 2],
                                               const Scale& scale,
                                               const CUtensorMap* map_d, std::uint32_t staging,
                                               int row0, int col0, std::uint32_t barrier_id,
                                               int bound = 0) {
  for_each_staged_unit<Cfg, Cfg::kBlockN / Cfg::kEpiCols>(
      staging, barrier_id,
      [&](auto w, auto c, std::uint32_t unit) {
        stage_unit<Cfg, decltype(c)::value, Scale>(acc[w], scale, unit);
      },
      [&](auto w, auto c, std::uint32_t unit) {
        if constexpr (kMap == StoreMap::planes) {
          ptx::tma_store_3d(map_d, unit, col0 + c * Cfg::kEpiCols, row0 + 64 * w, bound);
        } else if constexpr (kMap == StoreMap::ragged_rows) {
          const RaggedRowCoords r = ragged_row_coords(row0 + 64 * w, bound);
          ptx::tma_store_4d(map_d, unit, col0 + c * Cfg::kEpiCols, r.rel_row, r.bound, r.wrap);
        } else {
          ptx::tma_store_2d(map_d, unit, col0 + c * Cfg::kEpiCols, row0 + 64 * w);
        }
      });
}

/// The FP32 TMA epilogue of one consumer warpgroup (EpilogueKind::tma_store_f32) for its kWavesM
/// slabs of 64 rows (`acc[w]`), each value times `scale`: units of 64 rows x 32 floats, staged
/// with the 128B swizzle (each thread writes its float pairs, 8-byte stores: two wavefronts per
/// warp store, the minimum) and written at (col0 + 32 c, row0 + 64 w) of D's map as kMap says
/// (StoreMap::rows: D's 2-D map, `bound` unused; StoreMap::planes: a 3-D map, plane `bound`;
/// StoreMap::ragged_rows: D's ragged-rows view, rows at or past `bound` not written), a TMA store
/// or, with `accumulate`, a TMA reduce-add (D += unit) (for_each_staged_unit).
template <class Cfg, StoreMap kMap = StoreMap::rows, class Scale>
__device__ __forceinline__ void store_tile_tma_f32(
    const float (&acc)[Cfg::kWavesM][Cfg::kBlockN / 2], const Scale& scale,
    const CUtensorMap* map_d, std::uint32_t staging, int row0, int col0, int bound,
    bool accumulate, std::uint32_t barrier_id) {
  static_assert(Cfg::kEpiF32 && Cfg::kEpiCols == 32 && Cfg::kEpiSwizzleBytes == 128);
  const int warp = int(threadIdx.x / 32) % 4;
  const int lane = int(threadIdx.x % 32);
  // This thread's rows of the unit (r, r + 8) and its first column's byte in a unit row.
  const std::uint32_t row_bytes = std::uint32_t(16 * warp + lane / 4) * 128u;
  const std::uint32_t col_bytes = std::uint32_t(2 * (lane % 4)) * 4u;
  for_each_staged_unit<Cfg, Cfg::kBlockN / 32>(
      staging, barrier_id,
      [&](auto w, auto c, std::uint32_t unit) {
#pragma unroll
        for (int g = 0; g < 4; ++g) {  // the unit's four 8-column groups
          const int j = decltype(c)::value * 4 + g;  // ... in the slab
#pragma unroll
          for (int h = 0; h < 2; ++h) {  // rows r and r + 8
            const std::uint32_t o =
                row_bytes + std::uint32_t(8 * h) * 128u + std::uint32_t(g) * 32u + col_bytes;
            const float v0 = scale.apply(acc[w][4 * j + 2 * h]);
            const float v1 = scale.apply(acc[w][4 * j + 2 * h + 1]);
            ptx::st_shared_v2_f32(unit + swizzle_offset<128>(o), v0, v1);
          }
        }
      },
      [&](auto w, auto c, std::uint32_t unit) {
        const int col = col0 + 32 * c, row = row0 + 64 * w;
        if constexpr (kMap == StoreMap::planes) {
          if (accumulate) ptx::tma_reduce_add_3d(map_d, unit, col, row, bound);
          else ptx::tma_store_3d(map_d, unit, col, row, bound);
        } else if constexpr (kMap == StoreMap::ragged_rows) {
          const RaggedRowCoords r = ragged_row_coords(row, bound);
          if (accumulate) ptx::tma_reduce_add_4d(map_d, unit, col, r.rel_row, r.bound, r.wrap);
          else ptx::tma_store_4d(map_d, unit, col, r.rel_row, r.bound, r.wrap);
        } else {
          if (accumulate) ptx::tma_reduce_add_2d(map_d, unit, col, row);
          else ptx::tma_store_2d(map_d, unit, col, row);
        }
      });
}

}  // namespace fp8gemm::engine
