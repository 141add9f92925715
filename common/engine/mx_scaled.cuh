// Chapter 9's Hopper half: the MXFP8 recipe (OCP Microscaling, e4m3 in blocks of 32 along K, one
// UE8M0 scale per block) as a math policy of the engine.
//
//   D (M x N, bf16) = sum over 32-wide K blocks j of 2^(ea[m, j] - 127) 2^(eb[n, j] - 127)
//                                                    (A[m, block j] . B[n, block j])
//   A  [M, K] e4m3 row-major, B [N, K] e4m3 row-major, K a multiple of 32
//   scale_a, scale_b  UE8M0 codes in the Mx1x32 layout (common/mx.hpp): 128-row x 4-block tiles
//                     of 512 bytes, tiles row-major, padded to whole tiles; inside a tile the code
//                     of (row r, block c) is at (r % 32) 16 + (r / 32) 4 + c
//
// Hopper's tensor cores know nothing of scales, so every wgmma k32 step is one MX block: a fresh
// tensor-core partial sum per 32 K, promoted into the FP32 totals with the product of its row's
// and its column's block scales, acc += (sa[row] x sb[col]) x part — four promotions per 128-K
// stage where chapter 7 has one, and with a scale per column (chapter 7: per 128 columns). A
// stage's four MX blocks are one column of scale tiles, so the producer brings them with the
// operands: one 512-byte tile of A's scales (the tile's rows lie in one 128-row scale tile) and
// one per 128 columns of B's, by bulk copy into the side ring. Each thread reads the four codes
// of one of its rows (or columns) with one 32-bit load: they are consecutive bytes.
// Per stage and 64-row slab, the four k32 wgmma of a wave of columns go into four partial sums
// issued back to back and waited for once, so the tensor cores see the same groups of four as in
// chapter 7; the promotion then reads the scales from shared memory, so the stage is released
// after it.
#pragma once

#include <cstdint>

#include "common/engine/block_scaled.cuh"
#include "common/engine/config.cuh"
#include "common/engine/kernel.cuh"
#include "common/engine/params.hpp"

namespace fp8gemm::engine {

namespace detail {
/// A UE8M0 code as the float 2^(code - 127): code 0 is 2^-127 (a subnormal float), 255 is NaN.
__device__ __forceinline__ float ue8m0_to_float(std::uint32_t code) {
  return __uint_as_float(ue8m0_float_bits(code));
}
/// Byte b of `word` as the float 2^(code - 127) (ue8m0_to_float), without branches.
__device__ __forceinline__ float ue8m0_byte_to_float(std::uint32_t word, int b) {
  const std::uint32_t code = (word >> (8 * b)) & 0xFFu;
  std::uint32_t bits = code << 23;
  bits = code == 0u ? 0x00400000u : bits;
  bits = code == 255u ? 0x7fc00000u : bits;
  return __uint_as_float(bits);
}
/// The bytes of a 4-code scale word (blocks 4 kb .. 4 kb + 3 of a row) that hold blocks before
/// K / 32: all ones in those bytes, zero in the others. The scale tensors are padded to whole
/// 128-K tiles, and the padding is not read as data: a stage past K multiplies zero-filled
/// operands, but a padding code of 255 (NaN) or two large codes (an infinite product) would turn
/// that zero into NaN. Masked codes read as 0 (2^-127), whose products are finite. Every stage
/// masks (the mask is all ones before the last): 1.9-2.6 % of the default kernel's time on an
/// H100 (session 55); masking only a peeled last stage cost as much (1.2-2.5 %), and skipping the
/// promotion of blocks past K by a warp-uniform branch more (3.2-4.6 %).
__device__ __forceinline__ std::uint32_t mx_valid_codes_mask(int K, int kb) {
  const int valid = K / 32 - 4 * kb;  // blocks of this stage inside K
  return valid >= 4 ? 0xFFFFFFFFu : (1u << (8 * valid)) - 1u;
}
/// Offset of (row, block 0) inside a 512-byte Mx1x32 scale tile; blocks 1..3 follow it.
__device__ __forceinline__ std::uint32_t mx_tile_row_offset(int row_in_tile) {
  return std::uint32_t((row_in_tile % 32) * 16 + (row_in_tile / 32) * 4);
}
}  // namespace detail

/// Three versions, kept side by side so that one run compares them (chapter 9's README):
///   1  each thread decodes the UE8M0 codes of its 32 columns itself, every stage (~1800
///      instructions per thread per 128-K stage around the 256 FMUL + 256 FFMA that do the work);
///   2  each consumer warpgroup decodes the stage's column scales once into FP32 in shared memory
///      (one column's four codes per thread, then a warpgroup barrier); per wave of columns, four
///      partial sums (one per MX block) issued back to back and waited for at once, so that a
///      warpgroup's tensor-core work and its promotion alternate;
///   3  (the default) as 2, with the MX blocks pipelined two deep: the partial sum of block j + 1
///      is in the tensor cores while block j is promoted (two full-width partial sums, so
///      BlockN <= 128); a stage's last block is promoted after the next stage's first is issued.
template <class Cfg, int kVersion = 3>
struct MxScaledMath : PerTensorMath<Cfg> {
  static_assert(Cfg::kAccumulation == Accumulation::promoted,
                "MXFP8 scales change every 32 K: every k32 step is promoted");
  static_assert(Cfg::kClusterSize == 1, "MXFP8 kernels: no clusters yet");
  static_assert(Cfg::kBlockM == 64 || Cfg::kBlockM == 128,
                "a tile's rows must lie in one 128-row scale tile");
  static_assert(Cfg::kBlockN % 128 == 0 || 128 % Cfg::kBlockN == 0,
                "a tile's columns must cover whole 128-row scale tiles of B, or lie in one");
  using Base = PerTensorMath<Cfg>;
  using State = PipelineState<Cfg::kStages>;
  using Params = MxParams;

