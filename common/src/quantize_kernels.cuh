// Private to the quantiser kernels (common/src/quantize_gpu.cu, common/src/quantize_grouped_gpu.cu,
// common/src/quantize_mx_gpu.cu, common/src/requantize_mx_gpu.cu; not installed): the host-side
// argument checks they share and the device primitives their kernels are built from. Public API
// and numerics: common/quantize_gpu.hpp.
#pragma once

#include <cuda_fp16.h>
#include <cuda_fp8.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <initializer_list>
#include <map>
#include <mutex>
#include <stdexcept>
#include <string>
#include <utility>

#include "common/cuda.hpp"
#include "common/launch.hpp"
#include "common/ptx/smem.cuh"
#include "common/quantize_gpu.hpp"
#include "common/scale_layout.hpp"

namespace fp8gemm::quantize_detail {

// ====================================== host-side checks ==========================================

[[noreturn]] inline void fail(const char* who, const std::string& what) {
  throw std::invalid_argument(std::string("fp8gemm::") + who + ": " + what);
}

inline void require_pointer(const char* who, const char* name, const void* p,
                            std::size_t alignment, const char* element) {
  if (p == nullptr) fail(who, std::string(name) + " is a null pointer");
  const auto a = reinterpret_cast<std::uintptr_t>(p);
  if (a % alignment != 0)
    fail(who, std::string(name) + " = 0x" + [&] {
           char b[32];
           std::snprintf(b, sizeof b, "%llx", static_cast<unsigned long long>(a));
           return std::string(b);
         }() + " must be " + std::to_string(alignment) + "-byte aligned (" + element + ")");
}

inline void require_positive(const char* who, const char* name, std::int64_t v) {
  if (v < 1) fail(who, std::string(name) + " = " + std::to_string(v) + " must be >= 1");
}

/// v >= 1 and a multiple of 32 (an MXFP8 dimension: one UE8M0 scale per 1 x 32 block); `why`
/// ends the message.
inline void require_mx_multiple(const char* who, const char* name, std::int64_t v,
                                const char* why) {
  require_positive(who, name, v);
  if (v % kMxBlock != 0)
    fail(who, std::string(name) + " = " + std::to_string(v) + " must be a multiple of 32 (" + why +
                  ")");
}

inline void require_ld(const char* who, const char* name, std::int64_t ld,
                       const char* cols_name, std::int64_t cols) {
  if (ld < cols)
    fail(who, std::string(name) + " = " + std::to_string(ld) + " must be >= " + cols_name +
                  " = " + std::to_string(cols) + " (row-major, leading dimension in elements)");
}

/// Bytes from the pointer to one past the last element touched: ((rows - 1) ld + cols) * bytes,
/// refused when it overflows 64 bits.
inline std::uint64_t extent_bytes(const char* who, const char* name, std::int64_t rows,
                                  std::int64_t ld, std::int64_t cols,
                                  std::int64_t element_bytes) {
  std::int64_t e = 0;
  if (!strided_bytes(rows, ld, cols, element_bytes, e))
    fail(who, std::string(name) + ": (rows - 1) * ld + cols overflows 64-bit byte offsets (rows " +
                  std::to_string(rows) + ", ld " + std::to_string(ld) + ")");
  return static_cast<std::uint64_t>(e);
}

struct Range {
  const char* name;
  std::uintptr_t begin;
  std::uint64_t bytes;
};

/// Outputs must overlap nothing else (inputs or other outputs): the kernels read and write in
/// no particular order.
inline void require_disjoint(const char* who, std::initializer_list<Range> outputs,
                             std::initializer_list<Range> all) {
  for (const Range& o : outputs)
    for (const Range& a : all) {
      if (o.begin == a.begin && o.name == a.name) continue;  // itself
      if (o.begin < a.begin + a.bytes && a.begin < o.begin + o.bytes)
        fail(who, std::string(o.name) + " overlaps " + a.name +
                      " (the output must not share memory with another argument)");
    }
}

inline std::string describe_layout(const GroupScaleLayout& L) {
  return std::string(to_string(L.major)) + ", ld " + std::to_string(L.ld);
}

inline void require_group_layout(const char* who, const char* name, const GroupScaleLayout& L,
                                 std::int64_t rows, const char* rows_name, std::int64_t K,
                                 const char* k_name) {
  if (L.major != ScaleMajor::mn && L.major != ScaleMajor::k)
    fail(who, std::string(name) + ".major = " + std::to_string(int(L.major)) +
                  " is not a ScaleMajor");
  if (!L.ld_ok(rows, K)) {
    const std::string need =
        L.major == ScaleMajor::mn
            ? std::string(rows_name) + " = " + std::to_string(rows)
            : std::string("ceil(") + k_name + " / 128) = " + std::to_string(ceil_div(K, 128));
    fail(who, std::string(name) + " (" + describe_layout(L) + "): ld must be >= " + need);
  }
}

inline Range range(const char* name, const void* p, std::uint64_t bytes) {
  return {name, reinterpret_cast<std::uintptr_t>(p), bytes};
}

// ------------------------------------------------------------------------------------- host ----
inline bool aligned(const void* p, std::size_t a) {
  return reinterpret_cast<std::uintptr_t>(p) % a == 0;
}

/// Blocks for `work` units of `per_block`, at most 2^31 - 1 (the kernels loop over the rest).
inline unsigned grid_for(std::int64_t work, std::int64_t per_block) {
  return unsigned(std::min<std::int64_t>(ceil_div(work, per_block), 0x7FFFFFFF));
}

/// CTAs of `threads` threads that are resident at once on the whole device (per SM times SMs) for a
/// kernel with smem_bytes of dynamic shared memory: a host-side occupancy query, cached per kernel
/// and device (the persistent kernels size their grids with it).
inline int resident_ctas(const void* kernel, int threads, int smem_bytes) {
  static std::mutex mu;
  static std::map<std::pair<const void*, int>, int> cache;
  int device = 0;
  FP8GEMM_CUDA_CHECK(cudaGetDevice(&device));
  const std::lock_guard<std::mutex> lock(mu);
  const auto key = std::make_pair(kernel, device);
  if (const auto it = cache.find(key); it != cache.end()) return it->second;
  int per_sm = 0, sms = 0;
  FP8GEMM_CUDA_CHECK(
      cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, threads, smem_bytes));
  FP8GEMM_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
  const int n = std::max(1, per_sm) * sms;
  cache.emplace(key, n);
  return n;
}

