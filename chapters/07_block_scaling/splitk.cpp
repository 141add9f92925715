#include "splitk.hpp"

#include <stdexcept>
#include <string>

#include "common/launch.hpp"
#include "common/scaling.hpp"  // ceil_div

namespace fp8gemm::ch07 {

namespace {
constexpr std::int64_t kMaxUnits = std::int64_t(1) << 30;
}  // namespace

const std::vector<engine::KernelInfo>& splitk_kernels() {
  static const std::vector<engine::KernelInfo> all = [] {
    std::vector<engine::KernelInfo> v;
    add_kernels_splitk(v);
    return v;
  }();
  return all;
}

const engine::KernelInfo& splitk_kernel_named(const std::string& name) {
  return engine::find_kernel(splitk_kernels(), name, "fp8gemm::ch07_block_scaling: split-K");
}

const engine::KernelInfo& choose_splitk_kernel(std::int64_t M, std::int64_t N) {
  const bool narrow = ceil_div(M, M <= 64 ? 64 : 128) * ceil_div(N, 32) <= 80;
  if (M <= 64)
    return splitk_kernel_named(narrow ? "64x32_s14_c1x1_promoted_f32_splitk"
                                      : "64x64_s12_c1x1_promoted_f32_splitk");
  return splitk_kernel_named(narrow ? "128x32_s10_c1x1_promoted_f32_splitk"
                                    : "128x64_s8_c1x1_promoted_f32_splitk");
}

void validate_splits(int splits, std::int64_t M, std::int64_t N, std::int64_t K, int block_m,
                     int block_n, const char* who) {
  auto fail = [&](const std::string& what) {
    throw std::invalid_argument(std::string(who) + ": Options::splits = " + std::to_string(splits) +
                                " " + what);
  };
  if (splits < 0)
    fail(
        "must be >= 0 (0: no split-K; S >= 1: the K blocks of every output tile divided among "
        "S work units)");
  if (splits == 0 || M < 1 || N < 1 || K < 1) return;
  const std::int64_t k_blocks = ceil_div(K, 128);
  if (splits > k_blocks)
    fail("must be <= ceil(K / 128) = " + std::to_string(k_blocks) + " (K = " + std::to_string(K) +
         "): every split needs at least one 128-wide K block");
  const std::int64_t units = ceil_div(M, block_m) * ceil_div(N, block_n) * splits;
  if (units > kMaxUnits)
    fail("gives " + std::to_string(units) +
         " work units (tiles x splits), more than 2^30 (the scheduler's int arithmetic)");
  if (std::int64_t(splits) * M > kMaxUnits)
    fail("x M = " + std::to_string(std::int64_t(splits) * M) +
         " workspace rows, more than 2^30 (the epilogue's int row index); split-K is for small M");
}

GemmArgs SplitKPart::workspace_args(const GemmArgs& user) const {
  GemmArgs a = user;
  a.D = workspace_.data();
  a.ldd = user.N;
  a.d_element_bytes = 4;
  return a;
}

SplitKPart::SplitKPart(const engine::KernelInfo& kernel, const GemmArgs& user,
                       const GemmRequirements& req, int splits, int max_sms,
                       engine::RasterOptions raster, bool f32, bool accumulate)
    : splits_(splits), f32_(f32), accumulate_(accumulate), user_(user), req_(req) {
  validate_splits(splits, user.M, user.N, user.K, kernel.block_m, kernel.block_n, req.who);
  engine::check_plan_options(req.who, max_sms, raster);  // before the workspace exists
  if (splits < 1)
    throw std::invalid_argument(std::string(req.who) +
                                ": split-K plan with splits = " + std::to_string(splits));
  // The caller's pointers (the engine plan below checks A, B and the scales again, and the
  // workspace as its D; the caller's D is the reduce's).
  check_gemm_pointers(user, req);
  workspace_ = DeviceBuffer<float>(std::size_t(splits) * std::size_t(user.M) * std::size_t(user.N));
  const std::int64_t tiles = ceil_div(user.M, kernel.block_m) * ceil_div(user.N, kernel.block_n);
  plan_ = std::make_unique<engine::PolicyPlan<engine::SplitKParams>>(
      kernel, workspace_args(user), req, max_sms, raster, true, tiles * splits);
  engine::SplitKParams& p = plan_->policy_params();
  p.split.tiles_m = int(ceil_div(user.M, kernel.block_m));
  p.split.tiles_n = int(ceil_div(user.N, kernel.block_n));
  p.split.splits = splits;
  p.split.k_blocks = int(ceil_div(user.K, 128));
  p.split.num_units = int(tiles * splits);
  p.accumulate = 0;  // the workspace is written, never added to
  reduce_ = make_splitk_reduce(workspace_.data(), splits, user.M, user.N, const_cast<void*>(user.D),
                               user.ldd, f32, accumulate);
}

void SplitKPart::run(cudaStream_t stream) const {
  plan_->run(stream);
  launch_splitk_reduce(reduce_, stream);
}

void SplitKPart::rebind(const GemmArgs& next) {
  const char* who = req_.who;
  require_plan_device(plan_->device(), who);  // before D is checked against it
  engine::require_same_call_but_pointers(user_, next, who);
  validate_gemm(next, req_);  // D: non-null, aligned, overlapping no input
  if (next.D != user_.D) require_device_accessible(next.D, gemm_extents(next).d, who, "D");
  const SplitKReduceLaunch reduce =
      make_splitk_reduce(workspace_.data(), splits_, next.M, next.N, const_cast<void*>(next.D),
                         next.ldd, f32_, accumulate_);
  plan_->rebind(workspace_args(next));  // A, B, scales (the workspace stays); or throws
  plan_->policy_params().accumulate = 0;
  reduce_ = reduce;
  user_ = next;
}

std::string SplitKPart::describe() const {
  return plan_->describe() + ", split-K S = " + std::to_string(splits_) + " (" +
         std::to_string(plan_->policy_params().split.num_units) + " units), FP32 workspace " +
         std::to_string(workspace_.bytes() >> 10) + " KiB + reduce";
}

}  // namespace fp8gemm::ch07
