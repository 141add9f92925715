// The DeepSeek-V3 quantisers on the GPU (common/quantize_gpu.hpp): kernels and host wrappers.
//
// All three quantisers are memory-bound (3 bytes moved per element: 2 read, 1 written; 4 for
// the dual variant), so the design is about bytes in flight and full-width transactions:
//  - 16-byte loads of 8 bf16; amax as an integer maximum of |x|'s bf16 bits (__vmaxu2 on two
//    halves at a time, exact and order-independent); the non-finite test falls out of the same
//    maximum (|x| bits >= 0x7F80 is Inf or NaN);
//  - quantize_1x128: 4 lanes per 128-element group (32 elements a lane), 8 groups per warp, the
//    next row's loads issued before this row's arithmetic, amax by two xor-shuffles;
//  - quantize_128x128: one 256-thread CTA per 128 x 128 block, the whole block in registers
//    (8 x 16 bytes per thread, 32 KB per CTA in flight), amax by shuffles + shared memory;
//  - dual: one CTA per 128 x 128 tile of x: the rows give the 1 x 128 groups of q, the tile goes
//    through shared memory once, and its columns give the groups of q_t = x^T.
// Divisions are correctly rounded (detail::ExactDivider in quantize_gpu.hpp: RN(1/s) once per
// group, Markstein's correction per element, bit for bit __fdiv_rn; never fast-math);
// conversions are cvt.rn.satfinite.e4m3x2.f32, which for finite input is fp8.hpp's encoder with
// Saturation::finite (tests/test_quantize_gpu.cu checks the kernels against the CPU bit for bit).
// Tried and removed: a 1 x 128 tile variant ("v2_tiles", one CTA per 128 x 128 tile, 6a60e82) ran at
// 56.4-56.8 % of the copy against this row kernel's 75.6-79.3 % (H200, quantize_bench at 82a9d6a).
// Kernel variants (tuning_1x128 in quantize_gpu.hpp, not API; the public functions run
// tuning_1x128::default_variant: v2_lean, the dual v6_interior): v1_first, the kernels described
// above; v2_lean, the MX v2 structure with a 3-operation division and a division-free scale (see
// "v2_lean" below and quantize_kernels.cuh). H200, quantize_bench at 3e2acd2 (plots/data/h200/
// ch07/quantize_bench_1x128_3e2acd2.json), % of the copy: quantize_1x128 v2_lean 92.7-93.4
// (v1_first 75.6-78.0), k-major 86.8 (80.3), pow2 93.6 (75.2); dual 85.4-85.5 (47.8-49.5).
// v6_interior (session 28, "v6_interior" below): the dual at 85.5-86.1 % (v2_lean 83.6-83.7 %).
#include "common/quantize_gpu.hpp"

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <stdexcept>
#include <string>
#include <type_traits>

#include "common/cuda.hpp"
#include "common/launch.hpp"
#include "common/ptx/cp_async.cuh"
#include "common/src/quantize_kernels.cuh"

