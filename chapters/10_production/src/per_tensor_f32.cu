// The per-tensor GEMM's FP32-output kernels: the library's own instances of the engine (chapter 6
// writes bf16 D only; its chapter keeps to warp specialisation), chapter 6's per-tensor math with
// the engine's two FP32 epilogues. registers_f32 (as chapter 7's FP32 output uses it): each thread
// writes its accumulators x scale_a x scale_b as floats (float2 where D allows), with `accumulate`
// after reading what D holds, each element once by one thread (deterministic). tma_store_f32
// (since session 59, for M > 128 where D is 16-byte aligned with ldd % 4 == 0): the scaled tile
// staged in shared memory and written, or reduce-added, by the TMA unit while the next tile's
// main loop runs; the same bits. The tiles: 128 x 256 in 2 x 1 clusters, 128 x 192, 128 x 128 and
// (fast by TMA, 512 < K <= 3072) the ping-pong 128 x 128 for M > 128 (choose_per_tensor_f32
// weighs their wave efficiency x fill x speed); for M <= 128 the FP32 twins of chapter 6's
// decode tiles (64- or 128-row tiles, 128, 64, 32 or 16 columns: a memory-bound call needs
// enough SMs streaming B, and 128 x 128 alone gave 64 x 2112 x 7168 17 tiles for 132 SMs, 0.59x
// torch's FP32 D on an H100 in session 58's call 2), in both accumulation modes. Not tuned by a
// sweep: an FP32 D is twice the bytes of a bf16 one, and training code asks for it where D is
// summed into (weight gradients).
#include "common/engine/kernel_info.cuh"
#include "fp8gemm/dispatch.hpp"

namespace fp8gemm {

namespace {
using namespace engine;

template <Accumulation A>
void add_f32(std::vector<KernelInfo>& out) {
  constexpr auto kF32 = EpilogueKind::registers_f32;
  out.push_back(kernel_info<KernelConfig<128, 256, 4, 2, 1, A, kF32>>());
  out.push_back(kernel_info<KernelConfig<128, 128, 6, 1, 1, A, kF32>>());
  out.push_back(kernel_info<KernelConfig<128, 64, 8, 1, 1, A, kF32>>());
  out.push_back(kernel_info<KernelConfig<128, 32, 10, 1, 1, A, kF32>>());
  out.push_back(kernel_info<KernelConfig<64, 128, 8, 1, 1, A, kF32>>());
  out.push_back(kernel_info<KernelConfig<64, 64, 12, 1, 1, A, kF32>>());
  out.push_back(kernel_info<KernelConfig<64, 32, 14, 1, 1, A, kF32>>());
  // 16 columns (session 62): chapter 6's narrowest decode tiles, so that its pick at M <= 128
  // (64 x 16 at 64 x 2112 x 7168 promoted: 132 tiles where 64 x 32 gives 66) has an FP32 twin.
  out.push_back(kernel_info<KernelConfig<64, 16, 16, 1, 1, A, kF32>>());
  out.push_back(kernel_info<KernelConfig<128, 16, 10, 1, 1, A, kF32>>());
  // Ping-pong consumers (chapter 6's ping-pong, ConsumerOrder::pingpong): one warpgroup's FP32
  // stores run while the other's main loop keeps the tensor cores busy. From registers by name only
  // (slower than the cooperative tiles in every by-name run, sessions 58-60); by TMA the rule's
  // for fast accumulation with 512 < K <= 3072 (session 60).
  // (128 x 192 ping-pong, chapter 6's fast table tile, spills with this epilogue: 246 bytes,
  // ptxas_library.)
  out.push_back(kernel_info<KernelConfig<128, 128, 6, 2, 1, A, kF32, 0, ConsumerOrder::pingpong>>());
  // 128 x 192 (session 60): the width between the two large tiles, for N where neither fills its
  // last wave (4096 x 2112: 352 tiles, 3 waves 89 % full, against 82 % for 128 x 128 and 73 % for
  // 128 x 256 in pairs; chapter 6's bf16 table takes 128 x 176 there, which the FP32 TMA store's
  // 32-column units cannot cut). Four stages: what fits beside the TMA kernel's staging (4 x
  // 40 KB + 2 x 16 KB); the registers kernel keeps four too, the TMA kernel's bit-for-bit twin.
  out.push_back(kernel_info<KernelConfig<128, 192, 4, 1, 1, A, kF32>>());
  // FP32 D by TMA (tma_store_f32, D's 2-D map; D 16-byte aligned, ldd a multiple of 4): each
  // 64 x 32 unit staged and stored (reduce-added with accumulate) by one thread, not waited for,
  // so a tile's 128 KB of FP32 D drains under the next tile's main loop instead of holding its
  // consumers at their stores (session 58: the registers epilogue left 128 x 256 at 0.83-0.96x
  // torch's FP32 D at M = 4096 on an H100). Two staging units per warpgroup (b2, 16 KB): what
  // fits beside the rings that the registers kernels use (128 x 256: 4 x 48 KB; 128 x 192: 4 x
  // 40 KB; 128 x 128: 6 x 32 KB), and chapter 8's FP32 dB measured two units ahead of one.
  constexpr auto kTma = EpilogueKind::tma_store_f32;
  out.push_back(kernel_info<KernelConfig<128, 256, 4, 2, 1, A, kTma, 2>>());
  out.push_back(kernel_info<KernelConfig<128, 128, 6, 1, 1, A, kTma, 2>>());
  out.push_back(kernel_info<KernelConfig<128, 128, 6, 2, 1, A, kTma, 2, ConsumerOrder::pingpong>>());
  out.push_back(kernel_info<KernelConfig<128, 192, 4, 1, 1, A, kTma, 2>>());
  // Two comparison kernels (comparison_only: by name only, never a rule's or a table's), promoted:
  // the promoted 128 x 256 by TMA runs 0.91x its registers twin at 4096 x 7168 x 16384, its L2 hit
  // rate 65 % against 79 % (ncu, session 60). Without the 2 x 1 cluster (each CTA loads its own B
  // half, no multicast pairing), and with one staging unit (before refilling it the consumers wait
  // until the TMA has read the previous unit out of shared memory). Session 61 (H100): one unit
  // recovers the time and the hit rate (level with the registers twin), no cluster only the hit
  // rate; one unit runs ahead of the rule's pick at N = 7168 with K >= 7168 only, and the rule
  // waits for the H200's timings (chapter 10's NOTEBOOK.md, "session 61").
  if constexpr (A == Accumulation::promoted) {
    for (KernelInfo k : {kernel_info<KernelConfig<128, 256, 4, 1, 1, A, kTma, 2>>(),
                         kernel_info<KernelConfig<128, 256, 4, 2, 1, A, kTma, 1>>()}) {
      k.comparison_only = true;
      out.push_back(k);
    }
  }
}
}  // namespace

const std::vector<engine::KernelInfo>& per_tensor_f32_kernels() {
  static const std::vector<engine::KernelInfo> list = [] {
    std::vector<engine::KernelInfo> out;
    add_f32<Accumulation::promoted>(out);
    add_f32<Accumulation::fast>(out);
    return out;
  }();
  return list;
}

}  // namespace fp8gemm
