// The expert-token quantiser of chapter 8's weight gradient, quantize_tokens_transposed_1x128
// (common/quantize_gpu.hpp; layout and rules: common/quantize.hpp): x [T, C] bf16, tokens sorted
// by expert, becomes q_t = x^T [C, t_pad_capacity] e4m3 with each expert's tokens starting on a
// 128-token block and 1 x 128 scales along the tokens. One kernel, no host read of the offsets.
//
// Design (memory-bound: 2 bytes read and 1 written per element):
//  - every CTA reads the G + 1 offsets (L2 hits after the first CTA) into shared memory and
//    computes the padded offsets P_g itself (a block-wide scan): no second kernel, no workspace,
//    and CTA 0 writes P to padded_offsets;
//  - the output is cut into 128 x 128 tiles (token block tb, channel block tc); a token block
//    never mixes experts, so its real tokens are 1 to 128 CONSECUTIVE rows of x, found by a
//    binary search of P: the tile is loaded exactly as the dual quantiser loads its tiles
//    (load_tile_rows: 16-byte loads, two 256-byte row segments per warp instruction, rows past
//    the expert's last token read as zeros) and transposed through shared memory by the dual's
//    second phase (quantize_tile_columns: conflict-free column reads, the column amax over 4
//    threads, 32-byte pieces of q_t rows, scale stores), which writes e4m3 zeros for the padding
//    rows and scale 0 for blocks past P_G;
//  - a persistent grid (as many CTAs as fit, each walking tiles b, b + grid, ...) with the next
//    tile's loads issued before the current tile's conversion and stores: 32 KB per CTA stay in
//    flight while it computes (the dual, which loads and then computes, reaches ~50 % of a copy).
// Measured (H200, 9b76714): 62-64 % of the copy. Kernel variants (tuning_1x128, not API; the public
// function runs tuning_1x128::default_variant, v2_lean): v1_first, the kernel above; v2_lean, the
// same walk with the lean dual's column pass (quantize_kernels.cuh) and no prefetch, 3 CTAs per SM:
// 73.1-74.7 % of the copy against v1_first's 61.9-64.1 (H200, quantize_bench at 3e2acd2,
// plots/data/h200/ch07/quantize_bench_1x128_3e2acd2.json).
#include "common/quantize_gpu.hpp"

#include <cuda_runtime.h>

#include <algorithm>
#include <climits>
#include <cstdint>
#include <string>
#include <type_traits>

#include "common/cuda.hpp"
#include "common/launch.hpp"
#include "common/src/quantize_kernels.cuh"

