// requantize_mx (common/quantize_gpu.hpp): MXFP8 operands re-quantised into chapter 7's
// DeepSeek-V3 format on the GPU, bit for bit mx_requantize_1x128 / mx_requantize_128x128
// (common/mx.hpp states the rule and why it is exact where it is).
//
// One CTA of 256 threads per 128-row x 128-column tile of an operand (A's tiles, then B's, in one
// launch). Thread t holds the 16-byte chunk t % 8 of rows t / 8 + 32 p, p = 0..3: 16 consecutive
// codes of one MX block (16 | 32), so one scale byte per chunk. A group's exponent E is the
// largest scale code among its chunks that hold a non-zero code (an integer maximum: exact and
// order-independent, so the output does not depend on the schedule):
//  - 1 x 128 (A): a group is one row of the tile, the 8 adjacent lanes holding it; three
//    xor-shuffles;
//  - 128 x 128 (B): the whole tile; a warp reduction, then the 8 warps' results through shared
//    memory (one barrier).
// Each code is then shifted down by E minus its block's code: the e4m3 value (exact in half,
// then float), times 2^-shift (exact: the shift is capped at 30, and every shift >= 20 flushes
// e4m3's largest value, 448, below 2^-10 anyway), rounded back to e4m3 by
// cvt.rn.satfinite.e4m3x2.f32 (round to nearest even; nothing can overflow: the shift is never
// negative). A chunk whose shift is 0, or negative (a block of zeros above E), is kept as is, as
// the CPU rule does. A group holding the UE8M0 NaN code or an e4m3 NaN is written NaN throughout
// (scale 0x7FC00000, every code 0x7F).
// All loads and stores are 16 bytes (the entry point requires 16-byte aligned operands with
// leading dimensions multiple of 16, which the GEMMs that read them require anyway).
#include <cuda_fp16.h>
#include <cuda_fp8.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <string>

#include "common/cuda.hpp"
#include "common/fp8.hpp"
#include "common/launch.hpp"
#include "common/mx.hpp"
#include "common/ptx/cp_async.cuh"
#include "common/ptx/smem.cuh"
#include "common/quantize_gpu.hpp"
#include "common/src/quantize_kernels.cuh"

