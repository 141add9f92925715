// MXFP8 (OCP Microscaling Formats v1.0) on the CPU: the shared-exponent rules, the quantiser into
// e4m3 + UE8M0 scales in the 128 x 4 tile layout, and a CPU model of the block-scaled MMA
// (tcgen05.mma kind::mxf8f6f4.block_scale with e4m3 operands; chapter 9's Hopper emulation).
// These are the ground truth chapter 9's GPU kernels are checked against; docs/fp8_numerics.md
// ("MXFP8") explains the choices.
//
// Quantisation, one UE8M0 scale per 1 x 32 block along K (cols), amax = max |x| over the block:
//  - MxExponentRule::floor_ocp (the OCP v1.0 rule): exponent = floor(log2(amax)) - 8 (8 = emax
//    of e4m3). amax / 2^exponent lies in [256, 512): values above 448 after scaling (above 464,
//    the midpoint to the next e4m3 step, strictly) saturate to +-448. Bit for bit equal to
//    quantize<Mx1x32> in quantize.hpp on finite data.
//  - MxExponentRule::rceil (cuBLAS's and torchao's "RCEIL"): the smallest power of two s with
//    amax / s <= 448, exponent = ceil(log2(amax / 448)), computed exactly from amax's bits (no
//    rounded quotient, no libm log). amax / s lies in (224, 448]: nothing saturates.
//  - Both clamp the exponent to UE8M0's range [-127, 127] (codes 0 .. 254). For e4m3 and finite
//    float input only the lower clamp can act (amax < 2^-119 for floor_ocp, amax / 448 <= 2^-128
//    for rceil; the largest code finite data reaches is 246 / 247); 0xFF (NaN) is never produced
//    for finite data.
//  - amax = 0 (a block of zeros, signed or not): exponent 0, code 127 (scale 1), codes 0.
//  - A block holding any NaN or +-Inf: scale code 0xFF (UE8M0 NaN) and ALL 32 codes 0x7F (e4m3
//    NaN), as chapter 7's quantisers do (their scale is a float NaN); other blocks are unaffected.
//  - q = e4m3(x / 2^exponent), round to nearest even, saturated (fp8.hpp). Dividing by a power
//    of two is exact wherever the quotient is a normal float, i.e. wherever e4m3 could tell.
#pragma once

#include <cstdint>
#include <vector>

#include "common/fp8.hpp"
#include "common/quantize.hpp"  // Quantized<Group1x128 / Block128x128>: the re-quantised operands
#include "common/scaling.hpp"