/// A persistent grid for `work` units on at most `slots` CTAs: as few CTAs as give every CTA the
/// same number of units (+-1) in the same number of rounds. 3584 units on 396 slots take 10 rounds
/// either way, and 359 CTAs doing 9-10 units each leave no round with a handful of CTAs moving
/// few bytes.
inline std::int64_t balanced_grid(std::int64_t work, std::int64_t slots) {
  if (work <= 0) return 1;  // nothing to walk: one CTA that finds nothing (no division by 0)
  const std::int64_t n = std::max<std::int64_t>(1, std::min(work, slots));
  return ceil_div(work, ceil_div(work, n));
}

/// Steps 3-4 of common/launch.hpp's launch path for a quantiser kernel: the sm_90a image and the
/// dynamic shared-memory opt-in (smem bytes, once per kernel), then no earlier error pending.
inline void prepare(const void* kernel, const char* name, const char* who, int smem = 0) {
  prepare_kernel(kernel, name, "sm_90a", smem);
  require_no_pending_error(who);
}

// ========================================== device primitives =====================================
constexpr unsigned kAbsMask2 = 0x7FFF7FFFu;  // |x| of two bf16 in one word
constexpr unsigned kNonFinite = 0x7F80u;     // bf16 |x| bits >= this: +-Inf or NaN

/// Per-half maximum of |x| bits of the 8 bf16 in v.
__device__ __forceinline__ unsigned max_abs2(const uint4& v) {
  const unsigned a = __vmaxu2(v.x & kAbsMask2, v.y & kAbsMask2);
  const unsigned b = __vmaxu2(v.z & kAbsMask2, v.w & kAbsMask2);
  return __vmaxu2(a, b);
}
__device__ __forceinline__ unsigned fold2(unsigned m) { return max(m & 0xFFFFu, m >> 16); }

/// The group's scale from the maximum |x| bits (rules: quantize.hpp, scale_from_amax).
__device__ __forceinline__ float scale_from_bits(unsigned amax_bits, bool pow2) {
  return scale_from_amax(__uint_as_float(amax_bits << 16), pow2);
}

/// The values of two e4m3 codes (the low 16 bits of `pair`, the first code in the low byte),
/// exactly: e4m3 -> half is exact (cvt.rn.f16x2.e4m3x2), half -> float too. NaN codes give NaN.
__device__ __forceinline__ float2 e4m3x2_to_float2(unsigned pair) {
  return __half22float2(
      __half2(__nv_cvt_fp8x2_to_halfraw2(__nv_fp8x2_storage_t(pair & 0xFFFFu), __NV_E4M3)));
}

/// Two floats -> two e4m3 codes (lo in the low byte): round to nearest even, saturated.
__device__ __forceinline__ unsigned cvt_e4m3x2(float lo, float hi) {
  unsigned short r;
  asm("cvt.rn.satfinite.e4m3x2.f32 %0, %1, %2;" : "=h"(r) : "f"(hi), "f"(lo));
  return r;
}

using detail::ExactDivider;

/// x / scale, correctly rounded (detail::ExactDivider: Markstein's sequence when Fast).
template <bool Fast>
__device__ __forceinline__ float divide(float x, const ExactDivider& d) {
  return Fast ? d.quick(x) : d.slow(x);
}