namespace fp8gemm {

using namespace quantize_detail;

void validate_quantize_tokens_transposed_1x128(const std::uint16_t* x, std::int64_t T,
                                               std::int64_t C, std::int64_t ldx,
                                               const int* offsets, int G, const std::uint8_t* q_t,
                                               std::int64_t ldq_t, std::int64_t t_pad_capacity,
                                               const float* scales_t, GroupScaleLayout layout_t,
                                               const int* padded_offsets) {
  const char* who = "quantize_tokens_transposed_1x128";
  require_pointer(who, "x", x, 2, "bf16");
  require_pointer(who, "offsets", offsets, 4, "int32");
  require_pointer(who, "q_t", q_t, 1, "e4m3");
  require_pointer(who, "scales_t", scales_t, 4, "float");
  if (padded_offsets != nullptr) require_pointer(who, "padded_offsets", padded_offsets, 4, "int32");
  require_positive(who, "T", T);
  if (T > INT_MAX)
    fail(who, "T = " + std::to_string(T) + " must be <= 2^31 - 1 (the offsets are int32)");
  require_positive(who, "C", C);
  require_positive(who, "G", G);
  if (G > kMaxTokenGroups)
    fail(who, "G = " + std::to_string(G) + " must be <= kMaxTokenGroups = " +
                  std::to_string(kMaxTokenGroups) + " (the offsets are kept in shared memory)");
  require_ld(who, "ldx", ldx, "C", C);
  const std::int64_t need = max_padded_tokens(T, G);
  if (t_pad_capacity < need)
    fail(who, "t_pad_capacity = " + std::to_string(t_pad_capacity) +
                  " must be >= max_padded_tokens(T = " + std::to_string(T) + ", G = " +
                  std::to_string(G) + ") = " + std::to_string(need) +
                  " (the padded token count the device offsets can reach; the host never reads "
                  "them)");
  if (t_pad_capacity > INT_MAX)
    fail(who, "t_pad_capacity = " + std::to_string(t_pad_capacity) +
                  " must be <= 2^31 - 1 (the padded offsets are int32)");
  require_ld(who, "ldq_t", ldq_t, "t_pad_capacity", t_pad_capacity);
  require_group_layout(who, "layout_t", layout_t, C, "C", t_pad_capacity, "t_pad_capacity");
  const std::int64_t blocks = ceil_div(t_pad_capacity, 128);
  const bool mn = layout_t.major == ScaleMajor::mn;
  const std::uint64_t groups_bytes = 4 * std::uint64_t(G + 1);
  const Range rx = range("x", x, extent_bytes(who, "x", T, ldx, C, 2));
  const Range ro = range("offsets", offsets, groups_bytes);
  const Range rq = range("q_t", q_t, extent_bytes(who, "q_t", C, ldq_t, t_pad_capacity, 1));
  const Range rs = range("scales_t", scales_t,
                         extent_bytes(who, "scales_t", mn ? blocks : C, layout_t.ld,
                                      mn ? C : blocks, 4));
  const Range rp = range("padded_offsets", padded_offsets,
                         padded_offsets != nullptr ? groups_bytes : 0);  // null: no bytes
  require_disjoint(who, {rq, rs, rp}, {rx, ro, rq, rs, rp});
}

namespace {

constexpr int kThreadsTokens = 256;  // the thread map of load_tile_rows / quantize_tile_columns

/// Dynamic shared memory for G experts: the offsets O[G + 1] and the padded offsets P[G + 1].
constexpr int group_smem_bytes(int G) { return 8 * (G + 1); }

/// P[0 .. G] from the offsets in O[0 .. G] (shared memory), with the rules of
/// padded_token_offsets_cpu (quantize.hpp): P_{g+1} = P_g + round_up(count_g, 128), clamped to
/// the capacity. Thread t sums a chunk of ceil(G / 256) experts; a warp scan and the 8 warp
/// totals give each chunk's start. Ends with a __syncthreads().
__device__ __forceinline__ void scan_padded_offsets(const int* O, int* P, int G, std::int64_t T,
                                                    std::int64_t capacity,
                                                    long long (&warp_total)[kThreadsTokens / 32]) {
  const int t = threadIdx.x, lane = t & 31, warp = t >> 5;
  const int per = (G + kThreadsTokens - 1) / kThreadsTokens;
  const int g0 = min(G, t * per), g1 = min(G, g0 + per);
  const auto padded = [&](int g) {
    const TokenRange r = expert_token_range(O[g], O[g + 1], T);
    return round_up(r.end - r.begin, 128);
  };
  long long mine = 0;
  for (int g = g0; g < g1; ++g) mine += padded(g);
  long long inclusive = mine;
#pragma unroll
  for (int o = 1; o < 32; o <<= 1) {
    const long long v = __shfl_up_sync(0xFFFFFFFFu, inclusive, o);
    if (lane >= o) inclusive += v;
  }
  if (lane == 31) warp_total[warp] = inclusive;
  __syncthreads();
  long long run = inclusive - mine;
  for (int w = 0; w < warp; ++w) run += warp_total[w];
  if (t == 0) P[0] = 0;
  for (int g = g0; g < g1; ++g) {
    run += padded(g);
    P[g + 1] = int(min(run, (long long)capacity));
  }
  __syncthreads();
}

/// The offsets O[0 .. G] and the padded offsets P[0 .. G] of a token kernel in shared memory.
struct GroupOffsets {
  const int* O;
  const int* P;
};

/// Both token kernels' start: the offsets into O and the padded offsets into P (dynamic shared
/// memory, group_smem_bytes(G)), then CTA 0 writes P to padded_offsets unless it is null.
__device__ __forceinline__ GroupOffsets
load_group_offsets(const int* __restrict__ offsets, int G, std::int64_t T, std::int64_t capacity,
                   long long (&warp_total)[kThreadsTokens / 32], int* __restrict__ padded_offsets) {
  extern __shared__ int group_smem[];  // O[G + 1], then P[G + 1]
  int* O = group_smem;
  int* P = group_smem + G + 1;
  const int t = threadIdx.x;
  for (int i = t; i <= G; i += kThreadsTokens) O[i] = offsets[i];
  __syncthreads();
  scan_padded_offsets(O, P, G, T, capacity, warp_total);
  if (blockIdx.x == 0 && padded_offsets != nullptr)
    for (int i = t; i <= G; i += kThreadsTokens) padded_offsets[i] = P[i];
  return {O, P};
}

/// One 128 x 128 tile of q_t: token block tb (columns 128 tb ..), channel block tc (rows
/// 128 tc ..), and its real tokens, rows row0 .. row0 + valid - 1 of x (valid = 0: a block at or
/// past P_G, or past the last tile: nothing to load, zeros to write).
struct TokenTile {
  std::int64_t tb, tc, row0;
  int valid;
};

/// Tile b of tiles (token block major, kc channel blocks per token block). The expert is the
/// last g with P_g <= 128 tb (a binary search; empty experts share their P with the next one):
/// then P_g <= 128 tb < P_{g+1}, or g = G past the padded tokens.
__device__ __forceinline__ TokenTile locate_tile(std::int64_t b, std::int64_t tiles,
                                                 std::int64_t kc, const int* O, const int* P,
                                                 int G, std::int64_t T) {
  TokenTile tile{b / kc, b - (b / kc) * kc, 0, 0};
  if (b >= tiles) return tile;
  const std::int64_t s = tile.tb * 128;
  int lo = 0, hi = G;  // invariant: P[lo] <= s (P[0] = 0)
  while (lo < hi) {
    const int mid = (lo + hi + 1) >> 1;
    if (P[mid] <= s) lo = mid;
    else hi = mid - 1;
  }
  if (lo < G) {
    const TokenRange r = expert_token_range(O[lo], O[lo + 1], T);
    tile.row0 = r.begin + (s - P[lo]);
    tile.valid = int(min(std::int64_t(128), r.end - tile.row0));  // >= 1: see quantize.hpp
  }
  return tile;
}

// x [T, C] bf16 (ldx), offsets [G + 1], q_t [C, ldq_t] e4m3 (capacity columns written), scales_t
// at layout_t.offset(c, tb), padded_offsets [G + 1] or null. Grid: persistent, any size.
template <bool VecX, bool VecT>
__global__ void __launch_bounds__(kThreadsTokens, 2)
    quantize_tokens_kernel(const std::uint16_t* __restrict__ x, std::int64_t T, std::int64_t C,
                           std::int64_t ldx, const int* __restrict__ offsets, int G,
                           std::uint8_t* __restrict__ q_t, std::int64_t ldq_t,
                           std::int64_t capacity, float* __restrict__ scales_t,
                           GroupScaleLayout layout_t, int* __restrict__ padded_offsets, bool pow2) {
  __shared__ __align__(16) unsigned tile[128 * 64];  // 128 tokens x 64 words (128 channels)
  __shared__ unsigned col_max[4][64];
  __shared__ long long warp_total[kThreadsTokens / 32];
  const int t = threadIdx.x, cc = t & 15, rr = t >> 4;
  const auto [O, P] = load_group_offsets(offsets, G, T, capacity, warp_total, padded_offsets);

  const std::int64_t nb = ceil_div(capacity, 128), kc = ceil_div(C, 128), tiles = nb * kc;
  std::int64_t b = blockIdx.x;
  TokenTile cur = locate_tile(b, tiles, kc, O, P, G, T);
  uint4 v[8];
  load_tile_rows<VecX>(x, ldx, C, cur.row0, cur.row0 + cur.valid, rr, cur.tc * 128 + cc * 8, v);
  for (; b < tiles; b += gridDim.x) {
#pragma unroll
    for (int it = 0; it < 8; ++it)
      *reinterpret_cast<uint4*>(&tile[(rr + 16 * it) * 64 + cc * 4]) = v[it];
    __syncthreads();
    // The next tile's loads go out now; they are not needed until the next iteration.
    const TokenTile next = locate_tile(b + gridDim.x, tiles, kc, O, P, G, T);
    load_tile_rows<VecX>(x, ldx, C, next.row0, next.row0 + next.valid, rr,
                         next.tc * 128 + cc * 8, v);
    quantize_tile_columns<VecT, true>(tile, col_max, cur.tc, C, cur.tb, capacity, nb, cur.valid,
                                      q_t, ldq_t, scales_t, layout_t, pow2);
    __syncthreads();  // tile and col_max are rewritten by the next tile
    cur = next;
  }
}

/// CTAs per SM of the lean token kernel (its __launch_bounds__) of Version 2 (v2_lean), 3
/// (v3_shared) or 4 (v4_occ4): 3 (80 registers), except v4 where x takes 16-byte loads: 4 (64
/// registers, no spill: the shared scales free the registers that made v2 spill at 64; the scalar
/// path spills at 64 and stays at 3).
constexpr int tokens_lean_ctas(bool vec_x, int version) { return version >= 4 && vec_x ? 4 : 3; }

// tuning_1x128 variant 1 ("v2_lean"): the lean dual's structure (quantize_gpu.cu) on v1's walk.
// Persistent CTAs as above (the offsets are scanned once per CTA), but each tile is loaded, parked
// in shared memory (swz1) and transposed by the lean dual's column pass (lean_columns: FMUL +
// 2 FFMA per element, no __fdiv_rn, no col_max round trip, whole 128-byte lines of q_t per warp
// store) before the next tile's loads go out: no tile held in registers across the conversion,
// so 80 registers without spills and 3 CTAs per SM (v1: 128 registers, 2 CTAs). The MX
// quantisers' dual measured this way round: load-then-convert with 3 CTAs per SM (87-90 % of the
// copy) beat cp.async pipelines with 2-3 tiles in flight (81-84 %).
// tuning_1x128 variant 2 ("v3_shared", Version 3; not yet measured): v2 with the column pass's
// scales computed once per column pair and shared by shuffles (lean_columns<..., Share>, as the
// dual's v3), 3 CTAs per SM as v2.
// tuning_1x128 variant 3 ("v4_occ4", Version 4; not yet measured): v3 at 4 CTAs per SM on the
// 16-byte-load path (64 registers, no spill: the shared scales free the registers that made v2
// spill at 64), 128 KB of loads in flight per SM instead of 96 KB. Why that should matter: v2
// measured 73-75 % of the copy while the lean 1 x 128 kernel, the same load-at-once structure with
// 4 CTAs per SM, reached 93 %; from the measured rate a v2 CTA takes ~6 us per tile (H200,
// 3e2acd2) for ~1 us of issue at most, so (an estimate, not profiled) it mostly waits for its own
// 32 KB of loads, and more CTAs per SM put more bytes in flight.
template <bool VecX, bool VecT, int Version>
__global__ void __launch_bounds__(kThreadsTokens, tokens_lean_ctas(VecX, Version))
    quantize_tokens_lean_kernel(const std::uint16_t* __restrict__ x, std::int64_t T, std::int64_t C,
                                std::int64_t ldx, const int* __restrict__ offsets, int G,
                                std::uint8_t* __restrict__ q_t, std::int64_t ldq_t,
                                std::int64_t capacity, float* __restrict__ scales_t,
                                GroupScaleLayout layout_t, int* __restrict__ padded_offsets,
                                bool pow2) {
  constexpr bool Share = Version >= 3;
  __shared__ __align__(16) uint4 tile[128 * 16];  // 128 tokens x 128 channels, swz1
  __shared__ long long warp_total[kThreadsTokens / 32];
  const int t = threadIdx.x, cc = t & 15, rr = t >> 4;
  const auto [O, P] = load_group_offsets(offsets, G, T, capacity, warp_total, padded_offsets);

  const std::int64_t nb = ceil_div(capacity, 128), kc = ceil_div(C, 128), tiles = nb * kc;
  for (std::int64_t b = blockIdx.x; b < tiles; b += gridDim.x) {
    const TokenTile cur = locate_tile(b, tiles, kc, O, P, G, T);
    uint4 v[8];
    load_tile_rows<VecX>(x, ldx, C, cur.row0, cur.row0 + cur.valid, rr, cur.tc * 128 + cc * 8, v);
#pragma unroll
    for (int it = 0; it < 8; ++it) tile[swz1(rr + 16 * it, cc)] = v[it];
    __syncthreads();
    lean_columns<VecT, true, Share>(tile, cur.tb, cur.tc, C, capacity, nb, cur.valid, q_t, ldq_t,
                                    scales_t, layout_t, pow2);
    __syncthreads();  // the tile is rewritten by the next tile
  }
}

}  // namespace

namespace tuning_1x128 {

void quantize_tokens_transposed_1x128(int variant, int max_ctas, const std::uint16_t* x,
                                      std::int64_t T, std::int64_t C, std::int64_t ldx,
                                      const int* offsets, int G, std::uint8_t* q_t,
                                      std::int64_t ldq_t, std::int64_t t_pad_capacity,
                                      float* scales_t, GroupScaleLayout layout_t,
                                      int* padded_offsets, QuantizeOptions opt,
                                      cudaStream_t stream) {
  const char* who = "fp8gemm::quantize_tokens_transposed_1x128";
  validate_quantize_tokens_transposed_1x128(x, T, C, ldx, offsets, G, q_t, ldq_t, t_pad_capacity,
                                            scales_t, layout_t, padded_offsets);
  if (variant < 0 || variant >= kVariants)
    fail("quantize_tokens_transposed_1x128", "variant = " + std::to_string(variant) +
                                                 " must be in [0, " + std::to_string(kVariants) +
                                                 ")");
  if (max_ctas < 0)
    fail("quantize_tokens_transposed_1x128",
         "max_ctas = " + std::to_string(max_ctas) + " must be >= 0");
  require_device_accessible(x, extent_bytes(who, "x", T, ldx, C, 2), who, "x");
  require_device_accessible(offsets, 4 * std::size_t(G + 1), who, "offsets");
  require_device_accessible(q_t, extent_bytes(who, "q_t", C, ldq_t, t_pad_capacity, 1), who,
                            "q_t");
  require_device_accessible(
      scales_t, std::size_t(layout_t.required_elements(C, t_pad_capacity)) * 4, who, "scales_t");
  if (padded_offsets != nullptr)
    require_device_accessible(padded_offsets, 4 * std::size_t(G + 1), who, "padded_offsets");
  const bool vx = aligned(x, 16) && ldx % 8 == 0;
  const bool vt = aligned(q_t, 16) && ldq_t % 16 == 0;
  using Kernel = decltype(&quantize_tokens_kernel<true, true>);
  const auto lean = [&](auto version) -> Kernel {  // variant 1, 2, 3: Version 2, 3, 4
    constexpr int V = decltype(version)::value;
    return vx ? (vt ? &quantize_tokens_lean_kernel<true, true, V>
                    : &quantize_tokens_lean_kernel<true, false, V>)
              : (vt ? &quantize_tokens_lean_kernel<false, true, V>
                    : &quantize_tokens_lean_kernel<false, false, V>);
  };
  // variant 4 (v5_async, a dual-only change): the token kernel's v3; variant 5 (v6_interior,
  // the dense kernels' whole-tile copy): its v2.
  const Kernel kernel =
      variant == 3   ? lean(std::integral_constant<int, 4>{})
      : variant == 5 ? lean(std::integral_constant<int, 2>{})
      : variant >= 2 ? lean(std::integral_constant<int, 3>{})
      : variant == 1
          ? lean(std::integral_constant<int, 2>{})
          : (vx ? (vt ? &quantize_tokens_kernel<true, true> : &quantize_tokens_kernel<true, false>)
                : (vt ? &quantize_tokens_kernel<false, true>
                      : &quantize_tokens_kernel<false, false>));
  // Opt in once to the largest G's shared memory (prepare_kernel prepares a kernel once).
  prepare(reinterpret_cast<const void*>(kernel),
          variant >= 1 ? "quantize_tokens_lean_kernel" : "quantize_tokens_kernel", who,
          group_smem_bytes(kMaxTokenGroups));
  const int smem = group_smem_bytes(G);
  const int sms = current_device_sm_count();
  int per_sm = 0;
  FP8GEMM_CUDA_CHECK(
      cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, kThreadsTokens, smem));
  const std::int64_t tiles = ceil_div(t_pad_capacity, 128) * ceil_div(C, 128);
  std::int64_t resident = std::int64_t(sms) * std::max(per_sm, 1);
  if (max_ctas > 0) resident = std::min<std::int64_t>(resident, max_ctas);
  const unsigned grid = unsigned(std::clamp<std::int64_t>(std::min(tiles, resident), 1, INT_MAX));
  kernel<<<grid, kThreadsTokens, smem, stream>>>(x, T, C, ldx, offsets, G, q_t, ldq_t,
                                                 t_pad_capacity, scales_t, layout_t,
                                                 padded_offsets, opt.pow2_scales);
  check_launch(who);
}

}  // namespace tuning_1x128

void quantize_tokens_transposed_1x128(const std::uint16_t* x, std::int64_t T, std::int64_t C,
                                      std::int64_t ldx, const int* offsets, int G,
                                      std::uint8_t* q_t, std::int64_t ldq_t,
                                      std::int64_t t_pad_capacity, float* scales_t,
                                      GroupScaleLayout layout_t, int* padded_offsets,
                                      QuantizeOptions opt, cudaStream_t stream) {
  tuning_1x128::quantize_tokens_transposed_1x128(
      tuning_1x128::default_variant(tuning_1x128::Kind::tokens), 0, x, T, C, ldx, offsets, G, q_t,
      ldq_t, t_pad_capacity, scales_t, layout_t, padded_offsets, opt, stream);
}

}  // namespace fp8gemm
