// Chapter 9: the sm_100a MXFP8 GEMM kernel. NEVER RUN ON HARDWARE in this project: compiled by
// the `full` preset, its SASS inspected (tests/chapter_09.cmake), its host side tested on the
// CPU. Structure after DeepGEMM's deep_gemm/include/deep_gemm/impls/sm100_fp8_fp4_gemm_1d1d.cuh
// (one CTA per SM, warp roles, tcgen05.cp of the scales, tcgen05.commit to release stages, the
// 2-CTA variant's even-CTA MMA issue and multicast commits), simplified: one 128 x 128 tile shape
// per CTA, scales read in the Mx1x32 (cuBLAS) layout that tcgen05.cp copies as is (DeepGEMM
// transposes its own layout in shared memory first). D leaves by TMA store where its address
// and ldd allow (16-byte aligned rows), else by bounds-checked stores from registers. D is bf16,
// or float (Output::f32: the tensor memory's FP32 unrounded), optionally accumulated (D = A.B^T
// + D: by the TMA unit's reduce-add, or a load, add and store from registers).
//
// Two instances (sm100_config.hpp): kCtaGroup = 1, every CTA alone; kCtaGroup = 2, clusters of
// two CTAs (a CTA pair) share one M = 256 MMA per k step. "Unit" below is one CTA or one pair;
// the persistent loop walks tiles t = unit, unit + units, ... of umma_m x 128 (m fastest), and
// CTA r of a pair owns rows 128 r .. 128 r + 127 of the tile.
//
// Roles (warp-uniform branches):
//   warp 0, one lane  TMA producer (every CTA): per K block waits its own empty[s], loads its A
//                     rows (128 x 128, 128B swizzle), its rows of B (128, or 64 in a pair), its
//                     A-scale tile and the B-scale tile (512 bytes each, no swizzle). Alone: onto
//                     its own full[s], which it arms with arrive.expect_tx. In a pair: onto the
//                     EVEN CTA's full[s] (.cta_group::2 loads), which only the even CTA's producer
//                     arms, with both CTAs' bytes. At the end it waits for every stage's last
//                     release (the tail), so that no commit arrives after the CTA exits.
//   warp 1, one lane  MMA issuer (the even CTA only in a pair): per tile waits tmem_empty[acc];
//                     per K block waits full[s], tcgen05.cp's the two scale tiles into stage s's
//                     TMEM slot
//                     (in a pair: each CTA's own tiles into its own TMEM), issues up to four
//                     tcgen05.mma kind::mxf8f6f4.block_scale (k step i uses scale byte i), then
//                     tcgen05.commit -> empty[s] (the stage may be overwritten once the MMAs that
//                     read it are done; in a pair multicast to both CTAs' empty[s]) and, after the
//                     tile's last K block, -> tmem_full[acc] (likewise). At the end it waits
//                     for the epilogues' last tmem_empty arrivals (the same tail).
//   warp 2            allocates 512 TMEM columns at the start, frees them at the end (in a pair
//                     together with the peer's warp 2: .cta_group::2).
//   warps 4..7        epilogue: wait tmem_full[acc], tcgen05.ld 32x32b.x32 four times (each
//                     thread one row, 32 columns at a time), bf16 (or float as loaded), then
//                     either into the warp's staging box (32 x 32 bf16 or 32 x 16 floats, two
//                     buffers) that its lane 0 stores (or reduce-adds) by TMA (the TMA unit clips
//                     the box at D's edges), or straight to global memory; then arrive
//                     on tmem_empty[acc] (128 arrivals; in a pair 256, on the even CTA's barrier)
//                     so the MMA warp may reuse the accumulator.
#include "kernel_sm100.hpp"

#if defined(FP8GEMM_HAS_SM100)

#include <cuda_bf16.h>

#include <cstdint>

#include "common/cuda.hpp"
#include "common/launch.hpp"
#include "common/ptx/cluster.cuh"
#include "common/ptx/mbarrier.cuh"
#include "common/ptx/smem.cuh"
#include "common/ptx/tcgen05.cuh"
#include "common/ptx/tma.cuh"
#include "sm100_config.hpp"

