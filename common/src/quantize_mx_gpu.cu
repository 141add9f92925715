// The MXFP8 quantisers on the GPU (common/quantize_gpu.hpp, "MXFP8"): kernels and host wrappers.
//
// Shared by every variant: CTAs of 256 threads on 128 x 128 tiles of x (or 32 x 128 strips of
// them); a 128 x 128 tile is exactly one 512-byte tile of the swizzled scale layout: its 128 rows x
// 4 blocks of 32 columns are the scales of scale tile (tm, tk), and, for the dual, its 128 columns
// x 4 blocks of 32 rows are those of tile (tk, tm) of x^T. The grid covers round_up(M, 128) x
// round_up(K, 128), the padded scale grid, so padding bytes (code 0) are written by the same code.
// Row pass (q): the thread map of load_tile_rows (thread t = 16 rr + cc holds the 8-element chunk
// cc of rows rr + 16 it); an MX block is 4 adjacent lanes, its amax two xor-shuffles of the integer
// maximum of |x|'s bf16 bits (exact, order-independent). The scale code comes from those bits in
// integer arithmetic (mx_scale_code_bf16 / mx_tuning::scale_code_select).
//
// ---- What limited the first version (v1; H200, 2026-11-30: 68-70 % of the copy, dual 53 %) ----
// Read from its SASS (cuobjdump -sass, sm_90a) and the ptxas report:
//  - instructions, not bytes: per 8-element chunk ~60 instructions of per-row work besides the
//    elements (the scale code with branches, pow2f twice, ExactDivider's range test, BSSY/BSYNC
//    around a fast and a slow path, 64-bit row addresses) and ~8 per element (Markstein's
//    3-FMA division + copysign, the unpack, half a cvt): ~15 per element, ~27 in the dual. At the
//    measured 2.65-2.70 TB/s that is ~1.7 warp instructions per clock per SM (4 is the peak), the
//    same as the dual at 2.1 TB/s, while quantize_128x128 (~8 per element) moves 3.45 TB/s at ~1.1.
//    The division is needless here: the scale is a power of two, so x / 2^e = x * 2^-e exactly
//    (mx_recip): one FMUL replaces 5 FP operations and all the branches.
//  - the per-row chain is serial: the 8 rows of a thread are processed one after another, each
//    behind two dependent shuffles and branches, so a warp computes for long stretches with
//    nothing in flight (loads are issued only at the start of a tile: 8 x 16 bytes per thread,
//    4 CTAs = 128 KB per SM, then none until the next tile).
//  - the scale tile goes through shared memory with a barrier per tile (two more in the dual);
//    register count 64 (single) / 80 (dual) caps residency at 4 / 3 CTAs per SM.
//  - q_t in the dual is written as 2 x 16 bytes per thread into 32 different rows per warp store
//    (32 half-sectors per instruction), not as full 128-byte lines.
//  - tail: grid = tiles, 3584 tiles at 8192 x 7168 over 528 resident CTAs = 6.8 waves.
// Not limits: store width (q 8 bytes a thread, 256 contiguous bytes a warp, as quantize_128x128
// at 87 %), scale stores (1 % of the bytes).
//
// ---- Variants (mx_tuning; the public functions run mx_tuning::default_variant(dual)) ----
//  v1  the first version above (kept for comparison in quantize_bench).
//  v2  v1's structure with the lean arithmetic: FMUL by the exact reciprocal, branch-free code
//      (selects), no shared memory or barrier in the single kernel (each block's first lane writes
//      its scale byte; a warp's 8 bytes share a 32-byte sector), a 2-D grid (no division), row
//      pointers bumped instead of 64-bit products; the dual's bf16 tile in XOR-swizzled shared
//      memory and a column pass whose warp stores are 4 whole 128-byte lines of q_t. SASS: ~8.6
//      instructions per element (single; quantize_128x128 ~8), ~16 (dual); 64 / 80 registers,
//      4 / 3 CTAs per SM. Expected: single 82-87 % (quantize_128x128's structure; the 8192 x 7168
//      shape has half its tiles, so relatively more tail), dual 65-75 % (no loads in flight during
//      the column pass). Measured (82a9d6a): single 94-96 %, dual 87-90 % — the dual's prediction
//      missed by 15-20 points: the swizzled tile and whole-line q_t stores were worth more than
//      the missing loads in flight during the column pass cost.
//  v3  persistent CTAs fed by cp.async, the grid balanced so every CTA does the same number of
//      units (+-1). Single: 128 x 128 tiles, 2 stages in per-thread slots (64 KB, 3 CTAs per SM),
//      no barrier at all; dual: 2 stages of 32 KB (3 CTAs per SM), one barrier per tile. The next
//      tile is in flight while one is converted, and a lone last tile runs at the speed of its own
//      pipeline instead of holding a wave. Expected: single 86-91 %, dual 75-85 %. Measured:
//      single 89-92 %, dual 81-82 %.
//  v4  single: 64-row units with 4 stages (3 units = 48 KB in flight per CTA, ~10.7 instructions
//      per element for the extra bookkeeping); dual: 3 stages (96 KB, 2 CTAs per SM). Expected:
//      about v3; the run tells whether more bytes in flight or more CTAs per SM matter more.
//      Measured: single 87-89 %, dual 84 %.
// v3 / v4 need x 16-byte aligned (cp.async) and q 8-byte aligned with ldx, ldq % 8 == 0; otherwise
// they run v2's scalar kernels. Every variant is bit for bit the same (tests/test_mx_gpu.cu).
//
// Conversion: cvt.rn.satfinite.e4m3x2.f32 (fp8.hpp's encoder with Saturation::finite on finite
// input); v1 divides with ExactDivider (Markstein's sequence, __fdiv_rn outside its range).
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <string>
#include <utility>

#include "common/cuda.hpp"
#include "common/launch.hpp"
#include "common/mx.hpp"
#include "common/ptx/cp_async.cuh"
#include "common/ptx/smem.cuh"
#include "common/quantize_gpu.hpp"
#include "common/src/quantize_kernels.cuh"

