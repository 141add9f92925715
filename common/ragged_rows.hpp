// A "ragged rows" view of a row-major matrix for TMA stores: one tensor map through which a box
// written at rows row0 .. row0 + 63 of D drops every row at or past a bound `row_end` given with
// the store, not fixed in the map (chapter 8: a grouped GEMM's tile must not write the next
// expert's rows, and where each expert ends is device data). The construction is Triton's "ragged
// TMA" (triton-lang/triton, python/triton/tools/ragged_tma.py; QuACK uses the same): two
// dimensions are added in front of the matrix's rows so that the row coordinate is taken
// relative to the bound, and a third undoes the offset by wrapping the address around 2^64.
//
//   dims (innermost first)  size            stride (bytes)          coordinate
//   0  columns              cols            element                 col
//   1  rows before the bound 2^30           s (row stride)          2^30 - row_end + row
//   2  the bound            2^30 + 1        s                       row_end
//   3  the wrap             2^30 + 1        2^34 - s                2^30
//
//   address = (2^30 - row_end + row) s + row_end s + 2^30 (2^34 - s)
//           = row s + 2^64  =  row s   (mod 2^64: the TMA unit's address arithmetic)
//   in bounds along dimension 1  <=>  0 <= 2^30 - row_end + row < 2^30  <=>  row < row_end
//                                     (for row_end - 2^30 <= row: every row when rows <= 2^30)
//
// Boxes are 1 row high and 1 deep in dimensions 2 and 3, so a box is laid out in shared memory
// exactly as the 2-D map's. TMA clips a store at the bound: rows past it are not written (PTX ISA,
// cp.async.bulk.tensor: out-of-bound elements of a store are skipped). Host and device code; the
// CPU test (tests/test_ragged_rows.cpp) checks the address and bounds arithmetic above.
#pragma once

#include <cstdint>

#include "common/fp8.hpp"  // FP8GEMM_HD

namespace fp8gemm {

/// Rows of the matrix the view can address: at most 2^30 (the plan refuses more).
inline constexpr std::int64_t kRaggedMaxRows = std::int64_t(1) << 30;
/// Row strides the view can take: below 2^34 bytes (its third dimension's stride, 2^34 minus the
/// row stride, must stay positive; the plan sends a larger one to a registers epilogue).
inline constexpr std::int64_t kRaggedMaxStrideBytes = std::int64_t(1) << 34;

/// The coordinates of dimensions 1, 2, 3 of a box whose first row is `row`, clipped at `row_end`.
struct RaggedRowCoords {
  std::int32_t rel_row, bound, wrap;
};
FP8GEMM_HD constexpr RaggedRowCoords ragged_row_coords(int row, int row_end) {
  return {std::int32_t(kRaggedMaxRows - row_end + row), std::int32_t(row_end),
          std::int32_t(kRaggedMaxRows)};
}

/// Sizes of dimensions 1 .. 3 and their strides in bytes, for rows `row_stride_bytes` apart.
struct RaggedRowsLayout {
  std::uint64_t dim[3];
  std::uint64_t stride_bytes[3];
};
FP8GEMM_HD constexpr RaggedRowsLayout ragged_rows_layout(std::uint64_t row_stride_bytes) {
  return {{std::uint64_t(kRaggedMaxRows), std::uint64_t(kRaggedMaxRows) + 1,
           std::uint64_t(kRaggedMaxRows) + 1},
          {row_stride_bytes, row_stride_bytes,
           std::uint64_t(kRaggedMaxStrideBytes) - row_stride_bytes}};
}

}  // namespace fp8gemm