namespace fp8gemm::ch09 {

namespace detail {

struct Params {
  void* D;  ///< bf16, or float (f32)
  std::int64_t ldd;
  std::int32_t M, N, K;
  std::int32_t tiles_m, tiles_n;  ///< tiles of umma_m x kBlockN
  std::int32_t vector_stores;
  std::int32_t tma_store;  ///< D through map_d (the host checked alignment and ldd)
  std::int32_t f32;         ///< D float (map_d's element float, its box 32 x kEpiBoxColsF32)
  std::int32_t accumulate;  ///< f32 only: D = A.B^T + D
};

/// A float D's 32 columns [col, col + 32) of one row from registers (v: the tensor memory's FP32
/// bits), bounds-checked at N; with `accumulate` added to what D holds. Vector stores where the
/// host allowed them (D 16-byte aligned, ldd % 4 == 0) and the 32 columns lie inside N.
__device__ inline void store_row_f32(float* d_row, std::int32_t col, std::int32_t N,
                                     bool vector_stores, bool accumulate, const std::uint32_t (&v)[32]) {
  if (vector_stores && col + 32 <= N) {
    float4* const dst = reinterpret_cast<float4*>(d_row + col);
#pragma unroll
    for (int q = 0; q < 8; ++q) {
      float4 w = make_float4(__uint_as_float(v[4 * q]), __uint_as_float(v[4 * q + 1]),
                             __uint_as_float(v[4 * q + 2]), __uint_as_float(v[4 * q + 3]));
      if (accumulate) {
        const float4 old = dst[q];
        w.x += old.x;
        w.y += old.y;
        w.z += old.z;
        w.w += old.w;
      }
      dst[q] = w;
    }
  } else {
#pragma unroll
    for (int j = 0; j < 32; ++j)
      if (col + j < N) d_row[col + j] = __uint_as_float(v[j]) + (accumulate ? d_row[col + j] : 0.0f);
  }
}

/// The (m, n) block of the persistent loop's tile index: m fastest, so units running at the same
/// time share B tiles (the weights) in L2.
__device__ inline void tile_coords(std::int32_t tile, std::int32_t tiles_m,
                                            std::int32_t& m_blk, std::int32_t& n_blk) {
  m_blk = tile % tiles_m;
  n_blk = tile / tiles_m;
}

template <int kCtaGroup>
__global__ void __launch_bounds__(kThreads, 1)
    mxfp8_gemm_sm100_kernel(const __grid_constant__ CUtensorMap map_a,
                            const __grid_constant__ CUtensorMap map_b,
                            const __grid_constant__ CUtensorMap map_sfa,
                            const __grid_constant__ CUtensorMap map_sfb,
                            const __grid_constant__ CUtensorMap map_d, const Params p) {
#if defined(__CUDA_ARCH__) && defined(__CUDA_ARCH_FEAT_SM100_ALL)
  constexpr Sm100Layout L = sm100_layout(kCtaGroup);
  constexpr bool kPair = kCtaGroup == 2;
  extern __shared__ __align__(1024) std::uint8_t smem_raw[];
  // The base of every stage must be 1024-byte aligned (128B swizzle atoms, descriptor base
  // offset 0); the dynamic allocation's alignment is not promised to be, so round up. Both CTAs
  // of a pair run the same code on the same allocation, so their offsets agree, as the pair's
  // MMA, tcgen05.cp and multicast commits require.
  const std::uint32_t raw = ptx::smem_u32(smem_raw);
  const std::uint32_t base = (raw + 1023u) & ~1023u;
  std::uint8_t* const smem = smem_raw + (base - raw);

  const std::uint32_t warp = __shfl_sync(0xffffffffu, threadIdx.x / 32, 0);
  const std::uint32_t lane = threadIdx.x % 32;
  // A pair kernel launched without clusters of two would compute garbage: refuse loudly.
  if constexpr (kPair) {
    if (ptx::cluster_num_ctas() != 2) __trap();
  }
  const std::uint32_t rank = kPair ? ptx::cluster_cta_rank() : 0u;  // 0: the even CTA
  // Each role's tile loop reads blockIdx.x / gridDim.x itself (unit = blockIdx.x / kCtaGroup of
  // units = gridDim.x / kCtaGroup): computed once up here, the unit index made ptxas keep the
  // loop counters in vector registers and wrap every TMA and tcgen05 issue in an
  // R2UR.BROADCAST loop (126 of them; session 41's SASS).

  auto full_bar = [&](std::uint32_t s) { return base + L.barriers + 8 * s; };
  auto empty_bar = [&](std::uint32_t s) { return base + L.barriers + 8 * (L.stages + s); };
  auto tmem_full_bar = [&](std::uint32_t a) { return base + L.barriers + 8 * (2 * L.stages + a); };
  auto tmem_empty_bar = [&](std::uint32_t a) {
    return base + L.barriers + 8 * (2 * L.stages + kAccumStages + a);
  };
  // Releases by the MMA thread: alone, onto this CTA's barrier; in a pair, onto the barrier at
  // the same offset in both CTAs.
  auto mma_commit = [&](std::uint32_t bar) {
    if constexpr (kPair)
      ptx::tcgen05_commit_pair_multicast(bar, 0x3);
    else
      ptx::tcgen05_commit(bar);
  };

  if (warp == kProducerWarp && lane == 0) {
    ptx::tma_prefetch_descriptor(&map_a);
    ptx::tma_prefetch_descriptor(&map_b);
    ptx::tma_prefetch_descriptor(&map_sfa);
    ptx::tma_prefetch_descriptor(&map_sfb);
  }
  if (warp == kFirstEpilogueWarp && lane == 0 && p.tma_store) ptx::tma_prefetch_descriptor(&map_d);
  // A pair: both CTAs running before the collective TMEM allocation (PTX ISA "tcgen05.alloc":
  // the issuing warp must make sure the peer CTA is launched).
  if constexpr (kPair) ptx::cluster_sync();
  if (warp == kMmaWarp && lane == 0) {
    for (std::uint32_t s = 0; s < std::uint32_t(L.stages); ++s) {
      ptx::mbarrier_init(full_bar(s), kFullArrivals);  // the (even CTA's) producer's expect_tx
      ptx::mbarrier_init(empty_bar(s), kCommitArrivals);  // one tcgen05.commit
    }
    for (std::uint32_t a = 0; a < kAccumStages; ++a) {
      ptx::mbarrier_init(tmem_full_bar(a), kCommitArrivals);  // one tcgen05.commit
      // every epilogue thread (of both CTAs in a pair; only the even CTA's is used)
      ptx::mbarrier_init(tmem_empty_bar(a), tmem_empty_arrivals(kCtaGroup));
    }
    ptx::fence_barrier_init();
  }
  if (warp == kAllocWarp) {
    ptx::tmem_alloc<kCtaGroup>(base + L.tmem_slot, kTmemCols);
    ptx::tmem_relinquish_alloc_permit<kCtaGroup>();
  }
  // The allocator wrote the TMEM address through the tensor core's proxy: fence, barrier, fence.
  // In a pair the barrier is the cluster's: the peer's barriers must be initialised before this
  // CTA's loads complete on them or its commits arrive on them.
  ptx::tcgen05_fence_before_thread_sync();
  if constexpr (kPair)
    ptx::cluster_sync();
  else
    __syncthreads();
  ptx::tcgen05_fence_after_thread_sync();
  const std::uint32_t tmem_base = *reinterpret_cast<volatile std::uint32_t*>(smem + L.tmem_slot);

  const std::int32_t num_tiles = p.tiles_m * p.tiles_n;
  const std::int32_t k_blocks = (p.K + kBlockK - 1) / kBlockK;

  if (warp == kProducerWarp) {
    if (lane == 0) {
      std::uint32_t stage = 0, phase = 0;
      for (std::int32_t tile = blockIdx.x / kCtaGroup; tile < num_tiles;
           tile += gridDim.x / kCtaGroup) {
        std::int32_t m_blk, n_blk;
        tile_coords(tile, p.tiles_m, m_blk, n_blk);
        const std::int32_t a_row = m_blk * L.umma_m + std::int32_t(rank) * kBlockM;
        const std::int32_t b_row = n_blk * kBlockN + std::int32_t(rank) * L.b_rows;
        // This CTA's 128 A rows are scale-tile row a_row / 128 = m_blk * kCtaGroup + rank of the
        // Mx1x32 layout; the B scales of all kBlockN columns are tile row n_blk (both CTAs of a
        // pair load it).
        const std::int32_t sfa_row = m_blk * kCtaGroup + std::int32_t(rank);
        for (std::int32_t kb = 0; kb < k_blocks; ++kb) {
          ptx::mbarrier_wait(empty_bar(stage), phase ^ 1);
          const std::uint32_t a_dst = base + L.a + stage * kABytes;
          const std::uint32_t b_dst = base + L.b + stage * L.b_bytes;
          const std::uint32_t sfa_dst = base + L.sfa + stage * kSfTileBytes;
          const std::uint32_t sfb_dst = base + L.sfb + stage * kSfTileBytes;
          if constexpr (kPair) {
            // Everything completes on the even CTA's full[stage], armed there with the pair's
            // bytes; the odd CTA's bytes may land first (its transaction count runs negative
            // until the expectation arrives; the phase cannot complete before the arrival).
            if (rank == 0) ptx::mbarrier_arrive_expect_tx(full_bar(stage), L.stage_tx_bytes);
            const std::uint32_t bar = ptx::map_shared_to_cta(full_bar(stage), 0);
            ptx::tma_load_2d_pair(a_dst, &map_a, bar, kb * kBlockK, a_row);
            ptx::tma_load_2d_pair(b_dst, &map_b, bar, kb * kBlockK, b_row);
            ptx::tma_load_2d_pair(sfa_dst, &map_sfa, bar, kb * 128, sfa_row);
            ptx::tma_load_2d_pair(sfb_dst, &map_sfb, bar, kb * 128, n_blk);
          } else {
            ptx::mbarrier_arrive_expect_tx(full_bar(stage), L.stage_tx_bytes);
            ptx::tma_load_2d(a_dst, &map_a, full_bar(stage), kb * kBlockK, a_row);
            ptx::tma_load_2d(b_dst, &map_b, full_bar(stage), kb * kBlockK, b_row);
            // Scale tile (row, kb) of the Mx1x32 layout: uint32 column kb * 128.
            ptx::tma_load_2d(sfa_dst, &map_sfa, full_bar(stage), kb * 128, sfa_row);
            ptx::tma_load_2d(sfb_dst, &map_sfb, full_bar(stage), kb * 128, n_blk);
          }
          if (++stage == std::uint32_t(L.stages)) {
            stage = 0;
            phase ^= 1;
          }
        }
      }
      // Producer tail (CUTLASS's producer_tail): wait for the release of every stage's last
      // load, as the next loads would, so that no tcgen05.commit arrival (in a pair the even
      // CTA's multicast) is still on its way to this CTA's empty barriers when it exits. A stage
      // never filled has a fresh barrier, whose wait on parity 1 returns at once.
      for (int i = 0; i < L.stages; ++i) {
        ptx::mbarrier_wait(empty_bar(stage), phase ^ 1);
        if (++stage == std::uint32_t(L.stages)) {
          stage = 0;
          phase ^= 1;
        }
      }
    }
  } else if (warp == kMmaWarp) {
    if (lane == 0 && rank == 0) {
      std::uint32_t stage = 0, phase = 0, iter = 0;
      constexpr std::uint32_t kDesc = instr_desc(kCtaGroup);
      for (std::int32_t tile = blockIdx.x / kCtaGroup; tile < num_tiles;
           tile += gridDim.x / kCtaGroup, ++iter) {
        const std::uint32_t acc = iter % kAccumStages;
        const std::uint32_t acc_phase = (iter / kAccumStages) & 1;
        ptx::mbarrier_wait(tmem_empty_bar(acc), acc_phase ^ 1);
        ptx::tcgen05_fence_after_thread_sync();
        const std::uint32_t tmem_d = tmem_base + acc * kTmemAccumCols;
        for (std::int32_t kb = 0; kb < k_blocks; ++kb) {
          ptx::mbarrier_wait(full_bar(stage), phase);
          ptx::tcgen05_fence_after_thread_sync();
          // Scales of this K block into the stage's TMEM slot (the copies are ordered before
          // the MMAs below, same thread: a tcgen05 pipeline; the slot's previous MMAs completed
          // before this stage's refill, see sm100_config.hpp); in a pair each CTA's tiles into
          // its own TMEM.
          const std::uint32_t tmem_sfa = tmem_base + tmem_sfa_col(stage);
          const std::uint32_t tmem_sfb = tmem_base + tmem_sfb_col(stage);
          ptx::tmem_copy_32x128b_warpx4<kCtaGroup>(tmem_sfa,
                                                   scale_desc(base + L.sfa + stage * kSfTileBytes));
          ptx::tmem_copy_32x128b_warpx4<kCtaGroup>(tmem_sfb,
                                                   scale_desc(base + L.sfb + stage * kSfTileBytes));
          // K % 32 == 0 (validated): the last block may hold 1..4 MX blocks; no MMA reads the
          // zero-filled rest, so the scale padding is never used.
          const std::int32_t rest = (p.K - kb * kBlockK) / kUmmaK;
          const std::int32_t steps = rest < kBlockK / kUmmaK ? rest : kBlockK / kUmmaK;
          const std::uint32_t a_stage = base + L.a + stage * kABytes;
          const std::uint32_t b_stage = base + L.b + stage * L.b_bytes;
#pragma unroll
          for (std::int32_t s = 0; s < kBlockK / kUmmaK; ++s) {
            if (s < steps)
              ptx::tcgen05_mma_mxf8f6f4_block_scale<kCtaGroup>(
                  tmem_d, operand_desc(a_stage, s), operand_desc(b_stage, s),
                  with_sf_ids(kDesc, s, s), tmem_sfa, tmem_sfb, kb > 0 || s > 0);
          }
          // The stage's shared memory is free once these MMAs (and copies) completed.
          mma_commit(empty_bar(stage));
          if (kb == k_blocks - 1) mma_commit(tmem_full_bar(acc));
          if (++stage == std::uint32_t(L.stages)) {
            stage = 0;
            phase ^= 1;
          }
        }
      }
      // The same tail for the accumulators: wait until the epilogue (in a pair both CTAs'
      // epilogues, the odd one's arrivals crossing the cluster) released the last tile of each
      // accumulator stage, so that no arrival is on its way to this CTA's tmem_empty barriers
      // when it exits (DeepGEMM's "another round of waits" before its barriers go away).
      for (std::uint32_t a = 0; a < kAccumStages; ++a, ++iter)
        ptx::mbarrier_wait(tmem_empty_bar(iter % kAccumStages), ((iter / kAccumStages) & 1) ^ 1);
    }
  } else if (warp >= kFirstEpilogueWarp) {
    const std::uint32_t quarter = warp % 4;  // the TMEM lanes this warp may read
    // This warp's staging boxes for the TMA store (kEpiBuffers of kEpiBoxBytes), and the boxes
    // it has stored so far (box % kEpiBuffers is the next one's buffer).
    const std::uint32_t staging =
        base + L.epi + (warp - kFirstEpilogueWarp) * std::uint32_t(kEpiBuffers) * kEpiBoxBytes;
    std::uint32_t box = 0;
    std::uint32_t iter = 0;
    // One box through the TMA unit: wait until its buffer is free (the store issued kEpiBuffers
    // boxes ago read it; lane 0 issued that one, so lane 0 waits until at most kEpiBuffers - 1
    // of its stores still read shared memory), each lane writes its row (64 bytes at row_addr:
    // fill), every lane's writes made visible to the async proxy, then lane 0 issues the store
    // (issue(buf)) and commits it; the TMA unit writes no row past M or column past N.
    auto staged_box = [&](auto&& fill, auto&& issue) {
      const std::uint32_t buf = staging + (box % kEpiBuffers) * kEpiBoxBytes;
      if (lane == 0) ptx::tma_store_wait_read<kEpiBuffers - 1>();
      __syncwarp();
      fill(buf + lane * (kEpiBoxBytes / kEpiBoxRows));
      ptx::fence_proxy_async_shared();
      __syncwarp();
      if (lane == 0) {
        issue(buf);
        ptx::tma_store_commit();
      }
      ++box;
    };
    for (std::int32_t tile = blockIdx.x / kCtaGroup; tile < num_tiles;
         tile += gridDim.x / kCtaGroup, ++iter) {
      std::int32_t m_blk, n_blk;
      tile_coords(tile, p.tiles_m, m_blk, n_blk);
      const std::uint32_t acc = iter % kAccumStages;
      const std::uint32_t acc_phase = (iter / kAccumStages) & 1;
      ptx::mbarrier_wait(tmem_full_bar(acc), acc_phase);
      ptx::tcgen05_fence_after_thread_sync();
      // This CTA's rows of the tile: TMEM lane i is row first_row + i.
      const std::int32_t first_row = m_blk * L.umma_m + std::int32_t(rank) * kBlockM;
      const std::int32_t row = first_row + std::int32_t(quarter * 32 + lane);
      __nv_bfloat16* const d_row = static_cast<__nv_bfloat16*>(p.D) + std::int64_t(row) * p.ldd;
      float* const d_row_f32 = static_cast<float*>(p.D) + std::int64_t(row) * p.ldd;
      // The warp's boxes start at its first row (its TMEM lanes).
      const std::int32_t box_row = first_row + std::int32_t(quarter * 32);
#pragma unroll 1
      for (std::int32_t c = 0; c < kBlockN; c += 32) {
        std::uint32_t v[32];
        ptx::tmem_load_32x32b_x32(tmem_base + ((quarter * 32) << 16) + acc * kTmemAccumCols + c, v);
        ptx::tcgen05_wait_ld();
        const std::int32_t col = n_blk * kBlockN + c;
        if (p.tma_store && p.f32) {
          // Two boxes of 32 rows x 16 floats (64 bytes a row, the bf16 box's buffer), the
          // tensor memory's FP32 as is; stored, or with accumulate reduce-added (D += box).
#pragma unroll
          for (int half = 0; half < kEpiBoxCols / kEpiBoxColsF32; ++half)
            staged_box(
                [&](std::uint32_t row_addr) {
#pragma unroll
                  for (int q = 0; q < 4; ++q) {
                    const int j = half * kEpiBoxColsF32 + 4 * q;
                    ptx::st_shared_v4_s32(row_addr + 16u * q, int(v[j]), int(v[j + 1]),
                                          int(v[j + 2]), int(v[j + 3]));
                  }
                },
                [&](std::uint32_t buf) {
                  const std::int32_t box_col = col + half * kEpiBoxColsF32;
                  if (p.accumulate)
                    ptx::tma_reduce_add_2d(&map_d, buf, box_col, box_row);
                  else
                    ptx::tma_store_2d(&map_d, buf, box_col, box_row);
                });
        } else if (p.tma_store) {
          // One box of 32 rows x 32 bf16 (64 bytes a row).
          staged_box(
              [&](std::uint32_t row_addr) {
#pragma unroll
                for (int q = 0; q < 4; ++q) {
                  int w[4];
#pragma unroll
                  for (int h = 0; h < 4; ++h) {
                    const __nv_bfloat162 b2 =
                        __floats2bfloat162_rn(__uint_as_float(v[q * 8 + 2 * h]),
                                              __uint_as_float(v[q * 8 + 2 * h + 1]));
                    w[h] = *reinterpret_cast<const int*>(&b2);
                  }
                  ptx::st_shared_v4_s32(row_addr + 16u * q, w[0], w[1], w[2], w[3]);
                }
              },
              [&](std::uint32_t buf) { ptx::tma_store_2d(&map_d, buf, col, box_row); });
        } else if (row < p.M && p.f32) {
          store_row_f32(d_row_f32, col, p.N, p.vector_stores != 0, p.accumulate != 0, v);
        } else if (row < p.M) {
          if (p.vector_stores && col + 32 <= p.N) {
            uint4* const dst = reinterpret_cast<uint4*>(d_row + col);
#pragma unroll
            for (int q = 0; q < 4; ++q) {
              uint4 w;
              std::uint32_t* const wp = &w.x;
#pragma unroll
              for (int h = 0; h < 4; ++h) {
                const __nv_bfloat162 b2 = __floats2bfloat162_rn(__uint_as_float(v[q * 8 + 2 * h]),
                                                                __uint_as_float(v[q * 8 + 2 * h + 1]));
                wp[h] = *reinterpret_cast<const std::uint32_t*>(&b2);
              }
              dst[q] = w;
            }
          } else {
#pragma unroll
            for (int j = 0; j < 32; ++j)
              if (col + j < p.N) d_row[col + j] = __float2bfloat16_rn(__uint_as_float(v[j]));
          }
        }
      }
      // Every read of this accumulator is complete (wait::ld above): hand it back (in a pair to
      // the even CTA, whose MMA thread waits for both CTAs' 128 arrivals).
      ptx::tcgen05_fence_before_thread_sync();
      if constexpr (kPair)
        ptx::mbarrier_arrive_cluster(ptx::map_shared_to_cta(tmem_empty_bar(acc), 0));
      else
        ptx::mbarrier_arrive(tmem_empty_bar(acc));
    }
    // The CTA's last stores must have written D before it exits.
    if (p.tma_store && lane == 0) ptx::tma_store_wait_all<0>();
  }

  // Before the deallocation every TMEM access of both CTAs has completed (in a pair the barrier
  // is the cluster's, and .cta_group::2 deallocates both CTAs' columns together). The tails
  // above have seen every arrival on this CTA's barriers land.
  ptx::tcgen05_fence_before_thread_sync();
  if constexpr (kPair)
    ptx::cluster_sync();
  else
    __syncthreads();
  if (warp == kAllocWarp) {
    ptx::tcgen05_fence_after_thread_sync();
    ptx::tmem_dealloc<kCtaGroup>(tmem_base, kTmemCols);
  }
#else
  // Compiled for another architecture (the sm_90a pass of this target): never launched there,
  // the host refuses any GPU other than compute capability 10.0 first.
  __trap();
#endif
}

}  // namespace detail

const void* mxfp8_sm100_kernel(int cta_group) {
  return cta_group == 2 ? reinterpret_cast<const void*>(&detail::mxfp8_gemm_sm100_kernel<2>)
                        : reinterpret_cast<const void*>(&detail::mxfp8_gemm_sm100_kernel<1>);
}

namespace {
/// The launch of the pair instance: clusters of two CTAs along x (blocks 2i and 2i + 1 are a
/// pair, cluster ranks 0 and 1). `attr` must outlive the returned configuration.
cudaLaunchConfig_t pair_launch(int grid, int block, int smem_bytes, cudaStream_t stream,
                               cudaLaunchAttribute& attr) {
  cudaLaunchConfig_t cfg{};
  cfg.gridDim = dim3(unsigned(grid));
  cfg.blockDim = dim3(unsigned(block));
  cfg.dynamicSmemBytes = std::size_t(smem_bytes);
  cfg.stream = stream;
  attr = cudaLaunchAttribute{};
  attr.id = cudaLaunchAttributeClusterDimension;
  attr.val.clusterDim.x = 2;
  attr.val.clusterDim.y = 1;
  attr.val.clusterDim.z = 1;
  cfg.attrs = &attr;
  cfg.numAttrs = 1;
  return cfg;
}
}  // namespace

int max_active_pairs(int grid, int block, int smem_bytes) {
  cudaLaunchAttribute attr;
  const cudaLaunchConfig_t cfg = pair_launch(grid, block, smem_bytes, nullptr, attr);
  int clusters = 0;
  FP8GEMM_CUDA_CHECK(
      cudaOccupancyMaxActiveClusters(&clusters, detail::mxfp8_gemm_sm100_kernel<2>, &cfg));
  return clusters;
}

void launch_mxfp8_sm100(const KernelArgs& a, int grid, int block, int smem_bytes,
                        cudaStream_t stream) {
  detail::Params p{};
  p.D = a.D;
  p.ldd = a.ldd;
  p.M = a.M;
  p.N = a.N;
  p.K = a.K;
  p.tiles_m = a.tiles_m;
  p.tiles_n = a.tiles_n;
  p.vector_stores = a.vector_stores ? 1 : 0;
  p.tma_store = a.tma_store ? 1 : 0;
  p.f32 = a.f32 ? 1 : 0;
  p.accumulate = a.accumulate ? 1 : 0;
  if (a.cta_group == 2) {
    cudaLaunchAttribute attr;
    const cudaLaunchConfig_t cfg = pair_launch(grid, block, smem_bytes, stream, attr);
    throw_if_launch_failed(cudaLaunchKernelEx(&cfg, detail::mxfp8_gemm_sm100_kernel<2>, a.map_a,
                                              a.map_b, a.map_sfa, a.map_sfb, a.map_d, p),
                           "fp8gemm::ch09_blackwell_mxfp8", "mxfp8_gemm_sm100_kernel<2>");
  } else {
    detail::mxfp8_gemm_sm100_kernel<1><<<grid, block, smem_bytes, stream>>>(
        a.map_a, a.map_b, a.map_sfa, a.map_sfb, a.map_d, p);
  }
}

}  // namespace fp8gemm::ch09

#endif  // FP8GEMM_HAS_SM100
