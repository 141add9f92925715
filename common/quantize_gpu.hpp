// GPU quantisers of the DeepSeek-V3 recipe (chapter 7): bf16 activations to e4m3 with 1 x 128
// group scales, bf16 weights to e4m3 with 128 x 128 block scales, the fused "dual" variant of
// backward passes (x and x^T in one read), the expert-token variant of chapter 8's weight
// gradient (x^T padded per expert), converters between scale layouts, and chapter 9's MXFP8
// quantisers (1 x 32 blocks, UE8M0 scales in the swizzled 128 x 4 tile layout; "MXFP8" below),
// with its converters out of MXFP8 (to bf16; re-quantised into chapter 7's format).
//
// Numerics: bit for bit those of the CPU ground truth in common/quantize.hpp
// (quantize_1x128_cpu, quantize_128x128_cpu, quantize_1x128_dual_cpu,
// quantize_tokens_transposed_1x128_cpu, convert_*_cpu), which on finite data equal
// quantize<Group1x128> / quantize<Block128x128>:
//   scale = amax / 448 (IEEE division, __fdiv_rn); amax = 0 -> scale 1; a subnormal quotient is
//   rounded up to a multiple of 2^-149; with QuantizeOptions::pow2_scales the scale is
//   2^ceil(log2(amax / 448)) instead. q = e4m3(x / scale) (__fdiv_rn, then PTX
//   cvt.rn.satfinite.e4m3x2.f32: round to nearest even, saturated to +-448).
//   A group or block holding any NaN or +-Inf gets scale NaN (0x7FC00000) and all its codes
//   are 0x7F (e4m3 NaN): a GEMM that uses it gives NaN, as a bf16 GEMM would; others are
//   unaffected. amax is the maximum of |x|'s bf16 bit patterns (an integer maximum: exact,
//   order-independent, so the result is deterministic and equal to the CPU's).
//   Scale-buffer entries inside layout.required_elements() that hold no scale are written 0.0f
//   (deterministic output for padded layouts, e.g. mn-major TMA-aligned ld = round_up(M, 4));
//   nothing past required_elements() is written, nor q between K and ldq.
//
// Every pointer is device memory of the current device (managed memory is accepted too). Every
// entry point validates its arguments on the host first and throws std::invalid_argument naming
// the function, the argument, the rule and the value, before any CUDA call (so these checks run
// on machines without a GPU); then checks that each pointer is memory the GPU can access over
// the extent the kernel touches (launch.hpp), launches on `stream` and checks the launch
// (std::runtime_error on a CUDA failure). Inputs and outputs must not overlap.
// Vector loads and stores are used where pointers and leading dimensions allow (x 16-byte aligned
// with ldx a multiple of 8; q 8-byte aligned with ldq a multiple of 8; q_t 16-byte aligned with
// ldq_t a multiple of 16); otherwise a scalar path runs: never refused for alignment, except
// the element alignment itself (bf16 2 bytes, float scales and int32 offsets 4 bytes).
#pragma once

#include <cuda_runtime.h>

#include <cmath>
#include <cstdint>

#include "common/mx.hpp"        // MxExponentRule, mx_scale_bytes, the MXFP8 CPU ground truth
#include "common/quantize.hpp"  // QuantizeOptions, the CPU ground truth
#include "common/scale_layout.hpp"

