// The library's plans (fp8gemm.hpp): each checks the GPU's architecture, chooses the kernel
// (dispatch.cpp) and hands the call to the chapter plan it wraps with that kernel named, so the
// chapter plan validates and prepares exactly as it does alone; run() is the chapter plan's run().
// One exception: the per-tensor GEMM's FP32 D has no chapter plan (chapter 6 writes bf16), so
// PerTensorPlan builds the engine's plan itself for it, with chapter 6's rules (the same
// requirements, validated first) and the library's own kernels (src/per_tensor_f32.cu).
#include <cstdlib>
#include <stdexcept>
#include <string>

#include "fp8gemm/fp8gemm.hpp"

#include "common/launch.hpp"  // require_plan_device

namespace fp8gemm {

namespace {

/// The family's override variable, read once per plan (plans are built at setup time).
const char* env_of(DispatchFamily f) { return std::getenv(dispatch_env_var(f)); }

/// Every engine plan runs sm_90a code: refuse any other GPU up front with a message that says so
/// (the engine alone would fail later, in cudaFuncGetAttributes, with "no kernel image").
void check_hopper(const char* who) { require_hopper(current_device_arch(), who); }

/// The SMs a plan with `max_sms` may use on the current GPU (engine::usable_sms), which the
/// dispatch table is rescaled to where its sweep had another count; 0 without a GPU (the plan
/// then reports that itself, after validating the call).
int usable_sms(int max_sms) {
  const DeviceArch arch = current_device_arch();
  return arch.device >= 0 && arch.sm_count > 0 ? engine::usable_sms(max_sms, arch.sm_count) : 0;
}

/// Whether TMA can store D: 16-byte aligned, rows a multiple of 16 bytes apart (ldd a multiple
/// of 8 bf16, of 4 floats: `element_bytes`, which every caller states: a default of bf16's once
/// judged a float D by the bf16 rule, session 67).
bool tma_storable(const void* D, std::int64_t ldd, int element_bytes) {
  GemmArgs a;
  a.D = D;
  a.ldd = ldd;
  a.d_element_bytes = element_bytes;
  return engine::tma_store_compatible(a);
}

std::string with_choice(const std::string& plan, const KernelChoice& c) {
  return plan + "; kernel by " + to_string(c.rule) + ": " + c.why;
}

}  // namespace

// ---- PerTensorPlan ----

PerTensorPlan::PerTensorPlan(const PerTensorGemm& g, const PerTensorOptions& o) {
  check_hopper("fp8gemm::PerTensorPlan");
  const DispatchFamily family = o.accumulation == Accumulation::fast
                                    ? DispatchFamily::per_tensor_fast
                                    : DispatchFamily::per_tensor_promoted;
  // A grid that is not persistent (one CTA per tile) uses every SM whatever max_sms says, so the
  // choice plans for all of them, as chapter 6's own rule does (ch06::grid_max_sms).
  choice_ = choose_per_tensor(g.M, g.N, g.K, o.accumulation, tma_storable(g.D, g.args().ldd, 2),
                              o.kernel, env_of(family), usable_sms(ch06::grid_max_sms(o)));
  PerTensorOptions chosen = o;
  chosen.kernel = choice_.kernel;
  plan_ = std::make_unique<ch06::Plan>(g, chosen);
}
PerTensorPlan::PerTensorPlan(const PerTensorGemmF32& g, const PerTensorOptions& o)
    : accumulate_(g.accumulate) {
  check_hopper("fp8gemm::PerTensorPlan");
  // Chapter 6's rules for the call (the same requirements, named for this plan), validated before
  // the kernel is chosen, as chapter 6's plan does.
  const GemmArgs args = g.args();
  const GemmRequirements req = engine::engine_requirements("fp8gemm::PerTensorPlan (FP32 D)");
  validate_gemm(args, req);
  if (o.accumulation != Accumulation::fast && o.accumulation != Accumulation::promoted)
    throw std::invalid_argument(std::string(req.who) + ": Options::accumulation = " +
                                std::to_string(int(o.accumulation)) +
                                " is not an Accumulation (fast, promoted)");
  const DispatchFamily family = o.accumulation == Accumulation::fast
                                    ? DispatchFamily::per_tensor_fast
                                    : DispatchFamily::per_tensor_promoted;
  choice_ = choose_per_tensor_f32(g.M, g.N, g.K, o.accumulation,
                                  engine::tma_store_compatible(args), o.kernel, env_of(family),
                                  usable_sms(ch06::grid_max_sms(o)));
  const engine::KernelInfo& k =
      engine::find_kernel(per_tensor_f32_kernels(), choice_.kernel, "fp8gemm (per-tensor FP32 D)");
  f32_ = std::make_unique<engine::PolicyPlan<engine::GemmParams>>(k, args, req, o.max_sms,
                                                                  o.raster, o.persistent);
  f32_->policy_params().accumulate = g.accumulate ? 1 : 0;
}
PerTensorPlan::~PerTensorPlan() = default;
PerTensorPlan::PerTensorPlan(PerTensorPlan&&) noexcept = default;
PerTensorPlan& PerTensorPlan::operator=(PerTensorPlan&&) noexcept = default;
void PerTensorPlan::run(cudaStream_t stream) const {
  if (f32_)
    f32_->run(stream);
  else
    plan_->run(stream);
}
void PerTensorPlan::rebind(const PerTensorGemm& gemm) {
  engine::require_same_field("output (bf16 D; the plan writes FP32 D)", f32_ == nullptr,
                             "fp8gemm::PerTensorPlan");
  plan_->rebind(gemm);
}
void PerTensorPlan::rebind(const PerTensorGemmF32& gemm) {
  const char* who = "fp8gemm::PerTensorPlan (FP32 D)";
  engine::require_same_field("output (FP32 D; the plan writes bf16 D)", f32_ != nullptr, who);
  engine::require_same_field("accumulate", gemm.accumulate == accumulate_, who);
  f32_->rebind(gemm.args());
}
const engine::EnginePlan& PerTensorPlan::engine() const {
  return f32_ ? static_cast<const engine::EnginePlan&>(*f32_) : plan_->engine();
}
const engine::KernelInfo& PerTensorPlan::kernel() const { return engine().kernel(); }
const KernelChoice& PerTensorPlan::choice() const { return choice_; }
std::string PerTensorPlan::describe() const { return with_choice(engine().describe(), choice_); }

// ---- BlockScaledPlan ----

BlockScaledPlan::BlockScaledPlan(const BlockScaledGemm& in, const BlockScaledOptions& o) {
  check_hopper("fp8gemm::BlockScaledPlan");
  if (o.splits != 0) {
    // Split-K (opt-in): chapter 7's split-K kernels and rule. The dispatch table and
    // FP8GEMM_KERNEL_BLOCK_SCALED name whole-K kernels, so neither applies.
    plan_ = std::make_unique<ch07::Plan>(in, o);
    choice_ = {plan_->kernel().name, o.kernel.empty() ? DispatchRule::chapter : DispatchRule::option,
               "split-K, Options::splits = " + std::to_string(o.splits) +
                   (o.kernel.empty() ? ": chapter 7's split-K rule (splitk.hpp)"
                                     : ": Options::kernel")};
    return;
  }
  const BlockScaledGemm g = ch07::with_defaults(in);  // ldd = N when 0
  choice_ =
      choose_block_scaled(g.M, g.N, g.K, g.output == BlockScaledOutput::f32,
                          tma_storable(g.D, g.ldd, g.output == BlockScaledOutput::f32 ? 4 : 2),
                          o.kernel, env_of(DispatchFamily::block_scaled), usable_sms(o.max_sms),
                          g.accumulate);
  BlockScaledOptions chosen = o;
  chosen.kernel = choice_.kernel;
  plan_ = std::make_unique<ch07::Plan>(in, chosen);
}
BlockScaledPlan::~BlockScaledPlan() = default;
BlockScaledPlan::BlockScaledPlan(BlockScaledPlan&&) noexcept = default;
BlockScaledPlan& BlockScaledPlan::operator=(BlockScaledPlan&&) noexcept = default;
void BlockScaledPlan::run(cudaStream_t stream) const { plan_->run(stream); }
void BlockScaledPlan::rebind(const BlockScaledGemm& gemm) { plan_->rebind(gemm); }
const engine::KernelInfo& BlockScaledPlan::kernel() const { return plan_->kernel(); }
bool BlockScaledPlan::converts_scale_a() const { return plan_->converts_scale_a(); }
const KernelChoice& BlockScaledPlan::choice() const { return choice_; }
std::string BlockScaledPlan::describe() const { return with_choice(plan_->describe(), choice_); }

// ---- GroupedPlan, WeightGradPlan ----

GroupedPlan::GroupedPlan(const GroupedGemm& g, const GroupedOptions& o) {
  check_hopper("fp8gemm::GroupedPlan");
  plan_ = std::make_unique<ch08::Plan>(g, o);
}
GroupedPlan::~GroupedPlan() = default;
GroupedPlan::GroupedPlan(GroupedPlan&&) noexcept = default;
GroupedPlan& GroupedPlan::operator=(GroupedPlan&&) noexcept = default;
void GroupedPlan::run(cudaStream_t stream) const { plan_->run(stream); }
void GroupedPlan::run(cudaStream_t stream, int* tile_counter) const {
  plan_->run(stream, tile_counter);
}
bool GroupedPlan::takes_tile_counter() const { return plan_->takes_tile_counter(); }
void GroupedPlan::rebind(const GroupedGemm& gemm) { plan_->rebind(gemm); }
std::string GroupedPlan::describe() const { return plan_->describe(); }

WeightGradPlan::WeightGradPlan(const WeightGradGemm& g, const WeightGradOptions& o) {
  check_hopper("fp8gemm::WeightGradPlan");
  plan_ = std::make_unique<ch08::WeightGradPlan>(g, o);
}
WeightGradPlan::~WeightGradPlan() = default;
WeightGradPlan::WeightGradPlan(WeightGradPlan&&) noexcept = default;
WeightGradPlan& WeightGradPlan::operator=(WeightGradPlan&&) noexcept = default;
void WeightGradPlan::run(cudaStream_t stream) const { plan_->run(stream); }
void WeightGradPlan::rebind(const WeightGradGemm& gemm) { plan_->rebind(gemm); }
std::string WeightGradPlan::describe() const { return plan_->describe(); }

// ---- MxPlan ----

MxPlan::MxPlan(const MxGemm& in, const MxOptions& o) : max_sms_(o.max_sms) {
  engine::check_plan_options("fp8gemm::MxPlan: MxOptions", o.max_sms, engine::RasterOptions{});
  if (o.hopper_dequantize_bf16 && o.hopper_requantize_block_scaled)
    throw std::invalid_argument(
        "fp8gemm::MxPlan: MxOptions::hopper_dequantize_bf16 and hopper_requantize_block_scaled "
        "are two different Hopper paths: set one of them");
  const DeviceArch a = current_device_arch();
  // Without a GPU there is no architecture to pick, but a bad call is still named as such first
  // (the rule of every entry point: validation needs no GPU).
  if (a.device < 0) ch09::validate(in);
  arch_ = mx_kernel_arch(a, ch09::compiled_for_sm100());
  if (arch_ == MxKernelArch::blackwell_sm100a) {
    if (o.hopper_dequantize_bf16 || o.hopper_requantize_block_scaled)
      throw std::invalid_argument(
          std::string("fp8gemm::MxPlan: MxOptions::") +
          (o.hopper_dequantize_bf16 ? "hopper_dequantize_bf16" : "hopper_requantize_block_scaled") +
          " is a Hopper path; compute capability 10.0 runs chapter 9's sm_100a kernel, which "
          "scales in the tensor cores");
    if (!o.kernel.empty())
      throw std::invalid_argument("fp8gemm::MxPlan: MxOptions::kernel = '" + o.kernel +
                                  "' names a Hopper kernel; on compute capability 10.0 there is "
                                  "one MXFP8 kernel (sm_100a): leave it empty");
    choice_ = {"sm100_mxfp8_128x128x128", DispatchRule::single,
               "compute capability 10.0: chapter 9's sm_100a kernel"};
    ch09::Options bo;
    bo.max_sms = o.max_sms;
    blackwell_ = std::make_unique<ch09::Plan>(in, bo);
    gemm_ = ch09::with_defaults(in);
    return;
  }
  const MxGemm g = ch09::with_defaults(in);
  if (o.hopper_dequantize_bf16) {
    // Chapter 9's rule picks the bf16 kernel (or MxOptions::kernel names one); no table yet.
    hopper_ = std::make_unique<ch09::HopperPlan>(
        in, ch09::HopperOptions{o.kernel, ch09::HopperPath::dequantize_bf16, o.max_sms});
    choice_ = {hopper_->engine().kernel().name,
               o.kernel.empty() ? DispatchRule::chapter : DispatchRule::option,
               "MxOptions::hopper_dequantize_bf16: chapter 9's dequantize_bf16 path"};
    gemm_ = g;
    return;  // engine_ stays null: run() is the plan's (the dequantisation, then the GEMM)
  }
  if (o.hopper_requantize_block_scaled) {
    // Chapter 7's table picks the GEMM's kernel (or MxOptions::kernel names one of chapter 7's).
    hopper_ = std::make_unique<ch09::HopperPlan>(
        in, ch09::HopperOptions{o.kernel, ch09::HopperPath::requantize_block_scaled, o.max_sms});
    choice_ = {hopper_->block_scaled()->kernel().name,
               o.kernel.empty() ? DispatchRule::chapter : DispatchRule::option,
               "MxOptions::hopper_requantize_block_scaled: chapter 9's re-quantising path (not "
               "exact), chapter 7's GEMM"};
    gemm_ = g;
    return;  // engine_ stays null: run() is the plan's (the re-quantisation, then the GEMM)
  }
  if (g.output == ch09::Output::f32) {
    // A float D (since session 64): chapter 9's FP32 kernel (or MxOptions::kernel names one);
    // the table and FP8GEMM_KERNEL_MXFP8_HOPPER hold bf16 kernels only.
    hopper_ = std::make_unique<ch09::HopperPlan>(
        in, ch09::HopperOptions{o.kernel, ch09::HopperPath::promote_per_block, o.max_sms});
    choice_ = {hopper_->engine().kernel().name,
               o.kernel.empty() ? DispatchRule::chapter : DispatchRule::option,
               "Output::f32: chapter 9's FP32 kernel (the table holds bf16 kernels)"};
    engine_ = &hopper_->engine();
    gemm_ = g;
    return;
  }
  choice_ = choose_mx_hopper(g.M, g.N, g.K, tma_storable(g.D, g.ldd, 2), o.kernel,
                             env_of(DispatchFamily::mxfp8_hopper), usable_sms(o.max_sms));
  hopper_ = std::make_unique<ch09::HopperPlan>(
      in, ch09::HopperOptions{choice_.kernel, ch09::HopperPath::promote_per_block, o.max_sms});
  engine_ = &hopper_->engine();
  gemm_ = g;
}
MxPlan::~MxPlan() = default;
MxPlan::MxPlan(MxPlan&&) noexcept = default;
MxPlan& MxPlan::operator=(MxPlan&&) noexcept = default;
void MxPlan::run(cudaStream_t stream) const {
  // The Hopper path calls the engine plan directly (one virtual call, as every engine plan's
  // run() ends in): nothing between the caller and the launch but that.
  if (engine_)
    engine_->run(stream);
  else if (hopper_)
    hopper_->run(stream);  // the dequantize_bf16 or requantize path: two launches
  else
    blackwell_->run(stream);
}
void MxPlan::rebind(const MxGemm& in) {
  const MxGemm g = ch09::with_defaults(in);
  if (hopper_) {
    hopper_->rebind(g);
  } else {
    // chapter 9's sm_100a plan has no rebind of its own: the same call checked here, then a new
    // plan on the new buffers (validation, pointer checks and tensor maps again), on the device
    // of the one it replaces.
    require_plan_device(blackwell_->device(), "fp8gemm::MxPlan");
    ch09::check_output(g, "fp8gemm::MxPlan");
    // D's type and accumulate by name first (the call's rule would name d_element_bytes), then
    // the same call but its pointers: the Hopper plans' rules.
    engine::require_same_field("output", g.output == gemm_.output, "fp8gemm::MxPlan");
    engine::require_same_field("accumulate", g.accumulate == gemm_.accumulate, "fp8gemm::MxPlan");
    engine::require_same_call_but_pointers(ch09::gemm_args(gemm_), ch09::gemm_args(g),
                                           "fp8gemm::MxPlan");
    ch09::Options bo;
    bo.max_sms = max_sms_;
    blackwell_ = std::make_unique<ch09::Plan>(g, bo);
  }
  gemm_ = g;
}
std::string MxPlan::describe() const {
  return with_choice(hopper_ ? hopper_->describe() : blackwell_->describe(), choice_);
}

}  // namespace fp8gemm
