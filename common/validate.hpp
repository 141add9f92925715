// Host-side argument validation for a GEMM call. Pure C++ (no CUDA call), so every rule is
// testable on a machine without a GPU. Violations throw std::invalid_argument with a message
// that names the caller, the argument, the rule and the value, e.g.
//   "fp8gemm::ch03_mma_sync: K = 100 must be a multiple of 16 (the kernel reads A and B in
//    16-byte vectors along K)".
#pragma once

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <string>

#include "common/scale_layout.hpp"
#include "common/scaling.hpp"

namespace fp8gemm {

/// Everything a GEMM call receives. A is M x K row-major with leading dimension lda (elements),
/// B is N x K row-major with ldb, D is M x N row-major with ldd. Scale pointers follow the
/// recipes in scaling.hpp; *_count is the number of scale elements the caller allocated, or -1
/// when unknown (then only the pointer is checked).
struct GemmArgs {
  std::int64_t M = 0, N = 0, K = 0;
  const void* A = nullptr;
  std::int64_t lda = 0;
  const void* B = nullptr;
  std::int64_t ldb = 0;
  /// Rows of B the kernel may read, from B: -1 means N (every chapter but one). Chapter 8's
  /// grouped forward reads the G experts' weights stacked, [G, N, K] = G N rows, and one tensor
  /// map over all of them; saying so here makes the extent checks (64-bit offsets, D overlapping
  /// B, the memory behind B) and the engine's map of B cover every group, not the first.
  std::int64_t b_rows = -1;
  const void* D = nullptr;
  std::int64_t ldd = 0;
  /// Rows of D the kernel may write, from D: -1 means M. Chapter 8's weight gradient writes G
  /// matrices dB_g of N rows one after another (M = N, one group, in the engine's terms): G N
  /// rows. The extent checks (64-bit offsets, D overlapping an input, the memory behind D) then
  /// cover every group's rows.
  std::int64_t d_rows = -1;
  const void* scale_a = nullptr;
  const void* scale_b = nullptr;
  ScaleRecipe recipe_a = ScaleRecipe::per_tensor;
  ScaleRecipe recipe_b = ScaleRecipe::per_tensor;
  std::int64_t scale_a_count = -1;
  std::int64_t scale_b_count = -1;
  /// 4-byte words of the scale tensors the kernel reads, where the recipe's packed size
  /// (scaling.hpp) does not say it: a strided layout (chapter 7's scale_layout.hpp, and chapter 8's
  /// weight gradient, whose scales run along the tokens), or chapter 9's MX scales, whole 512-byte
  /// tiles of one-byte codes (bytes / 4, mx_gemm.cpp); -1: the recipe's packed size;
  /// kScaleExtentOverflow (-2): the layout's span passes 64-bit byte offsets (refused). Used for
  /// the extent and overlap checks (gemm_extents() multiplies it by 4).
  std::int64_t scale_a_extent = -1;
  std::int64_t scale_b_extent = -1;
  /// Bytes per element of D: 2 (bf16) or 4 (float: chapter 7's FP32 output and its split-K,
  /// chapter 8's FP32 weight gradient, the library's per-tensor FP32 D). D must be aligned to it
  /// (and to the kernel's output_alignment), and every extent of D counts it.
  std::int64_t d_element_bytes = 2;
};

/// The rows of B a call reads: args.b_rows, or N when it is -1.
inline std::int64_t b_rows_of(const GemmArgs& args) { return args.b_rows >= 0 ? args.b_rows : args.N; }
/// The rows of D a call writes: args.d_rows, or M when it is -1.
inline std::int64_t d_rows_of(const GemmArgs& args) { return args.d_rows >= 0 ? args.d_rows : args.M; }

/// Packed (lda = ldb = K, ldd = N) per-tensor arguments, the form every chapter takes.
GemmArgs packed_per_tensor(std::int64_t M, std::int64_t N, std::int64_t K, const void* A,
                           const void* B, const void* D, const float* scale_a,
                           const float* scale_b);

/// A DeepSeek-V3 block-scaled call (A in 1 x 128 groups, B in 128 x 128 blocks) with the strided
/// scale layouts of scale_layout.hpp, from chapter 7's BlockScaledGemm or chapter 8's GroupedGemm
/// (their fields N, K, A, lda, B, ldb, D, ldd, scale_a, scale_b, scale_a_layout, scale_b_layout):
/// M rows of A and D; the scale extents for M rows of A and `b_rows` rows of B (N, or chapter 8's
/// G N rows each padded to 128), left at -1 while M, N or K is < 1.
template <class Call>
GemmArgs block_scaled_args(const Call& g, std::int64_t M, std::int64_t b_rows) {
  GemmArgs args{.M = M,
                .N = g.N,
                .K = g.K,
                .A = g.A,
                .lda = g.lda,
                .B = g.B,
                .ldb = g.ldb,
                .D = g.D,
                .ldd = g.ldd,
                .scale_a = g.scale_a,
                .scale_b = g.scale_b,
                .recipe_a = ScaleRecipe::group_1x128,
                .recipe_b = ScaleRecipe::block_128x128};
  if (M >= 1 && g.N >= 1 && g.K >= 1) {
    args.scale_a_extent = scale_extent(g.scale_a_layout, M, g.K);
    args.scale_b_extent = scale_extent(g.scale_b_layout, b_rows, g.K);
  }
  return args;
}

/// What a particular kernel needs beyond the basic rules.
struct GemmRequirements {
  const char* who = "fp8gemm";         ///< named at the start of every message
  std::int64_t k_multiple = 1;         ///< K must be a multiple of this
  const char* k_reason = "";           ///< why (ends the message)
  std::int64_t m_multiple = 1, n_multiple = 1;
  const char* mn_reason = "";
  std::size_t operand_alignment = 1;   ///< bytes, for A and B (and lda/ldb in bytes)
  std::size_t output_alignment = 2;    ///< bytes, for D (and ldd * its element's bytes); never
                                       ///< less than 2 (bf16's own alignment), nor than D's
                                       ///< element (4 for FP32 D), whatever is asked here
  std::size_t scale_alignment = 4;     ///< bytes, for scale pointers
  bool packed_only = false;            ///< lda == K, ldb == K, ldd == N required
  /// lda and ldb in bytes must be below this (0: no limit): the engine reads A and B by TMA,
  /// whose global strides are < 2^40 bytes (cuTensorMapEncodeTiled), so a larger one is refused
  /// here by its name rather than by the tensor map's builder.
  std::int64_t operand_stride_limit_bytes = 0;
  std::int64_t max_dim = (std::int64_t(1) << 31) - 1;  ///< M, N, K each at most this
  ScaleRecipe recipe_a = ScaleRecipe::per_tensor;  ///< the recipes the kernel implements
  ScaleRecipe recipe_b = ScaleRecipe::per_tensor;
};

/// Checks args against the universal rules (M, N, K >= 1; non-null pointers; D aligned to its
/// element, 2 or 4 bytes, and to req.output_alignment; leading dimensions >= the row length; no
/// overflow of 64-bit byte offsets; D's bytes overlap none of A, B, scale_a, scale_b) and against
/// req. Throws std::invalid_argument on the first violation. Pure C++: no CUDA call (the memory
/// behind the pointers is check_gemm_pointers()'s job, launch.hpp).
void validate_gemm(const GemmArgs& args, const GemmRequirements& req);

/// Checks that D's bytes (gemm_extents(args).d from args.D) share none with [p, p + bytes), a
/// further input the kernel reads while it writes D (chapter 8's group offsets or masked_m),
/// named `name` in the message; throws std::invalid_argument as validate_gemm() does. Pure C++.
void validate_disjoint_from_d(const GemmArgs& args, const void* p, std::size_t bytes,
                              const char* name, const GemmRequirements& req);

/// A further buffer of a call, by its bytes and its name in messages.
struct NamedBytes {
  const void* pointer;
  std::size_t bytes;
  const char* name;
};

/// Checks that [p, p + bytes), memory a kernel writes besides D (chapter 8's tile counter), shares
/// no byte with A, B, D, scale_a or scale_b (their gemm_extents()) nor with any of `also` (further
/// inputs: chapter 8's offsets), naming `name` and the other in the message; throws
/// std::invalid_argument as validate_gemm() does. Pure C++.
void validate_disjoint_from_operands(const GemmArgs& args, const void* p, std::size_t bytes,
                                     const char* name, const GemmRequirements& req,
                                     std::initializer_list<NamedBytes> also = {});

/// How many bytes each operand of a call spans from its pointer: A (M - 1) lda + K,
/// B (b_rows_of(args) - 1) ldb + K, D ((d_rows_of(args) - 1) ldd + N) * d_element_bytes, each
/// scale its layout's extent (scale_*_extent) when given, else scale_count(recipe, rows, K), times 4.
/// Meaningful (no overflow) once validate_gemm() has accepted the call.
struct GemmExtents {
  std::size_t a = 0, b = 0, d = 0, scale_a = 0, scale_b = 0;
};
GemmExtents gemm_extents(const GemmArgs& args);

/// The one-dimensional grid of block_m x block_n output tiles over an M x N D, counted in 64-bit
/// arithmetic (M, N up to 2^31 - 1 cannot overflow it). The kernels receive tiles_m and tiles_n
/// from here instead of computing (N + block_n - 1) / block_n in 32-bit int.
struct TileGrid {
  std::int64_t tiles_m = 0, tiles_n = 0;
  std::int64_t blocks = 0;  ///< tiles_m * tiles_n, at most 2^31 - 1
};

/// The grid for an M x N D; throws std::invalid_argument naming `who` if the grid needs more than
/// 2^31 - 1 blocks (the grid's x limit; blockIdx.x is a 32-bit unsigned int).
TileGrid tile_grid(std::int64_t M, std::int64_t N, std::int64_t block_m, std::int64_t block_n,
                   const char* who);

/// tile_grid(...).blocks: the number of thread blocks of the one-dimensional grid.
std::int64_t grid_tiles(std::int64_t M, std::int64_t N, std::int64_t block_m,
                        std::int64_t block_n, const char* who);

}  // namespace fp8gemm