/// The codes of the two bf16 in word w: 16 bits, element 0 (low half) in the low byte.
template <bool Fast>
__device__ __forceinline__ unsigned quant_word(unsigned w, const ExactDivider& d) {
  const float lo = __uint_as_float(w << 16), hi = __uint_as_float(w & 0xFFFF0000u);
  return cvt_e4m3x2(divide<Fast>(lo, d), divide<Fast>(hi, d));
}

template <bool Fast>
__device__ __forceinline__ uint2 quant8_impl(const uint4& v, const ExactDivider& d) {
  return make_uint2(quant_word<Fast>(v.x, d) | quant_word<Fast>(v.y, d) << 16,
                    quant_word<Fast>(v.z, d) | quant_word<Fast>(v.w, d) << 16);
}

/// 8 bf16 -> 8 e4m3 codes; a non-finite group gives 0x7F throughout. The branches are uniform
/// per group.
__device__ __forceinline__ uint2 quant8(const uint4& v, const ExactDivider& d, bool nonfinite) {
  if (nonfinite) return make_uint2(0x7F7F7F7Fu, 0x7F7F7F7Fu);
  return d.fast ? quant8_impl<true>(v, d) : quant8_impl<false>(v, d);
}

/// Loads x[c .. c+8) of one row (elements past `valid` read as 0, which no amax notices).
template <bool Vec>
__device__ __forceinline__ uint4 load8(const std::uint16_t* row, std::int64_t c, std::int64_t K) {
  if (Vec && c + 8 <= K) return __ldg(reinterpret_cast<const uint4*>(row + c));
  unsigned w[4] = {0, 0, 0, 0};
#pragma unroll
  for (int i = 0; i < 8; ++i)
    if (c + i < K) w[i / 2] |= unsigned(__ldg(row + c + i)) << (16 * (i % 2));
  return make_uint4(w[0], w[1], w[2], w[3]);
}

/// Stores 8 codes at row[c .. c+8), only those below K.
template <bool Vec>
__device__ __forceinline__ void store8(std::uint8_t* row, std::int64_t c, std::int64_t K,
                                       const uint2& v) {
  if (Vec && c + 8 <= K) {
    *reinterpret_cast<uint2*>(row + c) = v;
    return;
  }
#pragma unroll
  for (int i = 0; i < 8; ++i)
    if (c + i < K) row[c + i] = std::uint8_t((i < 4 ? v.x : v.y) >> (8 * (i % 4)));
}

/// Zeroes the padding entries of a group-scale buffer that belong with scale (r, g): for
/// mn-major the entries r' in [rows, ld) of g-row g, written by the last row (except in the last
/// g-row, which required_elements() does not pad); for k-major the entries g' in [groups, ld)
/// of row r, written with the last group (except in the last row). lane / lanes spread the work.
__device__ __forceinline__ void zero_group_padding(float* s, const GroupScaleLayout& L,
                                                   std::int64_t rows, std::int64_t groups,
                                                   std::int64_t r, std::int64_t g, int lane,
                                                   int lanes) {
  if (L.major == ScaleMajor::mn) {
    if (r == rows - 1 && g < groups - 1)
      for (std::int64_t p = rows + lane; p < L.ld; p += lanes) s[g * L.ld + p] = 0.0f;
  } else {
    if (g == groups - 1 && r < rows - 1)
      for (std::int64_t p = groups + lane; p < L.ld; p += lanes) s[r * L.ld + p] = 0.0f;
  }
}

/// Writes 0 to the padding columns [blocks, L.ld) of row `row` of a block-scale grid (inside
/// required_elements() for every row but the last), spread over the CTA's Threads threads.
template <int Threads>
__device__ __forceinline__ void zero_block_row_padding(float* __restrict__ s,
                                                       const BlockScaleLayout& L, std::int64_t row,
                                                       std::int64_t blocks) {
  for (std::int64_t p = blocks + threadIdx.x; p < L.ld; p += Threads) s[row * L.ld + p] = 0.0f;
}

/// Whether zero_group_padding can have work for the groups (r, g) of a 128 x 128 tile with row
/// block rb of rblocks and group g of groups: mn-major, only the last row's scales (last row
/// block, not the last group); k-major, only the last group's. A tile-uniform test that lets the
/// lean kernels skip the per-row one.
__device__ __forceinline__ bool tile_has_padding(const GroupScaleLayout& L, std::int64_t rb,
                                                 std::int64_t rblocks, std::int64_t g,
                                                 std::int64_t groups) {
  return L.major == ScaleMajor::mn ? rb == rblocks - 1 && g < groups - 1 : g == groups - 1;
}

/// Returns a word of 4 codes as it is (column_codes_by's default `word`).
struct SameWord {
  __device__ __forceinline__ unsigned operator()(unsigned c4) const { return c4; }
};