  static constexpr std::uint32_t kScaleTileBytes = 512;
  static constexpr int kSfbTiles = Cfg::kBlockN >= 128 ? Cfg::kBlockN / 128 : 1;
  static constexpr std::uint32_t kExtraTxBytes = kScaleTileBytes * std::uint32_t(1 + kSfbTiles);
  /// Versions 2 and 3: per consumer warpgroup and stage, after the codes the producer brings, the
  /// stage's column scales as FP32 (version 2: BlockN float4, a column's four MX blocks; version
  /// 3: four rows of BlockN floats, one per MX block).
  static constexpr bool kDecodeOnce = kVersion >= 2;
  static constexpr std::uint32_t kDecodedBytes =
      kDecodeOnce ? std::uint32_t(Cfg::kBlockN) * 16u : 0u;
  static constexpr std::uint32_t kExtraStageBytes =
      kExtraTxBytes + std::uint32_t(Cfg::kConsumerWGs) * kDecodedBytes;  // a multiple of 128
  static constexpr std::uint32_t kStageStride = Cfg::kStageBytes;
  static constexpr int kBlocksPerStage = Cfg::kBlockK / Cfg::kWgmmaK;  // 4 MX blocks of 32
  /// Columns per wave: four partial sums of a wave live beside the totals.
  static constexpr int mx_wave_n() {
    for (int w = Cfg::kBlockN; w >= 8; w -= 8)
      if (Cfg::kBlockN % w == 0 &&
          Cfg::kAccumulators + kBlocksPerStage * (w / 2) <= Cfg::kConsumerRegs - 40)
        return w;
    return 8;
  }
  static constexpr int kWaveN = mx_wave_n();
  static constexpr int kWavesN = Cfg::kBlockN / kWaveN;

  /// The stage's scale tiles: A's for the tile's rows, B's for its columns (a tile past B's last
  /// one, when BlockN reaches beyond N, loads the last again: its columns are never stored).
  __device__ __forceinline__ static void produce_extra(const Params& p, std::uint32_t extra,
                                                       std::uint32_t bar, const Tile& t, int kb) {
    const std::int64_t tm = (std::int64_t(t.m_block) * Cfg::kBlockM) / 128;
    ptx::bulk_load(extra, p.sfa + (tm * p.sf_tiles_k + kb) * kScaleTileBytes, kScaleTileBytes, bar);
    const int tn0 = int((std::int64_t(t.n_block) * Cfg::kBlockN) / 128);
#pragma unroll
    for (int i = 0; i < kSfbTiles; ++i) {
      const int tn = tn0 + i < p.sf_tiles_n ? tn0 + i : p.sf_tiles_n - 1;
      ptx::bulk_load(extra + kScaleTileBytes * std::uint32_t(1 + i),
                     p.sfb + (std::int64_t(tn) * p.sf_tiles_k + kb) * kScaleTileBytes,
                     kScaleTileBytes, bar);
    }
  }

