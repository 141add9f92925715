// CPU test of the ragged-rows view of D (common/ragged_rows.hpp), the arithmetic a TMA store
// through it performs: the address of a box row is base + row x stride (the sum of coordinate x
// stride over the view's dimensions, modulo 2^64), and the row is in bounds exactly when it lies
// before the bound given with the store. Whether the H200's TMA unit computes the address this way
// (wrapping at 2^64) is what the GPU tests of chapter 8 show: its grouped kernels store every
// tile through this view, and rows past a group's end must keep their poison.
#include <cstdint>
#include <vector>

#include "catch.hpp"
#include "common/ragged_rows.hpp"

using fp8gemm::kRaggedMaxRows;
using fp8gemm::ragged_row_coords;
using fp8gemm::ragged_rows_layout;

namespace {
/// What TMA computes for element (col 0, row) of a box at (rel_row, bound, wrap): the byte offset
/// from the base (unsigned 64-bit, wrapping) and whether every coordinate is inside its dimension.
struct Access {
  std::uint64_t offset;
  bool in_bounds;
};
Access access(std::uint64_t row_stride_bytes, int row, int row_end) {
  const auto L = ragged_rows_layout(row_stride_bytes);
  const auto c = ragged_row_coords(row, row_end);
  const std::int64_t coord[3] = {c.rel_row, c.bound, c.wrap};
  std::uint64_t offset = 0;
  bool in = true;
  for (int i = 0; i < 3; ++i) {
    offset += std::uint64_t(coord[i]) * L.stride_bytes[i];  // wraps modulo 2^64, as TMA's does
    in = in && coord[i] >= 0 && std::uint64_t(coord[i]) < L.dim[i];
  }
  return {offset, in};
}
}  // namespace

TEST_CASE("ragged rows: a box row lands at row x stride, written only before the bound",
          "[ragged][cpu]") {
  for (std::uint64_t stride : {16ull, 8192ull, 14336ull, 65536ull, (1ull << 33) - 16}) {
    for (int row_end : {0, 1, 127, 128, 129, 4096, 1 << 20, int(kRaggedMaxRows)}) {
      for (int back : {1, 2, 64, 1000, 1 << 22}) {  // rows before the bound
        const int row = row_end - back;
        if (row < 0) continue;
        CAPTURE(stride, row_end, row);
        const Access a = access(stride, row, row_end);
        CHECK(a.offset == std::uint64_t(row) * stride);
        CHECK(a.in_bounds);
      }
      for (int past : {0, 1, 63, 1 << 22}) {  // rows at or after it
        const std::int64_t row = std::int64_t(row_end) + past;
        if (row > kRaggedMaxRows) continue;
        CAPTURE(stride, row_end, row);
        CHECK_FALSE(access(stride, int(row), row_end).in_bounds);
      }
    }
  }
}

TEST_CASE("ragged rows: the strides obey TMA's rules", "[ragged][cpu]") {
  for (std::uint64_t stride : {16ull, 14336ull, (1ull << 33) - 16}) {
    const auto L = ragged_rows_layout(stride);
    for (int i = 0; i < 3; ++i) {
      CHECK(L.stride_bytes[i] % 16 == 0);
      CHECK(L.stride_bytes[i] < (std::uint64_t(1) << 40));
      CHECK(L.dim[i] >= 1);
      CHECK(L.dim[i] <= (std::uint64_t(1) << 32));
    }
  }
}