/// The 4 Words codes of one column (the low, half 0, or high bf16 halves of 4 Words words, one
/// per row), 4 to a word: each value x becomes the e4m3 code of scaled(x) (x divided by the
/// group's scale, however the kernel computes it), each word of 4 codes is stored as word(codes).
template <int Words, class Scaled, class Word = SameWord>
__device__ __forceinline__ void column_codes_by(const unsigned (&wv)[4 * Words], int half,
                                                const Scaled& scaled, unsigned (&out)[Words],
                                                const Word& word = {}) {
#pragma unroll
  for (int j = 0; j < Words; ++j) {
    float f[4];
#pragma unroll
    for (int e = 0; e < 4; ++e) {
      const unsigned wd = wv[4 * j + e];
      f[e] = scaled(__uint_as_float(half == 0 ? wd << 16 : wd & 0xFFFF0000u));
    }
    out[j] = word(cvt_e4m3x2(f[0], f[1]) | cvt_e4m3x2(f[2], f[3]) << 16);
  }
}

/// The 32 codes of one column (low or high halves of 32 words, one per row), 4 to a word.
template <bool Fast>
__device__ __forceinline__ void column_codes(const unsigned (&wv)[32], int half,
                                             const ExactDivider& d, unsigned (&out)[8]) {
  column_codes_by<8>(
      wv, half, [&](float x) { return divide<Fast>(x, d); }, out);
}

/// Stores the 32 codes of out (4 to a word, the first in the low byte) at dst[0 .. 32): only
/// those whose column m0 + i is below M; two 16-byte stores when Vec (dst 16-byte aligned) and
/// all 32 are inside.
template <bool Vec>
__device__ __forceinline__ void store32(std::uint8_t* dst, std::int64_t m0, std::int64_t M,
                                        const unsigned (&out)[8]) {
  if (Vec && m0 + 32 <= M) {
    reinterpret_cast<uint4*>(dst)[0] = make_uint4(out[0], out[1], out[2], out[3]);
    reinterpret_cast<uint4*>(dst)[1] = make_uint4(out[4], out[5], out[6], out[7]);
    return;
  }
#pragma unroll
  for (int i = 0; i < 32; ++i)
    if (m0 + i < M) dst[i] = std::uint8_t(out[i / 4] >> (8 * (i % 4)));
}

// --------------------------------------------------------------- 128 x 128 tiles, CTAs of 256 ----
// The quantisers that work on 128 x 128 tiles of x (quantize_128x128, the dual, the token
// quantiser) share a thread map: thread t = 16 rr + cc holds the 8-element chunk cc (columns
// c = 128 tk + 8 cc ..) of rows rr + 16 it, it < 8, so each load instruction of a warp reads two
// whole 256-byte row segments, and each thread has 8 x 16 bytes in flight.

/// Loads the thread's 8 chunks of a tile: rows first_row + rr + 16 it of x (leading dimension ld),
/// elements c .. c + 7 of each (those at or past K read as 0, as do rows at or past end_row).
template <bool Vec>
__device__ __forceinline__ void load_tile_rows(const std::uint16_t* x, std::int64_t ld,
                                               std::int64_t K, std::int64_t first_row,
                                               std::int64_t end_row, int rr, std::int64_t c,
                                               uint4 (&v)[8]) {
#pragma unroll
  for (int it = 0; it < 8; ++it) {
    const std::int64_t r = first_row + rr + 16 * it;
    v[it] = r < end_row ? load8<Vec>(x + r * ld, c, K) : make_uint4(0, 0, 0, 0);
  }
}

/// Reads word column p (columns 2p, 2p + 1) of rows h * 32 .. h * 32 + 31 of a 128 x 64-word
/// shared-memory tile into wv (a warp reads 32 consecutive words of a row: conflict-free);
/// returns the per-half maximum of |x| bits over those 32 rows.
__device__ __forceinline__ unsigned load_tile_column(const unsigned (&tile)[128 * 64], int p,
                                                     int h, unsigned (&wv)[32]) {
  unsigned m2 = 0;
#pragma unroll
  for (int i = 0; i < 32; ++i) {
    wv[i] = tile[(h * 32 + i) * 64 + p];
    m2 = __vmaxu2(m2, wv[i] & kAbsMask2);
  }
  return m2;
}

