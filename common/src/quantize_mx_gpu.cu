// The MXFP8 quantisers on the GPU (common/quantize_gpu.hpp, "MXFP8"): kernels and host wrappers.
//
// One CTA of 256 threads per 128 x 128 tile of x (grid-stride over the tiles, row-major). The tile
// is exactly one 512-byte tile of the swizzled scale layout: its 128 rows x 4 blocks of 32 columns
// are the 128 x 4 scales of scale tile (tm, tk), and, for the dual, its 128 columns x 4 blocks of
// 32 rows are the scales of tile (tk, tm) of x^T's grid. So every CTA assembles whole scale tiles
// in shared memory (padding included: rows past M and blocks past K / 32 get code 0) and writes
// them with 32 coalesced 16-byte stores; the grid covers round_up(M, 128) x round_up(K, 128),
// which is exactly the padded scale grid.
//  - rows (q): the loads of quantize_128x128 (load_tile_rows: thread t = 16 rr + cc holds the
//    8-element chunk cc of rows rr + 16 it, it < 8; 8 x 16 bytes in flight per thread); an MX block
//    is 4 consecutive chunks of a row, i.e. 4 adjacent lanes: its amax is two xor-shuffles of the
//    integer maximum of |x|'s bf16 bits (exact, order-independent);
//  - columns (q_t, dual only): the bf16 tile goes through shared memory once, as in
//    quantize_1x128_dual; thread t reads the 32 rows h * 32 .. h * 32 + 31 (h = t / 64) of the
//    column pair p = t % 64, which are exactly one MX block of x^T for each of the two columns: no
//    reduction across threads, then column_codes and 32-byte stores (quantize_kernels.cuh).
// The scale code comes from the amax bits in integer arithmetic (mx_scale_code_bf16, mx.hpp).
// x / 2^e is computed by ExactDivider with the exact reciprocal 2^-e (Markstein's sequence, or
// __fdiv_rn outside its range): bit for bit the CPU's IEEE division. Conversion:
// cvt.rn.satfinite.e4m3x2.f32, fp8.hpp's encoder with Saturation::finite on finite input.
#include "common/quantize_gpu.hpp"

#include <cuda_runtime.h>

#include <cstdint>
#include <string>

#include "common/cuda.hpp"
#include "common/launch.hpp"
#include "common/mx.hpp"
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

void require_mx_multiple(const char* who, const char* name, std::int64_t v, const char* why) {
  require_positive(who, name, v);
  if (v % kMxBlock != 0)
    fail(who, std::string(name) + " = " + std::to_string(v) + " must be a multiple of 32 (" + why +
                  ")");
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
  bool vec_scales;  // every scale buffer written is 16-byte aligned
};

/// 2^e exactly, e in [-149, 127].
__device__ __forceinline__ float pow2f(int e) {
  return e >= -126 ? __uint_as_float(unsigned(e + 127) << 23) : __uint_as_float(1u << (e + 149));
}

/// x / 2^(code - 127) correctly rounded, for a code below 0xFF: the scale and its exact reciprocal.
__device__ __forceinline__ ExactDivider mx_divider(unsigned code) {
  return ExactDivider(pow2f(int(code) - 127), pow2f(127 - int(code)));
}

/// Offset of scale (row, col) inside one 128 x 4 scale tile (mx_scale_offset's inner part).
__device__ __forceinline__ int mx_tile_offset(int row, int col) {
  return (row & 31) * 16 + (row >> 5) * 4 + col;
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
__global__ void __launch_bounds__(kThreadsMx, Dual ? 3 : 4) quantize_mx_kernel(MxKernelArgs a) {
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

template <bool Vec, bool Dual, bool VecT>
void launch_mx(const char* who, const MxKernelArgs& a, cudaStream_t stream) {
  prepare(reinterpret_cast<const void*>(&quantize_mx_kernel<Vec, Dual, VecT>),
          "quantize_mx_kernel", who);
  const unsigned grid = grid_for(ceil_div(a.M, 128) * ceil_div(a.K, 128), 1);
  quantize_mx_kernel<Vec, Dual, VecT><<<grid, kThreadsMx, 0, stream>>>(a);
  check_launch(who);
}

}  // namespace

void quantize_mx_1x32(const std::uint16_t* x, std::int64_t M, std::int64_t K, std::int64_t ldx,
                      std::uint8_t* q, std::int64_t ldq, std::uint8_t* scales, MxExponentRule rule,
                      cudaStream_t stream) {
  const char* who = "fp8gemm::quantize_mx_1x32";
  validate_quantize_mx_1x32(x, M, K, ldx, q, ldq, scales, rule);
  require_device_accessible(x, extent_bytes(who, "x", M, ldx, K, 2), who, "x");
  require_device_accessible(q, extent_bytes(who, "q", M, ldq, K, 1), who, "q");
  require_device_accessible(scales, std::size_t(mx_1x32_scale_bytes(M, K)), who, "scales");
  const MxKernelArgs a{x, M, K, ldx, q, ldq, scales, nullptr, 0, nullptr, rule, aligned(scales, 16)};
  if (aligned(x, 16) && ldx % 8 == 0 && aligned(q, 8) && ldq % 8 == 0)
    launch_mx<true, false, false>(who, a, stream);
  else
    launch_mx<false, false, false>(who, a, stream);
}

void quantize_mx_1x32_dual(const std::uint16_t* x, std::int64_t M, std::int64_t K,
                           std::int64_t ldx, std::uint8_t* q, std::int64_t ldq,
                           std::uint8_t* scales, std::uint8_t* q_t, std::int64_t ldq_t,
                           std::uint8_t* scales_t, MxExponentRule rule, cudaStream_t stream) {
  const char* who = "fp8gemm::quantize_mx_1x32_dual";
  validate_quantize_mx_1x32_dual(x, M, K, ldx, q, ldq, scales, q_t, ldq_t, scales_t, rule);
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
  if (vx && vt) launch_mx<true, true, true>(who, a, stream);
  else if (vx) launch_mx<true, true, false>(who, a, stream);
  else if (vt) launch_mx<false, true, true>(who, a, stream);
  else launch_mx<false, true, false>(who, a, stream);
}

}  // namespace fp8gemm
