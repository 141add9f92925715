// The per-tensor GEMM's FP32-output kernels: the library's own instances of the engine (chapter 6
// writes bf16 D only; its chapter keeps to warp specialisation). The engine's registers_f32
// epilogue, as chapter 7's FP32 output uses it, with chapter 6's per-tensor math: each thread
// writes its accumulators x scale_a x scale_b as floats (float2 where D allows), with
// `accumulate` after reading what D holds, each element once by one thread (deterministic).
// The tiles of chapter 7's FP32 rule: 128 x 128 (one CTA; M <= 128) and 128 x 256 in 2 x 1
// clusters (larger M), in both accumulation modes. Not tuned by a sweep: an FP32 D is twice the
// bytes of a bf16 one, and training code asks for it where D is summed into (weight gradients).
#include "common/engine/kernel_info.cuh"
#include "fp8gemm/dispatch.hpp"

namespace fp8gemm {

namespace {
using namespace engine;

template <Accumulation A>
void add_f32(std::vector<KernelInfo>& out) {
  out.push_back(kernel_info<KernelConfig<128, 128, 6, 1, 1, A, EpilogueKind::registers_f32>>());
  out.push_back(kernel_info<KernelConfig<128, 256, 4, 2, 1, A, EpilogueKind::registers_f32>>());
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