/// The transposing half of the dual and token quantisers: the CTA's 128 x 128 bf16 tile of x is
/// in shared memory, tile[row][64 words] (word w of a row: columns 2w, 2w + 1), and each of its
/// columns k (a 128 x 1 group of x) becomes the 1 x 128 group (k, tm) of q_t = x^T: 128 e4m3
/// codes at q_t[k][128 tm ..] and a scale at layout_t.offset(k, tm). Columns k >= K are skipped;
/// q_t columns at or past M are not written; mt = ceil(M / 128) (for the scale padding).
/// Thread t takes the column pair p = t % 64 (one 32-bit word per row) and rows h * 32 ..
/// h * 32 + 31, h = t / 64; a warp reads 32 consecutive words of one row (conflict-free). The
/// column amax is the maximum over the 4 h-threads (through col_max). Then each thread converts
/// its 32 rows of both columns and stores 32 consecutive bytes of q_t rows k = 2p and 2p + 1 (two
/// 16-byte stores each when VecT: q_t 16-byte aligned, ldq_t % 16 == 0).
/// Tokens (the token quantiser's tiles): only the first `valid_rows` rows of the tile are data,
/// the rest are zeros in shared memory and must be e4m3 zeros in q_t even when the group is
/// non-finite; valid_rows = 0 marks a tile past the padded tokens: codes 0 and scale 0.0f.
/// Contains a __syncthreads(); every thread of the CTA must call it. The caller syncs again
/// before it rewrites tile or col_max.
template <bool VecT, bool Tokens>
__device__ __forceinline__ void quantize_tile_columns(
    const unsigned (&tile)[128 * 64], unsigned (&col_max)[4][64], std::int64_t tk, std::int64_t K,
    std::int64_t tm, std::int64_t M, std::int64_t mt, int valid_rows,
    std::uint8_t* __restrict__ q_t, std::int64_t ldq_t, float* __restrict__ scales_t,
    const GroupScaleLayout& layout_t, bool pow2) {
  const int t = threadIdx.x, p = t & 63, h = t >> 6;
  unsigned wv[32];
  unsigned m2 = load_tile_column(tile, p, h, wv);
  col_max[h][p] = m2;
  __syncthreads();
  m2 = __vmaxu2(__vmaxu2(col_max[0][p], col_max[1][p]), __vmaxu2(col_max[2][p], col_max[3][p]));
#pragma unroll
  for (int half = 0; half < 2; ++half) {  // column 2p (low halves), then 2p + 1 (high halves)
    const std::int64_t k = tk * 128 + 2 * p + half;
    if (k >= K) continue;
    const unsigned m = half == 0 ? (m2 & 0xFFFFu) : (m2 >> 16);
    const float scale = scale_from_bits(m, pow2);
    const bool nonfinite = m >= kNonFinite;
    const ExactDivider d(scale);
    unsigned out[8];
    if (nonfinite) {
#pragma unroll
      for (int j = 0; j < 8; ++j) out[j] = 0x7F7F7F7Fu;
      if constexpr (Tokens) {  // the padding rows stay e4m3 zeros
#pragma unroll
        for (int i = 0; i < 32; ++i)
          if (h * 32 + i >= valid_rows) out[i / 4] &= ~(0xFFu << (8 * (i % 4)));
      }
    } else if (d.fast) {
      column_codes<true>(wv, half, d, out);
    } else {
      column_codes<false>(wv, half, d, out);
    }
    const std::int64_t m0 = tm * 128 + h * 32;
    store32<VecT>(q_t + k * ldq_t + m0, m0, M, out);
    // A tile past the padded tokens has scale 0.0f (its codes are zeros already).
    if (h == 0) scales_t[layout_t.offset(k, tm)] = Tokens && valid_rows == 0 ? 0.0f : scale;
    zero_group_padding(scales_t, layout_t, K, mt, k, tm, h, 4);
  }
}

// ================================== lean 1 x 128 arithmetic (tuning_1x128 "v2_lean") ==========
// The v1 kernels divide each element by Markstein's sequence (ExactDivider: FMUL, 4 FFMA and a
// copysign, __fdiv_rn outside its range) and compute each group's scale and reciprocal with two
// __fdiv_rn. What the e4m3 code needs is less: e4m3(RN(x / s)) depends on RN(x / s) only near an
// e4m3 rounding boundary, and over the whole domain the kernels see (every finite bf16 amax a, its
// scale s, every bf16 x with |x| <= a, both signs) ONE correction step of the hoisted reciprocal
// already gives the right code:
//   q0 = RN(x y), q1 = RN(q0 - RN(s q0 - x) y)   (lean_div: FMUL + 2 FFMA per element)
// with y any faithful reciprocal of s (RN(1 / s) or either neighbour), for every s >= 2^-113;
// checked exhaustively (all ~1.1e9 (a, x) pairs, both scale rules) by tests/test_quantize_cpu.cpp
// on the CPU (y = RN(1 / s) and its neighbours) and tests/test_quantize_gpu.cu on the device (the
// kernels' own code). Groups with amax < 2^-104 (scales below 2^-113; real data never has them,
// the tests do) multiply x and s by 2^64 first (exact for these x), which the same sweeps cover.
// The sign of zero: RN(s q0 - x) is +0 for x = +-0, and q0 - (+0) y keeps q0's sign (-0 for
// x = -0), so no copysign is needed.
// The scale itself: RN(a / 448) = RN(q0 + RN(a - 448 q0) c) with c = RN(1 / 448), q0 = RN(a c), for
// every bf16 a with a normal quotient (div448, exhaustive test likewise); pow2 scales from a's bits
// as mx_tuning::scale_code_select's rceil rule (both are ceil(log2(a / 448))).

