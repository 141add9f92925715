// Scaling recipes as types. Each recipe knows, for one operand of `rows` x `cols` elements
// (rows = M for A or N for B, cols = K; the operand is row-major, K contiguous):
//  - the logical scale grid: scale_rows() x scale_cols(), one scale per block of
//    block_rows() x block_cols() elements (edge blocks are partial);
//  - the storage layout of that grid in memory: size() elements (padding included) and
//    index(r, c) -> offset of the scale that applies to element (r, c) of the operand,
//    plus block_index(i, j) -> offset of scale-grid entry (i, j).
// The layouts are the ones the peers expect (FACTS.md, verified on the H200):
//  - PerTensor:    1 float.
//  - Rowwise:      one float per row, [rows].
//  - Group1x128:   one float per 128 K-elements of each row, outer-dim-major: [ceil(K/128)][rows],
//                  rows contiguous (cuBLASLt VEC128_32F; DeepGEMM's A scales without TMA padding).
//  - Block128x128: one float per 128 x 128 block, K-major [ceil(rows/128)][L4] where
//                  L4 = ceil(K/128) rounded up to a multiple of 4 (cuBLASLt BLK128x128_32F needs
//                  the column stride to be a multiple of 4; unpadded data is silently wrong).
//  - Mx1x32:       one UE8M0 byte per 32 K-elements; 128-row x 4-column tiles of 512 bytes, tiles
//                  row-major, inside a tile offset = (r % 32) * 16 + (r / 32 % 4) * 4 + c % 4;
//                  rows padded to 128 and scale columns to 4 (padding is zero-filled).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "common/fp8.hpp"