  /// The scales were applied in the main loop.
  __device__ __forceinline__ static IdentityOutputScale output_scale(const Params&) { return {}; }

  /// Version 3: promotes partial sum `part` of MX block ks (of the stage whose decoded column
  /// scales are at `decoded`) into acc, with row scales sa0 (row r) and sa1 (row r + 8).
  __device__ __forceinline__ static void promote_block(float (&acc)[Cfg::kBlockN / 2],
                                                       const float (&part)[Cfg::kBlockN / 2],
                                                       float sa0, float sa1, std::uint32_t decoded,
                                                       int ks, int col_in_group) {
#pragma unroll
    for (int gi = 0; gi < Cfg::kBlockN / 8; ++gi) {
      const int c = 8 * gi + col_in_group;
      const float2 sb = ptx::ld_shared_v2_f32(decoded + 4u * std::uint32_t(ks * Cfg::kBlockN + c));
      float* a = &acc[4 * gi];
      a[0] = __fmaf_rn(sa0 * sb.x, part[4 * gi + 0], a[0]);
      a[1] = __fmaf_rn(sa0 * sb.y, part[4 * gi + 1], a[1]);
      a[2] = __fmaf_rn(sa1 * sb.x, part[4 * gi + 2], a[2]);
      a[3] = __fmaf_rn(sa1 * sb.y, part[4 * gi + 3], a[3]);
    }
  }