using tuning_1x128::kLeanPrescale;
using tuning_1x128::kLeanTinyAmax;
using tuning_1x128::lean_div;

/// A faithful reciprocal of s (one of the two floats around 1 / s) for s and 1 / s normal:
/// rcp.approx (at most 1 ulp off: 1 / s (1 + d), |d| <= 2^-23), then one Newton step, whose
/// residual 1 - s r = -d is exact in the FMA, so y = RN(r - d r) = RN((1 / s)(1 - d^2)).
__device__ __forceinline__ float lean_rcp(float s) {
  float r;
  asm("rcp.approx.ftz.f32 %0, %1;" : "=f"(r) : "f"(s));
  return __fmaf_rn(__fmaf_rn(-s, r, 1.0f), r, r);
}

/// A group's scale (what is stored) and the divisor the elements use, from its amax bits m.
struct LeanScale {
  float scale;   // the group's scale: the CPU's scale_from_amax bit for bit (NaN if non-finite)
  float s, y;    // divisor (scale, or scale 2^64 when tiny) and a faithful reciprocal of it
  unsigned nan;  // all ones for a non-finite group (its codes are all 0x7F), else 0
  bool tiny;     // 0 < amax < 2^-104: elements are multiplied by 2^64 before the division
};

__device__ __forceinline__ LeanScale lean_scale(unsigned m, bool pow2) {
  LeanScale g;
  g.scale = tuning_1x128::lean_scale_value(m, pow2);
  g.tiny = m - 1u < kLeanTinyAmax - 1u;
  g.nan = m >= kNonFinite ? ~0u : 0u;
  g.s = g.tiny ? g.scale * kLeanPrescale : g.scale;
  g.y = lean_rcp(g.s);
  return g;
}

/// tuning_1x128 "v3_shared": a group's LeanScale from its amax bits m and the scale and reciprocal
/// that another lane computed with lean_scale(m, pow2) (fetched by a shuffle): the same values
/// (lean_scale is a function of m), at 2 shuffles and ~4 instructions instead of ~25 (the scale,
/// its special cases, the prescale and rcp + a Newton step).
__device__ __forceinline__ LeanScale lean_scale_from(unsigned m, float scale, float y) {
  LeanScale g;
  g.scale = scale;
  g.tiny = m - 1u < kLeanTinyAmax - 1u;
  g.nan = m >= kNonFinite ? ~0u : 0u;
  g.s = g.tiny ? scale * kLeanPrescale : scale;
  g.y = y;
  return g;
}

/// The LeanScales of two groups a and b (amax bits ma, mb) known to every lane of an aligned set of
/// `width` lanes (a power of two >= 2), each computed once: the even lanes of the set compute a's,
/// the odd ones b's, and every lane fetches a's scale and reciprocal from the set's lane 0 and b's
/// from its lane 1 (4 shuffles). Every lane of the warp must call it (full-mask shuffles).
template <int Width>
__device__ __forceinline__ void lean_scale_pair(unsigned ma, unsigned mb, bool pow2, LeanScale& a,
                                                LeanScale& b) {
  const bool odd = threadIdx.x & 1;  // lanes of a set: aligned, so the set's lane parity
  const LeanScale mine = lean_scale(odd ? mb : ma, pow2);
  a = lean_scale_from(ma, __shfl_sync(0xFFFFFFFFu, mine.scale, 0, Width),
                      __shfl_sync(0xFFFFFFFFu, mine.y, 0, Width));
  b = lean_scale_from(mb, __shfl_sync(0xFFFFFFFFu, mine.scale, 1, Width),
                      __shfl_sync(0xFFFFFFFFu, mine.y, 1, Width));
}

/// A 16-byte shared-memory load the compiler cannot replace by the registers just stored there
/// (v4_occ4 reads its own bytes back to free those registers in between); the memory clobber keeps
/// the stores before it.
__device__ __forceinline__ uint4 lds128(const uint4* p) {
  return ptx::ld_shared_v4_u32(ptx::smem_u32(p));
}

/// The codes of the bf16 pair in word w (element 0 in the low byte).
template <bool Tiny>
__device__ __forceinline__ unsigned lean_codes2(unsigned w, float s, float y) {
  float lo = __uint_as_float(w << 16), hi = __uint_as_float(w & 0xFFFF0000u);
  if constexpr (Tiny) {
    lo = __fmul_rn(lo, kLeanPrescale);
    hi = __fmul_rn(hi, kLeanPrescale);
  }
  return cvt_e4m3x2(lean_div(lo, s, y), lean_div(hi, s, y));
}