namespace fp8gemm {

/// How the shared exponent of an MX block is chosen from its amax.
enum class MxExponentRule : int {
  floor_ocp,  ///< OCP MX v1.0: floor(log2(amax)) - 8; values past 448 saturate
  rceil       ///< cuBLAS / torchao RCEIL: ceil(log2(amax / 448)); nothing saturates
};

/// "floor_ocp" or "rceil".
const char* to_string(MxExponentRule rule);

/// Elements per MX block (along K).
inline constexpr std::int64_t kMxBlock = 32;
/// The UE8M0 NaN code (scale of a block that holds NaN or Inf).
inline constexpr std::uint8_t kUe8m0Nan = 0xFF;

/// floor(log2(|x|)) of a finite, non-zero float, read from its bits (exact; subnormals give
/// -127 .. -149).
int mx_floor_log2(float x);

/// The UE8M0 code of a block's scale from its amax (>= 0; NaN or +Inf means the block is not
/// finite and gives 0xFF), by the rules above.
std::uint8_t mx_scale_code(float amax, MxExponentRule rule);

/// mx_scale_code of a bf16 amax given by its bit pattern (the sign bit is ignored), in integer
/// arithmetic for the GPU quantisers: equal to mx_scale_code(|float(bits)|, rule) for all 2^16
/// patterns (tests/test_mx_cpu.cpp checks every one). bf16 keeps float's exponent field E and 7
/// mantissa bits f: floor_ocp gives E - 8 (= floor(log2) - 8 + 127), rceil adds 1 when the
/// significand 1.f exceeds 1.75 (f > 96 of 128); the lower clamp makes that max(., 0), and bf16
/// subnormals (E = 0, amax < 2^-126) give 0 under both rules.
FP8GEMM_HD constexpr std::uint8_t mx_scale_code_bf16(std::uint16_t bits, MxExponentRule rule) {
  const unsigned a = bits & 0x7FFFu;
  if (a >= 0x7F80u) return kUe8m0Nan;  // +-Inf or NaN
  if (a == 0) return 127;              // a zero block: scale 1
  const int e = int(a >> 7);
  if (e == 0) return 0;
  const int code = e - 8 + (rule == MxExponentRule::rceil && (a & 0x7Fu) > 96u ? 1 : 0);
  return static_cast<std::uint8_t>(code < 0 ? 0 : code);
}

/// Offset of scale (row, col_block) in the swizzled 128 x 4 tile layout of a scale grid of
/// rows x col_blocks (col_blocks = cols / 32). The same layout as Mx1x32::block_index (this
/// calls it): tiles of 128 rows x 4 columns, 512 bytes, row-major tile order; inside a tile
/// (row % 32) * 16 + (row % 128 / 32) * 4 + col_block % 4. rows does not enter the offset
/// (only the padded column count does); it is there so that call sites name the grid.
FP8GEMM_HD constexpr std::int64_t mx_scale_offset(std::int64_t row, std::int64_t col_block,
                                                  std::int64_t rows, std::int64_t col_blocks) {
  return Mx1x32(rows, col_blocks * kMxBlock).block_index(row, col_block);
}

/// Bytes of the swizzled scale tensor: round_up(rows, 128) * round_up(col_blocks, 4).
FP8GEMM_HD constexpr std::int64_t mx_scale_bytes(std::int64_t rows, std::int64_t col_blocks) {
  return round_up(rows, 128) * round_up(col_blocks, 4);
}

/// Plain (row-major rows x col_blocks) scales -> swizzled layout, padding bytes 0.
std::vector<std::uint8_t> mx_swizzle_scales(const std::uint8_t* plain, std::int64_t rows,
                                            std::int64_t col_blocks);
/// Swizzled -> plain row-major rows x col_blocks (the padding is dropped).
std::vector<std::uint8_t> mx_unswizzle_scales(const std::uint8_t* swizzled, std::int64_t rows,
                                              std::int64_t col_blocks);

/// An operand quantised to MXFP8.
struct MxQuantized {
  std::int64_t rows = 0, cols = 0;
  MxExponentRule rule = MxExponentRule::floor_ocp;
  std::vector<std::uint8_t> values;  ///< rows x cols e4m3 bytes, row-major
  std::vector<std::uint8_t> scales;  ///< UE8M0, swizzled, mx_scale_bytes(rows, cols / 32) bytes
  std::int64_t col_blocks() const { return cols / kMxBlock; }
  /// The UE8M0 code of block (row, col_block).
  std::uint8_t scale(std::int64_t row, std::int64_t col_block) const {
    return scales[static_cast<std::size_t>(mx_scale_offset(row, col_block, rows, col_blocks()))];
  }
  /// The scales as a plain row-major rows x col_blocks grid (for reading and tests).
  std::vector<std::uint8_t> plain_scales() const {
    return mx_unswizzle_scales(scales.data(), rows, col_blocks());
  }
};

/// Quantises a rows x cols row-major float matrix to MXFP8 (blocks of 1 x 32 along cols).
/// Throws std::invalid_argument for a null x, rows < 1, or cols that is not a positive multiple
/// of 32.
MxQuantized quantize_mx(const float* x, std::int64_t rows, std::int64_t cols,
                        MxExponentRule rule);
/// Same from bf16 bits (bf16 -> float is exact, so this equals the float version on the
/// converted values).
MxQuantized quantize_mx(const std::uint16_t* x_bf16, std::int64_t rows, std::int64_t cols,
                        MxExponentRule rule);

/// float64 values: e4m3 value times 2^(code - 127) (NaN for a NaN code or scale). Exact.
std::vector<double> dequantize_mx(const MxQuantized& q);

/// bf16 bits of e4m3 value times 2^(code - 127), computed as dequantize_mx_1x32_bf16 on the GPU
/// does (quantize_gpu.hpp: float product, one round to nearest even; NaN gives 0x7FC0): the CPU
/// ground truth of chapter 9's bf16 path.
std::uint16_t mx_dequantize_bf16(std::uint8_t e4m3, std::uint8_t code);
/// The whole operand, rows x cols bf16 bits, row-major.
std::vector<std::uint16_t> dequantize_mx_bf16(const MxQuantized& q);

// ==================== Re-quantising MXFP8 into chapter 7's layouts (CPU) =======================
// An MX operand (rows x K, e4m3 codes q and one UE8M0 code e_b per 1 x 32 block) re-quantised
// into chapter 7's DeepSeek-V3 format, so that chapter 7's kernel can multiply it: e4m3 codes
// and one FP32 power-of-two scale per 1 x 128 group (mx_requantize_1x128, for A) or per
// 128 x 128 block (mx_requantize_128x128, for B), in quantize<Group1x128> /
// quantize<Block128x128>'s layouts (mn-major, ld = rows: GroupScaleLayout::mn_major_packed(rows);
// k-major, ld = round_up(ceil(K/128), 4): BlockScaleLayout::padded(K)); dequantize() reads them.
// The rule, per group G (the 4 MX blocks of a 1 x 128 group, or the up to 128 rows x 4 MX blocks
// of a 128 x 128 block; fewer at a ragged edge):
//  - E = the largest exponent e_b - 127 over G's blocks that hold a non-zero element (a block of
//    zeros, whose code quantize_mx sets to 127 = scale 1, would otherwise pull E up and flush its
//    neighbours; it contributes nothing whatever its scale). Code 0 is 2^-127 (E = -127; the
//    FP32 scale 2^-127 is a subnormal, exact). No non-zero element: E = 0 (scale 1), as the
//    quantisers give a zero group.
//  - scale = 2^E (FP32, exact); each element q' = e4m3(q * 2^-(E - (e_b - 127))) by
//    mx_requantize_code: e4m3_encode's round to nearest, ties to even. The shift is never
//    negative, so nothing overflows. Exact (q' * 2^E equals q * 2^(e_b - 127)) wherever the
//    shifted value is an e4m3 normal (>= 2^-6) or an exact multiple of e4m3's smallest subnormal
//    2^-9; otherwise it lands in e4m3's subnormals and loses low bits, or, below 2^-10 (half the
//    smallest subnormal; exactly 2^-10 ties to even), flushes to a zero of the same sign.
//  - NaN: a block of G with the UE8M0 NaN code 0xFF, or an element that is e4m3 NaN (0x7F /
//    0xFF), makes the whole group NaN: scale NaN and ALL of G's codes 0x7F, as chapter 7's
//    quantisers treat a non-finite group (quantize_1x128_cpu); other groups are unaffected.
// The padding of the 128 x 128 scale grid is 0.0f. Throws std::invalid_argument for an operand
// whose sizes do not match (rows < 1, cols not a positive multiple of 32, values or scales of
// the wrong size).

/// The element rule: the e4m3 code of e4m3_decode(code) * 2^-shift (shift >= 0), round to
/// nearest even; an e4m3 NaN code gives 0x7F. Throws std::invalid_argument for shift < 0.
std::uint8_t mx_requantize_code(std::uint8_t e4m3, int shift);

/// A (rows x K) in chapter 7's 1 x 128 format: scales[g * rows + r] = 2^E of row r, group g.
Quantized<Group1x128> mx_requantize_1x128(const MxQuantized& q);
/// B (rows x K) in chapter 7's 128 x 128 format: scales[i * round_up(ceil(K/128), 4) + j].
Quantized<Block128x128> mx_requantize_128x128(const MxQuantized& q);

// ============================ The block-scaled MMA, modelled on the CPU ===========================
// D[m][n] = sum over K-blocks j of  S_j * 2^(ea + eb - 254),  S_j = sum_{k in block j} a_k b_k,
// A: M x K e4m3 row-major, B: N x K e4m3 row-major, scale_a / scale_b: UE8M0 codes in the
// swizzled layout (M x K/32 and N x K/32). K must be a positive multiple of 32.
//
// Exactness. Every e4m3 value is an integer multiple of 2^-9 (the smallest subnormal) below
// 448 = 229376 * 2^-9 < 2^18 * 2^-9, so a product is an integer multiple of 2^-18 below 2^36 of
// those units, and a 32-term block sum (every partial sum, in any order) an integer multiple of
// 2^-18 below 32 * 448^2 = 6422528 < 2^23 in magnitude: up to 41 significant bits. It is exact in
// float64 (53 bits) or int64, but NOT in FP32 in general (24 bits): 448 * 448 + 2^-9 * 2^-9 is not
// a float. Single products are exact in FP32 (at most 4 x 4 = 8 significant bits). The scaled
// block value S_j * 2^(ea+eb-254) is exact in float64 too (2^-272 .. 2^277, inside its range).
//
// mx_gemm_reference (the model, FP32 out): S_j exactly (float64), scaled exactly (ldexp), rounded
// ONCE to FP32 (ldexp in float would be the same rounding except where the result is subnormal or
// overflows), then acc = fl32(acc + term_j) in block order j = 0, 1, ... starting from acc = 0.
// NaN codes (e4m3 0x7F / 0xFF, UE8M0 0xFF) give NaN; overflow gives +-Inf as in IEEE.
// The hardware's internal order and precision of the block dot product and of the accumulation
// are not public, so this is one well-defined model, not a bit-exact emulator: checks of a GPU
// kernel against it must use a tolerance (mx_gemm_model_tolerance is the model's own distance
// from the exact result; a kernel's allowance must add its own accumulation error and D's bf16
// rounding).
//
// mx_gemm_reference_f64: sum_k (a_k 2^(ea-127)) (b_k 2^(eb-127)) in float64 in k order, i.e. the
// project's float64 reference on the dequantised operands (bit for bit reference_gemm(
// dequantize_mx(A), dequantize_mx(B))). Its own error is at most ~K 2^-53 sum|a_k b_k|.

/// The FP32 model (see above): M x N row-major.
std::vector<float> mx_gemm_reference(const std::uint8_t* A, const std::uint8_t* scale_a,
                                     const std::uint8_t* B, const std::uint8_t* scale_b,
                                     std::int64_t M, std::int64_t N, std::int64_t K);
std::vector<float> mx_gemm_reference(const MxQuantized& A, const MxQuantized& B);

/// The float64 reference on dequantised operands: M x N row-major.
std::vector<double> mx_gemm_reference_f64(const std::uint8_t* A, const std::uint8_t* scale_a,
                                          const std::uint8_t* B, const std::uint8_t* scale_b,
                                          std::int64_t M, std::int64_t N, std::int64_t K);
std::vector<double> mx_gemm_reference_f64(const MxQuantized& A, const MxQuantized& B);

/// sum_k |a_k b_k| of the dequantised operands, per output (float64, M x N): the magnitude the
/// error bounds are relative to.
std::vector<double> mx_gemm_abs_f64(const MxQuantized& A, const MxQuantized& B);

/// The exact dot product of one block of 32 e4m3 codes (float64; exact as argued above).
double mx_block_dot_exact(const std::uint8_t* a, const std::uint8_t* b);

/// The model's error bound relative to sum_k |a_k b_k|:
///     |mx_gemm_reference - mx_gemm_reference_f64| <= mx_gemm_model_tolerance(K) * sum_k |a_k b_k|
///                                                  + mx_gemm_model_abs_slack(K).
/// The K/32 exact block terms are each rounded once to FP32 and K/32 - 1 FP32 additions follow,
/// so every term carries at most n = K/32 roundings of u = 2^-24: gamma_n = n u / (1 - n u)
/// (Higham's bound for recursive summation). The float64 reference adds its own
/// gamma_K(2^-53). The value returned is the sum of the two, about (K/32) * 2^-24:
/// 1.9e-6 at K = 1024, 3.1e-5 at K = 16384. Valid while (K/32) 2^-24 < 1.
double mx_gemm_model_tolerance(std::int64_t K);
/// The absolute part: an FP32 rounding that lands in the subnormal range errs by up to 2^-150
/// absolutely, not relatively: 2 * (K/32 + 1) * 2^-150 covers all of them.
double mx_gemm_model_abs_slack(std::int64_t K);

}  // namespace fp8gemm