namespace fp8gemm {

using namespace quantize_detail;

namespace {

constexpr int kRequantThreads = 256;
constexpr const char* kRequantWho = "requantize_mx";

/// One operand as the kernel sees it: the call's, and its tiles, ceil(rows / 128) x groups,
/// row-tile major.
struct RequantJob {
  MxRequantOperand o;
  std::int64_t groups = 0, row_tiles = 0, tiles = 0;
};

/// Whether any of the 16 codes is non-zero (+0 and -0 are zeros).
__device__ __forceinline__ bool any_nonzero(const uint4& v) {
  return ((v.x | v.y | v.z | v.w) & 0x7F7F7F7Fu) != 0;
}
/// Whether any of the 16 codes is an e4m3 NaN (0x7F / 0xFF): a byte's low 7 bits plus 1 reach
/// bit 7 only from 0x7F, and never carry into the next byte.
__device__ __forceinline__ bool any_e4m3_nan(const uint4& v) {
  const auto nan = [](unsigned w) { return ((w & 0x7F7F7F7Fu) + 0x01010101u) & 0x80808080u; };
  return (nan(v.x) | nan(v.y) | nan(v.z) | nan(v.w)) != 0;
}

/// 4 codes times m = 2^-shift, back to e4m3 (round to nearest even).
__device__ __forceinline__ unsigned shift_word(unsigned w, float m) {
  const float2 lo = e4m3x2_to_float2(w), hi = e4m3x2_to_float2(w >> 16);
  return cvt_e4m3x2(lo.x * m, lo.y * m) | (cvt_e4m3x2(hi.x * m, hi.y * m) << 16);
}

/// The chunk's 16 re-quantised codes: group_code is the largest scale code among the group's
/// blocks that hold a non-zero code (-1: none, and E = 127), code the chunk's block's.
__device__ __forceinline__ uint4 requantized(const uint4& v, int code, int group_code, bool nan) {
  if (nan) return make_uint4(0x7F7F7F7Fu, 0x7F7F7F7Fu, 0x7F7F7F7Fu, 0x7F7F7F7Fu);
  const int shift = (group_code < 0 ? 127 : group_code) - code;
  if (shift <= 0) return v;
  const float m = __uint_as_float(unsigned(127 - min(shift, 30)) << 23);
  return make_uint4(shift_word(v.x, m), shift_word(v.y, m), shift_word(v.z, m),
                    shift_word(v.w, m));
}

/// The FP32 scale 2^(E - 127) (group_code as in requantized()), or NaN.
__device__ __forceinline__ float group_scale(int group_code, bool nan) {
  return __uint_as_float(nan ? 0x7FC00000u
                             : ue8m0_float_bits(unsigned(group_code < 0 ? 127 : group_code)));
}

/// A tile's chunks (thread t: chunk t % 8 of rows t / 8 + 32 p), re-quantised and stored with
/// their scales: what every variant does once its 4 chunks and their 4 scale codes are in
/// registers. ok[p]: row and column in the operand. parity selects the B path's pair of
/// shared-memory slots, so that a CTA walking tiles needs one barrier per B tile (see the pipe
/// kernel).
__device__ __forceinline__ void finish_tile(const uint4 (&v)[4], const int (&code)[4],
                                            const bool (&ok)[4], bool is_b, const RequantJob& job,
                                            std::int64_t ti, std::int64_t g,
                                            const GroupScaleLayout& layout_a,
                                            const BlockScaleLayout& layout_b,
                                            int (*warp_cand)[kRequantThreads / 32],
                                            unsigned (*warp_nan)[kRequantThreads / 32],
                                            int parity) {
  const MxRequantOperand& j = job.o;
  const int c = threadIdx.x & 7, rr = threadIdx.x >> 3;
  const std::int64_t col = g * 128 + c * 16;
  // A chunk's candidate for E (-1: none) and whether it makes its group NaN.
  int cand[4];
  unsigned nan[4];
#pragma unroll
  for (int p = 0; p < 4; ++p) {
    cand[p] = ok[p] && code[p] != int(kUe8m0Nan) && any_nonzero(v[p]) ? code[p] : -1;
    nan[p] = ok[p] && (code[p] == int(kUe8m0Nan) || any_e4m3_nan(v[p])) ? 1u : 0u;
  }
  if (!is_b) {
#pragma unroll
    for (int p = 0; p < 4; ++p) {
      for (int d = 1; d < 8; d <<= 1) {  // the 8 lanes of one row's group
        cand[p] = max(cand[p], __shfl_xor_sync(0xFFFFFFFFu, cand[p], d));
        nan[p] |= __shfl_xor_sync(0xFFFFFFFFu, nan[p], d);
      }
      const std::int64_t r = ti * 128 + rr + 32 * p;
      if (ok[p])
        *reinterpret_cast<uint4*>(j.out + r * j.ldo + col) =
            requantized(v[p], code[p], cand[p], nan[p] != 0);
      if (c == 0 && r < j.rows) {
        j.out_scales[layout_a.offset(r, g)] = group_scale(cand[p], nan[p] != 0);
        zero_group_padding(j.out_scales, layout_a, j.rows, job.groups, r, g, 0, 1);
      }
    }
    return;
  }
  int e = max(max(cand[0], cand[1]), max(cand[2], cand[3]));
  unsigned n = nan[0] | nan[1] | nan[2] | nan[3];
  e = __reduce_max_sync(0xFFFFFFFFu, e);
  n = __reduce_or_sync(0xFFFFFFFFu, n);
  if ((threadIdx.x & 31) == 0) {
    warp_cand[parity][threadIdx.x >> 5] = e;
    warp_nan[parity][threadIdx.x >> 5] = n;
  }
  __syncthreads();
#pragma unroll
  for (int w = 0; w < kRequantThreads / 32; ++w) {
    e = max(e, warp_cand[parity][w]);
    n |= warp_nan[parity][w];
  }
#pragma unroll
  for (int p = 0; p < 4; ++p) {
    const std::int64_t r = ti * 128 + rr + 32 * p;
    if (ok[p])
      *reinterpret_cast<uint4*>(j.out + r * j.ldo + col) = requantized(v[p], code[p], e, n != 0);
  }
  if (threadIdx.x == 0) j.out_scales[layout_b.offset(ti, g)] = group_scale(e, n != 0);
  // The padding columns [groups, ld) of this block row (inside required_elements() for every
  // block row but the last), written by the row's last tile.
  if (g == job.groups - 1 && ti < job.row_tiles - 1)
    zero_block_row_padding<kRequantThreads>(j.out_scales, layout_b, ti, job.groups);
}

// v1_tiles: one CTA per tile, its chunks loaded straight into registers (all four loads first: 64
// bytes per thread in flight), then finished. Four CTAs per SM (64 registers, no spills; ptxas
// -v): the first version, without the bound, took 78 registers, so three CTAs (48 KB in flight
// per SM), and moved 2.2 TB/s on an H100 at 8192^3 (ncu: 65.8 % of DRAM peak, achieved occupancy
// 34.7 %; session 53, 2b22598); bounded, 73.9 % (0e3075f). A fifth CTA would need 48 registers
// (registers go by 8 per thread): bounded to five, ptxas spills (68 bytes). A CTA's loads are in
// flight only until they land, and a tile is only 16 KB (the MX quantiser's tiles, of bf16, are
// 32 KB), which looked like the limit; the pipelined variants below show it is not.
__global__ void __launch_bounds__(kRequantThreads, 4)
    requantize_mx_kernel(RequantJob a, GroupScaleLayout layout_a, RequantJob b,
                         BlockScaleLayout layout_b) {
  __shared__ int warp_cand[1][kRequantThreads / 32];
  __shared__ unsigned warp_nan[1][kRequantThreads / 32];
  const bool is_b = blockIdx.x >= a.tiles;  // uniform per CTA
  const RequantJob job = is_b ? b : a;
  const MxRequantOperand& j = job.o;
  const std::int64_t tile = is_b ? blockIdx.x - a.tiles : blockIdx.x;
  const std::int64_t ti = tile / job.groups, g = tile % job.groups;
  const int c = threadIdx.x & 7, rr = threadIdx.x >> 3;
  const std::int64_t col = g * 128 + c * 16;
  const std::int64_t col_blocks = j.K / kMxBlock;
  uint4 v[4];
  int code[4];
  bool ok[4];
#pragma unroll
  for (int p = 0; p < 4; ++p) {
    const std::int64_t r = ti * 128 + rr + 32 * p;
    ok[p] = col < j.K && r < j.rows;
    v[p] = ok[p] ? __ldg(reinterpret_cast<const uint4*>(j.q + r * j.ldq + col)) : make_uint4(0, 0, 0, 0);
    code[p] = ok[p] ? int(j.scales[mx_scale_offset(r, col / kMxBlock, j.rows, col_blocks)]) : 0;
  }
  finish_tile(v, code, ok, is_b, job, ti, g, layout_a, layout_b, warp_cand, warp_nan, 0);
}

// v2_pipe2 / v3_pipe3 / v4_pipe4: persistent CTAs (a balanced grid: every CTA walks the same
// number of tiles +-1; A's tiles first, then B's; CTA i takes tiles i, i + G, ...) fed by a ring of
// S cp.async stages private to each thread, so that S - 1 tiles are in flight while one is
// finished, and the loads of a CTA never stop. Per thread and stage: its 4 chunks and the 16
// scale bytes of its rows (the swizzled 128 x 4 layout keeps rows rr + 32 p of a 128 x 128 tile's
// 4 blocks in one 16-byte line: byte 4 p + block; the 8 threads of a row copy the same line, one
// sector), 80 bytes: 20 KB per stage and CTA. Each thread reads only what it copied itself
// (cp.async.wait_group, no barrier); the B path's one barrier per tile reduces the whole tile,
// with its shared-memory slots alternating between consecutive B tiles: a warp writes the
// slots of B tile k + 2 only after the barrier of B tile k + 1, which every warp reaches after
// reading tile k's. S = 2 at 4 CTAs per SM, 3 at 3, 4 at 2: 80, 120 and 120 KB in flight per SM,
// against v1's 64 KB during its load phase only. Needs 16-byte aligned scales (cp.async);
// v1 runs otherwise. Predicted (session 54, before any run) 84-91 % of a device-to-device copy of
// the same bytes (v2 and v3 86-91, v4 84-90), v1 78-82 %. Measured on an H100 (quantize_bench,
// 20a486b; A and B of 8192 x 8192, 4096 x 7168, 2048 x 7168 each): v1 86.0 / 92.0 / 96.3 %, v2
// 83.7 / 88.4 / 88.6 %, v3 83.6 / 86.0 / 90.3 %, v4 83.3 / 86.9 / 91.2 %: the pipelines lost
// everywhere. ncu at 8192 x 8192: v1 and v2 both at 2.50 / 2.48 TB/s, 74.7 / 74.1 % of DRAM peak
// (the copy: 2.89 TB/s), so v1 was not short of bytes in flight; it runs at the rate DRAM gives
// this pattern, and the ring only adds work.
// The same lesson as the MXFP8 quantisers' v3 / v4 (quantize_mx_gpu.cu). Kept for the bench and
// the tests; v1 stays the default.
constexpr int kStageChunks = 5;  // per thread and stage: 4 chunks of codes, 1 line of scales
constexpr int kStageBytes = kStageChunks * kRequantThreads * 16;

template <int S, int MinCtas>
__global__ void __launch_bounds__(kRequantThreads, MinCtas)
    requantize_mx_pipe_kernel(RequantJob a, GroupScaleLayout layout_a, RequantJob b,
                              BlockScaleLayout layout_b) {
  extern __shared__ uint4 ring[];  // [S][kStageChunks][kRequantThreads]
  __shared__ int warp_cand[2][kRequantThreads / 32];
  __shared__ unsigned warp_nan[2][kRequantThreads / 32];
  const int t = threadIdx.x, c = t & 7, rr = t >> 3;
  // The tile counts fit 31 bits (validate_requantize_mx), so the walk's divisions are 32-bit.
  const unsigned a_tiles = unsigned(a.tiles), total = unsigned(a.tiles + b.tiles);
  const auto split = [&](unsigned u, unsigned& ti, unsigned& g) {
    const bool is_b = u >= a_tiles;
    const unsigned local = is_b ? u - a_tiles : u, groups = unsigned(is_b ? b.groups : a.groups);
    ti = local / groups;
    g = local - ti * groups;
    return is_b;
  };
  unsigned next = blockIdx.x;  // the next tile to request
  const auto issue = [&](int slot) {
    if (next < total) {
      unsigned ti, g;
      const bool is_b = split(next, ti, g);
      const std::uint8_t* q = is_b ? b.o.q : a.o.q;
      const std::uint8_t* sc = is_b ? b.o.scales : a.o.scales;
      const std::int64_t rows = is_b ? b.o.rows : a.o.rows, K = is_b ? b.o.K : a.o.K;
      const std::int64_t ldq = is_b ? b.o.ldq : a.o.ldq;
      const unsigned groups = unsigned(is_b ? b.groups : a.groups);
      const std::int64_t col = std::int64_t(g) * 128 + c * 16;
      uint4* st = ring + slot * kStageChunks * kRequantThreads + t;
#pragma unroll
      for (int p = 0; p < 4; ++p) {
        const std::int64_t r = std::int64_t(ti) * 128 + rr + 32 * p;
        const bool ok = col < K && r < rows;
        ptx::cp_async_16(ptx::smem_u32(st + p * kRequantThreads), ok ? q + r * ldq + col : q,
                         ok ? 16u : 0u);
      }
      // The tile's 512 scale bytes exist whole (rows padded to 128, blocks to 4), so this line
      // is always in the buffer.
      ptx::cp_async_16(ptx::smem_u32(st + 4 * kRequantThreads),
                       sc + (std::int64_t(ti) * groups + g) * 512 + rr * 16, 16u);
    }
    ptx::cp_async_commit();  // an empty group past the end keeps the counting uniform
    next += gridDim.x;
  };
#pragma unroll
  for (int s = 0; s < S - 1; ++s) issue(s);
  int slot = 0, parity = 0;
  for (unsigned u = blockIdx.x; u < total; u += gridDim.x) {
    issue(slot == 0 ? S - 1 : slot - 1);  // the stage finished in the previous iteration
    ptx::cp_async_wait<S - 1>();          // this tile's copies (this thread's) have landed
    unsigned ti, g;
    const bool is_b = split(u, ti, g);
    const RequantJob job = is_b ? b : a;  // a copy, as v1 takes: selected field by field
    const uint4* st = ring + slot * kStageChunks * kRequantThreads + t;
    const uint4 line = st[4 * kRequantThreads];
    const unsigned words[4] = {line.x, line.y, line.z, line.w};  // word p: rows rr + 32 p
    const std::int64_t col = std::int64_t(g) * 128 + c * 16;
    uint4 v[4];
    int code[4];
    bool ok[4];
#pragma unroll
    for (int p = 0; p < 4; ++p) {
      ok[p] = col < job.o.K && std::int64_t(ti) * 128 + rr + 32 * p < job.o.rows;
      v[p] = st[p * kRequantThreads];
      code[p] = int((words[p] >> (8 * (c >> 1))) & 0xFFu);  // block c / 2 of the tile
    }
    finish_tile(v, code, ok, is_b, job, ti, g, layout_a, layout_b, warp_cand, warp_nan, parity);
    parity ^= is_b ? 1 : 0;
    slot = slot + 1 == S ? 0 : slot + 1;
  }
  ptx::cp_async_wait<0>();
}

/// One operand's pure checks (no CUDA call) and its byte ranges.
struct RequantRanges {
  Range q, s, out, out_s;
};
RequantRanges check_requant_operand(const MxRequantOperand& o, bool is_a,
                                    const GroupScaleLayout& la, const BlockScaleLayout& lb) {
  const char* who = kRequantWho;
  const char* q = is_a ? "a.q" : "b.q";
  const char* s = is_a ? "a.scales" : "b.scales";
  const char* out = is_a ? "a.out" : "b.out";
  const char* out_s = is_a ? "a.out_scales" : "b.out_scales";
  const std::string why = " (16-byte loads and stores; the GEMMs that read these operands "
                          "require it too)";
  require_pointer(who, q, o.q, 16, "e4m3, 16-byte chunks");
  require_pointer(who, s, o.scales, 1, "UE8M0");
  require_pointer(who, out, o.out, 16, "e4m3, 16-byte chunks");
  require_pointer(who, out_s, o.out_scales, 4, "float");
  require_positive(who, is_a ? "a.rows" : "b.rows", o.rows);
  require_mx_multiple(who, is_a ? "a.K" : "b.K", o.K,
                      "MXFP8 has one UE8M0 scale per 1 x 32 block along K");
  require_ld(who, is_a ? "a.ldq" : "b.ldq", o.ldq, "K", o.K);
  require_ld(who, is_a ? "a.ldo" : "b.ldo", o.ldo, "K", o.K);
  if (o.ldq % 16 != 0 || o.ldo % 16 != 0)
    fail(who, std::string(is_a ? "a" : "b") + ": ldq = " + std::to_string(o.ldq) + " and ldo = " +
                  std::to_string(o.ldo) + " must be multiples of 16" + why);
  std::int64_t scale_floats = 0;
  if (is_a) {
    require_group_layout(who, "layout_a", la, o.rows, "a.rows", o.K, "a.K");
    scale_floats = scale_extent(la, o.rows, o.K);
  } else {
    if (lb.ld < ceil_div(o.K, 128))
      fail(who, "layout_b.ld = " + std::to_string(lb.ld) + " must be >= ceil(b.K / 128) = " +
                    std::to_string(ceil_div(o.K, 128)));
    scale_floats = scale_extent(lb, o.rows, o.K);
  }
  // A span past 64-bit byte offsets would wrap the byte count below, and with it the overlap and
  // memory checks, while the kernel still writes the padding up to ld.
  if (scale_floats == kScaleExtentOverflow)
    fail(who, std::string(is_a ? "layout_a" : "layout_b") + ": ld = " +
                  std::to_string(is_a ? la.ld : lb.ld) +
                  " makes the scale buffer's span overflow 64-bit byte offsets");
  return {range(q, o.q, extent_bytes(who, q, o.rows, o.ldq, o.K, 1)),
          range(s, o.scales, std::uint64_t(mx_1x32_scale_bytes(o.rows, o.K))),
          range(out, o.out, extent_bytes(who, out, o.rows, o.ldo, o.K, 1)),
          range(out_s, o.out_scales, std::uint64_t(scale_floats) * 4)};
}

void require_requant_memory(const MxRequantOperand& o, const RequantRanges& r) {
  require_device_accessible(o.q, r.q.bytes, kRequantWho, r.q.name);
  require_device_accessible(o.scales, r.s.bytes, kRequantWho, r.s.name);
  require_device_accessible(o.out, r.out.bytes, kRequantWho, r.out.name);
  require_device_accessible(o.out_scales, r.out_s.bytes, kRequantWho, r.out_s.name);
}

RequantJob job_of(const MxRequantOperand* o) {
  if (o == nullptr) return {};
  RequantJob j{*o};
  j.groups = ceil_div(o->K, 128);
  j.row_tiles = ceil_div(o->rows, 128);
  j.tiles = j.groups * j.row_tiles;
  return j;
}

}  // namespace

void validate_requantize_mx(const MxRequantOperand* a, GroupScaleLayout layout_a,
                            const MxRequantOperand* b, BlockScaleLayout layout_b) {
  if (a == nullptr && b == nullptr) fail(kRequantWho, "a and b are both null (nothing to do)");
  // Every pure check of both operands first, so a bad call is refused before any CUDA call.
  RequantRanges ra{}, rb{};
  if (a != nullptr) ra = check_requant_operand(*a, true, layout_a, layout_b);
  if (b != nullptr) rb = check_requant_operand(*b, false, layout_a, layout_b);
  if (a != nullptr && b != nullptr) {
    require_disjoint(kRequantWho, {ra.out, ra.out_s, rb.out, rb.out_s},
                     {ra.q, ra.s, ra.out, ra.out_s, rb.q, rb.s, rb.out, rb.out_s});
  } else {
    const RequantRanges& r = a != nullptr ? ra : rb;
    require_disjoint(kRequantWho, {r.out, r.out_s}, {r.q, r.s, r.out, r.out_s});
  }
  const std::int64_t tiles = job_of(a).tiles + job_of(b).tiles;
  if (tiles > 0x7FFFFFFF)
    fail(kRequantWho, std::to_string(tiles) + " tiles of 128 x 128 exceed a grid of 2^31 - 1 CTAs");
  if (a != nullptr) require_requant_memory(*a, ra);
  if (b != nullptr) require_requant_memory(*b, rb);
}

namespace {

using RequantKernel = void (*)(RequantJob, GroupScaleLayout, RequantJob, BlockScaleLayout);
struct RequantVariant {
  RequantKernel kernel;
  const char* kernel_name;
  const char* name;  // requant_tuning::variant_name
  int stages;        // 0: one CTA per tile, no shared-memory ring
};
const RequantVariant& variant_of(int v) {
  static const RequantVariant variants[requant_tuning::kVariants] = {
      {&requantize_mx_kernel, "requantize_mx_kernel", "v1_tiles", 0},
      {&requantize_mx_pipe_kernel<2, 4>, "requantize_mx_pipe_kernel<2, 4>", "v2_pipe2", 2},
      {&requantize_mx_pipe_kernel<3, 3>, "requantize_mx_pipe_kernel<3, 3>", "v3_pipe3", 3},
      {&requantize_mx_pipe_kernel<4, 2>, "requantize_mx_pipe_kernel<4, 2>", "v4_pipe4", 4}};
  return variants[v];
}

/// The variant that runs: the pipelined ones copy the scales with 16-byte cp.async, so scales
/// that are not 16-byte aligned (the entry point requires 1) take v1.
int runnable_variant(int v, const MxRequantOperand* a, const MxRequantOperand* b) {
  const bool scales16 =
      (a == nullptr || aligned(a->scales, 16)) && (b == nullptr || aligned(b->scales, 16));
  return variant_of(v).stages > 0 && !scales16 ? 0 : v;
}

void prepare_variant(int v) {
  const RequantVariant& k = variant_of(v);
  prepare(reinterpret_cast<const void*>(k.kernel), k.kernel_name, kRequantWho,
          k.stages * kStageBytes);
}

void launch_variant(int v, int max_ctas, const MxRequantOperand* a, GroupScaleLayout layout_a,
                    const MxRequantOperand* b, BlockScaleLayout layout_b, cudaStream_t stream) {
  const RequantVariant& k = variant_of(runnable_variant(v, a, b));
  const RequantJob ja = job_of(a), jb = job_of(b);
  const std::int64_t tiles = ja.tiles + jb.tiles;
  const int smem = k.stages * kStageBytes;
  std::int64_t grid = tiles;  // v1: one CTA per tile
  if (k.stages > 0) {
    std::int64_t slots =
        resident_ctas(reinterpret_cast<const void*>(k.kernel), kRequantThreads, smem);
    if (max_ctas > 0) slots = std::min<std::int64_t>(slots, max_ctas);
    grid = balanced_grid(tiles, slots);
  }
  k.kernel<<<unsigned(grid), kRequantThreads, smem, stream>>>(ja, layout_a, jb, layout_b);
  check_launch(kRequantWho);
}

}  // namespace

void prepare_requantize_mx() {
  prepare_variant(requant_tuning::default_variant());
  prepare_variant(0);  // what runs when the scales are not 16-byte aligned
}

void launch_requantize_mx(const MxRequantOperand* a, GroupScaleLayout layout_a,
                          const MxRequantOperand* b, BlockScaleLayout layout_b,
                          cudaStream_t stream) {
  launch_variant(requant_tuning::default_variant(), 0, a, layout_a, b, layout_b, stream);
}

void requantize_mx(const MxRequantOperand* a, GroupScaleLayout layout_a,
                   const MxRequantOperand* b, BlockScaleLayout layout_b, cudaStream_t stream) {
  validate_requantize_mx(a, layout_a, b, layout_b);
  prepare_requantize_mx();
  launch_requantize_mx(a, layout_a, b, layout_b, stream);
}

namespace requant_tuning {

// v1_tiles: the side-by-side run (quantize_bench's requantize_mx_<variant> entries, H100,
// 20a486b, plots/data/h200/session54/call2_20a486b/) measured it fastest at every shape
// (86.0-96.3 % of a copy; the pipelined variants 83.3-91.2 %; the comment above the pipe kernel).
int default_variant() { return 0; }

const char* variant_name(int v) { return v >= 0 && v < kVariants ? variant_of(v).name : "?"; }

namespace {
void require_variant(int variant) {
  if (variant < 0 || variant >= kVariants)
    fail(kRequantWho, "variant = " + std::to_string(variant) + " must be in [0, " +
                          std::to_string(kVariants) + ")");
}
}  // namespace

int variant_run(int variant, const MxRequantOperand* a, const MxRequantOperand* b) {
  require_variant(variant);
  return runnable_variant(variant, a, b);
}

void requantize_mx(int variant, int max_ctas, const MxRequantOperand* a,
                   GroupScaleLayout layout_a, const MxRequantOperand* b,
                   BlockScaleLayout layout_b, cudaStream_t stream) {
  require_variant(variant);
  if (max_ctas < 0) fail(kRequantWho, "max_ctas = " + std::to_string(max_ctas) + " must be >= 0");
  validate_requantize_mx(a, layout_a, b, layout_b);
  prepare_variant(runnable_variant(variant, a, b));
  launch_variant(variant, max_ctas, a, layout_a, b, layout_b, stream);
}

}  // namespace requant_tuning

}  // namespace fp8gemm