/// Four words (eight bf16) -> eight codes, the non-finite blend included (one LOP3 per word; a
/// select became a branch around each word's conversion in the MX kernels).
template <bool Tiny>
__device__ __forceinline__ uint2 lean_quant8(const uint4& v, const LeanScale& g) {
  const unsigned a = lean_codes2<Tiny>(v.x, g.s, g.y) | lean_codes2<Tiny>(v.y, g.s, g.y) << 16;
  const unsigned b = lean_codes2<Tiny>(v.z, g.s, g.y) | lean_codes2<Tiny>(v.w, g.s, g.y) << 16;
  return make_uint2((a & ~g.nan) | (0x7F7F7F7Fu & g.nan), (b & ~g.nan) | (0x7F7F7F7Fu & g.nan));
}

/// N chunks of one group -> codes; the tiny test is one branch per group, not per element.
template <int N>
__device__ __forceinline__ void lean_quant_chunks(const uint4 (&v)[N], const LeanScale& g,
                                                  uint2 (&out)[N]) {
  if (!g.tiny) {
#pragma unroll
    for (int j = 0; j < N; ++j) out[j] = lean_quant8<false>(v[j], g);
  } else {
#pragma unroll
    for (int j = 0; j < N; ++j) out[j] = lean_quant8<true>(v[j], g);
  }
}

/// 16 codes of one column (the low or high bf16 halves of 16 words, one per row), 4 to a word,
/// before the non-finite blend.
template <bool Tiny>
__device__ __forceinline__ void lean_column16(const unsigned (&wv)[16], int half,
                                              const LeanScale& g, unsigned (&out)[4]) {
  column_codes_by<4>(
      wv, half,
      [&](float xv) {
        if constexpr (Tiny) xv = __fmul_rn(xv, kLeanPrescale);
        return lean_div(xv, g.s, g.y);
      },
      out);
}

/// Stores 16 codes (4 to a word) at dst[0 .. 16), only those whose column m0 + i is below M; one
/// 16-byte store when Vec (dst 16-byte aligned) and all 16 are inside. Inside: the caller knows
/// that all 16 are (m0 + 16 <= M), so nothing is tested.
template <bool Vec, bool Inside = false>
__device__ __forceinline__ void store16(std::uint8_t* dst, std::int64_t m0, std::int64_t M,
                                        const unsigned (&out)[4]) {
  if constexpr (Vec && Inside) {
    *reinterpret_cast<uint4*>(dst) = make_uint4(out[0], out[1], out[2], out[3]);
  } else {
    if (Vec && m0 + 16 <= M) {
      *reinterpret_cast<uint4*>(dst) = make_uint4(out[0], out[1], out[2], out[3]);
      return;
    }
#pragma unroll
    for (int i = 0; i < 16; ++i)
      if (Inside || m0 + i < M) dst[i] = std::uint8_t(out[i / 4] >> (8 * (i % 4)));
  }
}

/// The place of 16-byte chunk c of row r of a 128 x 128 bf16 tile in shared memory (16 chunks a
/// row), for lean_columns: XOR-swizzled by (r / 16) % 8 (the column pass: the 8 lanes j read the
/// same word column of rows 16 j + i, distinct 16-byte bank groups) and by 4 (r % 2) (a
/// quarter-warp that writes chunks 4 j' .. 4 j' + 3 of two adjacent rows, as the lean dual's row
/// pass does, then covers all banks; 8 consecutive chunks of one row, load_tile_rows' map, do too).
__device__ __forceinline__ int swz1(int r, int c) {
  return r * 16 + (c ^ ((r >> 4) & 7) ^ ((r & 1) << 2));
}

