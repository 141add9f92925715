// Where the DeepSeek-V3 block scales of an operand live in memory, with strides: the layouts
// users have (chapter 7, the quantisers, chapter 10's API).
//
//   1 x 128 groups (activations, A; also the transposed operands of backward passes): one float
//   per row and per 128 K-elements, g = k / 128, k_groups = ceil(K / 128):
//     mn-major: offset(r, g) = g * ld + r, ld >= rows (rows contiguous). DeepGEMM's layout with
//               ld = round_up(rows, 4) ("TMA-aligned": each g-row starts on 16 bytes); cuBLASLt's
//               VEC128_32F with ld = rows. The chapter-7 kernel reads this one with TMA.
//     k-major:  offset(r, g) = r * ld + g, ld >= k_groups (the natural [rows][k_groups] array).
//   128 x 128 blocks (weights, B): one float per 128 x 128 block, k-major,
//     offset(i, j) = i * ld + j, i = n / 128, j = k / 128, ld >= k_groups. cuBLASLt's
//     BLK128x128_32F needs ld a multiple of 4 (scaling.hpp: Block128x128); DeepGEMM's is
//     unpadded (ld = k_groups).
#pragma once

#include <cstdint>
#include <string>

#include "common/scaling.hpp"

namespace fp8gemm {

/// The storage order of a 1 x 128 group-scale tensor.
enum class ScaleMajor : int {
  mn = 0,  ///< [k_groups][ld], rows contiguous
  k = 1,   ///< [rows][ld], groups contiguous
};

inline const char* to_string(ScaleMajor m) { return m == ScaleMajor::mn ? "mn-major" : "k-major"; }

/// A 1 x 128 group-scale layout: major order and leading dimension (elements).
struct GroupScaleLayout {
  ScaleMajor major = ScaleMajor::mn;
  std::int64_t ld = 0;

  /// mn-major with ld = round_up(rows, 4): every g-row 16-byte aligned (DeepGEMM's; what the
  /// chapter-7 kernel loads with TMA without a conversion).
  static GroupScaleLayout mn_major_tma_aligned(std::int64_t rows) {
    return {ScaleMajor::mn, round_up(rows, 4)};
  }
  /// mn-major with ld = rows (cuBLASLt's VEC128_32F; scaling.hpp's Group1x128).
  static GroupScaleLayout mn_major_packed(std::int64_t rows) { return {ScaleMajor::mn, rows}; }
  /// k-major with ld = ceil(K / 128) (the natural [rows][k_groups] array).
  static GroupScaleLayout k_major_packed(std::int64_t K) { return {ScaleMajor::k, ceil_div(K, 128)}; }

  FP8GEMM_HD constexpr std::int64_t offset(std::int64_t r, std::int64_t g) const {
    return major == ScaleMajor::mn ? g * ld + r : r * ld + g;
  }
  /// Elements a buffer must hold for rows x K (the last g-row or row need not be padded).
  FP8GEMM_HD constexpr std::int64_t required_elements(std::int64_t rows, std::int64_t K) const {
    const std::int64_t groups = ceil_div(K, 128);
    return major == ScaleMajor::mn ? (groups - 1) * ld + rows : (rows - 1) * ld + groups;
  }
  /// Whether ld is large enough for rows x K.
  FP8GEMM_HD constexpr bool ld_ok(std::int64_t rows, std::int64_t K) const {
    return major == ScaleMajor::mn ? ld >= rows : ld >= ceil_div(K, 128);
  }
};

/// A 128 x 128 block-scale layout (k-major): offset(i, j) = i * ld + j.
struct BlockScaleLayout {
  std::int64_t ld = 0;  ///< >= ceil(K / 128)
  /// ld = round_up(ceil(K / 128), 4): cuBLASLt's BLK128x128_32F (scaling.hpp's Block128x128).
  static BlockScaleLayout padded(std::int64_t K) { return {round_up(ceil_div(K, 128), 4)}; }
  /// ld = ceil(K / 128): DeepGEMM's.
  static BlockScaleLayout packed(std::int64_t K) { return {ceil_div(K, 128)}; }
  FP8GEMM_HD constexpr std::int64_t offset(std::int64_t i, std::int64_t j) const { return i * ld + j; }
  FP8GEMM_HD constexpr std::int64_t required_elements(std::int64_t rows, std::int64_t K) const {
    return (ceil_div(rows, 128) - 1) * ld + ceil_div(K, 128);
  }
};

/// The largest ld (floats) of a 1 x 128 scale tensor that a kernel reads by TMA as it is: a tensor
/// map's row stride, ld x 4 bytes, must be below 2^40 bytes (cuTensorMapEncodeTiled). Chapter 7
/// converts a layout past it; chapter 8's plans refuse it by name.
inline constexpr std::int64_t kMaxTmaScaleLd = (std::int64_t(1) << 38) - 1;

/// What scale_extent() returns for a layout whose span does not fit 64-bit byte offsets.
inline constexpr std::int64_t kScaleExtentOverflow = -2;

/// (lines - 1) * ld + tail floats, or kScaleExtentOverflow where that many bytes would pass
/// 64-bit offsets (the layouts bound ld from below only; scaling.hpp, strided_bytes).
inline std::int64_t strided_scale_extent(std::int64_t lines, std::int64_t ld, std::int64_t tail) {
  std::int64_t bytes = 0;
  return strided_bytes(lines, ld, tail, 4, bytes) ? bytes / 4 : kScaleExtentOverflow;
}
/// layout.required_elements(rows, K), or kScaleExtentOverflow (validate_gemm refuses it by name).
inline std::int64_t scale_extent(const GroupScaleLayout& L, std::int64_t rows, std::int64_t K) {
  return L.major == ScaleMajor::mn ? strided_scale_extent(ceil_div(K, 128), L.ld, rows)
                                   : strided_scale_extent(rows, L.ld, ceil_div(K, 128));
}
inline std::int64_t scale_extent(const BlockScaleLayout& L, std::int64_t rows, std::int64_t K) {
  return strided_scale_extent(ceil_div(rows, 128), L.ld, ceil_div(K, 128));
}

/// "mn-major, ld 4100 (>= M = 4097)" — for error messages.
std::string describe(const GroupScaleLayout& layout);

}  // namespace fp8gemm
