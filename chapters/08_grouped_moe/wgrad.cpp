#include "wgrad.hpp"

#include <cuda.h>

#include <algorithm>
#include <cstdint>
#include <mutex>
#include <stdexcept>
#include <string>
#include <utility>

#include "check_offsets.hpp"
#include "common/cuda.hpp"
#include "common/engine/params.hpp"
#include "common/launch.hpp"
#include "common/scaling.hpp"  // ceil_div
#include "common/tensor_map.hpp"

namespace fp8gemm::ch08 {

namespace {
constexpr const char* kWho = "fp8gemm::ch08_weight_grad";
[[noreturn]] void fail(const std::string& what) {
  throw std::invalid_argument(std::string(kWho) + ": " + what);
}
/// Bytes per element of dB.
int d_bytes(const WeightGradGemm& g) { return g.output == WeightGradOutput::bf16 ? 2 : 4; }

GemmRequirements wgrad_requirements() {
  GemmRequirements req = engine::engine_requirements(kWho);
  req.recipe_a = ScaleRecipe::group_1x128;
  req.recipe_b = ScaleRecipe::group_1x128;
  req.k_reason = " (token_capacity: the row stride of dD_t and A_t must be a multiple of 16 bytes for TMA)";
  return req;
}

/// The scale tensor of a transposed operand (rows x token_capacity): mn-major, ld % 4 == 0, big
/// enough; `name` for the message.
void check_scale_layout(const GroupScaleLayout& l, std::int64_t rows, std::int64_t tokens,
                        const char* name) {
  if (l.major != ScaleMajor::mn || l.ld % 4 != 0)
    fail(std::string(name) + " must be mn-major ([token blocks][ld], ld a multiple of 4: the kernel "
         "loads a row of it per token block by TMA); " + fp8gemm::describe(l) + " given");
  if (l.ld > kMaxTmaScaleLd)  // reachable where token_capacity <= 128 (one token block)
    fail(std::string(name) + ": ld = " + std::to_string(l.ld) + " must be <= " +
         std::to_string(kMaxTmaScaleLd) + " (read by TMA, whose row stride, ld x 4 bytes, must be " +
         "below 2^40)");
  if (!l.ld_ok(rows, tokens))
    fail(std::string(name) + ": " + fp8gemm::describe(l) + " is too small for " +
         std::to_string(rows) + " rows");
}

/// The call with its defaults filled in (leading dimensions, scale layouts), after the checks
/// that need no GPU and come before them.
WeightGradGemm checked_with_defaults(const WeightGradGemm& in) {
  WeightGradGemm g = in;
  if (g.groups < 1) fail("groups = " + std::to_string(g.groups) + " must be >= 1");
  if (g.offsets == nullptr) fail("offsets is a null pointer (G + 1 int32 token offsets on the device)");
  // The kernel reads offsets as int32 and the two scale tensors by TMA: a misaligned address
  // would fault there (cudaErrorMisalignedAddress, sticky), so it is refused here, constructor
  // and rebind alike.
  if (const auto off = reinterpret_cast<std::uintptr_t>(g.offsets) % 4; off != 0)
    fail("offsets must be 4-byte aligned (int32 on the device); its address % 4 = " +
         std::to_string(off));
  for (const auto& [name, ptr] : {std::pair<const char*, const float*>{"scale_dD_t", g.scale_dD_t},
                                  {"scale_A_t", g.scale_A_t}})
    if (const auto off = reinterpret_cast<std::uintptr_t>(ptr) % 16; off != 0)
      fail(std::string(name) + " must be 16-byte aligned (the kernel reads it by TMA); its "
           "address % 16 = " + std::to_string(off));
  // N bounded before N x G is formed (G an int, so the product fits 64 bits); K and the tokens
  // are bounded by validate_gemm, as the engine's N and K.
  if (const std::int64_t max_dim = wgrad_requirements().max_dim; g.N > max_dim)
    fail("N = " + std::to_string(g.N) + " must be <= " + std::to_string(max_dim));
  if (g.token_capacity < 1)
    fail("token_capacity = " + std::to_string(g.token_capacity) +
         " must be >= 1 (the columns of dD_t and A_t; max_padded_tokens(T, G))");
  if (g.output != WeightGradOutput::f32 && g.output != WeightGradOutput::bf16)
    fail("output = " + std::to_string(int(g.output)) + " is not a WeightGradOutput (f32, bf16)");
  if (g.accumulate && g.output != WeightGradOutput::f32)
    fail("accumulate needs FP32 dB (output = f32): a bf16 dB would be rounded on every "
         "accumulation; accumulate into an FP32 dB, or write bf16 without accumulate");
  if (g.ld_dD_t == 0) g.ld_dD_t = g.token_capacity;
  if (g.ld_A_t == 0) g.ld_A_t = g.token_capacity;
  if (g.lddb == 0) g.lddb = g.K;
  // ld = 0 fills in the mn-major ld only: a k-major (or invalid) major with ld = 0 is refused by
  // check_scale_layout, not read as mn-major (as it was until session 70).
  if (g.scale_dD_t_layout.ld == 0 && g.N >= 1 && g.scale_dD_t_layout.major == ScaleMajor::mn)
    g.scale_dD_t_layout = GroupScaleLayout::mn_major_tma_aligned(g.N);
  if (g.scale_A_t_layout.ld == 0 && g.K >= 1 && g.scale_A_t_layout.major == ScaleMajor::mn)
    g.scale_A_t_layout = GroupScaleLayout::mn_major_tma_aligned(g.K);
  if (g.N >= 1) check_scale_layout(g.scale_dD_t_layout, g.N, g.token_capacity, "scale_dD_t");
  if (g.K >= 1) check_scale_layout(g.scale_A_t_layout, g.K, g.token_capacity, "scale_A_t");
  return g;
}

/// Runs `f` (the engine's checks of engine_args(), or its plan's construction or rebind) and adds
/// to any std::invalid_argument it throws what the engine's names mean here: its messages name
/// A, B, D, M, N and K, which a caller of this entry point knows as dD_t, A_t, dB, N, K and
/// token_capacity.
template <class F>
decltype(auto) in_wgrad_terms(F&& f) {
  try {
    return f();
  } catch (const std::invalid_argument& e) {
    throw std::invalid_argument(
        std::string(e.what()) +
        " [in the engine's terms: A = dD_t (N x token_capacity), B = A_t (K x token_capacity), "
        "D = dB (G x N x K), M = N, N = K, K = token_capacity]");
  }
}

/// The engine's view of one group: "M" = N rows of dD_t, "N" = K rows of A_t, "K" = the tokens.
GemmArgs engine_args(const WeightGradGemm& g) {
  GemmArgs args{.M = g.N, .N = g.K, .K = g.token_capacity, .A = g.dD_t, .lda = g.ld_dD_t,
                .B = g.A_t, .ldb = g.ld_A_t, .D = g.dB, .ldd = g.lddb, .scale_a = g.scale_dD_t,
                .scale_b = g.scale_A_t, .recipe_a = ScaleRecipe::group_1x128,
                .recipe_b = ScaleRecipe::group_1x128};
  args.d_element_bytes = d_bytes(g);
  // dB is G matrices of N rows, lddb apart, one after another: the engine checks their extent
  // and memory, and D against the inputs over all of them (validate.hpp, d_rows).
  args.d_rows = g.N * g.groups;
  if (g.N >= 1 && g.K >= 1) {
    args.scale_a_extent = scale_extent(g.scale_dD_t_layout, g.N, g.token_capacity);
    args.scale_b_extent = scale_extent(g.scale_A_t_layout, g.K, g.token_capacity);
  }
  return args;
}


/// dB suits a TMA epilogue: 16-byte aligned, rows a multiple of 16 bytes apart.
bool tma_compatible(const WeightGradGemm& g) {
  return engine::tma_store_compatible(engine_args(g));
}

/// dB's 3-D map (K, N, G innermost first), the box of the kernel's staging unit: 64 rows x 32
/// floats (tma_store_f32) or 64 rows x epi_cols bf16 (tma_store), with its swizzle
/// (kgrouped.cuh).
CUtensorMap db_map(const WeightGradGemm& g, const engine::KernelInfo& k) {
  const bool f32 = g.output == WeightGradOutput::f32;
  return make_tensor_map_3d(
      g.dB, f32 ? CU_TENSOR_MAP_DATA_TYPE_FLOAT32 : CU_TENSOR_MAP_DATA_TYPE_BFLOAT16,
      std::uint32_t(d_bytes(g)), std::uint64_t(g.groups), std::uint64_t(g.N), std::uint64_t(g.K),
      std::uint64_t(g.lddb), std::uint64_t(g.N * g.lddb), 64, std::uint32_t(k.epi_cols),
      swizzle_of_span(k.epi_swizzle_bytes));
}

}  // namespace

struct WeightGradPlan::Impl {
  using Engine = engine::PolicyPlan<engine::KGroupedParams>;
  std::unique_ptr<Engine> plan;
  WeightGradGemm gemm;  ///< the call the plan is bound to (defaults filled in)
  /// The checking mode (WeightGradOptions::check_offsets): the device record its check kernel
  /// writes, and one check at a time (run() may be called from several threads).
  bool check = false;
  DeviceBuffer<GroupViolation> verdict;
  mutable std::mutex check_mutex;
  void check_offsets(cudaStream_t stream) const;
};

void WeightGradPlan::Impl::check_offsets(cudaStream_t stream) const {
  require_checkable_stream(kWho, "WeightGradOptions::check_offsets", stream);
  std::lock_guard<std::mutex> lock(check_mutex);  // until the verdict is read back
  launch_wgrad_check(gemm.offsets, gemm.groups, gemm.token_capacity, verdict.data(), stream);
  GroupViolation v;
  FP8GEMM_CUDA_CHECK(cudaMemcpyAsync(&v, verdict.data(), sizeof v, cudaMemcpyDeviceToHost, stream));
  FP8GEMM_CUDA_CHECK(cudaStreamSynchronize(stream));
  if (v.rule != int(GroupRule::none))
    throw std::runtime_error(describe_wgrad_violation(v, gemm.groups));
}

const engine::KernelInfo& default_wgrad_kernel(std::int64_t N, std::int64_t K, int groups, int sms,
                                               bool tma_ok, WeightGradOutput output) {
  const auto named = [](const char* name) -> const engine::KernelInfo& {
    return engine::find_kernel(wgrad_kernels(), name, kWho);
  };
  const bool f32 = output == WeightGradOutput::f32;
  if (!tma_ok) return named(f32 ? "128x192_s5_c1x1_promoted_f32" : "128x192_s5_c1x1_promoted_reg");
  // FP32 dB: the two-staging-unit kernels, whose default is the early wave (session 30), for one
  // group as for several since session 31: with one group of 4096 tokens (Fp8Linear's FP32 dW,
  // i.e. FP32 weights) 128 x 192 s4 b2 took 0.961-0.964x the time of the one-unit 128 x 192 s5
  // b1 and 128 x 256 s3 b2 0.940-0.944x that of 128 x 256 s4 b1 at 4096 x 7168, 7168 x 2048 and
  // 2112 x 7168 (plots/data/h200/session31/call1_d00cfce/, bench/wgrad_vs_cublaslt.py), and this
  // rule's pick 1.014-1.060x the one-unit rule's in call 2's two sweeps of eight one-group cases
  // (geomean 1.039; chapter 8's NOTEBOOK.md, "Session 31"); with 32 groups, 128 x 192 s4 b2
  // 1.00-1.07x the one-unit 128 x 256 (session 30, calls 3 and 4).
  // bf16 dB likewise since session 31 (`Fp8Linear`'s dW for bf16 weights): 128 x 192 s4 b2 ran
  // 0.990-1.105x the TFLOPS of the one-unit s5 b1 in call 3's two sweeps of one group (geomean
  // 1.020 over 16) and 1.005-1.022x in bench_torch's sweep of the layer's dW; 128 x 256 s3 b2
  // 0.952-1.055x s4 b1 (geomean 1.004) and 1.001-1.020x: level within the runs' spread, kept
  // so that the plan's two bf16 kernels are the pair the README's Fp8Linear tables measured.
  const engine::KernelInfo& wide =
      named(f32 ? "128x256_s3_c1x1_promoted_f32_tma_b2" : "128x256_s3_c1x1_promoted_tma_b2");
  const engine::KernelInfo& narrow =
      named(f32 ? "128x192_s4_c1x1_promoted_f32_tma_b2" : "128x192_s4_c1x1_promoted_tma_b2");
  const auto efficiency = [&](const engine::KernelInfo& k) {
    const std::int64_t tm = ceil_div(N, k.block_m), tn = ceil_div(K, k.block_n);
    const double covered = double(N * K) / double(tm * k.block_m * tn * k.block_n);
    const std::int64_t tiles = tm * tn * std::max(groups, 1);
    const std::int64_t slots = ceil_div(tiles, std::max(sms, 1)) * std::max(sms, 1);
    return covered * double(tiles) / double(slots);
  };
  // The premium: bf16 dB counts 128 x 192 4 % cheaper per covered element since session 30 (the
  // early wave gained 128 x 192 6 % and 128 x 256 3 %: per element of covered dB 128 x 192 then
  // ran 1.04-1.07x 128 x 256 in both runs of the six Fp8Linear shapes,
  // plots/data/h200/session30/call1_594c9a4/; before, session 9's bf16 epilogue had made the two
  // level, plots/data/h200/ch10/torch*/bench_torch_eb5ee4a*.log). FP32 dB likewise: of several
  // groups since session 30 (per covered element 128 x 192 s4 b2 ran 1.12-1.16x the one-unit
  // 128 x 256 and 1.05-1.08x a two-unit one in call 4's interleaved run: 775 and 798 TFLOPS
  // against 703 / 751 and 711 / 766, at 0.982 and 0.965 of dB covered against 0.996), of one
  // group since session 31 (at 4096 x 7168, 0.905 against 0.970 covered, the two-unit kernels
  // measured level, 266.6 against 264.4 us: about 6 % per covered element for 128 x 192). Until
  // then one group of FP32 dB counted 128 x 256 2 % cheaper (session 7, the one-unit kernels).
  const double wide_premium = 1.0 / 1.04;
  return efficiency(wide) * wide_premium >= efficiency(narrow) ? wide : narrow;
}

WeightGradPlan::WeightGradPlan(const WeightGradGemm& in, const WeightGradOptions& o)
    : impl_(std::make_unique<Impl>()) {
  engine::check_plan_options(kWho, o.max_sms, engine::RasterOptions{});
  const WeightGradGemm g = checked_with_defaults(in);
  impl_->gemm = g;
  const GemmArgs args = engine_args(g);
  const GemmRequirements req = wgrad_requirements();
  if (g.N * g.groups > req.max_dim)  // before validate_gemm, whose message names d_rows
    fail("G x N = " + std::to_string(g.N * g.groups) + " rows of dB exceed " +
         std::to_string(req.max_dim));
  in_wgrad_terms([&] {
    validate_gemm(args, req);
    validate_disjoint_from_d(args, g.offsets, std::size_t(g.groups + 1) * 4, "offsets", req);
  });
  // The scheduler's 2^30 tiles, first for the kernel with the fewest tiles (pure C++), so a call
  // no kernel can take is refused before the default choice asks the GPU for its SM count.
  const auto work_tiles_of = [&](const engine::KernelInfo& k) {
    return ceil_div(ceil_div(g.N, k.block_m), k.cluster_m) * k.cluster_m * ceil_div(g.K, k.block_n) *
           g.groups;
  };
  const auto refuse_tiles = [](std::int64_t tiles) {
    fail("G x tiles = " + std::to_string(tiles) +
         " tiles, more than 2^30 (the scheduler's arithmetic)");
  };
  std::int64_t fewest_tiles = INT64_MAX;
  for (const auto& k : wgrad_kernels()) fewest_tiles = std::min(fewest_tiles, work_tiles_of(k));
  if (fewest_tiles > (std::int64_t(1) << 30)) refuse_tiles(fewest_tiles);
  const bool tma_ok = tma_compatible(g);
  const engine::KernelInfo& k =
      o.kernel.empty() ? default_wgrad_kernel(g.N, g.K, g.groups,
                                              engine::usable_sms(o.max_sms, current_device_sm_count()),
                                              tma_ok,
                                              g.output)
                       : engine::find_kernel(wgrad_kernels(), o.kernel, kWho);
  const bool f32 = g.output == WeightGradOutput::f32;
  if (wgrad_output_of(k) != g.output)
    fail("kernel " + k.name + " writes " + (f32 ? "bf16" : "FP32") + " dB, the call's output is " +
         (f32 ? "f32" : "bf16") + " (kernels writing FP32 have _f32 in their names)");
  const bool tma_d = engine::stores_by_tma(k.epilogue);
  if (tma_d && !tma_ok)
    fail("kernel " + k.name + " stores dB with TMA, which needs dB 16-byte aligned and its rows a "
         "multiple of 16 bytes apart (lddb a multiple of " + std::to_string(16 / d_bytes(g)) +
         "); got lddb = " + std::to_string(g.lddb) +
         " (pick a kernel with the registers epilogue, names ending _f32 or _reg, for this dB)");
  // The persistent grid is sized for the tiles of all groups (the plan alone would count one).
  // With a 2 x 1 cluster a unit is a pair of row tiles (the last one's partner may lie past N).
  const std::int64_t tiles_m = ceil_div(g.N, k.block_m), tiles_n = ceil_div(g.K, k.block_n);
  const std::int64_t work_tiles = work_tiles_of(k);
  if (work_tiles > (std::int64_t(1) << 30)) refuse_tiles(work_tiles);
  impl_->plan = in_wgrad_terms([&] {
    return std::make_unique<Impl::Engine>(k, args, req, o.max_sms, engine::RasterOptions{}, true,
                                          work_tiles);
  });
  require_device_accessible(g.offsets, std::size_t(g.groups + 1) * 4, kWho, "offsets");
  if (o.check_offsets) {
    impl_->check = true;
    impl_->verdict = DeviceBuffer<GroupViolation>(1);
  }

  engine::KGroupedParams& p = impl_->plan->policy_params();
  const std::int64_t token_blocks = ceil_div(g.token_capacity, 128);
  p.map_sfa = make_tensor_map_2d(g.scale_dD_t, CU_TENSOR_MAP_DATA_TYPE_FLOAT32, 4,
                                 std::uint64_t(token_blocks), std::uint64_t(g.N),
                                 std::uint64_t(g.scale_dD_t_layout.ld), 1,
                                 std::uint32_t(k.block_m), CU_TENSOR_MAP_SWIZZLE_NONE);
  p.map_sfb = make_tensor_map_2d(g.scale_A_t, CU_TENSOR_MAP_DATA_TYPE_FLOAT32, 4,
                                 std::uint64_t(token_blocks), std::uint64_t(g.K),
                                 std::uint64_t(g.scale_A_t_layout.ld), 1,
                                 std::uint32_t(k.block_n), CU_TENSOR_MAP_SWIZZLE_NONE);
  if (tma_d) p.map_d = db_map(g, k);
  p.offsets = g.offsets;
  p.groups = g.groups;
  p.tiles_m = int(tiles_m);
  p.tiles_n = int(tiles_n);
  p.accumulate = g.accumulate ? 1 : 0;
  p.skip_empty = g.accumulate ? 1 : 0;
}

WeightGradPlan::~WeightGradPlan() = default;

void WeightGradPlan::rebind(const WeightGradGemm& in) {
  require_plan_device(impl_->plan->device(), kWho);  // before the new pointers are checked
  Impl& I = *impl_;
  const WeightGradGemm g = checked_with_defaults(in);
  const WeightGradGemm& was = I.gemm;
  auto same = [](const char* what, bool ok) { engine::require_same_field(what, ok, kWho); };
  same("groups", g.groups == was.groups);
  same("accumulate", g.accumulate == was.accumulate);
  same("output", g.output == was.output);
  same("scale_dD_t_layout", g.scale_dD_t_layout.ld == was.scale_dD_t_layout.ld);
  same("scale_A_t_layout", g.scale_A_t_layout.ld == was.scale_A_t_layout.ld);
  const GemmArgs args = engine_args(g);
  engine::require_same_call_but_pointers(I.plan->args(), args, kWho);
  in_wgrad_terms([&] {
    validate_gemm(args, wgrad_requirements());  // non-null and aligned before any CUDA query
    validate_disjoint_from_d(args, g.offsets, std::size_t(g.groups + 1) * 4, "offsets",
                             wgrad_requirements());
  });
  // What the engine does not check: the offsets.
  if (g.offsets != was.offsets)
    require_device_accessible(g.offsets, std::size_t(g.groups + 1) * 4, kWho, "offsets");
  engine::KGroupedParams& p = I.plan->policy_params();
  const bool tma_d = engine::stores_by_tma(I.plan->kernel().epilogue);
  if (tma_d && g.dB != was.dB && !tma_compatible(g))
    fail("rebind: dB must be 16-byte aligned for this plan's kernel " + I.plan->kernel().name +
         " (it stores dB with TMA); its address % 16 = " +
         std::to_string(reinterpret_cast<std::uintptr_t>(g.dB) % 16) +
         "; build a plan for this dB (it gets a registers-epilogue kernel)");
  CUtensorMap map_sfa = p.map_sfa, map_sfb = p.map_sfb, map_d = p.map_d;
  if (tma_d && g.dB != was.dB) replace_tensor_map_address(map_d, g.dB);
  if (g.scale_dD_t != was.scale_dD_t) replace_tensor_map_address(map_sfa, g.scale_dD_t);
  if (g.scale_A_t != was.scale_A_t) replace_tensor_map_address(map_sfb, g.scale_A_t);
  // dD_t, A_t, dB (all G matrices), scale pointers checked; dD_t, A_t re-pointed
  in_wgrad_terms([&] { I.plan->rebind(args); });
  p.map_sfa = map_sfa;
  p.map_sfb = map_sfb;
  p.map_d = map_d;
  p.offsets = g.offsets;
  I.gemm = g;
}

void WeightGradPlan::run(cudaStream_t stream) const {
  if (impl_->check) {  // the check's launch comes first: the device check before it
    require_plan_device(impl_->plan->device(), kWho);
    impl_->check_offsets(stream);
  }
  impl_->plan->run(stream);
}

std::string WeightGradPlan::describe() const {
  return impl_->plan->describe() + (impl_->check ? ", checking offsets" : "");
}
int WeightGradPlan::grid_ctas() const { return impl_->plan->grid_ctas(); }
const engine::KernelInfo& WeightGradPlan::kernel() const { return impl_->plan->kernel(); }

}  // namespace fp8gemm::ch08