/// The column pass of the lean dual and token quantisers: the 128 x 128 bf16 tile (tm, tk) of x in
/// shared memory (swz1) becomes the 1 x 128 groups (k, tm) of q_t = x^T (K x M, ldq_t), 128 codes
/// at q_t[k][128 tm ..] and a scale at layout_t.offset(k, tm), for the tile's columns k < K; q_t
/// columns at or past M are not written; mt = ceil(M / 128) (the scale padding). Lane j = lane % 8
/// takes rows 16 j .. 16 j + 15 of word column p = 8 w + 4 it2 + lane / 8 (tile columns 2p,
/// 2p + 1): a column's group is the 8 lanes j (amax by 3 xor-shuffles of the packed maximum of
/// both columns), and for a fixed p they store one whole 128-byte line of a q_t row (16-byte
/// stores when VecT: q_t 16-byte aligned, ldq_t % 16 == 0), so a warp store writes 4 full lines.
/// Tokens (the token quantiser's tiles): only the first valid_rows rows are data, the rest zeros
/// in shared memory that must be e4m3 zeros in q_t even when the group is non-finite; valid_rows
/// = 0 marks a tile past the padded tokens: codes 0 and scale 0.0f. No barrier inside.
/// Share (tuning_1x128 "v3_shared"): the 8 lanes of a column pair no longer each compute both
/// columns' scales (8 times the same ~25 instructions): the even lanes compute column 2p's, the
/// odd ones 2p + 1's, and the lanes fetch both by shuffles (lean_scale_pair); same values.
/// Interior (tuning_1x128 "v6_interior"; not with Tokens): the caller knows that the tile is whole
/// (128 rows of x, 128 columns inside K) and that its groups have no scale padding to zero, so the
/// per-column bounds tests go, q_t's 16 codes are stored without one, and each scale's offset is a
/// step from the tile's first (a multiply and a select per column in the general path).
template <bool VecT, bool Tokens, bool Share = false, bool Interior = false>
__device__ __forceinline__ void lean_columns(const uint4* tile, std::int64_t tm, std::int64_t tk,
                                             std::int64_t K, std::int64_t M, std::int64_t mt,
                                             int valid_rows, std::uint8_t* __restrict__ q_t,
                                             std::int64_t ldq_t, float* __restrict__ scales_t,
                                             const GroupScaleLayout& layout_t, bool pow2) {
  const unsigned* words = reinterpret_cast<const unsigned*>(tile);
  const int lane = threadIdx.x & 31, w = threadIdx.x >> 5, j = lane & 7;
  const std::int64_t m0 = tm * 128 + 16 * j;
  // (Tokens: the per-column test alone; the tile test's registers made the token kernel spill.)
  static_assert(!(Interior && Tokens), "the token kernel's tiles are not known to be whole");
  const bool pads =
      !Interior && (Tokens || tile_has_padding(layout_t, tk, ceil_div(K, 128), tm, mt));
  // Interior: the scale of column k = tk 128 + c sits at offset(tk 128, tm) + c kstep, its codes
  // at q_t + (tk 128) ldq_t + tm 128 + c ldq_t (the caller has checked that ldq_t and the
  // layout's ld are below 2^23, so 32-bit offsets).
  float* const scale0 = Interior ? scales_t + layout_t.offset(tk * 128, tm) : scales_t;
  const unsigned kstep = layout_t.major == ScaleMajor::mn ? 1u : unsigned(layout_t.ld);
  std::uint8_t* const qt0 = Interior ? q_t + tk * 128 * ldq_t + tm * 128 : q_t;
#pragma unroll
  for (int it2 = 0; it2 < 2; ++it2) {
    const int p = 8 * w + 4 * it2 + (lane >> 3);
    unsigned wv[16];
    unsigned m2 = 0;
#pragma unroll
    for (int i = 0; i < 16; ++i) {
      wv[i] = words[(16 * j + i) * 64 + (((p >> 2) ^ j ^ ((i & 1) << 2)) << 2) + (p & 3)];
      m2 = __vmaxu2(m2, wv[i] & kAbsMask2);
    }
#pragma unroll
    for (int o = 1; o <= 4; o <<= 1) m2 = __vmaxu2(m2, __shfl_xor_sync(0xFFFFFFFFu, m2, o));
    LeanScale shared[2];  // Share: both columns' scales, before any lane leaves the loop below
    if constexpr (Share) lean_scale_pair<8>(m2 & 0xFFFFu, m2 >> 16, pow2, shared[0], shared[1]);
#pragma unroll
    for (int half = 0; half < 2; ++half) {  // column 2p (low halves), then 2p + 1 (high halves)
      const std::int64_t k = tk * 128 + 2 * p + half;
      if (!Interior && k >= K) continue;  // the same for the 8 lanes of the group
      const LeanScale g =
          Share ? shared[half] : lean_scale(half == 0 ? m2 & 0xFFFFu : m2 >> 16, pow2);
      unsigned out[4];
      if (!g.tiny)
        lean_column16<false>(wv, half, g, out);
      else
        lean_column16<true>(wv, half, g, out);
      if (g.nan) {  // rare: NaN or Inf in the group, all its codes 0x7F (Tokens: data rows only)
#pragma unroll
        for (int q = 0; q < 4; ++q) {
          const int n = Tokens ? valid_rows - 16 * j - 4 * q : 4;  // data bytes in word q
          out[q] = n >= 4 ? 0x7F7F7F7Fu : n <= 0 ? 0u : 0x7F7F7F7Fu & ((1u << (8 * n)) - 1u);
        }
      }
      if constexpr (Interior) {
        store16<VecT, true>(qt0 + (unsigned(2 * p + half) * unsigned(ldq_t) + 16 * j), m0, M, out);
        if (j == 0) scale0[unsigned(2 * p + half) * kstep] = g.scale;
      } else {
        store16<VecT>(q_t + k * ldq_t + m0, m0, M, out);
        if (j == 0) scales_t[layout_t.offset(k, tm)] = Tokens && valid_rows == 0 ? 0.0f : g.scale;
        if (pads) zero_group_padding(scales_t, layout_t, K, mt, k, tm, j, 8);
      }
    }
  }
}

}  // namespace fp8gemm::quantize_detail
