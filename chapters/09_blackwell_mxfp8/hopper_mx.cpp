#include "hopper_mx.hpp"

#include <stdexcept>
#include <string>
#include <vector>

#include "common/engine/params.hpp"

namespace fp8gemm::ch09 {

namespace {
constexpr const char* kWho = "fp8gemm::ch09_hopper_mxfp8";

GemmRequirements hopper_requirements() {
  GemmRequirements r = requirements();  // the MXFP8 call's rules (mx_gemm.hpp)
  r.who = kWho;
  r.k_reason =
      "MXFP8 has one UE8M0 scale per 32 K elements (each wgmma k32 step is one block); "
      "pad K with zeros to a multiple of 32";
  return r;
}

/// The default: the first kernel with the TMA-store epilogue when D allows it, else the first with
/// the registers epilogue.
const engine::KernelInfo& default_kernel(bool tma_store_ok) {
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
}  // namespace

struct HopperPlan::Impl {
  using Engine = engine::PolicyPlan<engine::MxParams>;
  std::unique_ptr<Engine> plan;
};

HopperPlan::HopperPlan(const MxGemm& in, const HopperOptions& o) : impl_(std::make_unique<Impl>()) {
  const MxGemm g = with_defaults(in);
  const GemmArgs args = gemm_args(g);
  const GemmRequirements req = hopper_requirements();
  validate_gemm(args, req);
  const engine::KernelInfo& k = o.kernel.empty()
                                    ? default_kernel(engine::tma_store_compatible(args))
                                    : find_hopper_kernel(o.kernel);
  impl_->plan = std::make_unique<Impl::Engine>(k, args, req, 0, engine::RasterOptions{}, true);
  engine::MxParams& p = impl_->plan->policy_params();
  p.sfa = g.scale_a;
  p.sfb = g.scale_b;
  p.sf_tiles_k = int(ceil_div(g.K, 128));
  p.sf_tiles_n = int(ceil_div(g.N, 128));
}

HopperPlan::~HopperPlan() = default;

void HopperPlan::run(cudaStream_t stream) const { impl_->plan->run(stream); }

void HopperPlan::rebind(const MxGemm& in) {
  const MxGemm g = with_defaults(in);
  Impl::Engine& plan = *impl_->plan;
  plan.rebind(gemm_args(g));  // same call, checked pointers, A / B / D maps; or throws
  engine::MxParams& p = plan.policy_params();
  p.sfa = g.scale_a;  // read by bulk copies from the plain pointers
  p.sfb = g.scale_b;
}

const engine::EnginePlan& HopperPlan::engine() const { return *impl_->plan; }

std::string HopperPlan::describe() const { return impl_->plan->describe(); }

}  // namespace fp8gemm::ch09
