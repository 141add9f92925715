// Chapter 9, Blackwell: the compile-time configuration of the sm_100a MXFP8 kernel and the bit
// encodings it hands to the tensor core. Pure C++ (constexpr, host and device), so the CPU tests
// check every field without a GPU.
//
//   - Tile: 128 x 128 output per CTA, K in blocks of 128 (four 32-wide MMA steps, four MX scale
//     blocks: exactly one 512-byte 128 x 4 scale tile per operand per K block).
//   - .cta_group (Options::cta_group): 1 (default), a CTA computes its tile alone with UMMA
//     M = 128; or 2, the two CTAs of a cluster of two (a "CTA pair") compute a 256 x 128 tile with
//     one UMMA M = 256 that the even CTA issues: CTA r loads rows 128 r .. 128 r + 127 of the
//     pair's A tile and rows 64 r .. 64 r + 63 of B's (B is read from both CTAs' shared memory, so
//     each CTA loads half: the point of the pair), keeps its own 128 rows of D in its own tensor
//     memory, and the scales of its own A rows and of all 128 B columns.
//   - Pipeline: stages of {A 16 KiB, B 16 KiB (8 KiB per CTA in a pair), SFA 512 B, SFB 512 B},
//     6 stages alone, 8 in a pair (the halved B buys two more), and the epilogue's staging for
//     D's TMA store (2 x 2 KiB per epilogue warp).
//   - Warps: 0 TMA producer, 1 MMA issuer, 2 tensor-memory allocator, 3 idle, 4..7 epilogue
//     (warp w may only read TMEM lanes 32 * (w % 4) ..; warps 4..7 cover lanes 0..127).
//   - Tensor memory: two 128-column FP32 accumulators (the epilogue drains one while the MMA
//     fills the other), then per stage 4 columns of A scales and 4 of B scales: 304 columns
//     alone, 320 in a pair -> allocate 512.
//
// The descriptor layouts follow CUTLASS include/cute/arch/mma_sm100_desc.hpp
// (UMMA::InstrDescriptorBlockScaled, UMMA::SmemDescriptor) and the PTX ISA's "Instruction
// descriptor" / "Shared memory descriptor" tables for tcgen05.mma.
#pragma once

#include <cstdint>

#include "common/fp8.hpp"  // FP8GEMM_HD

