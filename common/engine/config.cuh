// The engine's compile-time configuration (chapters 6-10). One KernelConfig is the template
// parameter of the persistent, warp-specialised kernel (kernel.cuh); everything else about the
// kernel derives from it here: thread count, register split, shared-memory layout and size, the
// epilogue's staging layout, and the static_asserts that keep a bad combination from compiling.
//
//   D (M x N, bf16, row-major) = scale_a * scale_b * A (M x K, e4m3, row-major)
//                                                  . B (N x K, e4m3, row-major)^T
//
// One CTA computes kBlockM x kBlockN tiles of D, walking K in blocks of kBlockK = 128 (one
// 128-byte swizzle row of e4m3, one ring stage). Warpgroups (128 threads each):
//   consumers 0 .. kConsumerWGs-1 : wgmma on kRowsPerWG rows each (64 or 128 = kWavesM slabs of
//                                   64 rows, one wgmma m64nNk32 per slab and k32 step), then the
//                                   epilogue of those rows; registers raised to kConsumerRegs;
//   producer (the last warpgroup) : its first warp runs the loop, an elected lane issues the
//                                   TMA loads (session 38); registers lowered to
//                                   kProducerRegs.
// That is the cooperative order (ConsumerOrder::cooperative). In the ping-pong order two consumer
// warpgroups take whole tiles in turn (kRowsPerWG = BlockM), so one stores its tile while the
// other's main loop runs.
// A cluster of kClusterM x kClusterN CTAs (at most 2 CTAs) shares one operand: with kClusterM = 2
// the two CTAs own vertically adjacent tiles and the same B tile, each loads half of B and
// multicasts it to both; with kClusterN = 2 they share A likewise.
#pragma once

#include <cstddef>
#include <cstdint>

#include "common/engine/params.hpp"

namespace fp8gemm::engine {

/// The largest dynamic shared memory a Hopper CTA may opt into (227 KiB).
inline constexpr std::size_t kMaxSmemBytes = 232448;

template <int BlockM, int BlockN, int Stages, int ClusterM = 1, int ClusterN = 1,
          Accumulation Acc = Accumulation::promoted,
          EpilogueKind Epilogue = EpilogueKind::tma_store, int EpiBuffers = 0,
          ConsumerOrder Order = ConsumerOrder::cooperative, BarrierWait Wait = BarrierWait::sleep>
struct KernelConfig {
  // ---- tile and pipeline ----
  static constexpr int kBlockM = BlockM;
  static constexpr int kBlockN = BlockN;
  static constexpr int kBlockK = 128;  ///< e4m3 bytes per stage row: one 128B swizzle row
  static constexpr int kWgmmaK = 32;   ///< K per wgmma (e4m3)
  static constexpr int kStages = Stages;
  static constexpr int kClusterM = ClusterM;
  static constexpr int kClusterN = ClusterN;
  static constexpr int kClusterSize = ClusterM * ClusterN;
  static constexpr Accumulation kAccumulation = Acc;
  static constexpr EpilogueKind kEpilogue = Epilogue;
  static constexpr bool kPingPong = Order == ConsumerOrder::pingpong;
  static constexpr BarrierWait kBarrierWait = Wait;  ///< how its threads wait on ring barriers

  // ---- warpgroups and registers ----
  /// Cooperative: 64 -> 1, 128 -> 2, 192 -> 3 warpgroups of 64 rows; 256 -> 2 of 128 rows (two
  /// slabs each). Ping-pong: 2 warpgroups, each with all BlockM rows of its own tiles.
  static constexpr int kConsumerWGs = kPingPong ? 2 : BlockM == 256 ? 2 : BlockM / 64;
  /// Rows of a tile that one consumer warpgroup computes: 64, 128 for BlockM = 256, or BlockM
  /// (ping-pong).
  static constexpr int kRowsPerWG = kPingPong ? BlockM : BlockM / kConsumerWGs;
  static constexpr int kWavesM = kRowsPerWG / 64;           ///< 64-row wgmma slabs per consumer
  static constexpr int kConsumerThreads = 128 * kConsumerWGs;
  static constexpr int kConsumerWarps = kConsumerThreads / 32;
  /// Warps that read each ring stage and release it (empty[s]'s arrivals per CTA): every consumer
  /// warp, or the one warpgroup whose tile the stage belongs to (ping-pong).
  static constexpr int kStageReaderWarps = kPingPong ? 4 : kConsumerWarps;
  static constexpr int kThreads = kConsumerThreads + 128;  ///< + the producer warpgroup
  static constexpr int kProducerRegs = 40;
  /// 2 consumers: 128 x 40 + 256 x 232 = 64512 <= 65536 registers of the SM; 3 consumers (512
  /// threads, 128 at entry): 128 x 40 + 384 x 152 = 63488.
  static constexpr int kConsumerRegs = kConsumerWGs == 1 ? 240 : kConsumerWGs == 2 ? 232 : 152;

  static constexpr int kAccumulators = kWavesM * (BlockN / 2);  ///< FP32 per consumer thread
  /// Promoted mode: per K block, each consumer warpgroup sums its rows in groups of 64 rows x
  /// kPromotedWaveN columns: 4 wgmma into a fresh partial sum, wgmma.wait_group 0, FADD into the
  /// FP32 totals (kAccumulators registers). Totals plus one partial must leave room for
  /// addresses and loop state: the widest divisor of BlockN (a multiple of 8) that keeps them
  /// within kConsumerRegs - kRegMargin. 128 x 256 tiles promote in two halves of 128 columns.
  static constexpr int kRegMargin = kConsumerWGs == 3 ? 24 : 32;
  static constexpr int promoted_wave_n() {
    for (int w = BlockN; w >= 8; w -= 8)
      if (BlockN % w == 0 && kAccumulators + w / 2 <= kConsumerRegs - kRegMargin) return w;
    return 8;
  }
  static constexpr int kPromotedWaveN = promoted_wave_n();