namespace fp8gemm {

// The shared checks and device primitives (fail, require_*, extent_bytes, load8, ...).
using namespace quantize_detail;

// ====================================== host-side checks ==========================================
namespace {

void require_block_layout(const char* who, const char* name, const BlockScaleLayout& L,
                          std::int64_t K, const char* K_name = "K") {
  if (L.ld < ceil_div(K, 128))
    fail(who, std::string(name) + ".ld = " + std::to_string(L.ld) + " must be >= ceil(" + K_name +
                  " / 128) = " + std::to_string(ceil_div(K, 128)));
}

// The extents of each argument, computed once validation has passed.
struct Extents1x128 {
  std::uint64_t x, q, s;
};
Extents1x128 check_1x128_common(const char* who, const std::uint16_t* x, std::int64_t M,
                                std::int64_t K, std::int64_t ldx, const std::uint8_t* q,
                                std::int64_t ldq, const float* scales,
                                const GroupScaleLayout& layout) {
  require_pointer(who, "x", x, 2, "bf16");
  require_pointer(who, "q", q, 1, "e4m3");
  require_pointer(who, "scales", scales, 4, "float");
  require_positive(who, "M", M);
  require_positive(who, "K", K);
  require_ld(who, "ldx", ldx, "K", K);
  require_ld(who, "ldq", ldq, "K", K);
  require_group_layout(who, "layout", layout, M, "M", K, "K");
  Extents1x128 e;
  e.x = extent_bytes(who, "x", M, ldx, K, 2);
  e.q = extent_bytes(who, "q", M, ldq, K, 1);
  e.s = extent_bytes(who, "scales",
                     layout.major == ScaleMajor::mn ? ceil_div(K, 128) : M, layout.ld,
                     layout.major == ScaleMajor::mn ? M : ceil_div(K, 128), 4);
  return e;
}

}  // namespace

void validate_quantize_1x128(const std::uint16_t* x, std::int64_t M, std::int64_t K,
                             std::int64_t ldx, const std::uint8_t* q, std::int64_t ldq,
                             const float* scales, GroupScaleLayout layout) {
  const char* who = "quantize_1x128";
  const auto e = check_1x128_common(who, x, M, K, ldx, q, ldq, scales, layout);
  const Range rx = range("x", x, e.x), rq = range("q", q, e.q), rs = range("scales", scales, e.s);
  require_disjoint(who, {rq, rs}, {rx, rq, rs});
}

namespace {
// The checks quantize_128x128 and its dual share; returns the ranges of w, q and scales.
struct Ranges128x128 {
  Range w, q, s;
};
Ranges128x128 check_128x128_common(const char* who, const std::uint16_t* w, std::int64_t N,
                                   std::int64_t K, std::int64_t ldw, const std::uint8_t* q,
                                   std::int64_t ldq, const float* scales,
                                   const BlockScaleLayout& layout) {
  require_pointer(who, "w", w, 2, "bf16");
  require_pointer(who, "q", q, 1, "e4m3");
  require_pointer(who, "scales", scales, 4, "float");
  require_positive(who, "N", N);
  require_positive(who, "K", K);
  require_ld(who, "ldw", ldw, "K", K);
  require_ld(who, "ldq", ldq, "K", K);
  require_block_layout(who, "layout", layout, K);
  return {range("w", w, extent_bytes(who, "w", N, ldw, K, 2)),
          range("q", q, extent_bytes(who, "q", N, ldq, K, 1)),
          range("scales", scales,
                extent_bytes(who, "scales", ceil_div(N, 128), layout.ld, ceil_div(K, 128), 4))};
}
}  // namespace

void validate_quantize_128x128(const std::uint16_t* w, std::int64_t N, std::int64_t K,
                               std::int64_t ldw, const std::uint8_t* q, std::int64_t ldq,
                               const float* scales, BlockScaleLayout layout) {
  const char* who = "quantize_128x128";
  const auto r = check_128x128_common(who, w, N, K, ldw, q, ldq, scales, layout);
  require_disjoint(who, {r.q, r.s}, {r.w, r.q, r.s});
}

void validate_quantize_128x128_dual(const std::uint16_t* w, std::int64_t N, std::int64_t K,
                                    std::int64_t ldw, const std::uint8_t* q, std::int64_t ldq,
                                    const float* scales, BlockScaleLayout layout,
                                    const std::uint8_t* q_t, std::int64_t ldq_t,
                                    const float* scales_t, BlockScaleLayout layout_t) {
  const char* who = "quantize_128x128_dual";
  const auto r = check_128x128_common(who, w, N, K, ldw, q, ldq, scales, layout);
  require_pointer(who, "q_t", q_t, 1, "e4m3");
  require_pointer(who, "scales_t", scales_t, 4, "float");
  require_ld(who, "ldq_t", ldq_t, "N", N);
  require_block_layout(who, "layout_t", layout_t, N, "N");
  const Range rqt = range("q_t", q_t, extent_bytes(who, "q_t", K, ldq_t, N, 1));
  const Range rst = range("scales_t", scales_t,
                          extent_bytes(who, "scales_t", ceil_div(K, 128), layout_t.ld,
                                       ceil_div(N, 128), 4));
  require_disjoint(who, {r.q, r.s, rqt, rst}, {r.w, r.q, r.s, rqt, rst});
}

void validate_quantize_1x128_dual(const std::uint16_t* x, std::int64_t M, std::int64_t K,
                                  std::int64_t ldx, const std::uint8_t* q, std::int64_t ldq,
                                  const float* scales, GroupScaleLayout layout,
                                  const std::uint8_t* q_t, std::int64_t ldq_t,
                                  const float* scales_t, GroupScaleLayout layout_t) {
  const char* who = "quantize_1x128_dual";
  const auto e = check_1x128_common(who, x, M, K, ldx, q, ldq, scales, layout);
  require_pointer(who, "q_t", q_t, 1, "e4m3");
  require_pointer(who, "scales_t", scales_t, 4, "float");
  require_ld(who, "ldq_t", ldq_t, "M", M);
  require_group_layout(who, "layout_t", layout_t, K, "K", M, "M");
  const Range rx = range("x", x, e.x), rq = range("q", q, e.q), rs = range("scales", scales, e.s);
  const Range rqt = range("q_t", q_t, extent_bytes(who, "q_t", K, ldq_t, M, 1));
  const Range rst = range(
      "scales_t", scales_t,
      extent_bytes(who, "scales_t", layout_t.major == ScaleMajor::mn ? ceil_div(M, 128) : K,
                   layout_t.ld, layout_t.major == ScaleMajor::mn ? K : ceil_div(M, 128), 4));
  require_disjoint(who, {rq, rs, rqt, rst}, {rx, rq, rs, rqt, rst});
}

void validate_convert_group_scales(const float* src, GroupScaleLayout src_layout,
                                   const float* dst, GroupScaleLayout dst_layout,
                                   std::int64_t rows, std::int64_t K) {
  const char* who = "convert_group_scales";
  require_pointer(who, "src", src, 4, "float");
  require_pointer(who, "dst", dst, 4, "float");
  require_positive(who, "rows", rows);
  require_positive(who, "K", K);
  require_group_layout(who, "src_layout", src_layout, rows, "rows", K, "K");
  require_group_layout(who, "dst_layout", dst_layout, rows, "rows", K, "K");
  const auto bytes = [&](const char* n, const GroupScaleLayout& L) {
    return extent_bytes(who, n, L.major == ScaleMajor::mn ? ceil_div(K, 128) : rows, L.ld,
                        L.major == ScaleMajor::mn ? rows : ceil_div(K, 128), 4);
  };
  const Range rs = range("src", src, bytes("src", src_layout));
  const Range rd = range("dst", dst, bytes("dst", dst_layout));
  require_disjoint(who, {rd}, {rs, rd});
}

void validate_convert_block_scales(const float* src, BlockScaleLayout src_layout,
                                   const float* dst, BlockScaleLayout dst_layout,
                                   std::int64_t rows, std::int64_t K) {
  const char* who = "convert_block_scales";
  require_pointer(who, "src", src, 4, "float");
  require_pointer(who, "dst", dst, 4, "float");
  require_positive(who, "rows", rows);
  require_positive(who, "K", K);
  require_block_layout(who, "src_layout", src_layout, K);
  require_block_layout(who, "dst_layout", dst_layout, K);
  const Range rs = range("src", src, extent_bytes(who, "src", ceil_div(rows, 128), src_layout.ld,
                                                  ceil_div(K, 128), 4));
  const Range rd = range("dst", dst, extent_bytes(who, "dst", ceil_div(rows, 128), dst_layout.ld,
                                                  ceil_div(K, 128), 4));
  require_disjoint(who, {rd}, {rs, rd});
}

// ========================================== device code ===========================================
namespace {

// ---------------------------------------------------------------------------------- 1 x 128 ----
// x: M x K bf16 (ldx), q: M x K e4m3 (ldq), scales at layout.offset(r, g).
// CTA = 8 warps; blockIdx.x picks 8 consecutive groups g along K, blockIdx.y (grid-stride) a
// band of 8 rows, one row per warp (then every gridDim.y * 8-th row), 4 lanes per group. Lane l of a group holds the 8-element
// chunks at 32 j + 8 l, j < 4: each load instruction reads 64 contiguous bytes of each of 8
// consecutive groups (together the 2 KB of the row the warp covers), and each thread has
// 4 x 16 bytes in flight. The per-group work (amax shuffles, scale, reciprocal, scale store) is
// shared by 32 elements per lane. No integer division anywhere.
constexpr int kThreads1x128 = 256;
constexpr int kLanesPerGroup = 4;
constexpr int kGroupsPerCta = 32 / kLanesPerGroup;
constexpr int kRowsPerCta = kThreads1x128 / 32;

template <bool Vec>
__global__ void __launch_bounds__(kThreads1x128)
    quantize_1x128_kernel(const std::uint16_t* __restrict__ x, std::int64_t M, std::int64_t K,
                          std::int64_t ldx, std::uint8_t* __restrict__ q, std::int64_t ldq,
                          float* __restrict__ scales, GroupScaleLayout layout, bool pow2) {
  const std::int64_t groups = ceil_div(K, 128);
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, l4 = lane % kLanesPerGroup;
  const std::int64_t g = std::int64_t(blockIdx.x) * kGroupsPerCta + lane / kLanesPerGroup;
  const bool g_ok = g < groups;
  const std::int64_t c0 = g * 128 + l4 * 8;
  // Rows r, r + stride, ...: the next row's loads are issued before this row's arithmetic, so
  // every thread keeps 64 bytes in flight while it computes (software pipelining).
  const std::int64_t stride = std::int64_t(gridDim.y) * kRowsPerCta;
  std::int64_t r = std::int64_t(blockIdx.y) * kRowsPerCta + warp;
  uint4 v[4];
#pragma unroll
  for (int j = 0; j < 4; ++j)
    v[j] = g_ok && r < M ? load8<Vec>(x + r * ldx, c0 + 32 * j, K) : make_uint4(0, 0, 0, 0);
  for (; r < M; r += stride) {  // the loop bound is per warp: every lane reaches the shuffles
    uint4 next[4];
    const std::int64_t rn = r + stride;
#pragma unroll
    for (int j = 0; j < 4; ++j)
      next[j] = g_ok && rn < M ? load8<Vec>(x + rn * ldx, c0 + 32 * j, K) : make_uint4(0, 0, 0, 0);
    const unsigned m2 = __vmaxu2(__vmaxu2(max_abs2(v[0]), max_abs2(v[1])),
                                 __vmaxu2(max_abs2(v[2]), max_abs2(v[3])));
    unsigned m = fold2(m2);
#pragma unroll
    for (int o = kLanesPerGroup / 2; o >= 1; o >>= 1) m = max(m, __shfl_xor_sync(0xFFFFFFFFu, m, o));
    if (g_ok) {
      const float scale = scale_from_bits(m, pow2);
      const ExactDivider d(scale);
      const bool nonfinite = m >= kNonFinite;
#pragma unroll
      for (int j = 0; j < 4; ++j)
        store8<Vec>(q + r * ldq, c0 + 32 * j, K, quant8(v[j], d, nonfinite));
      if (l4 == 0) scales[layout.offset(r, g)] = scale;
      zero_group_padding(scales, layout, M, groups, r, g, l4, kLanesPerGroup);
    }
#pragma unroll
    for (int j = 0; j < 4; ++j) v[j] = next[j];
  }
}

// -------------------------------------------------------------------------------- 128 x 128 ----
// w: N x K bf16 (ldw), q: N x K e4m3 (ldq), scales at layout.offset(n / 128, k / 128).
// One CTA per block (grid-stride over blocks, row-major), loaded by load_tile_rows
// (quantize_kernels.cuh): thread t holds chunk column t % 16 (8 elements) of rows t / 16 + 16 i,
// i < 8: each warp reads two full 256-byte row segments.
constexpr int kThreadsBlock = 256;

/// The block's amax bits from the thread's 8 chunks v, in every thread: a warp maximum by shuffles,
/// then the 8 warps' through warp_max after one barrier (the caller's next barrier must come
/// before it is written again).
__device__ __forceinline__ unsigned block_amax(const uint4 (&v)[8], unsigned* warp_max) {
  unsigned m2 = 0;
#pragma unroll
  for (int it = 0; it < 8; ++it) m2 = __vmaxu2(m2, max_abs2(v[it]));
  unsigned m = fold2(m2);
#pragma unroll
  for (int o = 16; o >= 1; o >>= 1) m = max(m, __shfl_xor_sync(0xFFFFFFFFu, m, o));
  if ((threadIdx.x & 31) == 0) warp_max[threadIdx.x >> 5] = m;
  __syncthreads();
#pragma unroll
  for (int k = 0; k < kThreadsBlock / 32; ++k) m = max(m, warp_max[k]);
  return m;
}

/// Loads block row i's chunk c (thread (rr, cc)'s 8 chunks, load_tile_rows' map) and returns the
/// block's amax bits (block_amax).
template <bool Vec>
__device__ __forceinline__ unsigned load_block_amax(const std::uint16_t* __restrict__ w,
                                                    std::int64_t ldw, std::int64_t K,
                                                    std::int64_t N, std::int64_t i, std::int64_t c,
                                                    int rr, uint4 (&v)[8], unsigned* warp_max) {
  load_tile_rows<Vec>(w, ldw, K, i * 128, N, rr, c, v);
  return block_amax(v, warp_max);
}

template <bool Vec>
__global__ void __launch_bounds__(kThreadsBlock, 4)
    quantize_128x128_kernel(const std::uint16_t* __restrict__ w, std::int64_t N, std::int64_t K,
                            std::int64_t ldw, std::uint8_t* __restrict__ q, std::int64_t ldq,
                            float* __restrict__ scales, BlockScaleLayout layout, bool pow2) {
  __shared__ unsigned warp_max[kThreadsBlock / 32];
  const std::int64_t kb = ceil_div(K, 128), nb = ceil_div(N, 128);
  const int t = threadIdx.x, cc = t & 15, rr = t >> 4;
  for (std::int64_t b = blockIdx.x; b < nb * kb; b += gridDim.x) {
    const std::int64_t i = b / kb, j = b - (b / kb) * kb;
    const std::int64_t c = j * 128 + cc * 8;
    uint4 v[8];
    const unsigned m = load_block_amax<Vec>(w, ldw, K, N, i, c, rr, v, warp_max);
    const float scale = scale_from_bits(m, pow2);
    const ExactDivider d(scale);
    const bool nonfinite = m >= kNonFinite;
#pragma unroll
    for (int it = 0; it < 8; ++it) {
      const std::int64_t r = i * 128 + rr + 16 * it;
      if (r < N) store8<Vec>(q + r * ldq, c, K, quant8(v[it], d, nonfinite));
    }
    if (t == 0) scales[layout.offset(i, j)] = scale;
    if (j == kb - 1 && i < nb - 1) zero_block_row_padding<kThreadsBlock>(scales, layout, i, kb);
    __syncthreads();  // warp_max is reused by the next block
  }
}

// ---------------------------------------------------------------------------- 128 x 128 dual ----
// quantize_128x128_kernel plus W^T for the input gradient (Fp8Linear's dX = dY . W needs W as the
// K-major B operand of a GEMM with N and K swapped: W^T's codes, K x N row-major). FP8 wgmma takes
// only K-major operands, so W^T must exist in memory; quantising W and transposing its codes
// afterwards reads the N x K codes a second time and launches a second kernel. Here the block's
// codes, still in registers, also go into a 16 KB shared-memory tile (128 rows x 32 words), and
// the CTA writes them out transposed:
//   row pass   thread (rr, cc) stores its 8 codes of row rr + 16 it at word column
//              2 cc ^ 4 it (an XOR swizzle by the row's 16-row band, it = row / 16): the 16 lanes
//              of a half-warp cover the row's 32 words, so the 8-byte stores are conflict-free;
//   column pass lane (m = lane % 8, q = lane / 8) of warp w reads word column p = 4 w + q (block
//              columns 4p .. 4p + 3) of rows 16 m .. 16 m + 15 (16 words, word p ^ 4 m of each):
//              bank (p ^ 4 m) % 32 differs for the 32 lanes, so the reads are conflict-free;
//              byte permutes turn the 16 x 4 bytes into 4 runs of 16 codes (q_t rows 4p + i,
//              columns 16 m ..), and for each i the 8 lanes of one q write one 128-byte line of
//              a q_t row: every warp store writes 4 whole lines.
// Bytes moved per element: 2 read, 2 written (quantize_128x128 then the transpose: 2 + 1, then
// 1 + 1, in two launches). H200, quantize_bench at 7404262 (plots/data/h200/ch07/
// quantize_bench_128x128_7404262.json): 73.4-74.2 % of the copy (predicted 80-87 %, as
// quantize_128x128's 87.5-87.7 % in the same run), 0.66-0.79x the time of the quantisation and
// the two transposes it replaces in Fp8Linear (chapter 10's bench_torch parts).
// MinBlocks CTAs per SM: 3 by default (80 registers, 32 bytes spilled: ptxas -v), not
// quantize_128x128's 4: with 64 registers ptxas spilled 14 words a block (the 8 chunks' addresses
// across the loads), kept in the hot path.
// tuning_128x128 variant 1 runs it at 4 for the comparison: at c8abf19 71.4-72.3 % of the copy
// against 3 CTAs' 73.7-74.6 % in the same run (predicted 76-80 %): slower, not adopted.
// Variants 2-6 (tuning_128x128 "lean", "lean_occ4", "lean_async", "lean_async_occ4",
// "lean_async_persistent"; session 27): what the 1 x 128 dual's v2_lean changed (49 -> 85 % of the
// copy: the same tile, shared-memory transpose and whole-line q_t stores as this kernel) that this
// kernel lacked, and how the block is loaded:
//  - Lean: the 1 x 128 lean quantisers' arithmetic (lean_scale once per thread and block, then
//    FMUL + 2 FFMA per element: lean_quant8) instead of ExactDivider's FMUL + 4 FFMA + copysign
//    and the two __fdiv_rn of its setup; the same codes and scales bit for bit (both equal the
//    CPU's; the GPU tests check every variant byte for byte);
//  - Async (the template parameter Async): the block is loaded by cp.async (LDGSTS, L1
//    bypassed) into a 32 KB shared-memory stage instead of by LDG into registers, and when a CTA
//    walks several blocks the next block's copies are issued right after the amax barrier (every
//    thread has read the stage), so they are in flight during this block's conversion, stores and
//    column pass. Only when the loads are all-in or all-out 16-byte chunks (Vec and K % 8 == 0;
//    the launcher falls back to Lean otherwise). 48 KB of dynamic shared memory.
// The grid is one CTA per block (variants 0-5; the blocks of a real weight are far fewer than
// 2^31), so there a CTA loads one block and exits: the next-block copies run only on a capped
// grid (variant 6, 3 CTAs per SM; the tests' max_ctas).
// Predicted (% of the copy in the same run): Lean 80-84, lean_occ4 <= Lean, the cp.async variant
// 85-88 (predicted as a prefetch, before noticing the grid gives each CTA one block).
// Measured (H200, quantize_bench at 65fb63d, two runs, 7168 x 16384 and 16384 x 7168; plots/data/
// h200/session27/call1_65fb63d, where variants 4 and 5 were named lean_prefetch and
// lean_prefetch_occ4): occ3 73.6-74.7, Lean 79.5-79.8, lean_occ4 65.8-66.6 (104 bytes spilled at
// 64 registers), lean_async **91.6-92.0** (the default since), lean_async_occ4 82.6-83.1 (44 bytes
// spilled). ncu at 7168 x 16384: DRAM throughput 63.0 % of peak (occ3), 66.9 % (Lean), 77.5 %
// (lean_async); 150.9, 141.8 and 119.7 us; the same 3 CTAs per SM (registers) and ~36 % achieved
// occupancy in all three. So the gain of lean_async over Lean is the load path itself (LDGSTS
// into shared memory against LDG into registers, same bytes, same CTAs), not a prefetch.
/// Dynamic shared memory of the cp.async dual (Async): codes tile 16 KB, stage 32 KB, warp_max.
constexpr int kDual128AsyncSmem = (128 * 32 + 128 * 64 + kThreadsBlock / 32) * 4;

template <bool Vec, bool VecT, int MinBlocks, bool Lean, bool Async>
__global__ void __launch_bounds__(kThreadsBlock, MinBlocks)
    quantize_128x128_dual_kernel(const std::uint16_t* __restrict__ w, std::int64_t N,
                                 std::int64_t K, std::int64_t ldw, std::uint8_t* __restrict__ q,
                                 std::int64_t ldq, float* __restrict__ scales,
                                 BlockScaleLayout layout, std::uint8_t* __restrict__ q_t,
                                 std::int64_t ldq_t, float* __restrict__ scales_t,
                                 BlockScaleLayout layout_t, bool pow2) {
  static_assert(!Async || (Vec && Lean), "the cp.async kernel is the lean vector one");
  // Shared memory: static without Async; with it, all dynamic (kDual128AsyncSmem): the
  // codes tile, the stage (128 rows x 16 chunks of 8 bf16, [row][chunk]) and warp_max.
  __shared__ unsigned warp_max_s[Async ? 1 : kThreadsBlock / 32];
  __shared__ __align__(16) unsigned codes_s[Async ? 4 : 128 * 32];
  extern __shared__ __align__(16) unsigned dynamic_smem[];
  unsigned* const codes = Async ? dynamic_smem : codes_s;  // 128 rows x 128 codes, swizzled
  uint4* const stage = reinterpret_cast<uint4*>(dynamic_smem + 128 * 32);
  unsigned* const warp_max = Async ? dynamic_smem + 128 * 32 + 128 * 64 : warp_max_s;
  const std::int64_t kb = ceil_div(K, 128), nb = ceil_div(N, 128);
  const int t = threadIdx.x, cc = t & 15, rr = t >> 4;
  const int lane = t & 31, m = lane & 7, p = (t >> 5) * 4 + (lane >> 3);
  // Async: block b's chunks into the stage (zero-filled past N and K: with K % 8 == 0 a chunk
  // is all in or all out), one cp.async group per block.
  const auto issue = [&](std::int64_t b) {
    if constexpr (Async) {
      const std::int64_t i = b / kb, c = (b - i * kb) * 128 + cc * 8;
#pragma unroll
      for (int it = 0; it < 8; ++it) {
        const std::int64_t r = i * 128 + rr + 16 * it;
        const bool in = r < N && c < K;
        ptx::cp_async_16(ptx::smem_u32(&stage[(rr + 16 * it) * 16 + cc]), in ? w + r * ldw + c : w,
                         in ? 16u : 0u);
      }
      ptx::cp_async_commit();
    }
  };
  if (Async && blockIdx.x < nb * kb) issue(blockIdx.x);
  for (std::int64_t b = blockIdx.x; b < nb * kb; b += gridDim.x) {
    const std::int64_t i = b / kb, j = b - (b / kb) * kb;
    const std::int64_t c = j * 128 + cc * 8;
    uint4 v[8];
    unsigned mx;
    if constexpr (Async) {
      ptx::cp_async_wait<0>();  // this thread's own chunks (it reads nothing else): no barrier
#pragma unroll
      for (int it = 0; it < 8; ++it) v[it] = lds128(&stage[(rr + 16 * it) * 16 + cc]);
      mx = block_amax(v, warp_max);  // its barrier: every thread has read the stage
      if (b + gridDim.x < nb * kb) issue(b + gridDim.x);
    } else {
      mx = load_block_amax<Vec>(w, ldw, K, N, i, c, rr, v, warp_max);
    }
    // ---- row pass: q, and the codes into the tile (rows past N and columns past K hold the
    // codes of the zeros read there; the column pass does not store them)
    const auto row_pass = [&](auto quant) {
#pragma unroll
      for (int it = 0; it < 8; ++it) {
        const uint2 c8 = quant(v[it]);
        const std::int64_t r = i * 128 + rr + 16 * it;
        if (r < N) store8<Vec>(q + r * ldq, c, K, c8);
        *reinterpret_cast<uint2*>(&codes[(rr + 16 * it) * 32 + ((2 * cc) ^ (4 * it))]) = c8;
      }
    };
    float scale;
    if constexpr (Lean) {
      const LeanScale g = lean_scale(mx, pow2);
      scale = g.scale;
      if (!g.tiny) row_pass([&](const uint4& x) { return lean_quant8<false>(x, g); });
      else row_pass([&](const uint4& x) { return lean_quant8<true>(x, g); });
    } else {
      scale = scale_from_bits(mx, pow2);
      const ExactDivider d(scale);
      const bool nonfinite = mx >= kNonFinite;
      row_pass([&](const uint4& x) { return quant8(x, d, nonfinite); });
    }
    if (t == 0) {
      scales[layout.offset(i, j)] = scale;
      scales_t[layout_t.offset(j, i)] = scale;
    }
    if (j == kb - 1 && i < nb - 1) zero_block_row_padding<kThreadsBlock>(scales, layout, i, kb);
    // The same for W^T's grid, whose rows are W's block columns.
    if (i == nb - 1 && j < kb - 1) zero_block_row_padding<kThreadsBlock>(scales_t, layout_t, j, nb);
    __syncthreads();
    // ---- column pass: q_t rows k = 128 j + 4 p + e, columns n = 128 i + 16 m .. + 15
    unsigned wv[16];
#pragma unroll
    for (int r = 0; r < 16; ++r) wv[r] = codes[(16 * m + r) * 32 + (p ^ (4 * m))];
    unsigned out[4][4];  // out[e][g]: codes of column 4 p + e, rows 16 m + 4 g .. + 3
#pragma unroll
    for (int g = 0; g < 4; ++g) {
      // 4 x 4 byte transpose: rows a, b, c, d (bytes = columns) -> columns (bytes = rows).
      const unsigned t0 = __byte_perm(wv[4 * g], wv[4 * g + 1], 0x5140);      // a0 b0 a1 b1
      const unsigned t1 = __byte_perm(wv[4 * g], wv[4 * g + 1], 0x7362);      // a2 b2 a3 b3
      const unsigned t2 = __byte_perm(wv[4 * g + 2], wv[4 * g + 3], 0x5140);  // c0 d0 c1 d1
      const unsigned t3 = __byte_perm(wv[4 * g + 2], wv[4 * g + 3], 0x7362);  // c2 d2 c3 d3
      out[0][g] = __byte_perm(t0, t2, 0x5410);                                // a0 b0 c0 d0
      out[1][g] = __byte_perm(t0, t2, 0x7632);                                // a1 b1 c1 d1
      out[2][g] = __byte_perm(t1, t3, 0x5410);
      out[3][g] = __byte_perm(t1, t3, 0x7632);
    }
    const std::int64_t n0 = i * 128 + 16 * m;
#pragma unroll
    for (int e = 0; e < 4; ++e) {
      const std::int64_t k = j * 128 + 4 * p + e;
      if (k < K) store16<VecT>(q_t + k * ldq_t + n0, n0, N, out[e]);
    }
    __syncthreads();  // warp_max and codes are reused by the next block
  }
}

// ------------------------------------------------------------------------------------- dual ----
// One CTA per 128 x 128 tile (tm, tk) of x (rows m, columns k), grid-stride, row-major.
// Phase 1 (as the 128x128 kernel's loads): each 16-lane half-warp holds one row of the tile;
//   the row's amax is the 1 x 128 group (m, tk) of q: quantise and store q, and park the bf16
//   tile in shared memory, tile[row][128] (256 bytes a row; 16-byte stores, conflict-free).
// Phase 2 (quantize_tile_columns, quantize_kernels.cuh): the tile's columns (the 128 x 1 groups
//   of x = the 1 x 128 groups of q_t) -> q_t and scales_t.
constexpr int kThreadsDual = 256;

template <bool VecX, bool VecT>
__global__ void __launch_bounds__(kThreadsDual, 3)
    quantize_dual_kernel(const std::uint16_t* __restrict__ x, std::int64_t M, std::int64_t K,
                         std::int64_t ldx, std::uint8_t* __restrict__ q, std::int64_t ldq,
                         float* __restrict__ scales, GroupScaleLayout layout,
                         std::uint8_t* __restrict__ q_t, std::int64_t ldq_t,
                         float* __restrict__ scales_t, GroupScaleLayout layout_t, bool pow2) {
  __shared__ __align__(16) unsigned tile[128 * 64];  // 128 rows x 64 words (128 bf16)
  __shared__ unsigned col_max[4][64];
  const std::int64_t mt = ceil_div(M, 128), kt = ceil_div(K, 128);
  const int t = threadIdx.x, cc = t & 15, rr = t >> 4;
  for (std::int64_t b = blockIdx.x; b < mt * kt; b += gridDim.x) {
    const std::int64_t tm = b / kt, tk = b - (b / kt) * kt;
    // ---- phase 1: rows -> q
    const std::int64_t c = tk * 128 + cc * 8;
    uint4 v[8];
    load_tile_rows<VecX>(x, ldx, K, tm * 128, M, rr, c, v);
    // Row amax of the 8 rows this thread touches; lane cc computes the scale and reciprocal of
    // row it = cc % 8 only (once per thread instead of 8 times), then shares them by shuffle.
    unsigned m_row[8];
    unsigned m_mine = 0;
#pragma unroll
    for (int it = 0; it < 8; ++it) {
      unsigned m = fold2(max_abs2(v[it]));
#pragma unroll
      for (int o = 8; o >= 1; o >>= 1) m = max(m, __shfl_xor_sync(0xFFFFFFFFu, m, o));
      m_row[it] = m;
      m_mine = (cc & 7) == it ? m : m_mine;
      *reinterpret_cast<uint4*>(&tile[(rr + 16 * it) * 64 + cc * 4]) = v[it];
    }
    const float s_mine = scale_from_bits(m_mine, pow2);
    const float y_mine = __fdiv_rn(1.0f, s_mine);
#pragma unroll
    for (int it = 0; it < 8; ++it) {
      const int src = (threadIdx.x & 16) | it;  // a lane of this half-warp with cc % 8 == it
      const float scale = __shfl_sync(0xFFFFFFFFu, s_mine, src);
      const ExactDivider d(scale, __shfl_sync(0xFFFFFFFFu, y_mine, src));
      const std::int64_t r = tm * 128 + rr + 16 * it;
      if (r < M) {
        store8<VecX>(q + r * ldq, c, K, quant8(v[it], d, m_row[it] >= kNonFinite));
        if (cc == 0) scales[layout.offset(r, tk)] = scale;
        zero_group_padding(scales, layout, M, kt, r, tk, cc, 16);
      }
    }
    __syncthreads();
    // ---- phase 2: columns -> q_t
    quantize_tile_columns<VecT, false>(tile, col_max, tk, K, tm, M, mt, 128, q_t, ldq_t, scales_t,
                                       layout_t, pow2);
    __syncthreads();  // tile and col_max are reused by the next tile
  }
}

// ------------------------------------------------------------------ v2_lean: 1 x 128 and dual ----
// tuning_1x128 variant 1. What held the v1 kernels back (H200: 1 x 128 75-80 % of the copy, dual
// 49 %), read from their SASS and ptxas reports as for the MX quantisers (quantize_mx_gpu.cu):
//  - instructions: Markstein's division (FMUL, 4 FFMA, copysign) per element, and two __fdiv_rn
//    (scale and reciprocal, each ~15 instructions with a slow-path branch) per group in every lane
//    of it; the row kernel's group is 4 lanes (32 elements each), the dual's 16 lanes (8 each);
//  - the row kernel keeps one row ahead in flight per warp on a grid of ~8 CTAs per SM (each warp
//    walks only ~7-8 rows; 1057 CTAs on 528 slots at 8192 x 7168 is a third wave of one CTA);
//  - spills: 64 / 80 registers with 8-24 bytes of stack (the __fdiv_rn slow paths);
//  - the dual stores q_t as 32-byte pieces of 32 different rows per warp instruction.
// v2 is the MX v2 kernels' structure with the lean arithmetic (quantize_kernels.cuh): one CTA
// per 128 x 128 tile on a 2-D grid (x: tile column tk, y: tile row tm, grid-stride in both), the
// tile loaded at once (8 x 16 bytes per thread, 32 KB per CTA in flight), no barrier in the
// single kernel. Thread map of the row pass: warp w, lane = 4 qd + l4 holds rows 16 w + qd and
// 16 w + 8 + qd of the tile (slot 0, 1) and in each the four 8-element chunks at columns
// 32 j + 8 l4: a group (a tile row) is 4 lanes, 32 elements a lane, amax by 2 xor-shuffles, the
// scale and reciprocal (lean_scale, ~15 instructions) once per lane and row; each load
// instruction reads 64 contiguous bytes of 8 rows, each q store writes a whole 32-byte sector of
// 8 rows, and the 8 lanes l4 = 0 store the scales of 8 consecutive rows (one 32-byte sector when
// the layout is mn-major). Per element: FMUL + 2 FFMA, half a cvt, the |x| maximum, unpack.
// Dual: the bf16 tile is parked in shared memory (swz1) and the column pass (lean_columns) makes
// q_t = x^T and its scales: lane j = lane % 8 takes rows 16 j .. 16 j + 15 of the word column p
// (columns 2p, 2p + 1), a column's group (128 rows) is the 8 lanes j, amax by 3 xor-shuffles,
// and for a fixed p the 8 lanes store one whole 128-byte line of a q_t row (16-byte stores when
// VecT), so a warp store writes 4 full lines. Two barriers per tile.
// Scalar paths (Vec = false: x or q misaligned, ldx or ldq or K not a multiple of 8): the same map
// with element loads and stores bounded by K.
// v3_shared (tuning_1x128 variant 2, Share = true; not yet measured): v2 with each group's scale
// and reciprocal computed once per pair of groups instead of once per lane and group. In v2 every
// lane of a group runs lean_scale (~25 SASS instructions on the common path: the scale, its rare
// cases, the prescale, rcp + a Newton step), i.e. the 4 lanes of a row group and the 8 lanes of a
// column group each compute the same values, and each lane computes two (two rows; the two
// columns of its word column). v3: the even lanes of a group compute the first, the odd lanes the
// second, and every lane fetches both by 4 shuffles (lean_scale_pair; lean_scale_from keeps the
// tiny / non-finite tests local): ~12 instead of ~25 per group and lane, in the dual ~40 of its
// ~900 instructions per thread and tile (row pass once, column pass twice). Same values by
// construction (lean_scale is a function of the amax bits, which all lanes of the group hold).
// Same registers (single 64, dual 80), no spill, same CTAs per SM.
// v4_occ4 (tuning_1x128 variant 3, Version 4; not yet measured): the dual at 4 CTAs per SM
// instead of 3, i.e. 128 KB of loads in flight per SM instead of 96 KB (each CTA loads its tile and
// then computes, so more CTAs is what keeps more bytes in flight; the single kernel runs 4 and
// reaches 93 % of the copy, the dual at 3 85 %). 4 CTAs need 64 registers: v3's dual spilled
// there (56-80 bytes) because the row pass holds the whole tile (32 registers) while it converts;
// v4 takes both row amaxes, parks the tile in shared memory at once (v dead), and reads each
// slot's 4 chunks back (lds128: own bytes, no barrier) to convert them: 64 registers, no spill,
// for 8 more LDS.128 per thread and tile. The column pass is v3's. The single kernel's v4 is its
// v3 (4 CTAs already).
// v6_interior (tuning_1x128 variant 5, Version 6; session 28; the dual's default since): v2 with
// a second copy of a tile's work for whole tiles (128 rows of x, 128 columns inside K) whose
// groups have no scale padding to zero, taken when every leading dimension is below 2^23: no
// bound, padding or row test, and the loads, the q and q_t stores and the scale stores addressed
// by 32-bit offsets from the tile's corner (one 64-bit product per tensor and tile, not one per
// row). Why: ncu's source view of v2's dual (session 28, call 1) counted 1584 SASS instructions
// per warp and tile, every one executed once (straight-line code), the issue slots 69 % busy and
// 21 % of the warps' stall samples waiting for the loads: the instruction stream set the pace,
// and ~40 % of it was addressing and tests. v6: 1392 per warp and tile (ncu), 3420-3421 against
// 3334-3343 GB/s at 8192 x 7168 (+2.4 %, the same process; the predicted range was +2-4 %); the
// single kernel level with v2 (memory-bound at 93 %). Measured
// and not taken: v6 with two tiles per CTA (its ~170-instruction set-up paid once) -2 %; v5_async
// with capped grids (2, 4, 9-10 tiles per CTA, the next one in flight) +1 to -6 %; and the
// partial last wave (8192 x 7168 is 9.05 waves of 396 CTAs) is not what holds the dual back: v2 at
// M = 7936, 8448, 8704 (8.8, 9.3, 9.6 waves) ran 3320-3394 GB/s, no step at 9.05 waves.
struct Lean1x128Args {
  const std::uint16_t* x;
  std::int64_t M, K, ldx;
  std::uint8_t* q;
  std::int64_t ldq;
  float* scales;
  GroupScaleLayout layout;
  std::uint8_t* q_t;  // dual only
  std::int64_t ldq_t;
  float* scales_t;
  GroupScaleLayout layout_t;
  bool pow2;
};

constexpr int kThreadsLean = 256;

/// CTAs per SM of the lean kernels (their __launch_bounds__): single 4; dual 3 (80 registers),
/// v4_occ4's dual 4 (64 registers, no spill: its row pass converts from shared memory), v5's 3
/// (its two 32 KB stages).
constexpr int lean_ctas(bool dual, int version) { return !dual || version == 4 ? 4 : 3; }

/// Dynamic shared memory of v5_async's dual: two stages of a 128 x 128 bf16 tile (swz1).
constexpr int kLeanAsyncSmem = 2 * 128 * 16 * 16;

/// Version: 2 (v2_lean), 3 (v3_shared: Share), 4 (v4_occ4, dual only: FromSmem, 4 CTAs per SM),
/// 5 (v5_async, dual only: v3 with the tile loaded by cp.async into one of two shared-memory
/// stages, the CTA's next tile into the other; Vec only), 6 (v6_interior: v2, and when Vec a
/// second copy of the tile's work for whole tiles without scale padding, Interior, that tests no
/// bound: the loads, the q and q_t stores and the scale offsets of such a tile are unconditional).
template <bool Vec, bool Dual, bool VecT, int Version>
__global__ void __launch_bounds__(kThreadsLean, lean_ctas(Dual, Version))
    quantize_1x128_lean_kernel(const Lean1x128Args a) {
  constexpr bool Share = Version >= 3 && Version <= 5, FromSmem = Dual && Version == 4;
  constexpr bool Async = Dual && Version == 5, Interior = Version == 6 && Vec;
  static_assert(!Async || Vec, "v5_async loads whole 16-byte chunks (Vec: K % 8 == 0)");
  __shared__ __align__(16) uint4 tile_s[Dual && !Async ? 128 * 16 : 1];
  extern __shared__ __align__(16) uint4 stages[];  // Async: 2 x 128 rows x 16 chunks (swz1)
  const uint4* tile = tile_s;
  int stage = 0;
  const std::int64_t M = a.M, K = a.K, mt = ceil_div(M, 128), kt = ceil_div(K, 128);
  const int lane = threadIdx.x & 31, w = threadIdx.x >> 5, qd = lane >> 2, l4 = lane & 3;
  const int r0 = 16 * w + qd;  // slot s: tile row r0 + 8 s
  // Async: tile (tm, tk)'s chunks of this thread (the same map as the loads below) into stage st
  // at their swz1 places, zero-filled past M and K; one cp.async group per tile.
  const auto issue = [&](std::int64_t tm, std::int64_t tk, int st) {
    if constexpr (Async) {
      const int rows = int(std::min<std::int64_t>(M - tm * 128, 128));
#pragma unroll
      for (int sl = 0; sl < 2; ++sl)
#pragma unroll
        for (int j = 0; j < 4; ++j) {
          const std::int64_t c = tk * 128 + 8 * l4 + 32 * j;
          const bool in = r0 + 8 * sl < rows && c < K;
          ptx::cp_async_16(ptx::smem_u32(&stages[st * 2048 + swz1(r0 + 8 * sl, 4 * j + l4)]),
                           in ? a.x + (tm * 128 + r0 + 8 * sl) * a.ldx + c : a.x, in ? 16u : 0u);
        }
      ptx::cp_async_commit();
    }
  };
  if (Async && blockIdx.y < mt && blockIdx.x < kt) issue(blockIdx.y, blockIdx.x, 0);
  // Interior: 32-bit offsets inside a tile need 128 rows (or columns) of every tensor and scale
  // array below 2^31 bytes from the tile's corner.
  constexpr std::int64_t kSmallLd = std::int64_t(1) << 23;
  const bool small_ld = a.ldx < kSmallLd && a.ldq < kSmallLd && a.layout.ld < kSmallLd &&
                        (!Dual || (a.ldq_t < kSmallLd && a.layout_t.ld < kSmallLd));
  for (std::int64_t tm = blockIdx.y; tm < mt; tm += gridDim.y)
    for (std::int64_t tk = blockIdx.x; tk < kt; tk += gridDim.x) {
      const int rows = int(std::min<std::int64_t>(M - tm * 128, 128));  // rows of the tile in x
      const std::int64_t c0 = tk * 128 + 8 * l4;                        // chunk j at c0 + 32 j
      const std::int64_t r_first = tm * 128 + r0;
      const bool pads = tile_has_padding(a.layout, tm, mt, tk, kt);
      // The tile's work; In (v6_interior): the tile is whole and has no scale padding, so no
      // bound or padding test runs (a second copy of the code, taken by the interior tiles).
      const auto work = [&](auto in_c) {
        constexpr bool In = decltype(in_c)::value;
        uint4 v[2][4];
        if constexpr (Async) {
          // This tile's copies have landed (each thread waits for its own, the barrier makes all
          // of them visible to the column pass), and every thread is past the previous tile's
          // column pass: the other stage is free for the CTA's next tile (the walk's order).
          ptx::cp_async_wait<0>();
          __syncthreads();
          std::int64_t ntm = tm, ntk = tk + gridDim.x;
          if (ntk >= kt) ntk = blockIdx.x, ntm = tm + gridDim.y;
          if (ntm < mt) issue(ntm, ntk, stage ^ 1);
          tile = stages + stage * 2048;
        }
        // In: 32-bit offsets from the tile's corner (every leading dimension < 2^23, checked with
        // the tile's test), one 64-bit product per tensor and tile instead of one per row.
        [[maybe_unused]] const std::uint16_t* const x_tile = a.x + tm * 128 * a.ldx + tk * 128;
        [[maybe_unused]] std::uint8_t* const q_tile = a.q + tm * 128 * a.ldq + tk * 128;
#pragma unroll
        for (int sl = 0; sl < 2; ++sl) {
          if constexpr (Async) {  // own chunks, already zero-filled past M and K
#pragma unroll
            for (int j = 0; j < 4; ++j) v[sl][j] = lds128(&tile[swz1(r0 + 8 * sl, 4 * j + l4)]);
          } else if constexpr (In) {
            const std::uint16_t* xi = x_tile + (unsigned(r0 + 8 * sl) * unsigned(a.ldx) + 8 * l4);
#pragma unroll
            for (int j = 0; j < 4; ++j)
              v[sl][j] = __ldg(reinterpret_cast<const uint4*>(xi + 32 * j));
          } else {
            const std::uint16_t* xr = a.x + (r_first + 8 * sl) * a.ldx;
#pragma unroll
            for (int j = 0; j < 4; ++j) {
              const std::int64_t c = c0 + 32 * j;
              if constexpr (Vec)  // K % 8 == 0: a chunk is all in or all out
                v[sl][j] = r0 + 8 * sl < rows && c < K
                               ? __ldg(reinterpret_cast<const uint4*>(xr + c))
                               : make_uint4(0, 0, 0, 0);
              else
                v[sl][j] = r0 + 8 * sl < rows ? load8<false>(xr, c, K) : make_uint4(0, 0, 0, 0);
            }
          }
        }
        const auto row_amax = [&](int sl) {  // the amax bits of slot sl's row (its 4 lanes)
          const unsigned m2 = __vmaxu2(__vmaxu2(max_abs2(v[sl][0]), max_abs2(v[sl][1])),
                                       __vmaxu2(max_abs2(v[sl][2]), max_abs2(v[sl][3])));
          unsigned m = fold2(m2);
          m = max(m, __shfl_xor_sync(0xFFFFFFFFu, m, 1));
          return max(m, __shfl_xor_sync(0xFFFFFFFFu, m, 2));
        };
        LeanScale shared[2];  // Share: both rows' scales (lanes l4 = 0, 2: the 1st; 1, 3: the 2nd)
        if constexpr (FromSmem) {
          // v4: both amax, then the tile goes to shared memory at once and v is dead; each slot is
          // read back (own bytes: no barrier) to be converted, 16 registers at a time, not 32.
          const unsigned m0 = row_amax(0), m1 = row_amax(1);
#pragma unroll
          for (int sl = 0; sl < 2; ++sl)
#pragma unroll
            for (int j = 0; j < 4; ++j) tile_s[swz1(r0 + 8 * sl, 4 * j + l4)] = v[sl][j];
          lean_scale_pair<4>(m0, m1, a.pow2, shared[0], shared[1]);
        } else if constexpr (Share) {
          lean_scale_pair<4>(row_amax(0), row_amax(1), a.pow2, shared[0], shared[1]);
        }
#pragma unroll
        for (int sl = 0; sl < 2; ++sl) {
          const LeanScale g = Share ? shared[sl] : lean_scale(row_amax(sl), a.pow2);
          const std::int64_t r = r_first + 8 * sl;
          if (In || r0 + 8 * sl < rows) {
            uint2 codes[4];
            if constexpr (FromSmem) {
              uint4 vs[4];
#pragma unroll
              for (int j = 0; j < 4; ++j) vs[j] = lds128(&tile[swz1(r0 + 8 * sl, 4 * j + l4)]);
              lean_quant_chunks<4>(vs, g, codes);
            } else {
              lean_quant_chunks<4>(v[sl], g, codes);
            }
            if constexpr (In) {
              std::uint8_t* qr = q_tile + (unsigned(r0 + 8 * sl) * unsigned(a.ldq) + 8 * l4);
#pragma unroll
              for (int j = 0; j < 4; ++j) *reinterpret_cast<uint2*>(qr + 32 * j) = codes[j];
              // offset(r, tk) = offset(tm 128, tk) + (r0 + 8 sl) rstep
              const unsigned rstep = a.layout.major == ScaleMajor::mn ? 1u : unsigned(a.layout.ld);
              if (l4 == 0)
                a.scales[a.layout.offset(tm * 128, tk) + unsigned(r0 + 8 * sl) * rstep] = g.scale;
            } else {
              std::uint8_t* qr = a.q + r * a.ldq;
#pragma unroll
              for (int j = 0; j < 4; ++j) {
                const std::int64_t c = c0 + 32 * j;
                if constexpr (Vec) {
                  if (c < K) *reinterpret_cast<uint2*>(qr + c) = codes[j];
                } else {
                  store8<false>(qr, c, K, codes[j]);
                }
              }
              if (l4 == 0) a.scales[a.layout.offset(r, tk)] = g.scale;
              if (pads) zero_group_padding(a.scales, a.layout, M, kt, r, tk, l4, 4);
            }
          }
          if constexpr (Dual && !FromSmem && !Async) {
#pragma unroll
            for (int j = 0; j < 4; ++j) tile_s[swz1(r0 + 8 * sl, 4 * j + l4)] = v[sl][j];
          }
        }
        if constexpr (Async) {  // the tile is in its stage since the barrier above
          lean_columns<VecT, false, Share>(tile, tm, tk, K, M, mt, 128, a.q_t, a.ldq_t, a.scales_t,
                                           a.layout_t, a.pow2);
          stage ^= 1;  // the next iteration's barrier comes before its stage is rewritten
        } else if constexpr (Dual) {
          __syncthreads();
          lean_columns<VecT, false, Share, In>(tile, tm, tk, K, M, mt, 128, a.q_t, a.ldq_t,
                                               a.scales_t, a.layout_t, a.pow2);
          __syncthreads();  // the tile is rewritten by the next iteration
        }
      };
      if constexpr (Interior) {
        if (small_ld && rows == 128 && (tk + 1) * 128 <= K && !pads &&
            !(Dual && tile_has_padding(a.layout_t, tk, kt, tm, mt))) {
          work(std::true_type{});
          continue;
        }
      }
      work(std::false_type{});
    }
}

// -------------------------------------------------------------------------------- converters ----
// One thread per entry of dst's required extent: a scale (copied from src) or padding (0).
__global__ void convert_group_scales_kernel(const float* __restrict__ src, GroupScaleLayout sl,
                                            float* __restrict__ dst, GroupScaleLayout dl,
                                            std::int64_t rows, std::int64_t groups,
                                            std::int64_t count) {
  for (std::int64_t o = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x; o < count;
       o += std::int64_t(gridDim.x) * blockDim.x) {
    const std::int64_t outer = o / dl.ld, inner = o - outer * dl.ld;
    const std::int64_t r = dl.major == ScaleMajor::mn ? inner : outer;
    const std::int64_t g = dl.major == ScaleMajor::mn ? outer : inner;
    dst[o] = r < rows && g < groups ? src[sl.offset(r, g)] : 0.0f;
  }
}

__global__ void convert_block_scales_kernel(const float* __restrict__ src, BlockScaleLayout sl,
                                            float* __restrict__ dst, BlockScaleLayout dl,
                                            std::int64_t kb, std::int64_t count) {
  for (std::int64_t o = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x; o < count;
       o += std::int64_t(gridDim.x) * blockDim.x) {
    const std::int64_t i = o / dl.ld, j = o - i * dl.ld;
    dst[o] = j < kb ? src[sl.offset(i, j)] : 0.0f;
  }
}

}  // namespace

namespace {

void require_variant_1x128(const char* who, int variant, int max_ctas) {
  if (variant < 0 || variant >= tuning_1x128::kVariants)
    fail(who, "variant = " + std::to_string(variant) + " must be in [0, " +
                  std::to_string(tuning_1x128::kVariants) + ")");
  if (max_ctas < 0) fail(who, "max_ctas = " + std::to_string(max_ctas) + " must be >= 0");
}

/// v2_lean and later: one CTA per 128 x 128 tile, (tile columns, tile rows), at most 65535 tile
/// rows and at most max_ctas CTAs in all when max_ctas > 0 (the kernel strides over the rest).
template <bool Vec, bool Dual, bool VecT, int Version>
void launch_lean_kernel(const char* who, const Lean1x128Args& a, int max_ctas,
                        cudaStream_t stream) {
  const auto kernel = &quantize_1x128_lean_kernel<Vec, Dual, VecT, Version>;
  const int smem = Dual && Version == 5 ? kLeanAsyncSmem : 0;
  prepare(reinterpret_cast<const void*>(kernel), "quantize_1x128_lean_kernel", who, smem);
  const std::int64_t cap = max_ctas > 0 ? max_ctas : std::int64_t(1) << 62;
  const std::int64_t gx = std::min({ceil_div(a.K, 128), cap, std::int64_t(0x7FFFFFFF)});
  const std::int64_t gy =
      std::min({ceil_div(a.M, 128), std::max<std::int64_t>(1, cap / gx), std::int64_t(65535)});
  kernel<<<dim3(unsigned(gx), unsigned(gy), 1u), kThreadsLean, smem, stream>>>(a);
  check_launch(who);
}

/// variant 1 (v2_lean), 2 (v3_shared: the scales shared by shuffles), 3 (v4_occ4: the dual at 4
/// CTAs per SM; the single kernel runs 4 already, so its v4 is its v3), 4 (v5_async: the dual's
/// tiles by cp.async when Vec; otherwise, and for the single kernel, v3) or 5 (v6_interior: v2
/// with a copy of the tile's code for whole tiles, without bound tests; v2 when not Vec).
template <bool Vec, bool Dual, bool VecT>
void launch_lean(int variant, const char* who, const Lean1x128Args& a, int max_ctas,
                 cudaStream_t stream) {
  if (variant == 1) return launch_lean_kernel<Vec, Dual, VecT, 2>(who, a, max_ctas, stream);
  if (variant == 5) return launch_lean_kernel<Vec, Dual, VecT, 6>(who, a, max_ctas, stream);
  if constexpr (Dual) {
    if (variant == 3) return launch_lean_kernel<Vec, Dual, VecT, 4>(who, a, max_ctas, stream);
    if constexpr (Vec)
      if (variant == 4) return launch_lean_kernel<Vec, Dual, VecT, 5>(who, a, max_ctas, stream);
  }
  launch_lean_kernel<Vec, Dual, VecT, 3>(who, a, max_ctas, stream);
}

}  // namespace

namespace tuning_1x128 {

// v2_lean: measured beside v1 on the H200 (quantize_bench at 3e2acd2): 1 x 128 92.7-93.6 % of the
// copy against 75.2-80.3, dual 85.4-85.5 against 47.8-49.5, tokens 73.1-74.7 against 61.9-64.1.
// The dual's v6_interior (session 28, quantize_bench at cf929d5, two runs, same process): 3420-3421
// GB/s at 8192 x 7168 and 3462-3465 at 4096 x 16384 against v2_lean's 3334-3343 and 3393-3405
// (+2.4 %, +1.9 %); ncu: 1392 instead of 1584 instructions per warp and tile. The single
// kernel's v6 is level with its v2 (93 % of the copy, memory-bound): it stays on v2.
int default_variant(Kind kind) { return kind == Kind::dual ? 5 : 1; }

const char* variant_name(int v) {
  return v == 0   ? "v1_first"
         : v == 1 ? "v2_lean"
         : v == 2 ? "v3_shared"
         : v == 3 ? "v4_occ4"
         : v == 4 ? "v5_async"
         : v == 5 ? "v6_interior"
                  : "?";
}

void quantize_1x128(int variant, int max_ctas, const std::uint16_t* x, std::int64_t M,
                    std::int64_t K, std::int64_t ldx, std::uint8_t* q, std::int64_t ldq,
                    float* scales, GroupScaleLayout layout, QuantizeOptions opt,
                    cudaStream_t stream) {
  const char* who = "fp8gemm::quantize_1x128";
  validate_quantize_1x128(x, M, K, ldx, q, ldq, scales, layout);
  require_variant_1x128("quantize_1x128", variant, max_ctas);
  require_device_accessible(x, extent_bytes(who, "x", M, ldx, K, 2), who, "x");
  require_device_accessible(q, extent_bytes(who, "q", M, ldq, K, 1), who, "q");
  require_device_accessible(scales, std::size_t(layout.required_elements(M, K)) * 4, who, "scales");
  const bool vec = aligned(x, 16) && ldx % 8 == 0 && aligned(q, 8) && ldq % 8 == 0;
  if (variant >= 1) {
    const Lean1x128Args a{
        x, M, K, ldx, q, ldq, scales, layout, nullptr, 0, nullptr, layout, opt.pow2_scales};
    if (vec && K % 8 == 0)
      launch_lean<true, false, false>(variant, who, a, max_ctas, stream);
    else
      launch_lean<false, false, false>(variant, who, a, max_ctas, stream);
    return;
  }
  const void* kernel = vec ? reinterpret_cast<const void*>(&quantize_1x128_kernel<true>)
                           : reinterpret_cast<const void*>(&quantize_1x128_kernel<false>);
  prepare(kernel, "quantize_1x128_kernel", who);
  const std::int64_t grid_x = ceil_div(ceil_div(K, 128), kGroupsPerCta);  // <= 2^31 - 1 blocks
  if (grid_x > 0x7FFFFFFF) fail("quantize_1x128", "K = " + std::to_string(K) + " is too large");
  // About 8 resident CTAs per SM in all (each warp then walks several rows, prefetching).
  const int sms = current_device_sm_count();
  std::int64_t grid_y = std::clamp<std::int64_t>(
      std::min(ceil_div(M, kRowsPerCta), ceil_div(std::int64_t(sms) * 8, grid_x)), 1, 65535);
  if (max_ctas > 0) grid_y = std::max<std::int64_t>(1, std::min(grid_y, max_ctas / grid_x));
  const dim3 grid{unsigned(grid_x), unsigned(grid_y), 1u};
  if (vec)
    quantize_1x128_kernel<true><<<grid, kThreads1x128, 0, stream>>>(x, M, K, ldx, q, ldq, scales,
                                                                   layout, opt.pow2_scales);
  else
    quantize_1x128_kernel<false><<<grid, kThreads1x128, 0, stream>>>(x, M, K, ldx, q, ldq, scales,
                                                                    layout, opt.pow2_scales);
  check_launch(who);
}

void quantize_1x128_dual(int variant, int max_ctas, const std::uint16_t* x, std::int64_t M,
                         std::int64_t K, std::int64_t ldx, std::uint8_t* q, std::int64_t ldq,
                         float* scales, GroupScaleLayout layout, std::uint8_t* q_t,
                         std::int64_t ldq_t, float* scales_t, GroupScaleLayout layout_t,
                         QuantizeOptions opt, cudaStream_t stream) {
  const char* who = "fp8gemm::quantize_1x128_dual";
  validate_quantize_1x128_dual(x, M, K, ldx, q, ldq, scales, layout, q_t, ldq_t, scales_t,
                               layout_t);
  require_variant_1x128("quantize_1x128_dual", variant, max_ctas);
  require_device_accessible(x, extent_bytes(who, "x", M, ldx, K, 2), who, "x");
  require_device_accessible(q, extent_bytes(who, "q", M, ldq, K, 1), who, "q");
  require_device_accessible(scales, std::size_t(layout.required_elements(M, K)) * 4, who, "scales");
  require_device_accessible(q_t, extent_bytes(who, "q_t", K, ldq_t, M, 1), who, "q_t");
  require_device_accessible(scales_t, std::size_t(layout_t.required_elements(K, M)) * 4, who,
                            "scales_t");
  const bool vx = aligned(x, 16) && ldx % 8 == 0 && aligned(q, 8) && ldq % 8 == 0;
  const bool vt = aligned(q_t, 16) && ldq_t % 16 == 0;
  if (variant >= 1) {
    const Lean1x128Args a{
        x, M, K, ldx, q, ldq, scales, layout, q_t, ldq_t, scales_t, layout_t, opt.pow2_scales};
    const bool v8 = vx && K % 8 == 0;
    if (v8 && vt)
      launch_lean<true, true, true>(variant, who, a, max_ctas, stream);
    else if (v8)
      launch_lean<true, true, false>(variant, who, a, max_ctas, stream);
    else if (vt)
      launch_lean<false, true, true>(variant, who, a, max_ctas, stream);
    else
      launch_lean<false, true, false>(variant, who, a, max_ctas, stream);
    return;
  }
  std::int64_t tiles = ceil_div(M, 128) * ceil_div(K, 128);
  if (max_ctas > 0) tiles = std::min<std::int64_t>(tiles, max_ctas);
  const unsigned grid = grid_for(tiles, 1);
  const bool p2 = opt.pow2_scales;
#define FP8GEMM_DUAL_LAUNCH(VX, VT)                                                              \
  do {                                                                                           \
    prepare(reinterpret_cast<const void*>(&quantize_dual_kernel<VX, VT>), "quantize_dual_kernel", \
            who);                                                                                \
    quantize_dual_kernel<VX, VT><<<grid, kThreadsDual, 0, stream>>>(                              \
        x, M, K, ldx, q, ldq, scales, layout, q_t, ldq_t, scales_t, layout_t, p2);               \
  } while (0)
  if (vx && vt) FP8GEMM_DUAL_LAUNCH(true, true);
  else if (vx) FP8GEMM_DUAL_LAUNCH(true, false);
  else if (vt) FP8GEMM_DUAL_LAUNCH(false, true);
  else FP8GEMM_DUAL_LAUNCH(false, false);
#undef FP8GEMM_DUAL_LAUNCH
  check_launch(who);
}

}  // namespace tuning_1x128

void quantize_1x128(const std::uint16_t* x, std::int64_t M, std::int64_t K, std::int64_t ldx,
                    std::uint8_t* q, std::int64_t ldq, float* scales, GroupScaleLayout layout,
                    QuantizeOptions opt, cudaStream_t stream) {
  tuning_1x128::quantize_1x128(tuning_1x128::default_variant(tuning_1x128::Kind::single), 0, x, M,
                               K, ldx, q, ldq, scales, layout, opt, stream);
}

void quantize_1x128_dual(const std::uint16_t* x, std::int64_t M, std::int64_t K, std::int64_t ldx,
                         std::uint8_t* q, std::int64_t ldq, float* scales, GroupScaleLayout layout,
                         std::uint8_t* q_t, std::int64_t ldq_t, float* scales_t,
                         GroupScaleLayout layout_t, QuantizeOptions opt, cudaStream_t stream) {
  tuning_1x128::quantize_1x128_dual(tuning_1x128::default_variant(tuning_1x128::Kind::dual), 0, x,
                                    M, K, ldx, q, ldq, scales, layout, q_t, ldq_t, scales_t,
                                    layout_t, opt, stream);
}

namespace {
// The device-memory checks of quantize_128x128's arguments, which its dual shares.
void require_128x128_accessible(const char* who, const std::uint16_t* w, std::int64_t N,
                                std::int64_t K, std::int64_t ldw, const std::uint8_t* q,
                                std::int64_t ldq, const float* scales,
                                const BlockScaleLayout& layout) {
  require_device_accessible(w, extent_bytes(who, "w", N, ldw, K, 2), who, "w");
  require_device_accessible(q, extent_bytes(who, "q", N, ldq, K, 1), who, "q");
  require_device_accessible(scales, std::size_t(layout.required_elements(N, K)) * 4, who, "scales");
}
}  // namespace

void quantize_128x128(const std::uint16_t* w, std::int64_t N, std::int64_t K, std::int64_t ldw,
                      std::uint8_t* q, std::int64_t ldq, float* scales, BlockScaleLayout layout,
                      QuantizeOptions opt, cudaStream_t stream) {
  const char* who = "fp8gemm::quantize_128x128";
  validate_quantize_128x128(w, N, K, ldw, q, ldq, scales, layout);
  require_128x128_accessible(who, w, N, K, ldw, q, ldq, scales, layout);
  const bool vec = aligned(w, 16) && ldw % 8 == 0 && aligned(q, 8) && ldq % 8 == 0;
  const void* kernel = vec ? reinterpret_cast<const void*>(&quantize_128x128_kernel<true>)
                           : reinterpret_cast<const void*>(&quantize_128x128_kernel<false>);
  prepare(kernel, "quantize_128x128_kernel", who);
  const unsigned grid = grid_for(ceil_div(N, 128) * ceil_div(K, 128), 1);
  if (vec)
    quantize_128x128_kernel<true><<<grid, kThreadsBlock, 0, stream>>>(w, N, K, ldw, q, ldq, scales,
                                                                     layout, opt.pow2_scales);
  else
    quantize_128x128_kernel<false><<<grid, kThreadsBlock, 0, stream>>>(w, N, K, ldw, q, ldq, scales,
                                                                      layout, opt.pow2_scales);
  check_launch(who);
}

void quantize_128x128_dual(const std::uint16_t* w, std::int64_t N, std::int64_t K,
                           std::int64_t ldw, std::uint8_t* q, std::int64_t ldq, float* scales,
                           BlockScaleLayout layout, std::uint8_t* q_t, std::int64_t ldq_t,
                           float* scales_t, BlockScaleLayout layout_t, QuantizeOptions opt,
                           cudaStream_t stream) {
  tuning_128x128::quantize_128x128_dual(tuning_128x128::kDefaultVariant, 0, w, N, K, ldw, q, ldq,
                                        scales, layout, q_t, ldq_t, scales_t, layout_t, opt,
                                        stream);
}

const char* tuning_128x128::variant_name(int v) {
  static const char* const names[kVariants] = {"occ3",       "occ4",
                                               "lean",       "lean_occ4",
                                               "lean_async", "lean_async_occ4",
                                               "lean_async_persistent"};
  return v >= 0 && v < kVariants ? names[v] : "?";
}

void tuning_128x128::quantize_128x128_dual(int variant, int max_ctas, const std::uint16_t* w,
                                           std::int64_t N, std::int64_t K, std::int64_t ldw,
                                           std::uint8_t* q, std::int64_t ldq, float* scales,
                                           BlockScaleLayout layout, std::uint8_t* q_t,
                                           std::int64_t ldq_t, float* scales_t,
                                           BlockScaleLayout layout_t, QuantizeOptions opt,
                                           cudaStream_t stream) {
  const char* who = "fp8gemm::quantize_128x128_dual";
  if (variant < 0 || variant >= kVariants)
    fail(who, "variant = " + std::to_string(variant) + " must be in [0, " +
                  std::to_string(kVariants) + ")");
  if (max_ctas < 0) fail(who, "max_ctas = " + std::to_string(max_ctas) + " must be >= 0");
  validate_quantize_128x128_dual(w, N, K, ldw, q, ldq, scales, layout, q_t, ldq_t, scales_t,
                                 layout_t);
  require_128x128_accessible(who, w, N, K, ldw, q, ldq, scales, layout);
  require_device_accessible(q_t, extent_bytes(who, "q_t", K, ldq_t, N, 1), who, "q_t");
  require_device_accessible(scales_t, std::size_t(layout_t.required_elements(K, N)) * 4, who,
                            "scales_t");
  const bool vec = aligned(w, 16) && ldw % 8 == 0 && aligned(q, 8) && ldq % 8 == 0;
  const bool vec_t = aligned(q_t, 16) && ldq_t % 16 == 0;
  // One CTA per block, or (variant 6) 3 CTAs per SM walking the blocks; max_ctas caps either.
  std::int64_t ctas = ceil_div(N, 128) * ceil_div(K, 128);
  if (variant == 6)
    ctas = std::min<std::int64_t>(ctas, 3 * std::int64_t(current_device_sm_count()));
  if (max_ctas > 0) ctas = std::min<std::int64_t>(ctas, max_ctas);
  const unsigned grid = grid_for(ctas, 1);
  auto launch = [&](auto kernel, int smem) {
    prepare(reinterpret_cast<const void*>(kernel), "quantize_128x128_dual_kernel", who, smem);
    kernel<<<grid, kThreadsBlock, smem, stream>>>(w, N, K, ldw, q, ldq, scales, layout, q_t, ldq_t,
                                                  scales_t, layout_t, opt.pow2_scales);
  };
  // MinBlocks (CTAs per SM), Lean arithmetic, Async (cp.async loads: vector loads with K % 8 == 0
  // only; the lean kernel otherwise).
  auto by_vectors = [&](auto min_blocks, auto lean, auto async) {
    constexpr int B = decltype(min_blocks)::value;
    constexpr bool L = decltype(lean)::value, P = decltype(async)::value;
    if constexpr (P) {
      if (vec && K % 8 == 0) {
        if (vec_t) launch(&quantize_128x128_dual_kernel<true, true, B, L, P>, kDual128AsyncSmem);
        else launch(&quantize_128x128_dual_kernel<true, false, B, L, P>, kDual128AsyncSmem);
        return;
      }
    }
    if (vec && vec_t) launch(&quantize_128x128_dual_kernel<true, true, B, L, false>, 0);
    else if (vec) launch(&quantize_128x128_dual_kernel<true, false, B, L, false>, 0);
    else if (vec_t) launch(&quantize_128x128_dual_kernel<false, true, B, L, false>, 0);
    else launch(&quantize_128x128_dual_kernel<false, false, B, L, false>, 0);
  };
  using Yes = std::true_type;
  using No = std::false_type;
  using Occ3 = std::integral_constant<int, 3>;
  using Occ4 = std::integral_constant<int, 4>;
  switch (variant) {
    case 0: by_vectors(Occ3{}, No{}, No{}); break;
    case 1: by_vectors(Occ4{}, No{}, No{}); break;
    case 2: by_vectors(Occ3{}, Yes{}, No{}); break;
    case 3: by_vectors(Occ4{}, Yes{}, No{}); break;
    case 5: by_vectors(Occ4{}, Yes{}, Yes{}); break;
    default: by_vectors(Occ3{}, Yes{}, Yes{}); break;  // 4 and 6 (its grid above)
  }
  check_launch(who);
}

void convert_group_scales(const float* src, GroupScaleLayout src_layout, float* dst,
                          GroupScaleLayout dst_layout, std::int64_t rows, std::int64_t K,
                          cudaStream_t stream) {
  const char* who = "fp8gemm::convert_group_scales";
  validate_convert_group_scales(src, src_layout, dst, dst_layout, rows, K);
  const std::int64_t count = dst_layout.required_elements(rows, K);
  require_device_accessible(src, std::size_t(src_layout.required_elements(rows, K)) * 4, who, "src");
  require_device_accessible(dst, std::size_t(count) * 4, who, "dst");
  prepare(reinterpret_cast<const void*>(&convert_group_scales_kernel), "convert_group_scales_kernel",
          who);
  launch_convert_group_scales(src, src_layout, dst, dst_layout, rows, K, stream);
}

void prepare_convert_group_scales() {
  prepare_kernel(reinterpret_cast<const void*>(&convert_group_scales_kernel),
                 "convert_group_scales_kernel", "sm_90a", 0);
}

void launch_convert_group_scales(const float* src, GroupScaleLayout src_layout, float* dst,
                                 GroupScaleLayout dst_layout, std::int64_t rows, std::int64_t K,
                                 cudaStream_t stream) {
  const std::int64_t count = dst_layout.required_elements(rows, K);
  convert_group_scales_kernel<<<grid_for(count, 256), 256, 0, stream>>>(
      src, src_layout, dst, dst_layout, rows, ceil_div(K, 128), count);
  check_launch("fp8gemm::convert_group_scales");
}

void convert_block_scales(const float* src, BlockScaleLayout src_layout, float* dst,
                          BlockScaleLayout dst_layout, std::int64_t rows, std::int64_t K,
                          cudaStream_t stream) {
  const char* who = "fp8gemm::convert_block_scales";
  validate_convert_block_scales(src, src_layout, dst, dst_layout, rows, K);
  const std::int64_t count = dst_layout.required_elements(rows, K);
  require_device_accessible(src, std::size_t(src_layout.required_elements(rows, K)) * 4, who, "src");
  require_device_accessible(dst, std::size_t(count) * 4, who, "dst");
  prepare(reinterpret_cast<const void*>(&convert_block_scales_kernel), "convert_block_scales_kernel",
          who);
  convert_block_scales_kernel<<<grid_for(count, 256), 256, 0, stream>>>(
      src, src_layout, dst, dst_layout, ceil_div(K, 128), count);
  check_launch(who);
}

}  // namespace fp8gemm