  /// Version 3's K loop (the struct's comment): one 64-row slab per warpgroup, full-width partial
  /// sums P0 (even MX blocks) and P1 (odd ones).
  __device__ __forceinline__ static void mainloop_v3(float (&acc)[Cfg::kBlockN / 2], State& st,
                                                     const Params& p, const Tile& t,
                                                     std::uint32_t ring, std::uint32_t side,
                                                     const std::uint64_t* full,
                                                     const std::uint64_t* empty, int wg,
                                                     std::uint32_t rank) {
    const int warp = int(threadIdx.x / 32) % 4;
    const int lane = int(threadIdx.x % 32);
    const int r = (t.m_block * Cfg::kBlockM) % 128 + wg * Cfg::kRowsPerWG + 16 * warp + lane / 4;
    const int b_col0 = Cfg::kBlockN >= 128 ? 0 : (t.n_block * Cfg::kBlockN) % 128;
    const int col_in_group = 2 * (lane % 4);
    const int tid = int(threadIdx.x % 128);
#pragma unroll
    for (int i = 0; i < Cfg::kBlockN / 2; ++i) acc[i] = 0.0f;
    float P0[Cfg::kBlockN / 2], P1[Cfg::kBlockN / 2];
    // The block left to promote across a stage boundary: block 3 (in P1) of the stage before,
    // with its row scales, its decoded column scales and its stage (released after).
    float pend_sa0 = 0.0f, pend_sa1 = 0.0f;
    std::uint32_t pend_decoded = 0;
    int pend_stage = -1;
    const std::uint64_t desc0 = ptx::make_desc_k_major_sw128(ring);
    for (int kb = 0; kb < p.k_blocks; ++kb) {
      wait_barrier<Cfg>(ptx::smem_u32(&full[st.stage]), st.phase);
      const auto [desc_a, desc_b] = PerTensorMath<Cfg>::stage_descs(desc0, st.stage, wg);
      const std::uint32_t extra = side + std::uint32_t(st.stage) * kExtraStageBytes;
      const std::uint32_t codes_mask = detail::mx_valid_codes_mask(p.K, kb);
      const std::uint32_t decoded = extra + kExtraTxBytes + std::uint32_t(wg) * kDecodedBytes;
      // Column scales as FP32, [block][column]: thread i decodes columns i, i + 128, ...; the
      // barrier makes them visible to the warpgroup. A stage's copy is rewritten kStages stages
      // later, after every thread of the warpgroup has passed this barrier again (and promoted
      // the copy's last block, one stage after it was written).
#pragma unroll
      for (int c = tid; c < Cfg::kBlockN; c += 128) {
        const int cb = b_col0 + c;
        const std::uint32_t word =
            ptx::ld_shared_u32(extra + kScaleTileBytes * std::uint32_t(1 + cb / 128) +
                               detail::mx_tile_row_offset(cb % 128)) &
            codes_mask;
#pragma unroll
        for (int ks = 0; ks < kBlocksPerStage; ++ks)
          ptx::st_shared_f32(decoded + 4u * std::uint32_t(ks * Cfg::kBlockN + c),
                             detail::ue8m0_byte_to_float(word, ks));
      }
      ptx::named_barrier_sync(4u + std::uint32_t(wg), 128);
      const std::uint32_t ca0 =
          ptx::ld_shared_u32(extra + detail::mx_tile_row_offset(r)) & codes_mask;
      const std::uint32_t ca1 =
          ptx::ld_shared_u32(extra + detail::mx_tile_row_offset(r + 8)) & codes_mask;
      float sa0[kBlocksPerStage], sa1[kBlocksPerStage];
#pragma unroll
      for (int ks = 0; ks < kBlocksPerStage; ++ks) {
        sa0[ks] = detail::ue8m0_byte_to_float(ca0, ks);
        sa1[ks] = detail::ue8m0_byte_to_float(ca1, ks);
      }
#pragma unroll
      for (int ks = 0; ks < kBlocksPerStage; ++ks) {
        // The block before this one is complete before this one is issued, and promoted while
        // this one is in the tensor cores: ptxas keeps wgmma asynchronous only when the
        // accumulators that other instructions read were retired before the wgmma's
        // warpgroup.arrive (waiting for one of two groups afterwards made it serialise, C7514).
        ptx::wgmma_wait_group<0>();
        float(&dst)[Cfg::kBlockN / 2] = ks % 2 == 0 ? P0 : P1;
        ptx::wgmma_fence();
        ptx::wgmma_m64nNk32_e4m3<Cfg::kBlockN>(
            dst, ptx::advance_desc(desc_a, std::uint32_t(ks * Cfg::kWgmmaK)),
            ptx::advance_desc(desc_b, std::uint32_t(ks * Cfg::kWgmmaK)), 0u);
        ptx::wgmma_commit_group();
        if (ks == 0) {
          if (pend_stage >= 0) {
            Base::release(ptx::smem_u32(&empty[pend_stage]), rank);  // its last block is done
            ptx::wgmma_fence_operands(P1);
            promote_block(acc, P1, pend_sa0, pend_sa1, pend_decoded, kBlocksPerStage - 1,
                          col_in_group);
          }
        } else {
          float(&src)[Cfg::kBlockN / 2] = ks % 2 == 1 ? P0 : P1;
          ptx::wgmma_fence_operands(src);
          promote_block(acc, src, sa0[ks - 1], sa1[ks - 1], decoded, ks - 1, col_in_group);
        }
      }
      pend_sa0 = sa0[kBlocksPerStage - 1];
      pend_sa1 = sa1[kBlocksPerStage - 1];
      pend_decoded = decoded;
      pend_stage = st.stage;
      st.advance();
    }
    ptx::wgmma_wait_group<0>();  // on every path (ptxas injects one otherwise, C7517)
    if (pend_stage >= 0) {
      ptx::wgmma_fence_operands(P1);
      promote_block(acc, P1, pend_sa0, pend_sa1, pend_decoded, kBlocksPerStage - 1, col_in_group);
      Base::release(ptx::smem_u32(&empty[pend_stage]), rank);
    }
  }