  // ---- shared memory: [ring: stage s = A tile, B tile][epilogue staging], 1024-aligned ----
  static constexpr std::uint32_t kTileABytes = BlockM * kBlockK;
  static constexpr std::uint32_t kTileBBytes = BlockN * kBlockK;
  static constexpr std::uint32_t kStageBytes = kTileABytes + kTileBBytes;

  /// Epilogue staging: a 64-row "unit" of kEpiCols columns is what one TMA store writes. When
  /// BlockN / 8 is odd, rows of BlockN bf16 are an odd number of 16-byte chunks apart, so the 8
  /// rows one stmatrix writes fall in 8 different bank groups without a swizzle: one unit spans
  /// the whole width. Otherwise units are 64, 32 or 16 columns wide (a 128-, 64- or 32-byte
  /// row), stored with the matching TMA swizzle so stmatrix is conflict-free.
  /// FP32 D by TMA (tma_store_f32): units of 64 rows x 32 floats (a 128-byte row), 128B swizzle.
  static constexpr bool kEpiF32 = Epilogue == EpilogueKind::tma_store_f32;
  static constexpr int kEpiElementBytes = kEpiF32 ? 4 : 2;
  static constexpr bool kEpiUnswizzled = !kEpiF32 && (BlockN / 8) % 2 == 1;
  static constexpr int kEpiCols = kEpiF32           ? 32
                                  : kEpiUnswizzled  ? BlockN
                                  : BlockN % 64 == 0 ? 64
                                  : BlockN % 32 == 0 ? 32
                                                     : 16;
  static constexpr int kEpiSwizzleBytes = kEpiUnswizzled ? 0 : kEpiCols * kEpiElementBytes;
  static constexpr int kEpiUnitsPerWG = kWavesM * (BlockN / kEpiCols);
  static constexpr std::uint32_t kEpiUnitBytes =
      ((64u * std::uint32_t(kEpiCols * kEpiElementBytes)) + 1023u) & ~1023u;
  /// Staging buffers per consumer warpgroup: one per unit (no waiting inside a tile's epilogue),
  /// or fewer, reused in a ring (then each reuse waits for the store that last read it).
  static constexpr int kEpiBuffers = EpiBuffers == 0 ? kEpiUnitsPerWG : EpiBuffers;
  static constexpr std::uint32_t kEpiBytes =
      stores_by_tma(Epilogue) ? std::uint32_t(kConsumerWGs * kEpiBuffers) * kEpiUnitBytes
          : 0u;
  static constexpr std::size_t kSmemBytes =
      1024 + std::size_t(kStages) * kStageBytes + kEpiBytes;  // + slack to align to 1024

  // ---- what a bad combination would break ----
  static_assert(BlockM == 64 || BlockM == 128 || BlockM == 192 || BlockM == 256,
                "BlockM: 64, 128, 192 or 256");
  static_assert(BlockN % 8 == 0 && BlockN >= 16 && BlockN <= 256,
                "BlockN: a multiple of 8 in 16 .. 256 (wgmma N; TMA box rows <= 256)");
  static_assert(kTileABytes % 1024 == 0 && kTileBBytes % 1024 == 0,
                "every tile must start on a 1024-byte swizzle atom");
  static_assert(kStages >= 2, "a ring needs at least two stages");
  static_assert(kClusterSize == 1 || kClusterSize == 2, "clusters of one or two CTAs");
  static_assert(!kPingPong || BlockM == 64 || BlockM == 128,
                "ping-pong: one warpgroup holds a whole tile, at most two 64-row slabs");
  static_assert(kClusterM == 1 || (BlockN / 2) % 8 == 0,
                "multicast of B: each CTA loads BlockN / 2 rows, a whole number of 8-row atoms");
  static_assert(kClusterN == 1 || (BlockM / 2) % 8 == 0,
                "multicast of A: each CTA loads BlockM / 2 rows, a whole number of 8-row atoms");
  static_assert(kEpiBuffers >= 1 && kEpiBuffers <= kEpiUnitsPerWG, "1 .. units staging buffers");
  static_assert(!kEpiF32 || BlockN % 32 == 0, "tma_store_f32: BlockN a multiple of 32 floats");
  static_assert(kAccumulators <= 128 || (kPingPong && Acc == Accumulation::fast &&
                                          kAccumulators <= 192),
                "accumulators: at most 128 FP32 registers per thread (192 for a fast ping-pong "
                "tile, where nothing else of size lives beside them)");
  static_assert(kConsumerWGs < 3 || kAccumulators <= 64,
                "three consumer warpgroups have 152 registers each: at most 64 accumulators");
  static_assert(Acc == Accumulation::fast ||
                    kAccumulators + kPromotedWaveN / 2 <= kConsumerRegs - kRegMargin,
                "promoted mode: FP32 totals plus the partial sum must fit in registers");
  static_assert(kSmemBytes <= kMaxSmemBytes, "more shared memory than a Hopper CTA may have");
};

}  // namespace fp8gemm::engine