namespace fp8gemm {

using namespace quantize_detail;

// ====================================== host-side checks ==========================================
namespace {

void require_rule(const char* who, MxExponentRule rule) {
  if (rule != MxExponentRule::floor_ocp && rule != MxExponentRule::rceil)
    fail(who, "rule = " + std::to_string(int(rule)) +
                  " is not an MxExponentRule (floor_ocp = 0 or rceil = 1)");
}

struct MxRanges {
  Range x, q, s;
};
MxRanges check_mx_common(const char* who, const std::uint16_t* x, std::int64_t M, std::int64_t K,
                         std::int64_t ldx, const std::uint8_t* q, std::int64_t ldq,
                         const std::uint8_t* scales, MxExponentRule rule) {
  require_pointer(who, "x", x, 2, "bf16");
  require_pointer(who, "q", q, 1, "e4m3");
  require_pointer(who, "scales", scales, 1, "UE8M0");
  require_positive(who, "M", M);
  require_mx_multiple(who, "K", K, "MXFP8 has one UE8M0 scale per 1 x 32 block along K");
  require_ld(who, "ldx", ldx, "K", K);
  require_ld(who, "ldq", ldq, "K", K);
  require_rule(who, rule);
  return {range("x", x, extent_bytes(who, "x", M, ldx, K, 2)),
          range("q", q, extent_bytes(who, "q", M, ldq, K, 1)),
          range("scales", scales, std::uint64_t(mx_1x32_scale_bytes(M, K)))};
}

}  // namespace

void validate_quantize_mx_1x32(const std::uint16_t* x, std::int64_t M, std::int64_t K,
                               std::int64_t ldx, const std::uint8_t* q, std::int64_t ldq,
                               const std::uint8_t* scales, MxExponentRule rule) {
  const char* who = "quantize_mx_1x32";
  const MxRanges r = check_mx_common(who, x, M, K, ldx, q, ldq, scales, rule);
  require_disjoint(who, {r.q, r.s}, {r.x, r.q, r.s});
}

void validate_quantize_mx_1x32_dual(const std::uint16_t* x, std::int64_t M, std::int64_t K,
                                    std::int64_t ldx, const std::uint8_t* q, std::int64_t ldq,
                                    const std::uint8_t* scales, const std::uint8_t* q_t,
                                    std::int64_t ldq_t, const std::uint8_t* scales_t,
                                    MxExponentRule rule) {
  const char* who = "quantize_mx_1x32_dual";
  const MxRanges r = check_mx_common(who, x, M, K, ldx, q, ldq, scales, rule);
  require_pointer(who, "q_t", q_t, 1, "e4m3");
  require_pointer(who, "scales_t", scales_t, 1, "UE8M0");
  require_mx_multiple(who, "M", M,
                      "x^T is quantised in 1 x 32 blocks along its rows, i.e. 32 consecutive m");
  require_ld(who, "ldq_t", ldq_t, "M", M);
  const Range rqt = range("q_t", q_t, extent_bytes(who, "q_t", K, ldq_t, M, 1));
  const Range rst = range("scales_t", scales_t, std::uint64_t(mx_1x32_scale_bytes(K, M)));
  require_disjoint(who, {r.q, r.s, rqt, rst}, {r.x, r.q, r.s, rqt, rst});
}

// ========================================== device code ===========================================
namespace {

constexpr int kThreadsMx = 256;
constexpr int kScaleTileBytes = 512;  // 128 rows x 4 scale columns

struct MxKernelArgs {
  const std::uint16_t* x;
  std::int64_t M, K, ldx;
  std::uint8_t* q;
  std::int64_t ldq;
  std::uint8_t* scales;
  std::uint8_t* q_t;  // dual only
  std::int64_t ldq_t;
  std::uint8_t* scales_t;
  MxExponentRule rule;
  bool vec_scales;  // v1 only: every scale buffer written is 16-byte aligned
};

/// Offset of scale (row, col) inside one 128 x 4 scale tile (mx_scale_offset's inner part).
__device__ __forceinline__ int mx_tile_offset(int row, int col) {
  return (row & 31) * 16 + (row >> 5) * 4 + col;
}

// ------------------------------------------------------------------------ v1 (the first version)
/// 2^e exactly, e in [-149, 127].
__device__ __forceinline__ float pow2f(int e) {
  return e >= -126 ? __uint_as_float(unsigned(e + 127) << 23) : __uint_as_float(1u << (e + 149));
}

/// x / 2^(code - 127) correctly rounded, for a code below 0xFF: the scale and its exact reciprocal.
__device__ __forceinline__ ExactDivider mx_divider(unsigned code) {
  return ExactDivider(pow2f(int(code) - 127), pow2f(127 - int(code)));
}

/// Writes a 512-byte scale tile assembled in shared memory (all threads call it, after a sync).
__device__ __forceinline__ void store_scale_tile(const std::uint8_t* st, std::uint8_t* dst,
                                                 bool vec) {
  const int t = threadIdx.x;
  if (vec) {
    if (t < kScaleTileBytes / 16)
      reinterpret_cast<uint4*>(dst)[t] = reinterpret_cast<const uint4*>(st)[t];
  } else {
    for (int i = t; i < kScaleTileBytes; i += kThreadsMx) dst[i] = st[i];
  }
}

// Vec: x 16-byte loads and q 8-byte stores; VecT: q_t 16-byte stores (Dual only).
template <bool Vec, bool Dual, bool VecT>
__global__ void __launch_bounds__(kThreadsMx, Dual ? 3 : 4) quantize_mx_v1_kernel(MxKernelArgs a) {
  __shared__ __align__(16) unsigned tile[Dual ? 128 * 64 : 4];  // 128 rows x 64 words (bf16 pairs)
  __shared__ __align__(16) std::uint8_t s_tile[kScaleTileBytes];
  __shared__ __align__(16) std::uint8_t s_tile_t[Dual ? kScaleTileBytes : 16];
  const std::int64_t M = a.M, K = a.K;
  const std::int64_t mt = ceil_div(M, 128), kt = ceil_div(K, 128);
  const int t = threadIdx.x, cc = t & 15, rr = t >> 4;
  for (std::int64_t b = blockIdx.x; b < mt * kt; b += gridDim.x) {
    const std::int64_t tm = b / kt, tk = b - (b / kt) * kt;
    // ---- rows -> q: the block of chunk cc is cc / 4 (K % 32 == 0: a block is all in or all out)
    const std::int64_t c = tk * 128 + cc * 8;
    uint4 v[8];
    load_tile_rows<Vec>(a.x, a.ldx, K, tm * 128, M, rr, c, v);
#pragma unroll
    for (int it = 0; it < 8; ++it) {
      unsigned m = fold2(max_abs2(v[it]));
      m = max(m, __shfl_xor_sync(0xFFFFFFFFu, m, 1));
      m = max(m, __shfl_xor_sync(0xFFFFFFFFu, m, 2));
      const int rl = rr + 16 * it;
      const std::int64_t r = tm * 128 + rl;
      const bool ok = r < M && c < K;
      const unsigned code = ok ? mx_scale_code_bf16(std::uint16_t(m), a.rule) : 0u;
      if (ok) store8<Vec>(a.q + r * a.ldq, c, K, quant8(v[it], mx_divider(code), code == kUe8m0Nan));
      if ((cc & 3) == 0) s_tile[mx_tile_offset(rl, cc >> 2)] = std::uint8_t(code);
      if constexpr (Dual) *reinterpret_cast<uint4*>(&tile[rl * 64 + cc * 4]) = v[it];
    }
    __syncthreads();
    store_scale_tile(s_tile, a.scales + (tm * kt + tk) * kScaleTileBytes, a.vec_scales);
    if constexpr (Dual) {
      // ---- columns -> q_t: thread t owns the blocks (k, m0 / 32) of columns k = 2p, 2p + 1
      const int p = t & 63, h = t >> 6;
      unsigned wv[32];
      const unsigned m2 = load_tile_column(tile, p, h, wv);
      const std::int64_t m0 = tm * 128 + h * 32;  // M % 32 == 0: the block is all in or all out
#pragma unroll
      for (int half = 0; half < 2; ++half) {  // column 2p (low halves), then 2p + 1 (high halves)
        const int kl = 2 * p + half;
        const std::int64_t k = tk * 128 + kl;
        const bool ok = k < K && m0 < M;
        const unsigned m = half == 0 ? (m2 & 0xFFFFu) : (m2 >> 16);
        const unsigned code = ok ? mx_scale_code_bf16(std::uint16_t(m), a.rule) : 0u;
        s_tile_t[mx_tile_offset(kl, h)] = std::uint8_t(code);
        if (!ok) continue;
        unsigned out[8];
        if (code == kUe8m0Nan) {
#pragma unroll
          for (int j = 0; j < 8; ++j) out[j] = 0x7F7F7F7Fu;
        } else {
          const ExactDivider d = mx_divider(code);
          if (d.fast) column_codes<true>(wv, half, d, out);
          else column_codes<false>(wv, half, d, out);
        }
        store32<VecT>(a.q_t + k * a.ldq_t + m0, m0, M, out);
      }
      __syncthreads();
      store_scale_tile(s_tile_t, a.scales_t + (tk * mt + tm) * kScaleTileBytes, a.vec_scales);
    }
    __syncthreads();  // s_tile, s_tile_t and tile are reused by the next tile
  }
}

// ------------------------------------------------------ v2 .. v4: the lean per-element arithmetic
/// 2^(127 - code) exactly, for every code the kernels produce: finite data gives codes <= 247
/// (bf16's largest exponent field is 254), so (254 - code) << 23 is a normal float; 0xFF (a
/// non-finite block) gives garbage that mx_quant8's select discards. x * mx_recip(code) is
/// RN(x / 2^(code - 127)) bit for bit: the reciprocal of a power of two is exact, so product and
/// quotient are the same real number and one FMUL rounds it once, as the IEEE division does, into
/// the subnormal range too (nvcc without -ftz keeps subnormals; so does the CPU). No overflow:
/// the code is at least floor(log2 amax) - 8 + 127, so |x| * 2^(127 - code) < 2^9.
__device__ __forceinline__ float mx_recip(unsigned code) {
  return __uint_as_float((254u - code) << 23);
}

/// The two e4m3 codes of the bf16 pair in word w (element 0 in the low byte), scaled by y.
__device__ __forceinline__ unsigned mx_codes2(unsigned w, float y) {
  return cvt_e4m3x2(__fmul_rn(__uint_as_float(w << 16), y),
                    __fmul_rn(__uint_as_float(w & 0xFFFF0000u), y));
}

/// 8 bf16 -> 8 e4m3 codes; a non-finite block (code 0xFF) gives 0x7F throughout (selects).
__device__ __forceinline__ uint2 mx_quant8(const uint4& v, unsigned code) {
  const float y = mx_recip(code);
  const uint2 r = make_uint2(mx_codes2(v.x, y) | mx_codes2(v.y, y) << 16,
                             mx_codes2(v.z, y) | mx_codes2(v.w, y) << 16);
  return code == 0xFFu ? make_uint2(0x7F7F7F7Fu, 0x7F7F7F7Fu) : r;
}

/// One 8-element chunk of x at p (K % 32 == 0: a chunk is all in or all out of K).
template <bool Vec>
__device__ __forceinline__ uint4 load_chunk(const std::uint16_t* p) {
  if constexpr (Vec) {
    return __ldg(reinterpret_cast<const uint4*>(p));
  } else {
    unsigned w[4];
#pragma unroll
    for (int i = 0; i < 4; ++i)
      w[i] = unsigned(__ldg(p + 2 * i)) | unsigned(__ldg(p + 2 * i + 1)) << 16;
    return make_uint4(w[0], w[1], w[2], w[3]);
  }
}

template <bool Vec>
__device__ __forceinline__ void store_chunk(std::uint8_t* p, const uint2& v) {
  if constexpr (Vec) {
    *reinterpret_cast<uint2*>(p) = v;
  } else {
#pragma unroll
    for (int i = 0; i < 8; ++i) p[i] = std::uint8_t((i < 4 ? v.x : v.y) >> (8 * (i % 4)));
  }
}

/// The row pass of v2 .. v4 for one chunk, in the thread map of load_tile_rows: the 16 lanes
/// cc = lane % 16 of a half-warp hold the 16 chunks of one row of a 128-column tile, 4 lanes per MX
/// block. Block amax by two xor-shuffles (every lane of the warp must call this), the code (the
/// same in the block's 4 lanes), q's 8 bytes at qp, and the scale byte at sp by the block's first
/// lane (sp: byte cc / 4 of the row's 4 in its scale tile). The 8 scale bytes of a warp land in
/// one 32-byte sector (rows rr, rr + 1 are 16 bytes apart); the tile's other rows fill the rest of
/// it moments later, in L2. ok: row and chunk inside x; outside, code 0 (the padding), no q store.
template <bool Vec>
__device__ __forceinline__ void mx_row_chunk(const uint4& v, bool ok, bool block_lead, bool rceil,
                                             std::uint8_t* qp, std::uint8_t* sp) {
  unsigned m = fold2(max_abs2(v));
  m = max(m, __shfl_xor_sync(0xFFFFFFFFu, m, 1));
  m = max(m, __shfl_xor_sync(0xFFFFFFFFu, m, 2));
  const unsigned code = ok ? mx_tuning::scale_code_select(m, rceil) : 0u;
  if (ok) store_chunk<Vec>(qp, mx_quant8(v, code));
  if (block_lead) *sp = std::uint8_t(code);
}

/// Byte offset, inside a scale tile, of the scale of tile row rr + 16 it (rr < 16) and block 0:
/// mx_tile_offset(rr + 16 it, 0) = rr * 16 + row_step(it) (the per-thread part is hoisted).
__device__ __forceinline__ constexpr int row_step(int it) { return (it & 1) * 256 + (it >> 1) * 4; }

/// The place of 16-byte chunk `chunk` of row r in a 128 x 128 bf16 tile in shared memory (16
/// chunks a row): XOR-swizzled by (r / 16) % 8, so that both the row pass (a quarter-warp reads 8
/// chunks of one row) and the column pass (8 lanes read the same word column of rows 16 j + i,
/// j < 8) are free of bank conflicts.
__device__ __forceinline__ int swz(int r, int chunk) { return r * 16 + (chunk ^ ((r >> 4) & 7)); }

/// The column pass of the dual (v2 .. v4): the tile (tm, tk) of x, 128 x 128 bf16 in shared memory
/// (swz), becomes 128 rows k of q_t = x^T, 128 codes each, and the 128 x 4 scale tile (tk, tm) of
/// x^T. Work item (p, j): the column pair 2p, 2p + 1 (one 32-bit word of each row) over the 16 rows
/// 16 j .. 16 j + 15; warp w, lane l takes j = l % 8 and p = 8 w + 4 it2 + l / 8, it2 < 2. The MX
/// block (32 rows) is lanes j, j ^ 1: one xor-shuffle of the packed |x| maximum of both columns.
/// Each item stores 16 codes of each of its two q_t rows: for a fixed p the 8 lanes j store one
/// whole 128-byte line (16-byte stores when VecT), so a warp store writes 4 full lines.
/// The scale byte of (k, block j / 2) by the even lanes j.
template <bool VecT>
__device__ __forceinline__ void mx_columns(const uint4* tile, std::int64_t tm, std::int64_t tk,
                                           std::int64_t mt, const MxKernelArgs& a, bool rceil) {
  const unsigned* words = reinterpret_cast<const unsigned*>(tile);
  const int lane = threadIdx.x & 31, w = threadIdx.x >> 5, j = lane & 7;
  const bool m_ok = tm * 128 + 32 * (j >> 1) < a.M;  // M % 32 == 0: a block is all in or out
  const std::int64_t k0 = tk * 128;
  std::uint8_t* st = a.scales_t + (tk * mt + tm) * kScaleTileBytes + (j >> 1);
  std::uint8_t* qt = a.q_t + k0 * a.ldq_t + tm * 128 + 16 * j;
#pragma unroll
  for (int it2 = 0; it2 < 2; ++it2) {
    const int p = 8 * w + 4 * it2 + (lane >> 3);
    const int col = ((p >> 2) ^ j) * 4 + (p & 3);  // the word's place in rows 16 j .. 16 j + 15
    unsigned wv[16];
    unsigned m2 = 0;
#pragma unroll
    for (int i = 0; i < 16; ++i) {
      wv[i] = words[(16 * j + i) * 64 + col];
      m2 = __vmaxu2(m2, wv[i] & kAbsMask2);
    }
    m2 = __vmaxu2(m2, __shfl_xor_sync(0xFFFFFFFFu, m2, 1));
#pragma unroll
    for (int half = 0; half < 2; ++half) {  // column 2p (low halves), then 2p + 1 (high halves)
      const int kl = 2 * p + half;
      const bool ok = m_ok && k0 + kl < a.K;
      const unsigned code =
          ok ? mx_tuning::scale_code_select(half == 0 ? m2 & 0xFFFFu : m2 >> 16, rceil) : 0u;
      if ((j & 1) == 0) st[mx_tile_offset(kl, 0)] = std::uint8_t(code);
      if (!ok) continue;
      const float y = mx_recip(code);
      // All ones for a non-finite block: blended in by one LOP3 per word (a select written as
      // `nan ? 0x7F7F7F7F : ...` became a branch around each word's conversion).
      const unsigned nan = code == 0xFFu ? ~0u : 0u;
      unsigned out[4];
      column_codes_by<4>(
          wv, half, [&](float x) { return __fmul_rn(x, y); }, out,
          [&](unsigned c4) { return (c4 & ~nan) | (0x7F7F7F7Fu & nan); });
      std::uint8_t* dst = qt + kl * a.ldq_t;
      if constexpr (VecT) {
        *reinterpret_cast<uint4*>(dst) = make_uint4(out[0], out[1], out[2], out[3]);
      } else {
#pragma unroll
        for (int i = 0; i < 16; ++i) dst[i] = std::uint8_t(out[i / 4] >> (8 * (i % 4)));
      }
    }
  }
}

/// The row pass over a whole 128 x 128 tile (tm, tk) whose 8 chunks per thread are produced by
/// chunk(it) (registers or shared memory); Park: also parks each chunk in the swizzled smem tile.
template <bool Vec, bool Park, class Chunk>
__device__ __forceinline__ void mx_tile_rows(const MxKernelArgs& a, std::int64_t tm,
                                             std::int64_t tk, std::int64_t kt, bool rceil,
                                             Chunk&& chunk, uint4* park) {
  const int t = threadIdx.x, cc = t & 15, rr = t >> 4;
  const std::int64_t c = tk * 128 + cc * 8, r0 = tm * 128 + rr;
  const bool c_ok = c < a.K;
  const int rows = int(std::min<std::int64_t>(a.M - tm * 128, 128));  // rows of the tile in x
  std::uint8_t* qp = a.q + r0 * a.ldq + c;
  const std::int64_t qstep = 16 * a.ldq;
  std::uint8_t* sp = a.scales + (tm * kt + tk) * kScaleTileBytes + rr * 16 + (cc >> 2);
#pragma unroll
  for (int it = 0; it < 8; ++it, qp += qstep) {  // a pointer bump, not a 64-bit product per row
    const uint4 v = chunk(it);
    mx_row_chunk<Vec>(v, c_ok && rr + 16 * it < rows, (cc & 3) == 0, rceil, qp, sp + row_step(it));
    if constexpr (Park) park[swz(rr + 16 * it, cc)] = v;
  }
}

// ------------------------------------------------------------------------------------------ v2
// The tile kernels of v1 with the lean arithmetic: x in registers (8 x 16 bytes per thread), one
// CTA per 128 x 128 tile on a 2-D grid (x: tile column, y: tile row; no division), grid-stride in
// both. Single: no shared memory, no barrier. Dual: the bf16 tile through swizzled shared memory,
// two barriers per tile.
template <bool Vec, bool Dual, bool VecT>
__global__ void __launch_bounds__(kThreadsMx, Dual ? 3 : 4) quantize_mx_v2_kernel(MxKernelArgs a) {
  __shared__ __align__(16) uint4 tile[Dual ? 128 * 16 : 1];
  const std::int64_t mt = ceil_div(a.M, 128), kt = ceil_div(a.K, 128);
  const int t = threadIdx.x, cc = t & 15, rr = t >> 4;
  const bool rceil = a.rule == MxExponentRule::rceil;
  const std::int64_t xstep = 16 * a.ldx;
  for (std::int64_t tm = blockIdx.y; tm < mt; tm += gridDim.y)
    for (std::int64_t tk = blockIdx.x; tk < kt; tk += gridDim.x) {
      const std::int64_t c = tk * 128 + cc * 8;
      const bool c_ok = c < a.K;
      const int rows = int(std::min<std::int64_t>(a.M - tm * 128, 128));
      const std::uint16_t* xp = a.x + (tm * 128 + rr) * a.ldx + c;
      uint4 v[8];
#pragma unroll
      for (int it = 0; it < 8; ++it, xp += xstep)
        v[it] = c_ok && rr + 16 * it < rows ? load_chunk<Vec>(xp) : make_uint4(0, 0, 0, 0);
      mx_tile_rows<Vec, Dual>(
          a, tm, tk, kt, rceil, [&](int it) { return v[it]; }, tile);
      if constexpr (Dual) {
        __syncthreads();
        mx_columns<VecT>(tile, tm, tk, mt, a, rceil);
        __syncthreads();  // the tile is rewritten by the next iteration
      }
    }
}

// ------------------------------------------------------------------------------- v3, v4 (single)
// Persistent CTAs over units of ROWS x 128 elements (ROWS = 64 or 128: half or all of a scale
// tile's rows), fed by a ring of S cp.async stages private to each thread: thread t copies chunk
// t % 16 of rows t / 16 + 16 j (j < ROWS / 16) of a unit into its own slots, so it waits only for
// its own copies (cp.async.wait_group) and the kernel has no barrier at all. S - 1 units are in
// flight while one is converted. Units row-major (CTA i takes units i, i + G, ...; G =
// gridDim.x); the cursor (unit row, tile column) and its x / q offsets advance by additions, not
// divisions or 64-bit products. Padding units (rows past M up to the next multiple of 128) are
// walked too: they write their zero scale bytes.
struct UnitCursor {
  std::int64_t R, tk;         // unit row (ROWS rows) and 128-column tile
  std::int64_t off_x, off_q;  // element offsets of (row ROWS R + rr, column 128 tk + 8 cc)
};

template <int ROWS, int S>
__global__ void __launch_bounds__(kThreadsMx, ROWS* S == 256 ? 3 : 2)
    quantize_mx_pipe_kernel(MxKernelArgs a) {
  constexpr int kChunks = ROWS / 16;  // per thread and unit
  constexpr int kUnitsPerTile = 128 / ROWS;
  extern __shared__ uint4 ring[];  // [S][kChunks][kThreadsMx]
  const std::int64_t M = a.M, K = a.K, kt = ceil_div(K, 128);
  const std::int64_t unit_rows = ceil_div(M, 128) * kUnitsPerTile;
  const int t = threadIdx.x, cc = t & 15, rr = t >> 4;
  const bool rceil = a.rule == MxExponentRule::rceil;
  const std::int64_t gq = gridDim.x / kt, gr = gridDim.x - gq * kt;
  // Offsets added per step: gq unit rows down and gr tiles right; on a carry one more unit row
  // down and kt tiles left.
  const std::int64_t step_x = gq * ROWS * a.ldx + gr * 128, carry_x = ROWS * a.ldx - kt * 128;
  const std::int64_t step_q = gq * ROWS * a.ldq + gr * 128, carry_q = ROWS * a.ldq - kt * 128;
  const auto advance = [&](UnitCursor& u) {
    u.R += gq;
    u.tk += gr;
    u.off_x += step_x;
    u.off_q += step_q;
    if (u.tk >= kt) {
      u.tk -= kt;
      ++u.R;
      u.off_x += carry_x;
      u.off_q += carry_q;
    }
  };
  const std::int64_t R0 = blockIdx.x / kt, tk0 = blockIdx.x % kt;
  UnitCursor ld{R0, tk0, (R0 * ROWS + rr) * a.ldx + tk0 * 128 + cc * 8,
                (R0 * ROWS + rr) * a.ldq + tk0 * 128 + cc * 8};
  UnitCursor pr = ld;
  const std::int64_t xstep = 16 * a.ldx, qstep = 16 * a.ldq;
  const auto issue = [&](int slot) {
    if (ld.R < unit_rows) {
      const bool c_ok = ld.tk * 128 + cc * 8 < K;
      const int rows = int(std::min<std::int64_t>(M - ld.R * ROWS, ROWS));  // may be <= 0
      const std::uint16_t* xp = a.x + ld.off_x;
#pragma unroll
      for (int j = 0; j < kChunks; ++j, xp += xstep) {
        const bool ok = c_ok && rr + 16 * j < rows;
        ptx::cp_async_16(ptx::smem_u32(&ring[(slot * kChunks + j) * kThreadsMx + t]), ok ? xp : a.x,
                         ok ? 16u : 0u);
      }
    }
    ptx::cp_async_commit();  // an empty group past the end keeps the counting uniform
    advance(ld);
  };
#pragma unroll
  for (int s = 0; s < S - 1; ++s) issue(s);
  for (int slot = 0; pr.R < unit_rows; slot = slot + 1 == S ? 0 : slot + 1) {
    issue(slot == 0 ? S - 1 : slot - 1);  // the slot converted in the previous iteration
    ptx::cp_async_wait<S - 1>();          // this unit's copies (this thread's) have landed
    const bool c_ok = pr.tk * 128 + cc * 8 < K;
    const int rows = int(std::min<std::int64_t>(M - pr.R * ROWS, ROWS));
    // Unit row R is rows ROWS (R % kUnitsPerTile) .. of scale tile (R / kUnitsPerTile, tk).
    std::uint8_t* sp = a.scales + ((pr.R / kUnitsPerTile) * kt + pr.tk) * kScaleTileBytes +
                       (pr.R % kUnitsPerTile) * (ROWS / 8) + rr * 16 + (cc >> 2);
    std::uint8_t* qp = a.q + pr.off_q;
#pragma unroll
    for (int j = 0; j < kChunks; ++j, qp += qstep)
      mx_row_chunk<true>(ring[(slot * kChunks + j) * kThreadsMx + t], c_ok && rr + 16 * j < rows,
                         (cc & 3) == 0, rceil, qp, sp + row_step(j));
    advance(pr);
  }
  ptx::cp_async_wait<0>();
}

// --------------------------------------------------------------------------------- v3, v4 (dual)
// Persistent CTAs over 128 x 128 tiles, fed by S shared-memory stages of 32 KB filled by cp.async
// (swz layout): tile i + S - 1 is requested right after the barrier that opens tile i, so S - 1
// tiles are in flight while one is converted; one barrier per tile (it also frees the stage the
// previous tile used). Rows from each thread's own chunks of the stage, then mx_columns.
struct TileCursor {
  std::int64_t row, col;  // tile (row, col) = (tm, tk)
};

template <int S, bool VecT>
__global__ void __launch_bounds__(kThreadsMx, S == 2 ? 3 : 2)
    quantize_mx_dual_pipe_kernel(MxKernelArgs a) {
  extern __shared__ uint4 stages[];  // [S][128 * 16]
  const std::int64_t M = a.M, K = a.K, mt = ceil_div(M, 128), kt = ceil_div(K, 128);
  const int t = threadIdx.x, cc = t & 15, rr = t >> 4;
  const bool rceil = a.rule == MxExponentRule::rceil;
  const std::int64_t gq = gridDim.x / kt, gr = gridDim.x - gq * kt;
  const auto advance = [&](TileCursor& u) {
    u.row += gq;
    u.col += gr;
    if (u.col >= kt) {
      u.col -= kt;
      ++u.row;
    }
  };
  TileCursor ld{blockIdx.x / kt, blockIdx.x % kt};
  TileCursor pr = ld;
  const std::int64_t xstep = 16 * a.ldx;
  const auto issue = [&](int stage) {
    if (ld.row < mt) {
      const std::int64_t c = ld.col * 128 + cc * 8;
      const int rows = int(std::min<std::int64_t>(M - ld.row * 128, 128));
      const std::uint16_t* xp = a.x + (ld.row * 128 + rr) * a.ldx + c;
#pragma unroll
      for (int it = 0; it < 8; ++it, xp += xstep) {
        const bool ok = c < K && rr + 16 * it < rows;
        ptx::cp_async_16(ptx::smem_u32(&stages[stage * 2048 + swz(rr + 16 * it, cc)]),
                         ok ? xp : a.x, ok ? 16u : 0u);
      }
    }
    ptx::cp_async_commit();
    advance(ld);
  };
#pragma unroll
  for (int s = 0; s < S - 1; ++s) issue(s);
  for (int stage = 0; pr.row < mt; stage = stage + 1 == S ? 0 : stage + 1) {
    ptx::cp_async_wait<S - 2>();  // this thread's copies of this tile have landed
    __syncthreads();              // everyone's have; everyone is done with the previous tile
    issue(stage == 0 ? S - 1 : stage - 1);
    const uint4* tile = stages + stage * 2048;
    mx_tile_rows<true, false>(
        a, pr.row, pr.col, kt, rceil, [&](int it) { return tile[swz(rr + 16 * it, cc)]; }, nullptr);
    mx_columns<VecT>(tile, pr.row, pr.col, mt, a, rceil);
    advance(pr);
  }
  ptx::cp_async_wait<0>();
}

// ------------------------------------------------------------------------------------- launch
/// Grids: Plain, one CTA per 128 x 128 tile (1-D, row-major); Tiles2D, the same as (tile
/// columns, tile rows), at most 65535 rows (the kernel strides over the rest); Persistent, as many
/// CTAs as fit at once (at most `work`). max_ctas > 0 caps the CTA count (tests).
enum class Grid { plain, tiles_2d, persistent };

template <class Kernel>
void launch_kernel(const char* who, Kernel* kernel, const char* name, const MxKernelArgs& a,
                   std::int64_t work, Grid kind, int smem, int max_ctas, cudaStream_t stream) {
  const void* k = reinterpret_cast<const void*>(kernel);
  prepare(k, name, who, smem);
  const std::int64_t cap = max_ctas > 0 ? max_ctas : std::int64_t(1) << 62;
  dim3 grid;
  if (kind == Grid::tiles_2d) {
    const std::int64_t gx = std::min({ceil_div(a.K, 128), cap, std::int64_t(0x7FFFFFFF)});
    const std::int64_t gy =
        std::min({ceil_div(a.M, 128), std::max<std::int64_t>(1, cap / gx), std::int64_t(65535)});
    grid = dim3(unsigned(gx), unsigned(gy), 1u);
  } else {
    std::int64_t n = std::min(work, cap);
    if (kind == Grid::persistent)  // as many CTAs as fit, balanced (balanced_grid)
      n = balanced_grid(work, std::min<std::int64_t>(n, resident_ctas(k, kThreadsMx, smem)));
    grid = dim3(grid_for(n, 1), 1u, 1u);
  }
  kernel<<<grid, kThreadsMx, smem, stream>>>(a);
  check_launch(who);
}

constexpr int kTileStageBytes = 128 * 128 * 2;  // a 128 x 128 bf16 tile: 32 KB

void require_variant(const char* who, int variant, int max_ctas) {
  if (variant < 0 || variant >= mx_tuning::kVariants)
    fail(who, "variant = " + std::to_string(variant) + " must be in [0, " +
                  std::to_string(mx_tuning::kVariants) + ")");
  if (max_ctas < 0) fail(who, "max_ctas = " + std::to_string(max_ctas) + " must be >= 0");
}

void run_single(const char* who, int variant, int max_ctas, const MxKernelArgs& a, bool vec,
                cudaStream_t stream) {
  const std::int64_t tiles = ceil_div(a.M, 128) * ceil_div(a.K, 128);
#define FP8GEMM_MX_LAUNCH(KERNEL, WORK, GRID, SMEM) \
  launch_kernel(who, &KERNEL, #KERNEL, a, WORK, GRID, SMEM, max_ctas, stream)
  if (variant == 0) {
    if (vec)
      FP8GEMM_MX_LAUNCH((quantize_mx_v1_kernel<true, false, false>), tiles, Grid::plain, 0);
    else
      FP8GEMM_MX_LAUNCH((quantize_mx_v1_kernel<false, false, false>), tiles, Grid::plain, 0);
  } else if (variant == 1 || !vec) {
    if (vec)
      FP8GEMM_MX_LAUNCH((quantize_mx_v2_kernel<true, false, false>), tiles, Grid::tiles_2d, 0);
    else
      FP8GEMM_MX_LAUNCH((quantize_mx_v2_kernel<false, false, false>), tiles, Grid::tiles_2d, 0);
  } else if (variant == 2) {
    FP8GEMM_MX_LAUNCH((quantize_mx_pipe_kernel<128, 2>), tiles, Grid::persistent,
                      2 * kTileStageBytes);
  } else {
    FP8GEMM_MX_LAUNCH((quantize_mx_pipe_kernel<64, 4>), tiles * 2, Grid::persistent,
                      4 * kTileStageBytes / 2);
  }
}

void run_dual(const char* who, int variant, int max_ctas, const MxKernelArgs& a, bool vx, bool vt,
              cudaStream_t stream) {
  const std::int64_t tiles = ceil_div(a.M, 128) * ceil_div(a.K, 128);
  if (variant == 0) {
    if (vx && vt)
      FP8GEMM_MX_LAUNCH((quantize_mx_v1_kernel<true, true, true>), tiles, Grid::plain, 0);
    else if (vx)
      FP8GEMM_MX_LAUNCH((quantize_mx_v1_kernel<true, true, false>), tiles, Grid::plain, 0);
    else if (vt)
      FP8GEMM_MX_LAUNCH((quantize_mx_v1_kernel<false, true, true>), tiles, Grid::plain, 0);
    else
      FP8GEMM_MX_LAUNCH((quantize_mx_v1_kernel<false, true, false>), tiles, Grid::plain, 0);
  } else if (variant == 1 || !vx) {
    if (vx && vt)
      FP8GEMM_MX_LAUNCH((quantize_mx_v2_kernel<true, true, true>), tiles, Grid::tiles_2d, 0);
    else if (vx)
      FP8GEMM_MX_LAUNCH((quantize_mx_v2_kernel<true, true, false>), tiles, Grid::tiles_2d, 0);
    else if (vt)
      FP8GEMM_MX_LAUNCH((quantize_mx_v2_kernel<false, true, true>), tiles, Grid::tiles_2d, 0);
    else
      FP8GEMM_MX_LAUNCH((quantize_mx_v2_kernel<false, true, false>), tiles, Grid::tiles_2d, 0);
  } else if (variant == 2) {
    if (vt)
      FP8GEMM_MX_LAUNCH((quantize_mx_dual_pipe_kernel<2, true>), tiles, Grid::persistent,
                        2 * kTileStageBytes);
    else
      FP8GEMM_MX_LAUNCH((quantize_mx_dual_pipe_kernel<2, false>), tiles, Grid::persistent,
                        2 * kTileStageBytes);
  } else {
    if (vt)
      FP8GEMM_MX_LAUNCH((quantize_mx_dual_pipe_kernel<3, true>), tiles, Grid::persistent,
                        3 * kTileStageBytes);
    else
      FP8GEMM_MX_LAUNCH((quantize_mx_dual_pipe_kernel<3, false>), tiles, Grid::persistent,
                        3 * kTileStageBytes);
  }
#undef FP8GEMM_MX_LAUNCH
}

}  // namespace

namespace mx_tuning {

// v2 for both, from the side-by-side run on the H200 (quantize_bench at 82a9d6a, % of a D2D copy
// of the same bytes in the same run; plots/data/h200/ch09/quantize_bench.json): single v1 68-70,
// v2 94-96, v3 89-92, v4 87-89; dual v1 53-54, v2 87-90, v3 81-82, v4 84. The cp.async
// pipelines (v3, v4) did not beat the plain loads of v2: with ~8.6 instructions per element and
// 4 CTAs per SM, v2 already has enough loads in flight.
int default_variant(bool dual) { return dual ? 1 : 1; }

const char* variant_name(int v, bool dual) {
  switch (v) {
    case 0:
      return "v1_first";
    case 1:
      return "v2_lean";
    case 2:
      return dual ? "v3_pipe2" : "v3_pipe4";
    case 3:
      return dual ? "v4_pipe3" : "v4_pipe8";
  }
  return "?";
}

void quantize_mx_1x32(int variant, int max_ctas, const std::uint16_t* x, std::int64_t M,
                      std::int64_t K, std::int64_t ldx, std::uint8_t* q, std::int64_t ldq,
                      std::uint8_t* scales, MxExponentRule rule, cudaStream_t stream) {
  const char* who = "fp8gemm::quantize_mx_1x32";
  validate_quantize_mx_1x32(x, M, K, ldx, q, ldq, scales, rule);
  require_variant("quantize_mx_1x32", variant, max_ctas);
  require_device_accessible(x, extent_bytes(who, "x", M, ldx, K, 2), who, "x");
  require_device_accessible(q, extent_bytes(who, "q", M, ldq, K, 1), who, "q");
  require_device_accessible(scales, std::size_t(mx_1x32_scale_bytes(M, K)), who, "scales");
  const MxKernelArgs a{x, M, K, ldx, q, ldq, scales, nullptr, 0, nullptr, rule, aligned(scales, 16)};
  const bool vec = aligned(x, 16) && ldx % 8 == 0 && aligned(q, 8) && ldq % 8 == 0;
  run_single(who, variant, max_ctas, a, vec, stream);
}

void quantize_mx_1x32_dual(int variant, int max_ctas, const std::uint16_t* x, std::int64_t M,
                           std::int64_t K, std::int64_t ldx, std::uint8_t* q, std::int64_t ldq,
                           std::uint8_t* scales, std::uint8_t* q_t, std::int64_t ldq_t,
                           std::uint8_t* scales_t, MxExponentRule rule, cudaStream_t stream) {
  const char* who = "fp8gemm::quantize_mx_1x32_dual";
  validate_quantize_mx_1x32_dual(x, M, K, ldx, q, ldq, scales, q_t, ldq_t, scales_t, rule);
  require_variant("quantize_mx_1x32_dual", variant, max_ctas);
  require_device_accessible(x, extent_bytes(who, "x", M, ldx, K, 2), who, "x");
  require_device_accessible(q, extent_bytes(who, "q", M, ldq, K, 1), who, "q");
  require_device_accessible(scales, std::size_t(mx_1x32_scale_bytes(M, K)), who, "scales");
  require_device_accessible(q_t, extent_bytes(who, "q_t", K, ldq_t, M, 1), who, "q_t");
  require_device_accessible(scales_t, std::size_t(mx_1x32_scale_bytes(K, M)), who, "scales_t");
  const MxKernelArgs a{x,     M,        K,    ldx,
                       q,     ldq,      scales, q_t,
                       ldq_t, scales_t, rule, aligned(scales, 16) && aligned(scales_t, 16)};
  const bool vx = aligned(x, 16) && ldx % 8 == 0 && aligned(q, 8) && ldq % 8 == 0;
  const bool vt = aligned(q_t, 16) && ldq_t % 16 == 0;
  run_dual(who, variant, max_ctas, a, vx, vt, stream);
}

}  // namespace mx_tuning

// ====================================== MXFP8 -> bf16 =============================================
// dequantize_mx_1x32_bf16 (quantize_gpu.hpp): y = bf16(e4m3(q) * 2^(code - 127)). One thread per
// 16 consecutive elements of a row (16 | 32, so all in one MX block, one scale byte): one 16-byte
// load, the hardware's e4m3x2 -> f16x2 conversion (exact), f16 -> float (exact), one FMUL by the
// block's scale as a float (exact wherever the product is at least 2^-149 and below 2^128), one
// round to bf16 (exact from 2^-130 up: 4 significant bits, the lowest on bf16's 2^-133 grid);
// NaN (an e4m3 NaN or code 0xFF) is written 0x7FC0, as float_to_bf16. Two 16-byte stores. The
// scalar kernel does the same one element per thread where the 16-byte path's alignment is
// missing. Up to two operands per launch (the GEMM's A and B).
// Measured (ncu, 8192^3, A and B: 384 MB): 132.7 us, 69% of DRAM peak (session 11, 138cfbc). A
// warp-per-row version without the 64-bit division, two loads in flight per lane, was predicted
// at 80-85% and measured 181.0 us, 46% (6e9c77a): its 8448 warps each walk their own row, so the
// bytes in flight are scattered over thousands of DRAM pages instead of one contiguous window
// (L2 throughput 80% against DRAM 46%); reverted. A second one kept the flat order but took two
// chunks per thread and step (units u and u + grid stride, both loads first) with 32-bit index
// division, predicted at 75-80%: 158.2 us, 51% (session 11 call 7, 26a4cd9; each thread's two
// chunks lie a grid stride, 4 MB, apart); reverted too. Neither more loads in flight nor fewer
// instructions per chunk made it faster; what limits the first version is not established.
namespace {

struct DequantJob {
  const std::uint8_t* q;
  std::int64_t rows, K, ldq;
  const std::uint8_t* scales;
  std::uint16_t* y;
  std::int64_t ldy;
  std::int64_t units;  // 16-element chunks (vector kernel) or elements (scalar kernel)
};

__device__ __forceinline__ float mx_scale_as_float(std::uint8_t code) {
  return __uint_as_float(ue8m0_float_bits(code));  // 2^(code - 127) (fp8.hpp)
}
__device__ __forceinline__ std::uint16_t bf16_rn_canonical(float v) {
  return v != v ? std::uint16_t(0x7FC0) : __bfloat16_as_ushort(__float2bfloat16_rn(v));
}
__device__ __forceinline__ std::uint8_t mx_code_of(const DequantJob& j, std::int64_t r,
                                                   std::int64_t k) {
  return j.scales[mx_scale_offset(r, k / kMxBlock, j.rows, j.K / kMxBlock)];
}

template <bool kVector>
__global__ void dequantize_mx_kernel(DequantJob j0, DequantJob j1) {
  const std::int64_t stride = std::int64_t(gridDim.x) * blockDim.x;
  for (std::int64_t u = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
       u < j0.units + j1.units; u += stride) {
    const bool second = u >= j0.units;
    const DequantJob& j = second ? j1 : j0;
    const std::int64_t i = second ? u - j0.units : u;
    if constexpr (kVector) {
      const std::int64_t per_row = j.K / 16;
      const std::int64_t r = i / per_row, k = (i % per_row) * 16;
      const float s = mx_scale_as_float(mx_code_of(j, r, k));
      const uint4 in = *reinterpret_cast<const uint4*>(j.q + r * j.ldq + k);
      const std::uint32_t words[4] = {in.x, in.y, in.z, in.w};
      std::uint32_t out[8];
#pragma unroll
      for (int w = 0; w < 4; ++w) {
#pragma unroll
        for (int h = 0; h < 2; ++h) {
          const float2 f = e4m3x2_to_float2(words[w] >> (16 * h));
          out[2 * w + h] = std::uint32_t(bf16_rn_canonical(f.x * s)) |
                           (std::uint32_t(bf16_rn_canonical(f.y * s)) << 16);
        }
      }
      uint4* dst = reinterpret_cast<uint4*>(j.y + r * j.ldy + k);
      dst[0] = make_uint4(out[0], out[1], out[2], out[3]);
      dst[1] = make_uint4(out[4], out[5], out[6], out[7]);
    } else {
      const std::int64_t r = i / j.K, k = i % j.K;
      const __half_raw h = __nv_cvt_fp8_to_halfraw(j.q[r * j.ldq + k], __NV_E4M3);
      j.y[r * j.ldy + k] = bf16_rn_canonical(__half2float(__half(h)) * mx_scale_as_float(mx_code_of(j, r, k)));
    }
  }
}

/// One operand's pure checks (no CUDA call); its byte ranges (q, scales, y) for the checks across
/// operands and for require_dequant_memory.
struct DequantRanges {
  Range q, s, y;
};
DequantRanges check_dequant_job(const char* who, const MxDequantOperand& o, const char* q_name,
                                const char* s_name, const char* y_name) {
  require_pointer(who, q_name, o.q, 1, "e4m3");
  require_pointer(who, s_name, o.scales, 1, "UE8M0");
  require_pointer(who, y_name, o.y, 2, "bf16");
  require_positive(who, "rows", o.rows);
  require_mx_multiple(who, "K", o.K, "MXFP8 has one UE8M0 scale per 1 x 32 block along K");
  require_ld(who, "ldq", o.ldq, "K", o.K);
  require_ld(who, "ldy", o.ldy, "K", o.K);
  const DequantRanges r{
      range(q_name, o.q, extent_bytes(who, q_name, o.rows, o.ldq, o.K, 1)),
      range(s_name, o.scales, std::uint64_t(mx_1x32_scale_bytes(o.rows, o.K))),
      range(y_name, o.y, extent_bytes(who, y_name, o.rows, o.ldy, o.K, 2))};
  require_disjoint(who, {r.y}, {r.q, r.s, r.y});
  return r;
}
/// The CUDA half of the checks (cudaPointerGetAttributes on each buffer), after every pure one.
void require_dequant_memory(const char* who, const MxDequantOperand& o, const DequantRanges& r) {
  require_device_accessible(o.q, r.q.bytes, who, r.q.name);
  require_device_accessible(o.scales, r.s.bytes, who, r.s.name);
  require_device_accessible(o.y, r.y.bytes, who, r.y.name);
}

bool dequant_vector_ok(const MxDequantOperand& o) {
  return aligned(o.q, 16) && o.ldq % 16 == 0 && aligned(o.y, 16) && o.ldy % 8 == 0;
}

}  // namespace

void validate_dequantize_mx_1x32_bf16(const MxDequantOperand& a, const MxDequantOperand* b) {
  const char* who = "fp8gemm::dequantize_mx_1x32_bf16";
  // Every pure check of both operands first, so a bad call is refused before any CUDA call.
  const DequantRanges r0 = check_dequant_job(who, a, "q", "scales", "y");
  if (b != nullptr) {
    const DequantRanges r1 = check_dequant_job(who, *b, "second q", "second scales", "second y");
    require_disjoint(who, {r0.y, r1.y}, {r0.y, r1.y, r0.q, r0.s, r1.q, r1.s});
    require_dequant_memory(who, a, r0);
    require_dequant_memory(who, *b, r1);
    return;
  }
  require_dequant_memory(who, a, r0);
}

void launch_dequantize_mx_1x32_bf16(const MxDequantOperand& a, const MxDequantOperand* b,
                                    cudaStream_t stream) {
  const char* who = "fp8gemm::dequantize_mx_1x32_bf16";
  const bool vec = dequant_vector_ok(a) && (b == nullptr || dequant_vector_ok(*b));
  auto job = [&](const MxDequantOperand& o) {
    return DequantJob{o.q, o.rows, o.K, o.ldq, o.scales, o.y, o.ldy,
                      vec ? o.rows * (o.K / 16) : o.rows * o.K};
  };
  const DequantJob j0 = job(a);
  const DequantJob j1 = b != nullptr ? job(*b) : DequantJob{};
  // Enough resident threads to keep the copy going (8 CTAs of 256 per SM), each looping.
  const std::int64_t blocks_needed = (j0.units + j1.units + 255) / 256;
  const int grid = int(std::min<std::int64_t>(
      blocks_needed, std::int64_t(current_device_sm_count()) * 8));
  if (vec)
    dequantize_mx_kernel<true><<<grid, 256, 0, stream>>>(j0, j1);
  else
    dequantize_mx_kernel<false><<<grid, 256, 0, stream>>>(j0, j1);
  check_launch(who);
}

void dequantize_mx_1x32_bf16(const MxDequantOperand& a, const MxDequantOperand* b,
                             cudaStream_t stream) {
  validate_dequantize_mx_1x32_bf16(a, b);
  launch_dequantize_mx_1x32_bf16(a, b, stream);
}

void quantize_mx_1x32(const std::uint16_t* x, std::int64_t M, std::int64_t K, std::int64_t ldx,
                      std::uint8_t* q, std::int64_t ldq, std::uint8_t* scales, MxExponentRule rule,
                      cudaStream_t stream) {
  mx_tuning::quantize_mx_1x32(mx_tuning::default_variant(false), 0, x, M, K, ldx, q, ldq, scales, rule,
                              stream);
}

void quantize_mx_1x32_dual(const std::uint16_t* x, std::int64_t M, std::int64_t K, std::int64_t ldx,
                           std::uint8_t* q, std::int64_t ldq, std::uint8_t* scales,
                           std::uint8_t* q_t, std::int64_t ldq_t, std::uint8_t* scales_t,
                           MxExponentRule rule, cudaStream_t stream) {
  mx_tuning::quantize_mx_1x32_dual(mx_tuning::default_variant(true), 0, x, M, K, ldx, q, ldq, scales,
                                   q_t, ldq_t, scales_t, rule, stream);
}

}  // namespace fp8gemm