namespace fp8gemm {

/// Activations, 1 x 128 groups along K.
/// x:      M x K bf16 (bits), row-major, leading dimension ldx >= K (elements).
/// q:      M x K e4m3, row-major, ldq >= K.
/// scales: float, the scale of row r and group g = k / 128 at layout.offset(r, g);
///         layout.ld_ok(M, K); the buffer holds layout.required_elements(M, K) floats.
void quantize_1x128(const std::uint16_t* x, std::int64_t M, std::int64_t K, std::int64_t ldx,
                    std::uint8_t* q, std::int64_t ldq, float* scales, GroupScaleLayout layout,
                    QuantizeOptions opt = {}, cudaStream_t stream = nullptr);

/// Weights, 128 x 128 blocks.
/// w:      N x K bf16 (bits), row-major, ldw >= K.   q: N x K e4m3, ldq >= K.
/// scales: float, block (n / 128, k / 128) at layout.offset(i, j); layout.ld >= ceil(K / 128)
///         (BlockScaleLayout::padded(K) for cuBLASLt, ::packed(K) for DeepGEMM); the buffer holds
///         layout.required_elements(N, K) floats, padding columns inside it written 0.
void quantize_128x128(const std::uint16_t* w, std::int64_t N, std::int64_t K, std::int64_t ldw,
                      std::uint8_t* q, std::int64_t ldq, float* scales, BlockScaleLayout layout,
                      QuantizeOptions opt = {}, cudaStream_t stream = nullptr);

/// Weights for a layer's forward and input-gradient GEMMs, 128 x 128 blocks, one read of w:
///   q, scales     exactly as quantize_128x128;
///   q_t, scales_t W^T quantised, which is q transposed (K x N e4m3, row-major, ldq_t >= N) and
///                 the scale grid transposed: block (k / 128, n / 128) at layout_t.offset(j, i);
///                 layout_t.ld >= ceil(N / 128), a buffer of layout_t.required_elements(K, N)
///                 floats, padding columns inside it written 0.
/// Equal, bit for bit, to quantize_128x128 followed by a transpose of the codes and of the grid
/// (W^T's 128 x 128 blocks are W's blocks transposed), with one kernel and one read of w.
void quantize_128x128_dual(const std::uint16_t* w, std::int64_t N, std::int64_t K,
                           std::int64_t ldw, std::uint8_t* q, std::int64_t ldq, float* scales,
                           BlockScaleLayout layout, std::uint8_t* q_t, std::int64_t ldq_t,
                           float* scales_t, BlockScaleLayout layout_t, QuantizeOptions opt = {},
                           cudaStream_t stream = nullptr);

/// Fused quantiser for backward passes: one read of x writes
///   q, scales     exactly as quantize_1x128 (groups of 128 consecutive k of a row m), and
///   q_t, scales_t the transpose x^T (K x M e4m3, row-major, ldq_t >= M) in 1 x 128 groups along
///                 ITS rows: 128 consecutive m of one column k of x. The scale of (k, m / 128) is
///                 at layout_t.offset(k, m / 128), i.e. rows = K and "K" = M for layout_t:
///                 layout_t.ld_ok(K, M), buffer of layout_t.required_elements(K, M) floats.
void quantize_1x128_dual(const std::uint16_t* x, std::int64_t M, std::int64_t K,
                         std::int64_t ldx, std::uint8_t* q, std::int64_t ldq, float* scales,
                         GroupScaleLayout layout, std::uint8_t* q_t, std::int64_t ldq_t,
                         float* scales_t, GroupScaleLayout layout_t, QuantizeOptions opt = {},
                         cudaStream_t stream = nullptr);

/// The most experts quantize_tokens_transposed_1x128 takes (each CTA keeps the G + 1 offsets and
/// padded offsets in shared memory: 8 (G + 1) bytes).
constexpr int kMaxTokenGroups = 8192;

/// Expert tokens for the weight gradient of a mixture-of-experts layer (chapter 8), transposed
/// and padded per expert: x [T, C] bf16 (bits), row-major, ldx >= C, the tokens sorted by expert
/// (expert g owns rows offsets[g] .. offsets[g+1] - 1; offsets: G + 1 int32 IN DEVICE MEMORY,
/// offsets[0] = 0, monotone, offsets[G] = T, counts may be 0).
///   q_t      [C, ldq_t] e4m3, row-major, ldq_t >= t_pad_capacity: expert g's tokens at columns
///            P_g .. P_g + count_g - 1, P_g = sum over j < g of round_up(count_j, 128), e4m3
///            zeros up to P_{g+1} and from P_G to t_pad_capacity;
///   scales_t the 1 x 128 scale of channel c and token block tb = column / 128 at
///            layout_t.offset(c, tb), 0.0f for blocks at or past P_G: rows = C and
///            "K" = t_pad_capacity for layout_t (layout_t.ld_ok(C, t_pad_capacity); a buffer of
///            layout_t.required_elements(C, t_pad_capacity) floats);
///            GroupScaleLayout::mn_major_tma_aligned(C) is what chapter 8's weight gradient reads;
///   padded_offsets  null, or G + 1 device int32 that receive P_0 .. P_G.
/// The host never reads the offsets (the call can be captured in a CUDA graph and replayed with
/// other counts), so T_pad = P_G is not known to it: t_pad_capacity must be at least
/// max_padded_tokens(T, G) (quantize.hpp), which holds every T_pad of T tokens in G experts.
/// Rules, and what offsets that break the preconditions do (no access outside the buffers):
/// quantize.hpp, quantize_tokens_transposed_1x128_cpu, which this matches bit for bit.
/// Limits: 1 <= G <= kMaxTokenGroups; t_pad_capacity <= 2^31 - 1 (the padded offsets are int32).
void quantize_tokens_transposed_1x128(const std::uint16_t* x, std::int64_t T, std::int64_t C,
                                      std::int64_t ldx, const int* offsets, int G,
                                      std::uint8_t* q_t, std::int64_t ldq_t,
                                      std::int64_t t_pad_capacity, float* scales_t,
                                      GroupScaleLayout layout_t, int* padded_offsets = nullptr,
                                      QuantizeOptions opt = {}, cudaStream_t stream = nullptr);

/// Copies the 1 x 128 scales of a rows x K operand (rows x ceil(K/128) floats) from src_layout
/// to dst_layout (e.g. k-major -> mn-major TMA-aligned, what chapter 7's kernel reads by TMA).
/// dst's padding inside dst_layout.required_elements(rows, K) is written 0. src and dst must
/// not overlap.
void convert_group_scales(const float* src, GroupScaleLayout src_layout, float* dst,
                          GroupScaleLayout dst_layout, std::int64_t rows, std::int64_t K,
                          cudaStream_t stream = nullptr);

/// The launch of convert_group_scales() alone, for a plan that validated its arguments and called
/// prepare_convert_group_scales() (once, on this device) when it was built: no argument or
/// pointer checks, no host work but the launch and its check (chapter 7's Plan::run()).
void prepare_convert_group_scales();
void launch_convert_group_scales(const float* src, GroupScaleLayout src_layout, float* dst,
                                 GroupScaleLayout dst_layout, std::int64_t rows, std::int64_t K,
                                 cudaStream_t stream);

/// Copies the 128 x 128 scales of a rows x K operand (ceil(rows/128) x ceil(K/128) floats)
/// between layouts (e.g. packed -> padded for cuBLASLt); dst's padding columns inside
/// dst_layout.required_elements(rows, K) are written 0. src and dst must not overlap.
void convert_block_scales(const float* src, BlockScaleLayout src_layout, float* dst,
                          BlockScaleLayout dst_layout, std::int64_t rows, std::int64_t K,
                          cudaStream_t stream = nullptr);

// ============================================ MXFP8 ===============================================
// Chapter 9's quantisers (OCP MX v1.0 / cuBLAS MXFP8): bf16 -> e4m3 with one UE8M0 scale per 1 x 32
// block along the row, bit for bit quantize_mx (common/mx.hpp, the CPU ground truth) on the
// same rows: the scale code by `rule` (floor_ocp: floor(log2 amax) - 8, values past 448
// saturate; rceil: ceil(log2(amax / 448)), nothing saturates; both clamped to codes 0 .. 254),
// q = e4m3(x / 2^(code - 127)) (round to nearest even, cvt.rn.satfinite: saturated to +-448);
// a block of zeros: code 127 and codes 0; a block holding any NaN or +-Inf: code 0xFF and all
// 32 codes 0x7F; other blocks unaffected. amax is the integer maximum of |x|'s bf16 bits
// (mx_scale_code_bf16), exact and order-independent.
// Scales are written in the swizzled layout of tcgen05's block-scaled MMA (mx_scale_offset):
// tiles of 128 rows x 4 scale columns, 512 bytes each, row-major tile order; the buffer holds
// mx_scale_bytes(rows, cols / 32) bytes and ALL of them are written: the padding (rows past the
// last real row up to a multiple of 128, scale columns past cols / 32 up to a multiple of 4) is
// written 0, as mx_swizzle_scales pads. Each 512-byte tile is written as 32 16-byte stores when
// the scale pointer is 16-byte aligned (byte stores otherwise). q is not written between K and
// ldq. Pointers, overlap and the checks before any CUDA call: as for the quantisers above.
// x is read with 16-byte loads when x is 16-byte aligned and ldx % 8 == 0, q written with 8-byte
// stores when q is 8-byte aligned and ldq % 8 == 0, q_t with 16-byte stores when q_t is 16-byte
// aligned and ldq_t % 16 == 0; scalar paths otherwise (never refused for alignment but bf16's 2).

/// Bytes of the swizzled UE8M0 scale buffer of a rows x cols operand in 1 x 32 blocks along cols
/// (cols a multiple of 32): mx_scale_bytes(rows, cols / 32) = round_up(rows, 128) *
/// round_up(cols / 32, 4).
constexpr std::int64_t mx_1x32_scale_bytes(std::int64_t rows, std::int64_t cols) {
  return mx_scale_bytes(rows, cols / kMxBlock);
}

/// Activations or weights, 1 x 32 blocks along K.
/// x:      M x K bf16 (bits), row-major, ldx >= K (elements); K a positive multiple of 32.
/// q:      M x K e4m3, row-major, ldq >= K.
/// scales: mx_1x32_scale_bytes(M, K) UE8M0 bytes, the code of block (m, k / 32) at
///         mx_scale_offset(m, k / 32, M, K / 32); padding written 0 (see above).
void quantize_mx_1x32(const std::uint16_t* x, std::int64_t M, std::int64_t K, std::int64_t ldx,
                      std::uint8_t* q, std::int64_t ldq, std::uint8_t* scales, MxExponentRule rule,
                      cudaStream_t stream = nullptr);

/// Fused MX quantiser for backward passes: one read of x writes
///   q, scales     exactly as quantize_mx_1x32, and
///   q_t, scales_t x^T (K x M e4m3, row-major, ldq_t >= M) in 1 x 32 blocks along ITS rows: 32
///                 consecutive m of one column k of x; the code of (k, m / 32) at
///                 mx_scale_offset(k, m / 32, K, M / 32), i.e. rows = K and "K" = M:
///                 mx_1x32_scale_bytes(K, M) bytes, padding written 0.
/// Both M and K must be positive multiples of 32. Bit for bit quantize_mx(x) and quantize_mx(x^T).
void quantize_mx_1x32_dual(const std::uint16_t* x, std::int64_t M, std::int64_t K,
                           std::int64_t ldx, std::uint8_t* q, std::int64_t ldq,
                           std::uint8_t* scales, std::uint8_t* q_t, std::int64_t ldq_t,
                           std::uint8_t* scales_t, MxExponentRule rule,
                           cudaStream_t stream = nullptr);

/// One MXFP8 operand to dequantise: q rows x K e4m3 (row-major, ldq >= K), its scales in the
/// swizzled layout above (mx_1x32_scale_bytes(rows, K) bytes), into y rows x K bf16 (ldy >= K).
struct MxDequantOperand {
  const std::uint8_t* q = nullptr;
  std::int64_t rows = 0, K = 0, ldq = 0;
  const std::uint8_t* scales = nullptr;
  std::uint16_t* y = nullptr;
  std::int64_t ldy = 0;
};

/// MXFP8 -> bf16 (chapter 9's second Hopper path: dequantise, then a bf16 GEMM whose tensor cores
/// apply the scales): y[r][k] = bf16(e4m3(q[r][k]) * 2^(code(r, k / 32) - 127)). Exact for every
/// element with |v| = 0 or 2^-130 <= |v| < 2^128: e4m3's 4 significant bits fit bf16's 8 and a
/// power of two changes only the exponent, whose range bf16 shares with FP32. Below 2^-130
/// (possible only with codes < 6) the last bits may fall under bf16's subnormal grid (2^-133)
/// and are rounded to it; at 2^128 or above (codes > 246 with large elements) the value is
/// +-Inf; a NaN element or code 0xFF
/// gives NaN (0x7FC0, as float_to_bf16). Bit for bit dequantize_mx_bf16 (common/mx.hpp).
/// `b`, when given, is a second operand done in the same launch. K a positive multiple of 32;
/// y must overlap no input or other output. 16-byte loads and stores when q and y are 16-byte
/// aligned with ldq % 16 == 0 and ldy % 8 == 0 (for both operands), one element per thread
/// otherwise. Checks as the quantisers (std::invalid_argument before any CUDA call).
void dequantize_mx_1x32_bf16(const MxDequantOperand& a, const MxDequantOperand* b = nullptr,
                             cudaStream_t stream = nullptr);
/// The two halves of dequantize_mx_1x32_bf16, for a plan that checks once and launches many
/// times (chapter 9's HopperPlan): every check (std::invalid_argument; cudaPointerGetAttributes
/// on each buffer), and the launch alone (no check but the launch's own).
void validate_dequantize_mx_1x32_bf16(const MxDequantOperand& a,
                                      const MxDequantOperand* b = nullptr);
void launch_dequantize_mx_1x32_bf16(const MxDequantOperand& a, const MxDequantOperand* b,
                                    cudaStream_t stream);

/// One MXFP8 operand to re-quantise into chapter 7's DeepSeek-V3 format (requantize_mx): q
/// rows x K e4m3 (row-major, ldq >= K), its UE8M0 scales in the swizzled layout above
/// (mx_1x32_scale_bytes(rows, K) bytes), into out rows x K e4m3 (ldo >= K) and FP32
/// power-of-two scales out_scales.
struct MxRequantOperand {
  const std::uint8_t* q = nullptr;
  std::int64_t rows = 0, K = 0, ldq = 0;
  const std::uint8_t* scales = nullptr;
  std::uint8_t* out = nullptr;
  std::int64_t ldo = 0;
  float* out_scales = nullptr;
};

/// MXFP8 -> chapter 7's format (chapter 9's third Hopper path: re-quantise, then chapter 7's
/// GEMM), bit for bit mx_requantize_1x128 for `a` (1 x 128 groups: the scale of row r, group g
/// at layout_a.offset(r, g); layout_a.ld_ok(rows, K); a buffer of
/// layout_a.required_elements(rows, K) floats) and mx_requantize_128x128 for `b` (128 x 128
/// blocks: block (i, j) at layout_b.offset(i, j); layout_b.ld >= ceil(K / 128); a buffer of
/// layout_b.required_elements(rows, K) floats); scale-buffer entries inside required_elements()
/// that hold no scale are written 0.0f, as the quantisers do. Either operand may be null, not
/// both; both are done in one launch. NOT EXACT (common/mx.hpp states the rule): each group's
/// scale is its largest MX block's, and an element more than about 2^14 below the group's
/// largest value loses bits or flushes to zero; a group holding a NaN (code or element) becomes
/// NaN throughout. K a positive multiple of 32; q and out 16-byte aligned with ldq and ldo
/// multiples of 16 (refused otherwise; the GEMMs that read these operands require the same);
/// outputs overlap nothing. Checks as the quantisers (std::invalid_argument before any CUDA
/// call, naming "fp8gemm::requantize_mx" and the argument).
void requantize_mx(const MxRequantOperand* a, GroupScaleLayout layout_a,
                   const MxRequantOperand* b, BlockScaleLayout layout_b,
                   cudaStream_t stream = nullptr);
/// The parts of requantize_mx, for a plan that checks once and launches many times (chapter 9's
/// HopperPlan): every argument check (std::invalid_argument; then cudaPointerGetAttributes on
/// each buffer); the kernel's preparation (once: its sm_90a image exists, and no earlier CUDA
/// error is pending); and the launch alone (no check but the launch's own).
void validate_requantize_mx(const MxRequantOperand* a, GroupScaleLayout layout_a,
                            const MxRequantOperand* b, BlockScaleLayout layout_b);
void prepare_requantize_mx();
void launch_requantize_mx(const MxRequantOperand* a, GroupScaleLayout layout_a,
                          const MxRequantOperand* b, BlockScaleLayout layout_b,
                          cudaStream_t stream);

namespace requant_tuning {
/// Not API: the kernel variants behind requantize_mx (and launch_requantize_mx), for
/// bench/quantize_bench.cu (which times them side by side) and tests/test_mx_gpu.cu (which checks
/// every one byte for byte against the CPU rule). Same arguments, checks, contract and bytes as
/// the public function; common/src/requantize_mx_gpu.cu describes each: 0 "v1_tiles" (one CTA per
/// 128 x 128 tile, plain loads), 1 "v2_pipe2", 2 "v3_pipe3", 3 "v4_pipe4" (persistent CTAs fed by
/// 2, 3 or 4 cp.async stages; they need 16-byte aligned scales, and run v1 otherwise; measured
/// slower than v1 at every shape, session 54). max_ctas > 0
/// caps the grid of a persistent variant (tests use it to make every CTA walk many tiles and wrap
/// its ring), 0 keeps the kernel's own grid; v1 ignores it.
inline constexpr int kVariants = 4;
/// The variant requantize_mx and launch_requantize_mx run.
int default_variant();
/// A short name of variant v ("v1_tiles", ...; "?" outside [0, kVariants)).
const char* variant_name(int v);
/// The variant that requantize_mx(variant, ...) runs on these operands: `variant`, or 0 where a
/// pipelined variant meets scales that are not 16-byte aligned (tests assert it). variant in
/// [0, kVariants) (std::invalid_argument otherwise).
int variant_run(int variant, const MxRequantOperand* a, const MxRequantOperand* b);
void requantize_mx(int variant, int max_ctas, const MxRequantOperand* a,
                   GroupScaleLayout layout_a, const MxRequantOperand* b,
                   BlockScaleLayout layout_b, cudaStream_t stream = nullptr);
}  // namespace requant_tuning

namespace mx_tuning {
/// Not API: the kernel variants behind quantize_mx_1x32 / quantize_mx_1x32_dual, for
/// bench/quantize_bench.cu (which times them side by side) and tests/test_mx_gpu.cu (which checks
/// every one byte for byte). Same arguments, checks, contract and bytes as the public functions;
/// common/src/quantize_mx_gpu.cu describes each. variant in [0, kVariants); max_ctas > 0 caps the
/// grid (tests use it to make every CTA walk many tiles: grid-stride and pipeline wrap-around),
/// 0 keeps the kernel's own grid.
inline constexpr int kVariants = 4;
/// The variant quantize_mx_1x32 (dual = false) or quantize_mx_1x32_dual (dual = true) runs.
int default_variant(bool dual);
/// A short name ("v1_first", "v2_lean", ...) of variant v of the single (dual = false) or fused quantiser.
const char* variant_name(int v, bool dual);
void quantize_mx_1x32(int variant, int max_ctas, const std::uint16_t* x, std::int64_t M,
                      std::int64_t K, std::int64_t ldx, std::uint8_t* q, std::int64_t ldq,
                      std::uint8_t* scales, MxExponentRule rule, cudaStream_t stream = nullptr);
void quantize_mx_1x32_dual(int variant, int max_ctas, const std::uint16_t* x, std::int64_t M,
                           std::int64_t K, std::int64_t ldx, std::uint8_t* q, std::int64_t ldq,
                           std::uint8_t* scales, std::uint8_t* q_t, std::int64_t ldq_t,
                           std::uint8_t* scales_t, MxExponentRule rule,
                           cudaStream_t stream = nullptr);
/// The UE8M0 code of a block from the maximum of its |x| bf16 bits (a < 0x8000), as the kernels
/// compute it, in 7 branch-free instructions: floor(log2) - 8 is the exponent field minus 8, and
/// rceil's "+1 when the significand exceeds 1.75" (7-bit fraction > 96) is the carry of adding 31
/// to the fraction; clamped at 0 (bf16 subnormals give 0 under both rules); 0 -> 127; Inf / NaN ->
/// 0xFF. tests/test_mx_cpu.cpp checks it against mx_scale_code_bf16 on all 2^15 values, both rules.
FP8GEMM_HD constexpr unsigned scale_code_select(unsigned a, bool rceil) {
  const int c = int((a + (rceil ? 31u : 0u)) >> 7) - 8;
  const unsigned code = c > 0 ? unsigned(c) : 0u;
  return a >= 0x7F80u ? 0xFFu : a == 0 ? 127u : code;
}
}  // namespace mx_tuning

namespace tuning_1x128 {
/// Not API: the kernel variants behind quantize_1x128, quantize_1x128_dual and
/// quantize_tokens_transposed_1x128, for bench/quantize_bench.cu (which times them side by side)
/// and tests/test_quantize_gpu.cu (which checks every one byte for byte against the CPU). Same
/// arguments, checks, contract and bytes as the public functions; common/src/quantize_gpu.cu and
/// quantize_grouped_gpu.cu describe each. variant in [0, kVariants): 0 "v1_first" (the first
/// kernels), 1 "v2_lean" (what quantize_1x128 and the token quantiser run: default_variant),
/// 2 "v3_shared" (v2 with each group's scale computed once and shared by shuffles), 3 "v4_occ4"
/// (v3 with the dual and the token kernel at 4 CTAs per SM; the single kernel's v4 is its v3),
/// 4 "v5_async" (v3 with the dual's tiles loaded by cp.async into two shared-memory stages, the
/// next tile of a CTA's walk in flight during this one; when x and q take vector accesses, else,
/// and for the single and token kernels, v3), 5 "v6_interior" (v2 with a second copy of a tile's
/// code for the tiles that are whole and have no scale padding, without any bound test; v2 when
/// x and q do not take vector accesses, and for the token kernel; what quantize_1x128_dual runs
/// since session 28). max_ctas > 0 caps the grid of a kernel that strides over its work (tests
/// use it to make every CTA walk several tiles), 0 keeps the kernel's own grid.
inline constexpr int kVariants = 6;
enum class Kind { single, dual, tokens };
/// The variant the public function of `kind` runs.
int default_variant(Kind kind);
/// A short name ("v1_first", "v2_lean", "v3_shared", "v4_occ4", "v5_async", "v6_interior") of
/// variant v.
const char* variant_name(int v);
void quantize_1x128(int variant, int max_ctas, const std::uint16_t* x, std::int64_t M,
                    std::int64_t K, std::int64_t ldx, std::uint8_t* q, std::int64_t ldq,
                    float* scales, GroupScaleLayout layout, QuantizeOptions opt = {},
                    cudaStream_t stream = nullptr);
void quantize_1x128_dual(int variant, int max_ctas, const std::uint16_t* x, std::int64_t M,
                         std::int64_t K, std::int64_t ldx, std::uint8_t* q, std::int64_t ldq,
                         float* scales, GroupScaleLayout layout, std::uint8_t* q_t,
                         std::int64_t ldq_t, float* scales_t, GroupScaleLayout layout_t,
                         QuantizeOptions opt = {}, cudaStream_t stream = nullptr);
void quantize_tokens_transposed_1x128(int variant, int max_ctas, const std::uint16_t* x,
                                      std::int64_t T, std::int64_t C, std::int64_t ldx,
                                      const int* offsets, int G, std::uint8_t* q_t,
                                      std::int64_t ldq_t, std::int64_t t_pad_capacity,
                                      float* scales_t, GroupScaleLayout layout_t,
                                      int* padded_offsets = nullptr, QuantizeOptions opt = {},
                                      cudaStream_t stream = nullptr);

// The lean arithmetic of v2 (common/src/quantize_kernels.cuh says why it is exact; the CPU test
// runs these host versions over every (amax, x) bf16 pair, the GPU test the kernels' own).
/// Groups whose amax bits are below this (amax < 2^-104, scale < 2^-113) are prescaled by 2^64.
inline constexpr unsigned kLeanTinyAmax = 0x0B80u;
inline constexpr float kLeanPrescale = 0x1p64f;

/// RN(a / 448) for a bf16 value a whose quotient is a normal float: q0 = RN(a c), c = RN(1/448),
/// then one correction, RN(q0 + RN(a - 448 q0) c).
FP8GEMM_HD inline float lean_div448(float a) {
  constexpr float c = 1.0f / 448.0f;
#if defined(__CUDA_ARCH__)
  const float q0 = __fmul_rn(a, c);
  return __fmaf_rn(__fmaf_rn(-448.0f, q0, a), c, q0);
#else
  const float q0 = std::fma(a, c, -0.0f);  // a c, kept out of any contraction
  return std::fma(std::fma(-448.0f, q0, a), c, q0);
#endif
}

/// The scale of a group with amax bits m (< 0x8000): scale_from_amax(amax, pow2) bit for bit (the
/// CPU test compares all 2^15 values, both rules), without a division or double arithmetic:
/// - pow2: 2^ceil(log2(a / 448)) = 2^(E - 8 + (fraction > 0.75)) for a = 1.f 2^E, i.e. the biased
///   exponent ((m + 31) >> 7) - 8 (mx_tuning::scale_code_select's rceil code); for a < 2^-104
///   from a 2^64 (a normal float), the result possibly a subnormal float (>= 2^-141);
/// - otherwise lean_div448 while the quotient is normal (a >= 448 2^-126, bits 0x04E0); below,
///   the rule's ceil(a / 448 / 2^-149) 2^-149 is the integer ceil(N / 448) of N = a 2^149 < 2^32,
///   which is also the subnormal float's bit pattern.
FP8GEMM_HD inline float lean_scale_value(unsigned m, bool pow2) {
  const auto from_bits = [](std::uint32_t u) {
#if defined(__CUDA_ARCH__)
    return __uint_as_float(u);
#else
    float f;
    __builtin_memcpy(&f, &u, sizeof f);
    return f;
#endif
  };
  // The common case straight through (the kernels' groups); the others replace it after.
  const float a = from_bits(m << 16);
  float s = pow2 ? from_bits((((m + 31u) >> 7) - 8u) << 23) : lean_div448(a);
  if (m - 1u < kLeanTinyAmax - 1u) {  // 0 < a < 2^-104: rare
    if (pow2) {
      std::uint32_t ub;  // the bits of a 2^64, exact (a has 8 significant bits)
      const float a64 = a * kLeanPrescale;
#if defined(__CUDA_ARCH__)
      ub = __float_as_uint(a64);
#else
      __builtin_memcpy(&ub, &a64, sizeof ub);
#endif
      const int biased = int(((ub >> 16) + 31u) >> 7) - 8 - 64;  // the scale's exponent field
      s = biased >= 1 ? from_bits(std::uint32_t(biased) << 23) : from_bits(1u << (biased + 22));
    } else if (m < 0x04E0u) {  // a subnormal quotient: ceil(N / 448) 2^-149, N = a 2^149
      const unsigned ef = m >> 7, f = m & 0x7Fu;
      const std::uint32_t n = (ef != 0 ? (128u + f) << (ef - 1) : f) << 16;
      s = from_bits((n + 447u) / 448u);
    }
  }
  s = m == 0 ? 1.0f : s;
  return m >= 0x7F80u ? from_bits(0x7FC00000u) : s;  // NaN or Inf in the group: NaN
}

/// What the lean kernels encode for x / s, with y a faithful reciprocal of s:
/// q0 = RN(x y), RN(q0 - RN(s q0 - x) y). Its e4m3 code is e4m3(RN(x / s)) for every bf16 x with
/// |x| <= amax of the group whose scale is s (s >= 2^-113; tiny groups prescale x and s).
FP8GEMM_HD inline float lean_div(float x, float s, float y) {
#if defined(__CUDA_ARCH__)
  const float q0 = __fmul_rn(x, y);
  return __fmaf_rn(-__fmaf_rn(s, q0, -x), y, q0);
#else
  const float q0 = std::fma(x, y, -0.0f);
  return std::fma(-std::fma(s, q0, -x), y, q0);
#endif
}
}  // namespace tuning_1x128

namespace tuning_128x128 {
/// Not API: quantize_128x128_dual's kernels, for bench/quantize_bench.cu (side by side) and
/// tests/test_quantize_gpu.cu (each byte for byte against the CPU): variant 0 "occ3" (3 CTAs per
/// SM, 80 registers: session 26's kernel), 1 "occ4" (4 CTAs, 64 registers, more spilled), 2 "lean"
/// (occ3 with the 1 x 128 lean quantisers' arithmetic), 3 "lean_occ4", 4 "lean_async" (lean, the
/// block loaded by cp.async into shared memory; runs "lean" unless w and q take vector accesses
/// and K % 8 == 0: what the public function runs, kDefaultVariant), 5 "lean_async_occ4", 6
/// "lean_async_persistent" (lean_async on a grid of 3 CTAs per SM, each walking blocks with the
/// next block's copies in flight during this one's work). max_ctas > 0 caps the grid (the CTAs
/// then walk several blocks: tests use it), 0 keeps the variant's own grid (one CTA per block
/// but for variant 6). H200, % of the copy at 7168 x 16384 and 16384 x 7168 (session 27,
/// quantize_bench at 65fb63d): 73.7, 71.9, 79.6, 65.9, 91.6-92.0, 82.6-83.1. Same arguments,
/// checks, contract and bytes as quantize_128x128_dual.
inline constexpr int kVariants = 7;
inline constexpr int kDefaultVariant = 4;
const char* variant_name(int v);
void quantize_128x128_dual(int variant, int max_ctas, const std::uint16_t* w, std::int64_t N,
                           std::int64_t K, std::int64_t ldw, std::uint8_t* q, std::int64_t ldq,
                           float* scales, BlockScaleLayout layout, std::uint8_t* q_t,
                           std::int64_t ldq_t, float* scales_t, BlockScaleLayout layout_t,
                           QuantizeOptions opt = {}, cudaStream_t stream = nullptr);
}  // namespace tuning_128x128

/// The host-side argument checks of the functions above, alone (pure C++, no CUDA call): throw
/// std::invalid_argument exactly as the functions do. For tests and for callers that want to
/// validate early (a plan).
void validate_quantize_1x128(const std::uint16_t* x, std::int64_t M, std::int64_t K,
                             std::int64_t ldx, const std::uint8_t* q, std::int64_t ldq,
                             const float* scales, GroupScaleLayout layout);
void validate_quantize_128x128(const std::uint16_t* w, std::int64_t N, std::int64_t K,
                               std::int64_t ldw, const std::uint8_t* q, std::int64_t ldq,
                               const float* scales, BlockScaleLayout layout);
void validate_quantize_1x128_dual(const std::uint16_t* x, std::int64_t M, std::int64_t K,
                                  std::int64_t ldx, const std::uint8_t* q, std::int64_t ldq,
                                  const float* scales, GroupScaleLayout layout,
                                  const std::uint8_t* q_t, std::int64_t ldq_t,
                                  const float* scales_t, GroupScaleLayout layout_t);
void validate_quantize_128x128_dual(const std::uint16_t* w, std::int64_t N, std::int64_t K,
                                    std::int64_t ldw, const std::uint8_t* q, std::int64_t ldq,
                                    const float* scales, BlockScaleLayout layout,
                                    const std::uint8_t* q_t, std::int64_t ldq_t,
                                    const float* scales_t, BlockScaleLayout layout_t);
void validate_quantize_tokens_transposed_1x128(const std::uint16_t* x, std::int64_t T,
                                               std::int64_t C, std::int64_t ldx, const int* offsets,
                                               int G, const std::uint8_t* q_t, std::int64_t ldq_t,
                                               std::int64_t t_pad_capacity, const float* scales_t,
                                               GroupScaleLayout layout_t,
                                               const int* padded_offsets);
void validate_quantize_mx_1x32(const std::uint16_t* x, std::int64_t M, std::int64_t K,
                               std::int64_t ldx, const std::uint8_t* q, std::int64_t ldq,
                               const std::uint8_t* scales, MxExponentRule rule);
void validate_quantize_mx_1x32_dual(const std::uint16_t* x, std::int64_t M, std::int64_t K,
                                    std::int64_t ldx, const std::uint8_t* q, std::int64_t ldq,
                                    const std::uint8_t* scales, const std::uint8_t* q_t,
                                    std::int64_t ldq_t, const std::uint8_t* scales_t,
                                    MxExponentRule rule);
void validate_convert_group_scales(const float* src, GroupScaleLayout src_layout,
                                   const float* dst, GroupScaleLayout dst_layout,
                                   std::int64_t rows, std::int64_t K);
void validate_convert_block_scales(const float* src, BlockScaleLayout src_layout,
                                   const float* dst, BlockScaleLayout dst_layout,
                                   std::int64_t rows, std::int64_t K);

#if defined(__CUDACC__)
namespace detail {
/// x / s correctly rounded (bit for bit __fdiv_rn(x, s)) for s > 0, with the reciprocal hoisted
/// out of the per-element work: the kernels divide 128 or 16384 elements by one scale, and
/// __fdiv_rn's per-call FCHK, branch and reciprocal refinement were half of their instructions.
/// With y = RN(1 / s) (relative error < 2^-24): q0 = RN(x y) is within 1.5 ulp; one correction
/// q1 = RN(q0 + RN(x - s q0) y) is faithful; then r1 = x - s q1 is exact (FMA) and, by
/// Markstein's theorem (IBM J. Res. Dev. 34(1), 1990; Muller et al., Handbook of Floating-Point
/// Arithmetic, "Markstein's theorem"), q2 = RN(q1 + r1 y) = RN(x / s). The theorem needs the
/// remainder exact and no overflow: s in [2^-64, 2^100] gives that for every quotient >= 2^-38
/// (the remainder is a multiple of ulp(s) ulp(q) >= 2^-148); smaller quotients are within a few
/// ulps of RN(x / s), far below e4m3's 2^-10 rounding threshold, and encode as +-0 either way.
/// Other s (amax below ~2^-55 or above ~2^108) take __fdiv_rn.
/// tests/test_quantize_gpu.cu checks it against __fdiv_rn on every float mantissa of s.
struct ExactDivider {
  float s, y;
  bool fast;
  __device__ explicit ExactDivider(float scale) {
#if defined(__CUDA_ARCH__)
    s = scale;
    y = __fdiv_rn(1.0f, scale);  // RN(1 / s)
    fast = scale >= 0x1p-64f && scale <= 0x1p100f;
#endif
  }
  /// From a scale and its RN reciprocal computed elsewhere (e.g. by another lane).
  __device__ ExactDivider(float scale, float reciprocal)
      : s(scale), y(reciprocal), fast(scale >= 0x1p-64f && scale <= 0x1p100f) {}
  /// The Markstein sequence; valid when fast (else use slow()).
  __device__ __forceinline__ float quick(float x) const {
    const float q0 = __fmul_rn(x, y);
    const float q1 = __fmaf_rn(__fmaf_rn(-s, q0, x), y, q0);
    const float q2 = __fmaf_rn(__fmaf_rn(-s, q1, x), y, q1);
    return copysignf(q2, x);  // x = -0: the FMAs give +0; RN(x / s) has x's sign
  }
  __device__ __forceinline__ float slow(float x) const { return __fdiv_rn(x, s); }
  __device__ __forceinline__ float operator()(float x) const { return fast ? quick(x) : slow(x); }
};
}  // namespace detail
#endif

}  // namespace fp8gemm
