#include "common/tensor_map.hpp"

#include <cudaTypedefs.h>  // PFN_cuTensorMapEncodeTiled_v12000, _ReplaceAddress_v12000, ...
#include <cuda_runtime.h>

#include <stdexcept>
#include <string>

#include "common/launch.hpp"
#include "common/ragged_rows.hpp"

namespace fp8gemm {

namespace {

std::string cu_result_name(CUresult r) {
  const char* name = nullptr;
  try {
    auto get_name = reinterpret_cast<PFN_cuGetErrorName_v6000>(
        driver_function("cuGetErrorName", 6000));
    if (get_name(r, &name) != CUDA_SUCCESS) name = nullptr;
  } catch (const std::runtime_error&) {
    name = nullptr;
  }
  return (name ? std::string(name) : std::string("CUresult")) + " (" + std::to_string(int(r)) +
         ")";
}

std::size_t dtype_bytes(CUtensorMapDataType dtype) {
  switch (dtype) {
    case CU_TENSOR_MAP_DATA_TYPE_UINT8: return 1;
    case CU_TENSOR_MAP_DATA_TYPE_UINT16:
    case CU_TENSOR_MAP_DATA_TYPE_FLOAT16:
    case CU_TENSOR_MAP_DATA_TYPE_BFLOAT16: return 2;
    case CU_TENSOR_MAP_DATA_TYPE_UINT32:
    case CU_TENSOR_MAP_DATA_TYPE_INT32:
    case CU_TENSOR_MAP_DATA_TYPE_FLOAT32:
    case CU_TENSOR_MAP_DATA_TYPE_FLOAT32_FTZ:
    case CU_TENSOR_MAP_DATA_TYPE_TFLOAT32:
    case CU_TENSOR_MAP_DATA_TYPE_TFLOAT32_FTZ: return 4;
    case CU_TENSOR_MAP_DATA_TYPE_UINT64:
    case CU_TENSOR_MAP_DATA_TYPE_INT64:
    case CU_TENSOR_MAP_DATA_TYPE_FLOAT64: return 8;
    default: return 0;  // sub-byte and packed types: not checked here
  }
}

}  // namespace

CUtensorMapSwizzle swizzle_of_span(int bytes) {
  switch (bytes) {
    case 0: return CU_TENSOR_MAP_SWIZZLE_NONE;
    case 32: return CU_TENSOR_MAP_SWIZZLE_32B;
    case 64: return CU_TENSOR_MAP_SWIZZLE_64B;
    default: return CU_TENSOR_MAP_SWIZZLE_128B;
  }
}

namespace {

/// The span of one swizzle row in bytes (0: no swizzle; -1: a mode these helpers do not
/// support). A box row must not be wider.
int swizzle_span_bytes(CUtensorMapSwizzle swizzle) {
  switch (swizzle) {
    case CU_TENSOR_MAP_SWIZZLE_NONE: return 0;
    case CU_TENSOR_MAP_SWIZZLE_32B: return 32;
    case CU_TENSOR_MAP_SWIZZLE_64B: return 64;
    case CU_TENSOR_MAP_SWIZZLE_128B: return 128;
    default: return -1;
  }
}

/// make_tensor_map_2d / _3d / _ragged_rows: `planes` = 1 and rank 2, rank 3 with planes
/// `plane_stride_elements` apart, or rank 4: the ragged-rows view of the 2-D matrix
/// (common/ragged_rows.hpp).
CUtensorMap make_tensor_map(const char* who, int rank, const void* base, CUtensorMapDataType dtype,
                            std::size_t element_bytes, std::uint64_t planes, std::uint64_t rows,
                            std::uint64_t cols, std::uint64_t row_stride_elements,
                            std::uint64_t plane_stride_elements, std::uint32_t box_rows,
                            std::uint32_t box_cols, CUtensorMapSwizzle swizzle) {
  auto bad = [who](const std::string& what) {
    throw std::invalid_argument(std::string("fp8gemm::") + who + ": " + what);
  };
  // The rules of cuTensorMapEncodeTiled (CUDA driver API, "Tensor Map Object Management"),
  // checked here so that a bad call names its argument instead of returning INVALID_VALUE.
  if (base == nullptr) bad("base is a null pointer");
  if (reinterpret_cast<std::uintptr_t>(base) % 16 != 0)
    bad("base must be 16-byte aligned (TMA global address rule)");
  const std::size_t dtype_size = dtype_bytes(dtype);
  if (element_bytes == 0 || (dtype_size != 0 && dtype_size != element_bytes))
    bad("element_bytes = " + std::to_string(element_bytes) + " does not match dtype " +
        std::to_string(int(dtype)) + " (" + std::to_string(dtype_size) + " bytes)");
  constexpr std::uint64_t kMaxDim = std::uint64_t(1) << 32;
  if (rows < 1 || rows > kMaxDim)
    bad("rows = " + std::to_string(rows) + " must be in [1, 2^32]");
  if (cols < 1 || cols > kMaxDim)
    bad("cols = " + std::to_string(cols) + " must be in [1, 2^32]");
  if (planes < 1 || planes > kMaxDim)
    bad("planes = " + std::to_string(planes) + " must be in [1, 2^32]");
  if (row_stride_elements < cols)
    bad("row_stride_elements = " + std::to_string(row_stride_elements) + " must be >= cols = " +
        std::to_string(cols));
  const std::uint64_t stride_bytes = row_stride_elements * element_bytes;
  if (stride_bytes % 16 != 0)
    bad("row stride = " + std::to_string(stride_bytes) +
        " bytes must be a multiple of 16 (TMA global stride rule)");
  if (stride_bytes >= (std::uint64_t(1) << 40))
    bad("row stride = " + std::to_string(stride_bytes) + " bytes must be < 2^40");
  const std::uint64_t plane_bytes = plane_stride_elements * element_bytes;
  if (rank == 4) {
    if (rows > std::uint64_t(kRaggedMaxRows))
      bad("rows = " + std::to_string(rows) + " exceeds the 2^30 rows of the ragged-rows view");
    if (stride_bytes >= std::uint64_t(kRaggedMaxStrideBytes))
      bad("row stride = " + std::to_string(stride_bytes) +
          " bytes must be < 2^34 in the ragged-rows view");
  }
  if (rank == 3) {
    if (plane_stride_elements < rows * row_stride_elements)
      bad("plane_stride_elements = " + std::to_string(plane_stride_elements) +
          " must be >= rows x row_stride_elements = " + std::to_string(rows * row_stride_elements));
    if (plane_bytes % 16 != 0)
      bad("plane stride = " + std::to_string(plane_bytes) +
          " bytes must be a multiple of 16 (TMA global stride rule)");
    if (plane_bytes >= (std::uint64_t(1) << 40))
      bad("plane stride = " + std::to_string(plane_bytes) + " bytes must be < 2^40");
  }
  if (box_rows < 1 || box_rows > 256)
    bad("box_rows = " + std::to_string(box_rows) + " must be in [1, 256]");
  if (box_cols < 1 || box_cols > 256)
    bad("box_cols = " + std::to_string(box_cols) + " must be in [1, 256]");
  const std::uint64_t box_row_bytes = std::uint64_t(box_cols) * element_bytes;
  if (box_row_bytes % 16 != 0)
    bad("box_cols * element_bytes = " + std::to_string(box_row_bytes) +
        " must be a multiple of 16 bytes");
  const int span = swizzle_span_bytes(swizzle);
  if (span < 0)
    bad("swizzle = " + std::to_string(int(swizzle)) +
        " is not one of NONE, 32B, 64B, 128B (the modes this helper supports)");
  if (span != 0 && box_row_bytes > std::uint64_t(span))
    bad("a box row of " + std::to_string(box_row_bytes) + " bytes is wider than the " +
        std::to_string(span) + "-byte swizzle span (box_cols * element_bytes <= span)");

  static const auto encode = reinterpret_cast<PFN_cuTensorMapEncodeTiled_v12000>(
      driver_function("cuTensorMapEncodeTiled", 12000));
  // A worker thread's first call may come here before any runtime call made a context current;
  // the driver would answer CUDA_ERROR_INVALID_CONTEXT.
  ensure_context_current();

  CUtensorMap map{};
  cuuint64_t global_dim[4] = {cols, rows, planes, 1};              // innermost first
  cuuint64_t global_stride[3] = {stride_bytes, plane_bytes, 0};    // bytes, dimensions 1.. only
  const cuuint32_t box_dim[4] = {box_cols, box_rows, 1, 1};
  const cuuint32_t element_stride[4] = {1, 1, 1, 1};               // dense boxes
  if (rank == 4) {
    const RaggedRowsLayout L = ragged_rows_layout(stride_bytes);
    for (int i = 0; i < 3; ++i) {
      global_dim[i + 1] = L.dim[i];
      global_stride[i] = L.stride_bytes[i];
    }
  }
  const CUresult r = encode(&map, dtype, cuuint32_t(rank), const_cast<void*>(base), global_dim,
                            global_stride, box_dim, element_stride, CU_TENSOR_MAP_INTERLEAVE_NONE,
                            swizzle, CU_TENSOR_MAP_L2_PROMOTION_L2_256B,
                            CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);  // NONE = fill with zeros
  if (r != CUDA_SUCCESS)
    throw std::runtime_error(std::string("fp8gemm::") + who +
                             ": cuTensorMapEncodeTiled failed: " + cu_result_name(r) + " (rows " +
                             std::to_string(rows) + ", cols " + std::to_string(cols) +
                             (rank == 3 ? ", planes " + std::to_string(planes) : std::string()) +
                             ", stride " + std::to_string(stride_bytes) + " B, box " +
                             std::to_string(box_rows) + " x " + std::to_string(box_cols) + ")");
  return map;
}

}  // namespace

CUtensorMap make_tensor_map_2d(const void* base, CUtensorMapDataType dtype,
                               std::size_t element_bytes, std::uint64_t rows, std::uint64_t cols,
                               std::uint64_t row_stride_elements, std::uint32_t box_rows,
                               std::uint32_t box_cols, CUtensorMapSwizzle swizzle) {
  return make_tensor_map("make_tensor_map_2d", 2, base, dtype, element_bytes, 1, rows, cols,
                         row_stride_elements, 0, box_rows, box_cols, swizzle);
}

CUtensorMap make_tensor_map_3d(const void* base, CUtensorMapDataType dtype,
                               std::size_t element_bytes, std::uint64_t planes, std::uint64_t rows,
                               std::uint64_t cols, std::uint64_t row_stride_elements,
                               std::uint64_t plane_stride_elements, std::uint32_t box_rows,
                               std::uint32_t box_cols, CUtensorMapSwizzle swizzle) {
  return make_tensor_map("make_tensor_map_3d", 3, base, dtype, element_bytes, planes, rows, cols,
                         row_stride_elements, plane_stride_elements, box_rows, box_cols, swizzle);
}

CUtensorMap make_tensor_map_ragged_rows(const void* base, CUtensorMapDataType dtype,
                                        std::size_t element_bytes, std::uint64_t rows,
                                        std::uint64_t cols, std::uint64_t row_stride_elements,
                                        std::uint32_t box_rows, std::uint32_t box_cols,
                                        CUtensorMapSwizzle swizzle) {
  return make_tensor_map("make_tensor_map_ragged_rows", 4, base, dtype, element_bytes, 1, rows,
                         cols, row_stride_elements, 0, box_rows, box_cols, swizzle);
}

void replace_tensor_map_address(CUtensorMap& map, const void* base) {
  if (base == nullptr)
    throw std::invalid_argument("fp8gemm::replace_tensor_map_address: base is a null pointer");
  if (reinterpret_cast<std::uintptr_t>(base) % 16 != 0)
    throw std::invalid_argument(
        "fp8gemm::replace_tensor_map_address: base must be 16-byte aligned (TMA global address "
        "rule)");
  static const auto replace = reinterpret_cast<PFN_cuTensorMapReplaceAddress_v12000>(
      driver_function("cuTensorMapReplaceAddress", 12000));
  CUtensorMap next = map;  // the caller's map stays as it was if the driver refuses
  CUresult r = replace(&next, const_cast<void*>(base));
  if (r == CUDA_ERROR_INVALID_CONTEXT) {  // a worker thread with no context current yet
    ensure_context_current();
    r = replace(&next, const_cast<void*>(base));
  }
  if (r != CUDA_SUCCESS)
    throw std::runtime_error(
        "fp8gemm::replace_tensor_map_address: cuTensorMapReplaceAddress failed: " +
        cu_result_name(r));
  map = next;
}

}  // namespace fp8gemm
