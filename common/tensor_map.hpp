// TMA tensor maps (CUtensorMap) for 2-D row-major tensors, made on the host.
// The map is what cp.async.bulk.tensor (common/ptx/tma.cuh) reads: base address, sizes, strides,
// the box (the tile one copy moves), the shared-memory swizzle, the out-of-bounds fill and the L2
// promotion. It is encoded by the driver's cuTensorMapEncodeTiled, reached through the runtime's
// driver entry point, so nothing links against libcuda at build time.
#pragma once

#include <cuda.h>

#include <cstddef>
#include <cstdint>

namespace fp8gemm {

/// A map of the 2-D row-major tensor at `base`: `rows` x `cols` elements of `element_bytes` each,
/// `cols` contiguous, rows `row_stride_elements` apart. One copy moves a box of `box_rows` x
/// `box_cols` elements, laid out in shared memory with `swizzle`. Out-of-bounds elements of a
/// box read as zero; L2 promotion is 256 bytes.
///
/// Throws std::invalid_argument when the arguments break a TMA rule (null or non-16-byte-aligned
/// base, a row stride that is not a multiple of 16 bytes or is shorter than a row, a box side of
/// 0 or > 256, a box row of more bytes than the swizzle span, sizes beyond 2^32 ...), naming the
/// argument; std::runtime_error naming the CUresult when the driver entry point is missing or the
/// driver refuses the map.
CUtensorMap make_tensor_map_2d(const void* base, CUtensorMapDataType dtype,
                               std::size_t element_bytes, std::uint64_t rows, std::uint64_t cols,
                               std::uint64_t row_stride_elements, std::uint32_t box_rows,
                               std::uint32_t box_cols, CUtensorMapSwizzle swizzle);

/// A map of a 3-D tensor at `base`: `planes` matrices of `rows` x `cols` elements (`cols`
/// contiguous), rows `row_stride_elements` apart, planes `plane_stride_elements` apart; a box is
/// `box_rows` x `box_cols` of one plane, so TMA clips it at its own plane's last row (chapter 8's
/// weight gradient: dB's G matrices). The same rules and errors as make_tensor_map_2d, plus:
/// plane_stride_elements >= rows x row_stride_elements, a multiple of 16 bytes.
CUtensorMap make_tensor_map_3d(const void* base, CUtensorMapDataType dtype,
                               std::size_t element_bytes, std::uint64_t planes, std::uint64_t rows,
                               std::uint64_t cols, std::uint64_t row_stride_elements,
                               std::uint64_t plane_stride_elements, std::uint32_t box_rows,
                               std::uint32_t box_cols, CUtensorMapSwizzle swizzle);

/// The ragged-rows view of the 2-D matrix of make_tensor_map_2d (common/ragged_rows.hpp): a 4-D
/// map whose stores take, with each box, a row bound past which its rows are not written
/// (ptx::tma_store_4d at ragged_row_coords(row, row_end)). The same rules and errors as
/// make_tensor_map_2d, plus: rows <= 2^30, the row stride < 2^34 bytes.
CUtensorMap make_tensor_map_ragged_rows(const void* base, CUtensorMapDataType dtype,
                                        std::size_t element_bytes, std::uint64_t rows,
                                        std::uint64_t cols, std::uint64_t row_stride_elements,
                                        std::uint32_t box_rows, std::uint32_t box_cols,
                                        CUtensorMapSwizzle swizzle);

/// The swizzle mode of a span of `bytes` (0: none; 32, 64, 128; anything else: 128B), e.g. a
/// kernel's epilogue staging unit (KernelInfo::epi_swizzle_bytes).
CUtensorMapSwizzle swizzle_of_span(int bytes);

/// Points `map` at a tensor at `base` with everything else unchanged (sizes, strides, box,
/// swizzle): the driver's cuTensorMapReplaceAddress, a host-only rewrite of the map's address
/// field, far cheaper than encoding a new map. Throws std::invalid_argument for a null or
/// non-16-byte-aligned `base` (TMA's rule; `map` untouched), std::runtime_error naming the
/// CUresult when the driver refuses.
void replace_tensor_map_address(CUtensorMap& map, const void* base);

}  // namespace fp8gemm