namespace fp8gemm::ch09 {

inline constexpr int kBlockM = 128;  ///< rows of D per CTA tile (UMMA M for cta_group::1)
inline constexpr int kBlockN = 128;  ///< columns of D per tile = UMMA N
inline constexpr int kBlockK = 128;  ///< K per pipeline stage (bytes per row of an A/B box)
inline constexpr int kUmmaK = 32;    ///< K per tcgen05.mma kind::mxf8f6f4 (= one MX block)
inline constexpr int kMxBlock = 32;  ///< K elements per UE8M0 scale
inline constexpr int kThreads = 256;  ///< 8 warps
inline constexpr int kProducerWarp = 0, kMmaWarp = 1, kAllocWarp = 2, kFirstEpilogueWarp = 4;
inline constexpr int kEpilogueThreads = 128;
inline constexpr int kAccumStages = 2;

// The epilogue's TMA store: each epilogue warp stages one box of 32 rows (its TMEM lanes) x 32
// columns (one tcgen05.ld 32x32b.x32) row-major without swizzle, in two buffers, so that it
// converts the next box while the TMA unit still reads the last one. A float D (Output::f32)
// uses the same 2048-byte buffers as boxes of 32 rows x 16 floats: two boxes per tcgen05.ld.
inline constexpr int kEpiBoxRows = 32;
inline constexpr int kEpiBoxCols = 32;
inline constexpr int kEpiBoxColsF32 = 16;
inline constexpr int kEpiBuffers = 2;
inline constexpr int kEpilogueWarps = kEpilogueThreads / 32;
inline constexpr std::uint32_t kEpiBoxBytes = kEpiBoxRows * kEpiBoxCols * 2;  // 2048, bf16
static_assert(kEpiBoxRows * kEpiBoxColsF32 * 4 == int(kEpiBoxBytes),
              "a float D's box fills the bf16 box's buffer exactly");
static_assert(kEpiBoxCols % kEpiBoxColsF32 == 0, "whole float boxes per tcgen05.ld");
inline constexpr std::uint32_t kSfTileBytes = 512;                  // 128 rows x 4 UE8M0
inline constexpr std::uint32_t kABytes = kBlockM * kBlockK;         // 16384, e4m3, per CTA

// ---- shared memory (offsets from a 1024-byte aligned base), per .cta_group ----
struct Sm100Layout {
  int cta_group;                ///< 1 or 2
  int umma_m;                   ///< rows of D per MMA: 128 * cta_group
  int b_rows;                   ///< rows of B one CTA loads per stage: kBlockN / cta_group
  int stages;
  std::uint32_t b_bytes;        ///< B per stage per CTA
  std::uint32_t cta_tx_bytes;   ///< what one CTA's four loads of a stage bring
  /// What the full barrier expects: the whole unit's (in a pair the even CTA's barrier counts
  /// both CTAs' loads).
  std::uint32_t stage_tx_bytes;
  std::uint32_t a, b, sfa, sfb, epi, barriers, tmem_slot, used;
  /// Dynamic shared memory requested: what is used plus slack to align the base to 1024 bytes
  /// (the 128B swizzle pattern repeats every 1024 bytes and the descriptors assume base offset 0).
  std::uint32_t bytes;
};
/// full[stages], empty[stages], tmem_full[kAccumStages], tmem_empty[kAccumStages]: 8 bytes each
FP8GEMM_HD constexpr std::uint32_t num_barriers(int stages) {
  return 2u * std::uint32_t(stages) + 2u * kAccumStages;
}

FP8GEMM_HD constexpr Sm100Layout sm100_layout(int cta_group) {
  Sm100Layout l{};
  l.cta_group = cta_group;
  l.umma_m = kBlockM * cta_group;
  l.b_rows = kBlockN / cta_group;
  l.stages = cta_group == 1 ? 6 : 8;
  l.b_bytes = std::uint32_t(l.b_rows * kBlockK);
  l.cta_tx_bytes = kABytes + l.b_bytes + 2 * kSfTileBytes;
  l.stage_tx_bytes = l.cta_tx_bytes * std::uint32_t(cta_group);
  const std::uint32_t S = std::uint32_t(l.stages);
  l.a = 0;
  l.b = l.a + S * kABytes;
  l.sfa = l.b + S * l.b_bytes;
  l.sfb = l.sfa + S * kSfTileBytes;
  l.epi = l.sfb + S * kSfTileBytes;
  l.barriers = l.epi + std::uint32_t(kEpilogueWarps * kEpiBuffers) * kEpiBoxBytes;
  l.tmem_slot = l.barriers + 8 * num_barriers(l.stages);
  l.used = l.tmem_slot + 16;
  l.bytes = l.used + 1024;
  return l;
}
FP8GEMM_HD constexpr bool layout_ok(const Sm100Layout& l) {
  return (l.cta_group == 1 || l.cta_group == 2) && kABytes % 1024 == 0 && l.b_bytes % 1024 == 0 &&
         l.b % 1024 == 0 && l.epi % 128 == 0 && kEpiBoxBytes % 128 == 0 &&
         l.bytes <= 232448;  // 227 KiB: sm_100's per-block limit
}
static_assert(layout_ok(sm100_layout(1)) && layout_ok(sm100_layout(2)),
              "128B-swizzled stages 1024-byte aligned, TMA store sources 128-byte aligned, <= 227 KiB");

// ---- the barrier protocol (what the kernel initialises; tests/test_chapter_09_protocol.cpp
// walks it) ----
/// full[s]: one arrival, the producer's arrive.expect_tx (in a pair only the even CTA's, with
/// both CTAs' bytes: stage_tx_bytes); the loads complete their bytes on it.
inline constexpr std::uint32_t kFullArrivals = 1;
/// empty[s] and tmem_full[a]: one tcgen05.commit each (in a pair multicast to both CTAs).
inline constexpr std::uint32_t kCommitArrivals = 1;
/// tmem_empty[a]: every epilogue thread of the unit (in a pair both CTAs' onto the even CTA's).
FP8GEMM_HD constexpr std::uint32_t tmem_empty_arrivals(int cta_group) {
  return std::uint32_t(kEpilogueThreads * cta_group);
}

// ---- tensor memory (columns) ----
// Two accumulators, then one scale slot per shared-memory stage: 4 columns of A scales and 4 of
// B scales for stage s at columns 256 + 8 s and 256 + 8 s + 4. Why a slot per stage: the PTX ISA
// ("Pipelined tcgen05 Instructions") orders tcgen05.cp -> tcgen05.mma of one thread, not
// tcgen05.mma -> tcgen05.cp, so a copy into one shared slot could overwrite scales that the
// previous K block's MMAs have not read yet. Tied to the stage, the slot is rewritten only after
// the stage's full barrier completed again, which needs the producer's refill, which waited for
// the empty barrier, which the commit after the slot's last MMAs signals: the barriers order it.
inline constexpr std::uint32_t kTmemAccumCols = kBlockN;                      // per accumulator
inline constexpr std::uint32_t kTmemSfBase = kAccumStages * kTmemAccumCols;   // 256
inline constexpr std::uint32_t kTmemSfSlotCols = 8;                           // 4 SFA + 4 SFB
/// The A-scale and B-scale columns of stage `stage`'s slot.
FP8GEMM_HD constexpr std::uint32_t tmem_sfa_col(std::uint32_t stage) {
  return kTmemSfBase + kTmemSfSlotCols * stage;
}
FP8GEMM_HD constexpr std::uint32_t tmem_sfb_col(std::uint32_t stage) { return tmem_sfa_col(stage) + 4; }
/// Columns in use: the accumulators and `stages` scale slots.
FP8GEMM_HD constexpr std::uint32_t tmem_used_cols(int stages) {
  return kTmemSfBase + kTmemSfSlotCols * std::uint32_t(stages);
}

/// The allocation: the smallest power of two >= n and >= 32 (tcgen05.alloc's rule), at most 512.
FP8GEMM_HD constexpr std::uint32_t tmem_alloc_columns(std::uint32_t n) {
  std::uint32_t c = 32;
  while (c < n) c *= 2;
  return c;
}
/// Both instances allocate 512 (alone 304 used, in a pair 320): one CTA per SM either way.
inline constexpr std::uint32_t kTmemCols = 512;
static_assert(tmem_alloc_columns(tmem_used_cols(sm100_layout(1).stages)) == kTmemCols &&
                  tmem_alloc_columns(tmem_used_cols(sm100_layout(2).stages)) == kTmemCols,
              "tensor memory has 512 columns");

// ---- the instruction descriptor (32 bits) of tcgen05.mma .kind::mxf8f6f4 .block_scale ----
// PTX ISA 9.1, "Instruction descriptor", the table for .kind::mxf8f6f4 (its own table: the M
// field differs from the other kinds'):
//  bits  0-1  reserved                                0
//  bit   2    sparsity                                0 (dense)
//  bit   3    reserved                                0
//  bits  4-5  B scale-factor id: which byte of each   k step within the 128-K block (0..3)
//             32-bit TMEM scale cell B uses
//  bit   6    reserved                                0
//  bits  7-9  A type                                  0 = E4M3 (1 E5M2, 3 E2M3, 4 E3M2, 5 E2M1)
//  bits 10-12 B type                                  0 = E4M3
//  bit  13    negate A                                0
//  bit  14    negate B                                0
//  bit  15    transpose A                             0 = K-major
//  bit  16    transpose B                             0 = K-major
//  bits 17-22 N >> 3                                  16 (N = 128)
//  bit  23    scale type                              1 = UE8M0 (the only one of this kind)
//  bits 24-26 reserved                                0
//  bits 27-28 M >> 7                                  1 (M = 128), 2 (M = 256, a CTA pair)
//  bits 29-30 A scale-factor id                       k step (0..3)
//  bit  31    reserved                                0
// CUTLASS (UMMA::InstrDescriptorBlockScaled) writes M >> 4 into bits 24-28: the same bits for
// M = 128 and 256, the only M this kind takes. The accumulator type is not a field:
// block-scaled MMAs accumulate in FP32.
enum class MxFormat : std::uint32_t { e4m3 = 0, e5m2 = 1, e2m3 = 3, e3m2 = 4, e2m1 = 5 };

/// M must be 128 or 256 (cta_group::1 / ::2), N a multiple of 16 in [16, 256] (checked by
/// static_asserts where the kernel's shape is fixed, and by the host tests).
FP8GEMM_HD constexpr std::uint32_t make_instr_desc_block_scaled(int m, int n, MxFormat a, MxFormat b,
                                                                std::uint32_t a_sf_id,
                                                                std::uint32_t b_sf_id) {
  return (b_sf_id & 3u) << 4 | (std::uint32_t(a) & 7u) << 7 | (std::uint32_t(b) & 7u) << 10 |
         0u << 13 | 0u << 14 | 0u << 15 | 0u << 16 | (std::uint32_t(n >> 3) & 63u) << 17 |
         1u << 23 | (std::uint32_t(m >> 7) & 3u) << 27 | (a_sf_id & 3u) << 29;
}
/// The kernel's descriptor (M = 128 alone, 256 in a pair) with both scale-factor ids 0; per k
/// step it ORs in with_sf_ids().
FP8GEMM_HD constexpr std::uint32_t instr_desc(int cta_group) {
  return make_instr_desc_block_scaled(kBlockM * cta_group, kBlockN, MxFormat::e4m3, MxFormat::e4m3,
                                      0, 0);
}
FP8GEMM_HD constexpr std::uint32_t with_sf_ids(std::uint32_t desc, std::uint32_t a_sf_id,
                                               std::uint32_t b_sf_id) {
  return (desc & ~(3u << 29) & ~(3u << 4)) | (a_sf_id & 3u) << 29 | (b_sf_id & 3u) << 4;
}
// UMMA shape rules (PTX ISA "Matrix shape"): cta_group::1 with M = 128 and cta_group::2 with
// M = 256 both take N a multiple of 16 in [16, 256]; in a pair each CTA's half of B (N / 2 rows)
// must still be whole 8-row core-matrix groups.
static_assert(kBlockM == 128 && kBlockN % 16 == 0 && kBlockN >= 16 && kBlockN <= 256);
static_assert((kBlockN / 2) % 8 == 0);

// ---- the shared memory (matrix) descriptor (64 bits), sm_100 format ----
//  bits  0-13 start address >> 4 (a .shared address; 18 bits of byte address, 16-byte units)
//  bits 16-29 leading-dimension byte offset >> 4 (LBO)
//  bits 32-45 stride-dimension byte offset >> 4 (SBO)
//  bits 46-48 fixed 0b001 on sm_100 (PTX ISA 9.1; CUTLASS calls bits 46-47 "version" = 1;
//             Hopper's wgmma descriptor has no such field: 0); bits 53-60 fixed 0
//  bits 49-51 base offset (the swizzle pattern's phase when the start is not 1024-aligned): 0
//  bit  52    LBO mode: 0 = byte offset (legacy)
//  bits 61-63 layout / swizzle: 0 none, 1 128B with 32B atoms, 2 128B, 4 64B, 6 32B
// K-major 128B-swizzled e4m3 tile (rows of exactly 128 bytes = 128 K elements, 8-row core
// groups of 1024 bytes): SBO = 1024 (from one 8-row group to the next), LBO unused for a
// swizzled K-major operand (PTX ISA 9.1, "Leading dimension byte offset": "Swizzled layouts:
// not used, assumed to be 1"; 0 here, as DeepGEMM sets it). Each
// 32-wide K step starts 32 bytes further: start address + 32 (the hardware applies the swizzle
// to the computed addresses, which is why the base must be 1024-aligned).
// The scale tile for tcgen05.cp 32x128b: no swizzle, 8-row x 16-byte core matrices stacked
// along rows: SBO = 128, LBO = 0.
enum class SmemLayout : std::uint32_t { none = 0, swizzle_128b_base32b = 1, swizzle_128b = 2,
                                        swizzle_64b = 4, swizzle_32b = 6 };

FP8GEMM_HD constexpr std::uint64_t make_smem_desc(std::uint32_t smem_addr, std::uint32_t lbo_bytes,
                                                  std::uint32_t sbo_bytes, SmemLayout layout) {
  return std::uint64_t((smem_addr >> 4) & 0x3FFFu) | std::uint64_t((lbo_bytes >> 4) & 0x3FFFu) << 16 |
         std::uint64_t((sbo_bytes >> 4) & 0x3FFFu) << 32 | std::uint64_t(1) << 46 |
         std::uint64_t(0) << 49 | std::uint64_t(0) << 52 | std::uint64_t(layout) << 61;
}
FP8GEMM_HD constexpr std::uint64_t operand_desc(std::uint32_t stage_addr, int k_step) {
  return make_smem_desc(stage_addr + std::uint32_t(k_step) * kUmmaK, 0, 1024, SmemLayout::swizzle_128b);
}
FP8GEMM_HD constexpr std::uint64_t scale_desc(std::uint32_t sf_addr) {
  return make_smem_desc(sf_addr, 0, 128, SmemLayout::none);
}

// ---- where the scales come from and go to ----
// The Mx1x32 layout (common/scaling.hpp) of a rows x K operand stores 128 x 4 tiles of 512 bytes,
// tiles row-major: tile (i, j) covers rows 128 i .. 128 i + 127 and scale columns 4 j .. 4 j + 3
// (K elements 128 j .. 128 j + 127), at byte (i * tiles_per_row + j) * 512 with
// tiles_per_row = ceil(K / 128). The kernel's TMA views it as a 2-D uint32 tensor of
// ceil(rows / 128) rows x tiles_per_row * 128 columns and loads the box {128 columns, 1 row} at
// (k_block * 128, m_block): exactly tile (m_block, k_block), which is one pipeline stage's scales.
FP8GEMM_HD constexpr std::int64_t sf_tiles_per_row(std::int64_t K) { return (K + kBlockK - 1) / kBlockK; }
FP8GEMM_HD constexpr std::int64_t sf_view_rows(std::int64_t rows) { return (rows + 127) / 128; }
FP8GEMM_HD constexpr std::int64_t sf_view_cols_u32(std::int64_t K) { return sf_tiles_per_row(K) * 128; }
/// Byte offset of the stage's tile in the scale tensor (what the TMA box at (k_block * 128,
/// block) reads).
FP8GEMM_HD constexpr std::int64_t sf_tile_offset(std::int64_t block, std::int64_t k_block,
                                                 std::int64_t K) {
  return (block * sf_tiles_per_row(K) + k_block) * kSfTileBytes;
}
// Inside the tile, the scale of tile row r (0..127) for k step s (0..3) is byte
// (r % 32) * 16 + (r / 32) * 4 + s. tcgen05.cp 32x128b.warpx4 puts 16-byte row (r % 32) into
// TMEM lane r % 32 of every quarter, 4 bytes per column: column base + r / 32, byte s. So TMEM
// lane r (quarter r / 32) finds its own row's scale in column r / 32, byte s, which the MMA
// selects with the scale-factor id s.
FP8GEMM_HD constexpr int sf_byte_in_tile(int row_in_tile, int k_step) {
  return (row_in_tile % 32) * 16 + (row_in_tile / 32) * 4 + k_step;
}
/// The TMEM (lane, column offset from the scale base, byte in the 32-bit cell) that holds the
/// scale for tile row r, k step s, after the 32x128b.warpx4 copy.
struct TmemScaleCell {
  int lane, column, byte;
};
FP8GEMM_HD constexpr TmemScaleCell tmem_scale_cell(int row_in_tile, int k_step) {
  return {row_in_tile, row_in_tile / 32, k_step};
}

}  // namespace fp8gemm::ch09