  __device__ __forceinline__ static void mainloop(float (&acc)[Cfg::kWavesM][Cfg::kBlockN / 2],
                                                  State& st, const Params& p, const Tile& t,
                                                  std::uint32_t ring, std::uint32_t side,
                                                  const std::uint64_t* full,
                                                  const std::uint64_t* empty, int wg_index,
                                                  std::uint32_t rank) {
    if constexpr (kVersion == 3) {
      static_assert(Cfg::kWavesM == 1 && 3 * (Cfg::kBlockN / 2) <= Cfg::kConsumerRegs - 40,
                    "version 3: one 64-row slab per warpgroup, two partial sums beside the totals");
      mainloop_v3(acc[0], st, p, t, ring, side, full, empty, warp_uniform(wg_index),
                  rank);
    } else {
      const int wg = warp_uniform(wg_index);  // uniform (block_scaled.cuh)
      const int warp = int(threadIdx.x / 32) % 4;
      const int lane = int(threadIdx.x % 32);
      // This thread's rows r and r + 8 of every 64-row slab, and its columns 8 j + 2 (lane % 4) and
      // the next of every 8-column group j (the wgmma D fragment); where they sit in the scale
      // tiles.
      const int row_in_tile = wg * Cfg::kRowsPerWG + 16 * warp + lane / 4;
      const int a_row0 =
          (t.m_block * Cfg::kBlockM) % 128;  // the tile's first row in its scale tile
      const int b_col0 = Cfg::kBlockN >= 128 ? 0 : (t.n_block * Cfg::kBlockN) % 128;
      const int col_in_group = 2 * (lane % 4);
      Base::zero(acc);
      float part[kBlocksPerStage][kWaveN / 2];
      const std::uint64_t desc0 = ptx::make_desc_k_major_sw128(ring);
      for (int kb = 0; kb < p.k_blocks; ++kb) {
        wait_barrier<Cfg>(ptx::smem_u32(&full[st.stage]), st.phase);
        const auto [desc_a, desc_b] = PerTensorMath<Cfg>::stage_descs(desc0, st.stage, wg);
        const std::uint32_t extra = side + std::uint32_t(st.stage) * kExtraStageBytes;
        const std::uint32_t decoded = extra + kExtraTxBytes + std::uint32_t(wg) * kDecodedBytes;
        const std::uint32_t codes_mask = detail::mx_valid_codes_mask(p.K, kb);
        if constexpr (kDecodeOnce) {
          // This warpgroup's copy of the stage's column scales as FP32: thread i decodes columns
          // i, i + 128, ... (four codes, one 32-bit load, one 16-byte store each); the barrier
          // makes them visible to the warpgroup. A stage's copy is rewritten only kStages stages
          // later, after every thread of the warpgroup has passed this barrier again.
          const int tid = int(threadIdx.x % 128);
#pragma unroll
          for (int c = tid; c < Cfg::kBlockN; c += 128) {
            const int cb = b_col0 + c;
            const std::uint32_t word =
                ptx::ld_shared_u32(extra + kScaleTileBytes * std::uint32_t(1 + cb / 128) +
                                   detail::mx_tile_row_offset(cb % 128)) &
                codes_mask;
            ptx::st_shared_v4_f32(
                decoded + 16u * std::uint32_t(c), detail::ue8m0_byte_to_float(word, 0),
                detail::ue8m0_byte_to_float(word, 1), detail::ue8m0_byte_to_float(word, 2),
                detail::ue8m0_byte_to_float(word, 3));
          }
          ptx::named_barrier_sync(4u + std::uint32_t(wg), 128);
        }
#pragma unroll
        for (int w = 0; w < Cfg::kWavesM; ++w) {
          // The four block codes of rows r and r + 8, one 32-bit load each.
          const int r = a_row0 + row_in_tile + 64 * w;
          const std::uint32_t ca0 =
              ptx::ld_shared_u32(extra + detail::mx_tile_row_offset(r)) & codes_mask;
          const std::uint32_t ca1 =
              ptx::ld_shared_u32(extra + detail::mx_tile_row_offset(r + 8)) & codes_mask;
          float sa0[kBlocksPerStage], sa1[kBlocksPerStage];
#pragma unroll
          for (int ks = 0; ks < kBlocksPerStage; ++ks) {
            sa0[ks] = detail::ue8m0_byte_to_float(ca0, ks);
            sa1[ks] = detail::ue8m0_byte_to_float(ca1, ks);
          }
#pragma unroll
          for (int wn = 0; wn < kWavesN; ++wn) {
            // Four MX blocks, four fresh partial sums, one wait.
            ptx::wgmma_fence();
#pragma unroll
            for (int ks = 0; ks < kBlocksPerStage; ++ks)
              ptx::wgmma_m64nNk32_e4m3<kWaveN>(
                  part[ks],
                  ptx::advance_desc(desc_a,
                                    std::uint32_t(w * 64 * Cfg::kBlockK + ks * Cfg::kWgmmaK)),
                  ptx::advance_desc(desc_b,
                                    std::uint32_t(wn * kWaveN * Cfg::kBlockK + ks * Cfg::kWgmmaK)),
                  0u);
            ptx::wgmma_commit_group();
            ptx::wgmma_wait_group<0>();
#pragma unroll
            for (int ks = 0; ks < kBlocksPerStage; ++ks) ptx::wgmma_fence_operands(part[ks]);
            if constexpr (kDecodeOnce) {
#pragma unroll
              for (int gi = 0; gi < kWaveN / 8; ++gi) {
                // The float4 of this group's two columns (their four MX blocks' scales).
                const int c = wn * kWaveN + 8 * gi + col_in_group;
                const float4 sb0 = ptx::ld_shared_v4_f32(decoded + 16u * std::uint32_t(c));
                const float4 sb1 = ptx::ld_shared_v4_f32(decoded + 16u * std::uint32_t(c + 1));
                const float b0[4] = {sb0.x, sb0.y, sb0.z, sb0.w};
                const float b1[4] = {sb1.x, sb1.y, sb1.z, sb1.w};
                float* a = &acc[w][wn * (kWaveN / 2) + 4 * gi];
#pragma unroll
                for (int ks = 0; ks < kBlocksPerStage; ++ks) {
                  a[0] = __fmaf_rn(sa0[ks] * b0[ks], part[ks][4 * gi + 0], a[0]);
                  a[1] = __fmaf_rn(sa0[ks] * b1[ks], part[ks][4 * gi + 1], a[1]);
                  a[2] = __fmaf_rn(sa1[ks] * b0[ks], part[ks][4 * gi + 2], a[2]);
                  a[3] = __fmaf_rn(sa1[ks] * b1[ks], part[ks][4 * gi + 3], a[3]);
                }
              }
            } else {
#pragma unroll
              for (int gi = 0; gi < kWaveN / 8; ++gi) {
                // The four block codes of this group's two columns (rows of B).
                const int c = b_col0 + wn * kWaveN + 8 * gi + col_in_group;
                const std::uint32_t tile_b = extra + kScaleTileBytes * std::uint32_t(1 + c / 128);
                const std::uint32_t cb0 =
                    ptx::ld_shared_u32(tile_b + detail::mx_tile_row_offset(c % 128)) & codes_mask;
                const std::uint32_t cb1 =
                    ptx::ld_shared_u32(tile_b + detail::mx_tile_row_offset((c + 1) % 128)) &
                    codes_mask;
                float* a = &acc[w][wn * (kWaveN / 2) + 4 * gi];
#pragma unroll
                for (int ks = 0; ks < kBlocksPerStage; ++ks) {
                  const float xa0 = detail::ue8m0_to_float((ca0 >> (8 * ks)) & 0xFFu);
                  const float xa1 = detail::ue8m0_to_float((ca1 >> (8 * ks)) & 0xFFu);
                  const float xb0 = detail::ue8m0_to_float((cb0 >> (8 * ks)) & 0xFFu);
                  const float xb1 = detail::ue8m0_to_float((cb1 >> (8 * ks)) & 0xFFu);
                  a[0] = __fmaf_rn(xa0 * xb0, part[ks][4 * gi + 0], a[0]);
                  a[1] = __fmaf_rn(xa0 * xb1, part[ks][4 * gi + 1], a[1]);
                  a[2] = __fmaf_rn(xa1 * xb0, part[ks][4 * gi + 2], a[2]);
                  a[3] = __fmaf_rn(xa1 * xb1, part[ks][4 * gi + 3], a[3]);
                }
              }
            }
          }
        }
        Base::release(ptx::smem_u32(&empty[st.stage]),
                      rank);  // after the promotion read the scales
        st.advance();
      }
    }
  }
};

}  // namespace fp8gemm::engine
