#include "hopper_mx.hpp"

#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "bs_gemm.hpp"
#include "common/cuda.hpp"
#include "common/launch.hpp"
#include "common/engine/params.hpp"
#include "common/quantize_gpu.hpp"

namespace fp8gemm::ch09 {

namespace {
constexpr const char* kWho = "fp8gemm::ch09_hopper_mxfp8";
// The dequantize_bf16 path's kernels that its rule picks (kernels_hopper_bf16.cu).
constexpr const char* kBf16Cooperative = "128x256_s4_c2x1_fast_tma_b2_bf16";
constexpr const char* kBf16PingPong = "128x192_s4_c2x1_fast_tma_b2_pp_bf16";
constexpr const char* kBf16Registers = "128x256_s4_c1x1_fast_reg_bf16";
// A float D (Output::f32): the FP32 twins of the default path's tile (kernels_hopper.cu), from
// registers (session 64) and by TMA (session 66; with accumulate a TMA reduce-add), and of the
// dequantize_bf16 path's tiles (kernels_hopper_bf16.cu): from registers, and by TMA (session 67)
// the two tiles of its bf16 rule (the 128 x 192 one without ping-pong or cluster: what fits).
constexpr const char* kF32TmaKernel = "128x128_s5_c1x1_promoted_f32_tma_b2";
constexpr const char* kF32Kernel = "128x128_s5_c1x1_promoted_f32";
constexpr const char* kBf16F32 = "128x256_s4_c1x1_fast_f32_bf16";
constexpr const char* kBf16F32Cooperative = "128x256_s4_c2x1_fast_f32_tma_b2_bf16";
constexpr const char* kBf16F32Narrow = "128x192_s4_c1x1_fast_f32_tma_b2_bf16";

GemmRequirements hopper_requirements() {
  GemmRequirements r = requirements();  // the MXFP8 call's rules (mx_gemm.hpp)
  r.who = kWho;
  r.k_reason =
      "MXFP8 has one UE8M0 scale per 32 K elements (each wgmma k32 step is one block); "
      "pad K with zeros to a multiple of 32";
  return r;
}

/// The default. A bf16 D: the first kernel with the TMA-store epilogue when D allows it, else the
/// first with the registers epilogue. A float D: with accumulate (D = A.B^T + D) the FP32 kernel
/// by TMA when D allows it, else the one from registers. Measured (H100, session 67, same run,
/// L2 flushed, plots/data/h200/session67/call1_93b3070/): with accumulate the TMA kernel (a TMA
/// reduce-add, in the background of the next tile's main loop) took 0.61x the registers kernel's
/// time at 4096 x 24576 x 1536 and 0.90 / 0.98 / 0.93x at 4096 x 2112 x 7168, 4096 x 7168 x
/// 16384 and 8192^3; for D = A.B^T it took 1.01 / 1.02 / 0.99 / 1.02x, so the registers kernel
/// stays the default there.
const engine::KernelInfo& default_kernel(const GemmArgs& args, bool f32, bool accumulate) {
  const bool tma_store_ok = engine::tma_store_compatible(args);
  if (f32)
    return engine::find_kernel(hopper_kernels(),
                               accumulate && tma_store_ok ? kF32TmaKernel : kF32Kernel, kWho);
  for (const auto& k : hopper_kernels())
    if ((k.epilogue == engine::EpilogueKind::tma_store) == tma_store_ok) return k;
  return hopper_kernels().front();
}
/// A kernel by name, current or earlier version (the refusal lists both).
const engine::KernelInfo& find_hopper_kernel(const std::string& name) {
  static const std::vector<engine::KernelInfo> all = [] {
    std::vector<engine::KernelInfo> v = hopper_kernels();
    v.insert(v.end(), hopper_earlier_kernels().begin(), hopper_earlier_kernels().end());
    return v;
  }();
  return engine::find_kernel(all, name, kWho);
}

/// The dequantize_bf16 path's bf16 GEMM, by name, or the rule: where D allows a TMA store, the
/// cooperative 128 x 256 tile with a 2 x 1 cluster when K >= 4096 and N is a multiple of 256
/// (a long K amortises its epilogue, and its tiles fill N), else the 128 x 192 ping-pong tile
/// (which overlaps one tile's epilogue with the other's main loop: chapter 6's reason); the
/// registers kernel for any other D. From the sweep of every bf16 kernel at 8192^3 and the
/// M = 4096 DeepSeek-V3 shapes (plots/data/h200/ch09/bf16_sweep_138cfbc.json): the rule's kernel
/// is the fastest at five of the seven and within 5% of it at 4096 x 2112 x 7168 and
/// 4096 x 7168 x 2048 (128 x 176 ping-pong there); the first default, 128 x 192 ping-pong
/// everywhere, was 7% and 10% slower at 4096 x 7168 x 16384 and 4096 x 4096 x 7168.
/// A float D: the same rule's tile as an FP32 kernel by TMA (with accumulate a TMA reduce-add)
/// where D's rows are 16-byte aligned, else the 128 x 256 FP32 kernel from registers. Measured
/// (session 69's call 1, an H100, chapter 9's executable with --float-d, one process;
/// plots/data/h200/session69/call1_e186dc5/): the float D by TMA took 1.013-1.021x the path's
/// bf16 D's time at 8192^3, 4096 x 2112 x 7168 and 4096 x 7168 x 16384, 1.165x at
/// 4096 x 24576 x 1536 (K = 1536: D's twice the bytes weigh), and 0.80-0.99x the registers
/// kernel's (which took 1.02-1.26x the bf16 D's); with accumulate 1.010-1.019x its own
/// D = A.B^T, 1.23x at K = 1536 (the registers kernel's 1.12-2.19x).
const engine::KernelInfo& bf16_kernel(const std::string& name, const GemmArgs& args) {
  const auto& all = hopper_bf16_kernels();
  if (!name.empty()) return engine::find_kernel(all, name, kWho);
  const bool f32 = args.d_element_bytes == 4;
  if (!engine::tma_store_compatible(args))
    return engine::find_kernel(all, f32 ? kBf16F32 : kBf16Registers, kWho);
  const bool cooperative = args.K >= 4096 && args.N % 256 == 0;
  if (f32) return engine::find_kernel(all, cooperative ? kBf16F32Cooperative : kBf16F32Narrow, kWho);
  return engine::find_kernel(all, cooperative ? kBf16Cooperative : kBf16PingPong, kWho);
}

/// The bf16 GEMM as the engine sees it: A and B as byte matrices of 2 K columns (a bf16 row is
/// 2 K bytes; bf16_operands.cuh), packed in the workspace; D the caller's; per-tensor scales 1.
GemmArgs bf16_args(const MxGemm& g, const std::uint16_t* a16, const std::uint16_t* b16,
                   const float* ones) {
  return GemmArgs{.M = g.M, .N = g.N, .K = 2 * g.K, .A = a16, .lda = 2 * g.K, .B = b16,
                  .ldb = 2 * g.K, .D = g.D, .ldd = g.ldd, .scale_a = ones, .scale_b = ones + 1,
                  .d_element_bytes = g.output == Output::f32 ? 4 : 2};
}

/// The requantize_block_scaled path's workspace, in bytes from its start: A' (M x K e4m3), B'
/// (N x K), A's 1 x 128 scales (mn-major, TMA-aligned: what chapter 7's kernel reads in place),
/// B's 128 x 128 scales (padded). Every part starts on 16 bytes: K is a multiple of 32.
struct RequantLayout {
  GroupScaleLayout layout_a;
  BlockScaleLayout layout_b;
  std::size_t a = 0, b = 0, scale_a = 0, scale_b = 0, bytes = 0;
  explicit RequantLayout(const MxGemm& g)
      : layout_a(GroupScaleLayout::mn_major_tma_aligned(g.M)),
        layout_b(BlockScaleLayout::padded(g.K)) {
    const std::int64_t groups = ceil_div(g.K, 128);
    b = std::size_t(g.M * g.K);
    scale_a = b + std::size_t(g.N * g.K);
    scale_b = scale_a + std::size_t(round_up(groups * layout_a.ld * 4, 16));
    bytes = scale_b + std::size_t(ceil_div(g.N, 128) * layout_b.ld * 4);
  }
};

/// Chapter 7's call on the requantize_block_scaled path's outputs: A' and B' (packed, K per row)
/// with their FP32 scales, as re-quantised from a and b, into g's D.
ch07::BlockScaledGemm requant_gemm_call(const MxGemm& g, const MxRequantOperand& a,
                                        const MxRequantOperand& b, const GroupScaleLayout& la,
                                        const BlockScaleLayout& lb) {
  return ch07::BlockScaledGemm{.M = g.M, .N = g.N, .K = g.K, .A = a.out, .lda = g.K, .B = b.out,
                               .ldb = g.K, .scale_a = a.out_scales, .scale_a_layout = la,
                               .scale_b = b.out_scales, .scale_b_layout = lb, .D = g.D,
                               .ldd = g.ldd,
                               .output = g.output == Output::f32 ? ch07::Output::f32
                                                                : ch07::Output::bf16,
                               .accumulate = g.accumulate};
}
}  // namespace

struct HopperPlan::Impl {
  using Engine = engine::PolicyPlan<engine::MxParams>;
  std::unique_ptr<Engine> plan;  // the default path
  // The dequantize_bf16 path: the workspace (A then B, bf16, packed; then two floats 1), the two
  // dequantisations and the bf16 GEMM.
  DeviceBuffer<std::uint16_t> workspace;
  MxDequantOperand deq_a, deq_b;
  std::unique_ptr<engine::PolicyPlan<engine::GemmParams>> bf16;
  // The requantize_block_scaled path: its workspace (RequantLayout), the two operands of the one
  // re-quantisation launch, chapter 7's plan.
  DeviceBuffer<std::uint8_t> rq_workspace;
  GroupScaleLayout rq_layout_a;
  BlockScaleLayout rq_layout_b;
  MxRequantOperand rq_a, rq_b;
  std::unique_ptr<ch07::Plan> rq;
  MxGemm call;  // the bf16 or requant path's call as built or last re-bound (their rebind
                // compares against it; the default path's engine plan keeps its own)
  bool accumulate = false;  // every path's (rebind() compares it; the engine sees D's type only)
};

HopperPlan::HopperPlan(const MxGemm& in, const HopperOptions& o) : impl_(std::make_unique<Impl>()) {
  engine::check_plan_options(kWho, o.max_sms, engine::RasterOptions{});
  const MxGemm g = with_defaults(in);
  check_output(g, kWho);
  impl_->accumulate = g.accumulate;
  const GemmArgs args = gemm_args(g);
  const GemmRequirements req = hopper_requirements();
  validate_gemm(args, req);
  if (o.path != HopperPath::promote_per_block && o.path != HopperPath::dequantize_bf16 &&
      o.path != HopperPath::requantize_block_scaled)
    throw std::invalid_argument(std::string(kWho) + ": HopperOptions::path = " +
                                std::to_string(int(o.path)) +
                                " is not a HopperPath (promote_per_block, dequantize_bf16, "
                                "requantize_block_scaled)");
  if (o.path == HopperPath::requantize_block_scaled) {
    Impl& I = *impl_;
    I.call = g;
    const RequantLayout L(g);
    // Everything that can refuse the call, before the workspace exists: a kernel name chapter 7
    // does not know (pure) or whose kernel does not fit the call (D's type, a TMA store's
    // alignment, whole K rounds: the same checks chapter 7's plan makes on the same M, N, K and
    // D; until session 70 only after the workspace's allocation), then the caller's buffers (the
    // MXFP8 rules were checked above; chapter 7's rules accept every M, N, K (a multiple of 32)
    // and D that they accept).
    if (!o.kernel.empty())
      engine::check_kernel_fits(engine::find_kernel(ch07::kernels(), o.kernel, kWho), args, kWho,
                                o.max_sms);
    check_gemm_pointers(args, req);
    I.rq_workspace = DeviceBuffer<std::uint8_t>(L.bytes);
    std::uint8_t* w = I.rq_workspace.data();
    I.rq_layout_a = L.layout_a;
    I.rq_layout_b = L.layout_b;
    I.rq_a = {g.A, g.M, g.K, g.lda, g.scale_a, w + L.a, g.K,
              reinterpret_cast<float*>(w + L.scale_a)};
    I.rq_b = {g.B, g.N, g.K, g.ldb, g.scale_b, w + L.b, g.K,
              reinterpret_cast<float*>(w + L.scale_b)};
    validate_requantize_mx(&I.rq_a, I.rq_layout_a, &I.rq_b, I.rq_layout_b);
    prepare_requantize_mx();
    I.rq = std::make_unique<ch07::Plan>(
        requant_gemm_call(g, I.rq_a, I.rq_b, L.layout_a, L.layout_b),
        ch07::Options{.max_sms = o.max_sms, .kernel = o.kernel});
    return;
  }
  if (o.path == HopperPath::dequantize_bf16) {
    Impl& I = *impl_;
    I.call = g;
    const engine::KernelInfo& k = bf16_kernel(o.kernel, args);
    // Everything that can refuse the call, before the workspace exists: the bf16 GEMM reads rows
    // of 2 K bytes, its kernel must fit the call (checked on placeholder operands: only D and
    // the sizes matter there), and the caller's buffers are memory the kernels may read.
    const std::int64_t max_dim = engine::engine_requirements(kWho).max_dim;
    if (2 * g.K > max_dim)
      throw std::invalid_argument(std::string(kWho) + ": K = " + std::to_string(g.K) +
                                  " must be <= " + std::to_string(max_dim / 2) +
                                  " on the dequantize_bf16 path (the bf16 GEMM reads rows of "
                                  "2 K bytes)");
    engine::check_kernel_fits(k, bf16_args(g, nullptr, nullptr, nullptr), kWho, o.max_sms);
    check_gemm_pointers(args, req);
    // (M + N) K bf16, then 16 bytes for the two per-tensor scales (1.0f): 16-byte aligned, since
    // K is a multiple of 32.
    I.workspace = DeviceBuffer<std::uint16_t>(std::size_t((g.M + g.N) * g.K + 8));
    std::uint16_t* a16 = I.workspace.data();
    std::uint16_t* b16 = a16 + g.M * g.K;
    float* ones = reinterpret_cast<float*>(b16 + g.N * g.K);
    const float one[2] = {1.0f, 1.0f};
    FP8GEMM_CUDA_CHECK(cudaMemcpy(ones, one, sizeof one, cudaMemcpyHostToDevice));
    I.deq_a = {g.A, g.M, g.K, g.lda, g.scale_a, a16, g.K};
    I.deq_b = {g.B, g.N, g.K, g.ldb, g.scale_b, b16, g.K};
    validate_dequantize_mx_1x32_bf16(I.deq_a, &I.deq_b);
    I.bf16 = std::make_unique<engine::PolicyPlan<engine::GemmParams>>(
        k, bf16_args(g, a16, b16, ones), engine::engine_requirements(kWho), o.max_sms);
    I.bf16->policy_params().accumulate = g.accumulate ? 1 : 0;  // a float D: D = A.B^T + D
    return;
  }
  const bool f32 = g.output == Output::f32;
  const engine::KernelInfo& k =
      o.kernel.empty() ? default_kernel(args, f32, g.accumulate)
                       : find_hopper_kernel(o.kernel);
  impl_->plan =
      std::make_unique<Impl::Engine>(k, args, req, o.max_sms, engine::RasterOptions{}, true);
  engine::MxParams& p = impl_->plan->policy_params();
  p.sfa = g.scale_a;
  p.sfb = g.scale_b;
  p.sf_tiles_k = int(ceil_div(g.K, 128));
  p.sf_tiles_n = int(ceil_div(g.N, 128));
  p.accumulate = g.accumulate ? 1 : 0;  // a float D: D = A.B^T + D
}

HopperPlan::~HopperPlan() = default;

int HopperPlan::device() const {
  return impl_->rq ? impl_->rq->device() : impl_->bf16 ? impl_->bf16->device() : impl_->plan->device();
}

void HopperPlan::run(cudaStream_t stream) const {
  if (!impl_->rq && !impl_->bf16) return impl_->plan->run(stream);
  // The two converting paths launch their conversion first: the device and an earlier CUDA error
  // still pending are checked before it (the conversion's own launch check would otherwise take
  // such an error for its own; docs/contract.md).
  require_ready_to_launch(device(), kWho);
  if (impl_->rq) {
    launch_requantize_mx(&impl_->rq_a, impl_->rq_layout_a, &impl_->rq_b, impl_->rq_layout_b,
                         stream);
    impl_->rq->run(stream);
  } else {
    launch_dequantize_mx_1x32_bf16(impl_->deq_a, &impl_->deq_b, stream);
    impl_->bf16->run(stream);
  }
}

namespace {
/// The rebind of the paths that convert A and B before their GEMM: the same call but its pointers
/// (EnginePlan::rebind's rule), checked as the constructor checks it, and the conversion's two
/// operands re-pointed at the new inputs; the caller then checks the new pointers as the
/// constructor does, before anything changes.
template <class Operand>
std::pair<Operand, Operand> repointed(const MxGemm& built, const MxGemm& g, Operand a, Operand b) {
  engine::require_same_call_but_pointers(gemm_args(built), gemm_args(g), kWho);
  validate_gemm(gemm_args(g), hopper_requirements());
  a.q = g.A;
  a.scales = g.scale_a;
  b.q = g.B;
  b.scales = g.scale_b;
  return {a, b};
}
}  // namespace

void HopperPlan::rebind(const MxGemm& in) {
  require_plan_device(device(), kWho);  // before the new pointers are checked against it
  const MxGemm g = with_defaults(in);
  check_output(g, kWho);  // the constructor's rules first, named as it names them
  // D's type is in the engine's call (d_element_bytes: refused as the shape is); accumulate not.
  engine::require_same_field("accumulate", g.accumulate == impl_->accumulate, kWho);
  if (impl_->rq) {
    Impl& I = *impl_;
    const auto [a, b] = repointed(I.call, g, I.rq_a, I.rq_b);
    validate_requantize_mx(&a, I.rq_layout_a, &b, I.rq_layout_b);
    // D checked and its map re-pointed; or throws, nothing changed.
    I.rq->rebind(requant_gemm_call(g, a, b, I.rq_layout_a, I.rq_layout_b));
    I.rq_a = a;
    I.rq_b = b;
    I.call = g;
    return;
  }
  if (impl_->bf16) {
    Impl& I = *impl_;
    const auto [a, b] = repointed(I.call, g, I.deq_a, I.deq_b);
    validate_dequantize_mx_1x32_bf16(a, &b);
    GemmArgs next = I.bf16->args();
    next.D = g.D;
    I.bf16->rebind(next);  // D checked and its map re-pointed; or throws, nothing changed
    I.deq_a = a;
    I.deq_b = b;
    I.call = g;
    return;
  }
  Impl::Engine& plan = *impl_->plan;
  plan.rebind(gemm_args(g));  // same call, checked pointers, A / B / D maps; or throws
  engine::MxParams& p = plan.policy_params();
  p.sfa = g.scale_a;  // read by bulk copies from the plain pointers
  p.sfb = g.scale_b;
}

const engine::EnginePlan& HopperPlan::engine() const {
  if (impl_->rq)
    throw std::logic_error(std::string(kWho) +
                           ": the requantize_block_scaled path runs chapter 7's plan, not an "
                           "engine plan of its own (HopperPlan::block_scaled())");
  return impl_->bf16 ? *impl_->bf16 : static_cast<const engine::EnginePlan&>(*impl_->plan);
}

const ch07::Plan* HopperPlan::block_scaled() const { return impl_->rq.get(); }

std::size_t HopperPlan::workspace_bytes() const {
  return impl_->workspace.bytes() + impl_->rq_workspace.bytes();
}

std::string HopperPlan::describe() const {
  if (impl_->rq)
    return "re-quantise to chapter 7's format (" + std::to_string(workspace_bytes()) +
           " bytes of workspace; not exact), " + impl_->rq->describe();
  if (impl_->bf16)
    return "dequantize to bf16 (" + std::to_string(workspace_bytes()) + " bytes of workspace), " +
           impl_->bf16->describe();
  return impl_->plan->describe();
}

}  // namespace fp8gemm::ch09