namespace fp8gemm {

/// The recipes, as a run-time tag (for validation messages and dispatch).
enum class ScaleRecipe : int { per_tensor, rowwise, group_1x128, block_128x128, mx_1x32 };

/// A human-readable name: "per-tensor", "rowwise", "1x128", "128x128", "MX 1x32".
const char* to_string(ScaleRecipe recipe);

FP8GEMM_HD constexpr std::int64_t ceil_div(std::int64_t a, std::int64_t b) { return (a + b - 1) / b; }
/// ((rows - 1) ld + cols) elem_bytes: the bytes from a strided tensor's first element to one past
/// its last, into `bytes`; false where that overflows 64 bits (a huge ld would otherwise wrap to a
/// small extent that every buffer check passes). The one place this arithmetic is checked.
inline bool strided_bytes(std::int64_t rows, std::int64_t ld, std::int64_t cols,
                          std::int64_t elem_bytes, std::int64_t& bytes) {
  return !(__builtin_mul_overflow(rows - 1, ld, &bytes) || __builtin_add_overflow(bytes, cols, &bytes) ||
           __builtin_mul_overflow(bytes, elem_bytes, &bytes));
}
FP8GEMM_HD constexpr std::int64_t round_up(std::int64_t a, std::int64_t b) { return ceil_div(a, b) * b; }

/// Common shape bookkeeping: an operand of rows x cols, blocks of BR x BC.
template <std::int64_t BR, std::int64_t BC>
struct BlockGrid {
  std::int64_t rows = 0, cols = 0;
  FP8GEMM_HD constexpr BlockGrid(std::int64_t r, std::int64_t c) : rows(r), cols(c) {}
  FP8GEMM_HD static constexpr std::int64_t block_rows() { return BR; }
  FP8GEMM_HD static constexpr std::int64_t block_cols() { return BC; }
  FP8GEMM_HD constexpr std::int64_t scale_rows() const { return BR == 0 ? 1 : ceil_div(rows, BR); }
  FP8GEMM_HD constexpr std::int64_t scale_cols() const { return BC == 0 ? 1 : ceil_div(cols, BC); }
};

/// One float for the whole operand.
struct PerTensor : BlockGrid<0, 0> {
  using scale_type = float;
  static constexpr ScaleRecipe recipe = ScaleRecipe::per_tensor;
  using BlockGrid::BlockGrid;
  FP8GEMM_HD constexpr std::int64_t size() const { return 1; }
  FP8GEMM_HD constexpr std::int64_t block_index(std::int64_t, std::int64_t) const { return 0; }
  FP8GEMM_HD constexpr std::int64_t index(std::int64_t, std::int64_t) const { return 0; }
};

/// One float per row (per token of A, per output channel of B).
struct Rowwise : BlockGrid<1, 0> {
  using scale_type = float;
  static constexpr ScaleRecipe recipe = ScaleRecipe::rowwise;
  using BlockGrid::BlockGrid;
  FP8GEMM_HD constexpr std::int64_t size() const { return rows; }
  FP8GEMM_HD constexpr std::int64_t block_index(std::int64_t i, std::int64_t) const { return i; }
  FP8GEMM_HD constexpr std::int64_t index(std::int64_t r, std::int64_t) const { return r; }
};

/// DeepSeek-V3 activations: 1 x 128 groups along K, stored [ceil(K/128)][rows] (rows contiguous).
struct Group1x128 : BlockGrid<1, 128> {
  using scale_type = float;
  static constexpr ScaleRecipe recipe = ScaleRecipe::group_1x128;
  using BlockGrid::BlockGrid;
  FP8GEMM_HD constexpr std::int64_t size() const { return scale_cols() * rows; }
  FP8GEMM_HD constexpr std::int64_t block_index(std::int64_t i, std::int64_t j) const {
    return j * rows + i;
  }
  FP8GEMM_HD constexpr std::int64_t index(std::int64_t r, std::int64_t c) const {
    return block_index(r, c / 128);
  }
};

/// DeepSeek-V3 weights: 128 x 128 blocks, stored K-major [ceil(rows/128)][L4],
/// L4 = ceil(K/128) rounded up to a multiple of 4 (cuBLASLt's rule; the padding is never read).
struct Block128x128 : BlockGrid<128, 128> {
  using scale_type = float;
  static constexpr ScaleRecipe recipe = ScaleRecipe::block_128x128;
  using BlockGrid::BlockGrid;
  /// Padded row length of the scale grid (the "leading dimension" of the scale tensor).
  FP8GEMM_HD constexpr std::int64_t padded_scale_cols() const { return round_up(scale_cols(), 4); }
  FP8GEMM_HD constexpr std::int64_t size() const { return scale_rows() * padded_scale_cols(); }
  FP8GEMM_HD constexpr std::int64_t block_index(std::int64_t i, std::int64_t j) const {
    return i * padded_scale_cols() + j;
  }
  FP8GEMM_HD constexpr std::int64_t index(std::int64_t r, std::int64_t c) const {
    return block_index(r / 128, c / 128);
  }
};

/// OCP MX: one UE8M0 scale per 1 x 32 block along K, in the 128 x 4 swizzled tile layout that
/// tcgen05.mma block scaling and cuBLAS (VEC32_UE8M0) read.
struct Mx1x32 : BlockGrid<1, 32> {
  using scale_type = std::uint8_t;  // UE8M0 bits
  static constexpr ScaleRecipe recipe = ScaleRecipe::mx_1x32;
  using BlockGrid::BlockGrid;
  FP8GEMM_HD constexpr std::int64_t padded_scale_rows() const { return round_up(rows, 128); }
  FP8GEMM_HD constexpr std::int64_t padded_scale_cols() const { return round_up(scale_cols(), 4); }
  FP8GEMM_HD constexpr std::int64_t size() const { return padded_scale_rows() * padded_scale_cols(); }
  FP8GEMM_HD constexpr std::int64_t block_index(std::int64_t i, std::int64_t j) const {
    const std::int64_t tiles_per_row = padded_scale_cols() / 4;
    const std::int64_t tile = (i / 128) * tiles_per_row + j / 4;
    const std::int64_t r = i % 128;
    return tile * 512 + (r % 32) * 16 + (r / 32) * 4 + j % 4;
  }
  FP8GEMM_HD constexpr std::int64_t index(std::int64_t r, std::int64_t c) const {
    return block_index(r, c / 32);
  }
};

/// Number of scale elements (padding included) a recipe needs for a rows x cols operand.
std::int64_t scale_count(ScaleRecipe recipe, std::int64_t rows, std::int64_t cols);

/// A sentence describing the layout and the count, for error messages, e.g.
/// "ceil(K/128) x M = 5 x 200 = 1000 floats, M contiguous".
std::string describe_scale_layout(ScaleRecipe recipe, std::int64_t rows, std::int64_t cols,
                                  const char* rows_name);

}  // namespace fp8gemm
