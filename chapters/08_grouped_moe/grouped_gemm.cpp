#include "grouped_gemm.hpp"

#include <cuda.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <mutex>
#include <stdexcept>
#include <string>

#include "check_offsets.hpp"
#include "common/cuda.hpp"
#include "common/engine/params.hpp"
#include "common/launch.hpp"
#include "common/ragged_rows.hpp"
#include "common/scaling.hpp"  // ceil_div
#include "common/tensor_map.hpp"

namespace fp8gemm::ch08 {

namespace {
constexpr const char* kWho = "fp8gemm::ch08_grouped_moe";
[[noreturn]] void fail(const std::string& what) {
  throw std::invalid_argument(std::string(kWho) + ": " + what);
}
/// The contiguous rule's tile below 1024 rows per group, static; its _dyn twin is the counter
/// schedule's kernel (default_kernel, counter_schedule_kernel).
constexpr const char* kSmallGroupsKernel = "128x256_s4_c1x1_promoted_tma_b1";
/// The float D's kernels (default_kernel; kernels_grouped_f32.cu has the FP32 kernels): by TMA
/// where D allows it, else from registers. Timed on an H100 only (chapter 8's NOTEBOOK,
/// "Session 64"): the fastest FP32 kernels at issue 10's balanced and masked cases.
constexpr const char* kFloatTmaKernel = "128x256_s4_c1x1_promoted_f32_tma_b1";
constexpr const char* kFloatKernel = "128x256_s4_c1x1_promoted_f32";
}  // namespace

/// The default kernel. Without a TMA-compatible D (16-byte aligned, rows 16 bytes apart, at most
/// 2^30 rows) the first registers-epilogue kernel of kernels(). Otherwise the rule measured on the
/// H200 in session 12 (README, "The unrolled loop"; both kernel orders, 12 cases): what the plan
/// knows of the group sizes is their mean (the sizes themselves are device data): a contiguous
/// call with at least 1024 rows per group on average, chapter 7's table tile 256 x 128 in 1 x 2
/// clusters (balanced 4 x 8192 and 8 x 4096 rows, skewed 65536 tokens over 32 experts: 1039-1169
/// TFLOPS, 1.02-1.10x 128 x 256); fewer (skewed 8192 tokens over 32, 256 on average), 128 x 256,
/// whose 128-row tiles waste less at each expert's end (867-899 against 722-744); masked with
/// M_max >= 256, 256 x 128 without a cluster (the fastest at all six masked cases, 1.02-1.09x
/// 128 x 256; at K <= 4096 and M_max >= 1024 with 3 stages and 4 staging buffers, sessions 35
/// and 37),
/// below that 128 x 256 (not measured).
/// Session 16 measured tiles cut to 7/8 of the width for masked calls whose last round leaves
/// SMs idle (256 x 112 and 128 x 224 at N = 7168, kernels_grouped_narrow.cu): no faster than
/// these (README, "Session 16"), so the rule is unchanged. Session 23: every kernel runs the early
/// first wave (each tile's first partial sum under the epilogue of the tile before), except the
/// masked calls' with K <= 2048, which take the same tile without it (README, "Session 23").
const engine::KernelInfo& default_kernel(const GroupedGemm& g, bool tma_store_ok) {
  // A float D (session 64): the 128 x 256 FP32 kernel storing by TMA through D's ragged-rows
  // view where D allows it (16-byte aligned, ldd % 4 == 0), else its twin from registers (each
  // group's rows cut at the group's end as the bf16 registers kernels cut them). Measured on an
  // H100 only (chapter 8's NOTEBOOK, "Session 64"); no H200 timing.
  if (g.output == Output::f32)
    return engine::find_kernel(kernels(), tma_store_ok ? kFloatTmaKernel : kFloatKernel, kWho);
  if (!tma_store_ok) {
    for (const auto& k : kernels())
      if (k.epilogue == engine::EpilogueKind::registers) return k;
    return kernels().front();
  }
  const char* name = kSmallGroupsKernel;
  if (g.layout == Layout::masked) {
    // Without the early first wave at K <= 2048 (session 23: with it 1.9-3.5% more time on the
    // three masked N = 7168, K = 2048 cases in three runs, 1.1% less at K = 7168); there, from
    // M_max = 1024 rows (each expert's B serving four or more row tiles), 3 stages with a staging
    // buffer per store unit (session 35: 0.952-0.979x the time at N = 7168, K = 2048 and 1024,
    // G = 1-4, two runs each; 1.002-1.003x at N = 4096, one partial round of tiles; 1.016x and
    // 1.06x at M_max = 512 and 256, where four experts' B are read per row of tiles). Session 37
    // extended the 3-stage tile to K <= 4096 (session 36's sixteen calls with M_max >= 1024, four
    // runs: 0.974-1.003x the early-wave default's time at K = 4096, 0.980-1.010x at K = 7168).
    if (g.rows >= 256)
      name = g.K <= 4096 && g.rows >= 1024 ? "256x128_s3_c1x1_promoted_tma_b4"
             : g.K > 2048                  ? "256x128_s4_c1x1_promoted_tma_b1"
                                           : "256x128_s4_c1x1_promoted_tma_b1_noew";
  } else if (g.rows >= std::int64_t(1024) * g.groups) {
    name = "256x128_s3_c1x2_promoted_tma_b4";
  }
  return engine::find_kernel(kernels(), name, kWho);
}

/// The kernel a Plan with Options::counter_schedule runs (the caller's counter, contiguous calls):
/// the counter kernel 128x256_s4_c1x1_promoted_tma_b1_dyn where default_kernel() picks its static
/// twin (fewer than 1024 rows per group on average; session 33: 0.952x and 0.980x the static
/// kernel's time on the skewed 8192-token cases), and also, for K >= 4096, up to 2048 rows per
/// group, where default_kernel() picks 256 x 128 in 1 x 2 clusters: on the peers' skewed groups
/// (N = 4096 and 7168, 1024 and 1536 rows per group) the counter kernel took 0.965-0.999x that
/// default's time at K = 4096 and 7168, 0.977-1.017x at K = 3072 (mixed), 0.996-1.026x at
/// K = 2048, and 1.003-1.032x at 2048 rows (README, "Session 35"). Elsewhere default_kernel()'s
/// pick.
const engine::KernelInfo& counter_schedule_kernel(const GroupedGemm& g, bool tma_store_ok) {
  const engine::KernelInfo& fixed = default_kernel(g, tma_store_ok);
  if (g.layout != Layout::contiguous || g.output != Output::bf16 || !tma_store_ok) return fixed;
  const bool long_k = g.K >= 4096 && g.rows < std::int64_t(2048) * g.groups;
  const std::string base = long_k ? std::string(kSmallGroupsKernel) : fixed.name;
  for (const auto& twin : kernels())
    if (twin.dynamic_schedule && twin.name == base + "_dyn") return twin;
  return fixed;
}

GemmRequirements requirements() {
  GemmRequirements r = engine::engine_requirements(kWho);
  r.recipe_a = ScaleRecipe::group_1x128;
  r.recipe_b = ScaleRecipe::block_128x128;
  return r;
}

struct Plan::Impl {
  using Engine = engine::PolicyPlan<engine::GroupedParams>;
  std::unique_ptr<Engine> plan;
  GroupedGemm gemm;  ///< the call the plan is bound to (defaults filled in)
  /// A stream-K kernel's workspace (common/engine/stream_k.cuh): a partial tile per CTA of the
  /// grid and a flag per CTA and consumer warpgroup, the flags zeroed here once (each launch
  /// leaves them zero). Shared by every run() of the plan: two at once on different streams
  /// would mix their partials (give each stream its own plan).
  DeviceBuffer<float> sk_partials;
  DeviceBuffer<int> sk_flags;
  /// A dynamically scheduled kernel's tile counter (common/engine/grouped.cuh,
  /// GroupedDynamicScheduler), zeroed here once (each launch leaves it zero). Shared by every
  /// run() of the plan, as the stream-K workspace is: one stream per plan.
  DeviceBuffer<int> tile_counter;
  /// Options::counter_schedule took a _dyn kernel: no counter here, run(stream, tile_counter)
  /// brings one per run.
  bool caller_counter = false;
  /// The last tile counter run(stream, tile_counter) found to be device memory: a new one is
  /// checked once (a driver query), the same one again costs nothing.
  mutable std::atomic<const int*> checked_counter{nullptr};

  // Checking mode: the description and its rule bound (total rows or M_max), and the device
  // record the check kernel writes its verdict to.
  bool check = false;
  Layout layout = Layout::contiguous;
  const int* groups_desc = nullptr;
  int groups = 0, bound = 0;
  DeviceBuffer<GroupViolation> verdict;
  /// One check at a time: the verdict record is the plan's, and run() may be called from several
  /// threads at once.
  mutable std::mutex check_mutex;

  /// The checking mode (Options::check_offsets) before a launch: the group description and, for a
  /// plan that draws its tiles from the caller's counter, that counter (it must read {0, 0}).
  void check_groups(cudaStream_t stream, const int* tile_counter = nullptr) const;
};

void Plan::Impl::check_groups(cudaStream_t stream, const int* tile_counter) const {
  require_checkable_stream(kWho, "Options::check_offsets", stream);
  std::lock_guard<std::mutex> lock(check_mutex);  // until the verdict is read back
  launch_group_check(layout, groups_desc, groups, bound, verdict.data(), stream);
  GroupViolation v;
  FP8GEMM_CUDA_CHECK(cudaMemcpyAsync(&v, verdict.data(), sizeof v, cudaMemcpyDeviceToHost, stream));
  // The counter as this launch would find it (stream order): a count left from elsewhere (memory
  // never zeroed, a run shared with another stream) would make the kernel skip tiles silently.
  int counter[2] = {0, 0};
  if (tile_counter != nullptr)
    FP8GEMM_CUDA_CHECK(cudaMemcpyAsync(counter, tile_counter, sizeof counter,
                                       cudaMemcpyDeviceToHost, stream));
  FP8GEMM_CUDA_CHECK(cudaStreamSynchronize(stream));
  if (v.rule != int(GroupRule::none))
    throw std::runtime_error(describe_group_violation(v, layout, groups));
  if (counter[0] != 0 || counter[1] != 0)
    throw std::runtime_error(
        std::string(kWho) + ": run: tile_counter holds {" + std::to_string(counter[0]) + ", " +
        std::to_string(counter[1]) +
        "}, not {0, 0}: a counter must be zero before its first run (make_tile_counter(), or "
        "cudaMemsetAsync on the stream) and serve one stream only (every run leaves it zero); "
        "with it the kernel would skip tiles and leave their part of D unwritten");
}

namespace {
/// The rows of A and D: all groups' rows (contiguous) or G x M_max (masked).
std::int64_t all_rows_of(const GroupedGemm& g) {
  return g.layout == Layout::contiguous ? g.rows : g.rows * g.groups;
}

/// The group description the kernel reads (offsets or masked_m) and its size in bytes.
const int* description_of(const GroupedGemm& g) {
  return g.layout == Layout::contiguous ? g.offsets : g.masked_m;
}
std::size_t description_bytes(const GroupedGemm& g) {
  return std::size_t(g.layout == Layout::contiguous ? g.groups + 1 : g.groups) * 4;
}
/// Its name, for messages.
const char* description_name(const GroupedGemm& g) {
  return g.layout == Layout::contiguous ? "offsets" : "masked_m";
}

/// Null and layout checks of the call, then its defaults filled in (leading dimensions, scale
/// layouts).
GroupedGemm checked_with_defaults(const GroupedGemm& in) {
  GroupedGemm g = in;
  if (g.groups < 1) fail("groups = " + std::to_string(g.groups) + " must be >= 1");
  if (g.layout == Layout::contiguous && g.offsets == nullptr)
    fail("offsets is a null pointer (contiguous layout: G + 1 int32 row offsets on the device)");
  if (g.layout == Layout::masked && g.masked_m == nullptr)
    fail("masked_m is a null pointer (masked layout: G int32 row counts on the device)");
  if (g.layout != Layout::contiguous && g.layout != Layout::masked)
    fail("layout = " + std::to_string(int(g.layout)) + " is neither contiguous nor masked");
  if (g.output != Output::bf16 && g.output != Output::f32)
    fail("output = " + std::to_string(int(g.output)) + " is neither bf16 nor f32");
  if (g.accumulate && g.output != Output::f32)
    fail("accumulate = true needs Output::f32 (D = A.B^T + D is kept in float; a bf16 D would be "
         "rounded twice)");
  // The kernel reads the description as int32 and scale_a by TMA: a misaligned address would
  // fault there (cudaErrorMisalignedAddress, sticky), so it is refused here, constructor and
  // rebind alike.
  if (const auto off = reinterpret_cast<std::uintptr_t>(description_of(g)) % 4; off != 0)
    fail(std::string(description_name(g)) + " must be 4-byte aligned (int32 on the device); its address % 4 = " +
         std::to_string(off));
  if (const auto off = reinterpret_cast<std::uintptr_t>(g.scale_a) % 16; off != 0)
    fail("scale_a must be 16-byte aligned (the kernel reads it by TMA); its address % 16 = " +
         std::to_string(off));
  // Bounds before the products below (rows x G, N x G) are formed: each factor at most max_dim,
  // G an int, so neither can overflow 64 bits.
  const std::int64_t max_dim = requirements().max_dim;
  if (g.rows > max_dim)
    fail(std::string(g.layout == Layout::contiguous ? "rows" : "rows (M_max)") + " = " +
         std::to_string(g.rows) + " must be <= " + std::to_string(max_dim));
  if (g.N > max_dim) fail("N = " + std::to_string(g.N) + " must be <= " + std::to_string(max_dim));
  // The masked layout's A and D are [G, M_max, ...]: G x M_max rows, which the engine sees as M.
  // Refused here by the call's own names (the engine's "M = ..." would name no argument).
  if (g.layout == Layout::masked && g.rows * g.groups > max_dim)
    fail("groups x rows (M_max) = " + std::to_string(g.groups) + " x " + std::to_string(g.rows) +
         " = " + std::to_string(g.rows * g.groups) + " rows of A and D must be <= " +
         std::to_string(max_dim));
  if (g.lda == 0) g.lda = g.K;
  if (g.ldb == 0) g.ldb = g.K;
  if (g.ldd == 0) g.ldd = g.N;
  const std::int64_t all_rows = all_rows_of(g);
  // ld = 0 fills in the mn-major ld only: a k-major (or invalid) major with ld = 0 is refused below
  // by name, not read as mn-major (until session 70 it became mn-major here: k-major scales would
  // have been read in the wrong order).
  if (g.scale_a_layout.ld == 0 && all_rows >= 1 && g.scale_a_layout.major == ScaleMajor::mn)
    g.scale_a_layout = GroupScaleLayout::mn_major_tma_aligned(all_rows);
  if (g.scale_b_layout.ld == 0 && g.K >= 1) g.scale_b_layout = BlockScaleLayout::padded(g.K);
  return g;
}

/// The dense view the engine plan validates: all rows of A and D, B as its G N rows.
GemmArgs engine_args(const GroupedGemm& g) {
  // B's G N rows: G ceil(N/128) block rows of ld floats, the last one read up to ceil(K/128) only
  // (what quantize_128x128 writes for the G N rows of B quantised in one call).
  GemmArgs args = block_scaled_args(g, all_rows_of(g), g.groups * ceil_div(g.N, 128) * 128);
  // B is the G experts' weights stacked, G N rows: the engine checks their extent and memory, D
  // against all of them, and builds its map of B over all of them (validate.hpp, b_rows).
  args.b_rows = g.N * g.groups;
  args.d_element_bytes = g.output == Output::f32 ? 4 : 2;
  return args;
}

}  // namespace

Plan::Plan(const GroupedGemm& in, const Options& o) : impl_(std::make_unique<Impl>()) {
  if (o.counter_schedule && !o.kernel.empty())
    fail("Options::counter_schedule picks the kernel itself; leave Options::kernel empty ('" +
         o.kernel + "' given)");
  engine::check_plan_options(kWho, o.max_sms, engine::RasterOptions{});
  const GroupedGemm g = checked_with_defaults(in);
  impl_->gemm = g;
  const std::int64_t all_rows = all_rows_of(g);
  if (g.scale_a_layout.major != ScaleMajor::mn || g.scale_a_layout.ld % 4 != 0)
    fail("scale_a must be mn-major with ld a multiple of 4 (" + fp8gemm::describe(g.scale_a_layout) +
         " given; chapter 7's plan converts other layouts, this one does not yet)");
  if (g.scale_a_layout.ld > kMaxTmaScaleLd)  // reachable where K <= 128 (one g-row)
    fail("scale_a: ld = " + std::to_string(g.scale_a_layout.ld) + " must be <= " +
         std::to_string(kMaxTmaScaleLd) + " (the kernel reads it by TMA, whose row stride, " +
         "ld x 4 bytes, must be below 2^40)");
  if (all_rows >= 1 && g.K >= 1 && !g.scale_a_layout.ld_ok(all_rows, g.K))
    fail("scale_a: " + fp8gemm::describe(g.scale_a_layout) + " is too small for " +
         std::to_string(all_rows) + " rows");
  if (g.K >= 1 && g.scale_b_layout.ld < ceil_div(g.K, 128))
    fail("scale_b: ld = " + std::to_string(g.scale_b_layout.ld) + " must be >= ceil(K / 128) = " +
         std::to_string(ceil_div(g.K, 128)));

  const GemmArgs args = engine_args(g);
  const std::int64_t sfb_group_stride = ceil_div(g.N, 128) * g.scale_b_layout.ld;
  const GemmRequirements req = requirements();
  if (g.N * g.groups > req.max_dim)  // before validate_gemm, whose message names b_rows
    fail("G x N = " + std::to_string(g.N * g.groups) + " rows of B exceed " +
         std::to_string(req.max_dim));
  validate_gemm(args, req);
  validate_disjoint_from_d(args, description_of(g), description_bytes(g),
                           description_name(g), req);
  // The TMA-store kernels (bf16 or float D) write D through its ragged-rows view, which addresses
  // 2^30 rows less than 2^34 bytes apart (common/ragged_rows.hpp).
  const bool rows_fit_tma = all_rows <= kRaggedMaxRows &&
                            g.ldd < kRaggedMaxStrideBytes / args.d_element_bytes;
  const bool tma_ok = engine::tma_store_compatible(args) && rows_fit_tma;
  const engine::KernelInfo& k = !o.kernel.empty() ? engine::find_kernel(kernels(), o.kernel, kWho)
                                : o.counter_schedule ? counter_schedule_kernel(g, tma_ok)
                                                     : default_kernel(g, tma_ok);
  // The counter schedule's kernel draws its tiles from the caller's counter (run(stream,
  // tile_counter)); where counter_schedule_kernel() keeps a static kernel the plan is the default
  // one and ignores the counter.
  impl_->caller_counter = o.counter_schedule && k.dynamic_schedule;
  if (engine::stores_by_tma(k.epilogue) && !rows_fit_tma)
    fail("kernel " + k.name + " stores D by TMA, through a view of at most 2^30 rows less than "
         "2^34 bytes apart (" + std::to_string(all_rows) + " rows, ldd = " + std::to_string(g.ldd) +
         " given; common/ragged_rows.hpp): choose a registers-epilogue kernel, or leave "
         "Options::kernel empty");
  // A stream-K kernel's division counts the tiles of all groups in int (at most this many).
  // (A dynamically scheduled kernel's counter too: GroupedDynamicScheduler, below.)
  constexpr std::int64_t kStreamKLimit = std::int64_t(1) << 31;
  const std::int64_t most_tiles =
      (g.layout == Layout::masked ? g.groups * ceil_div(g.rows, k.block_m)
                                  : ceil_div(g.rows, k.block_m) + g.groups) *
      ceil_div(g.N, k.block_n);
  if (k.stream_k && most_tiles >= kStreamKLimit)
    fail("kernel " + k.name + " (stream-K) counts tiles in 32 bits: up to " +
         std::to_string(most_tiles) + " here; choose a kernel without _sk");
  impl_->plan = std::make_unique<Impl::Engine>(k, args, req, o.max_sms, engine::RasterOptions{},
                                               true);
  // A dynamically scheduled kernel's counter draws every tile number and one more per CTA, in
  // int (common/engine/grouped.cuh, GroupedDynamicScheduler).
  if (k.dynamic_schedule && most_tiles + impl_->plan->grid_ctas() >= kStreamKLimit)
    fail("kernel " + k.name + " (dynamic schedule) counts tiles in 32 bits: up to " +
         std::to_string(most_tiles) + " here; choose a kernel without _dyn");
  require_device_accessible(description_of(g), description_bytes(g), kWho,
                            description_name(g));

  engine::GroupedParams& p = impl_->plan->policy_params();
  p.accumulate = g.accumulate ? 1 : 0;  // the FP32 kernels' D = A.B^T + D
  // D through its ragged-rows view (common/ragged_rows.hpp): each TMA-store box is clipped at its
  // group's end, given with the store, so a tile's rows past its group are never written.
  if (engine::stores_by_tma(k.epilogue)) {
    const bool f32 = k.epilogue == engine::EpilogueKind::tma_store_f32;
    p.map_d = make_tensor_map_ragged_rows(
        g.D, f32 ? CU_TENSOR_MAP_DATA_TYPE_FLOAT32 : CU_TENSOR_MAP_DATA_TYPE_BFLOAT16,
        f32 ? 4 : 2, std::uint64_t(all_rows), std::uint64_t(g.N), std::uint64_t(g.ldd), 64,
        std::uint32_t(k.epi_cols), swizzle_of_span(k.epi_swizzle_bytes));
  }
  // The stage's BlockM + 4 scales from row m0 & ~3, in boxes of skewed_scale_box_rows
  // (common/engine/params.hpp: a TMA box starts 16-byte aligned and holds at most 256).
  const int sfa_box = engine::skewed_scale_box_rows(k.block_m);
  p.map_sfa = make_tensor_map_2d(g.scale_a, CU_TENSOR_MAP_DATA_TYPE_FLOAT32, 4,
                                 std::uint64_t(ceil_div(g.K, 128)), std::uint64_t(all_rows),
                                 std::uint64_t(g.scale_a_layout.ld), 1, std::uint32_t(sfa_box),
                                 CU_TENSOR_MAP_SWIZZLE_NONE);
  p.sfb = g.scale_b;
  p.sfb_ld = g.scale_b_layout.ld;
  p.sfb_rows = int(ceil_div(g.N, 128));
  p.sfb_group_stride = sfb_group_stride;
  p.layout.kind = g.layout == Layout::contiguous ? engine::GroupedKind::contiguous
                                                 : engine::GroupedKind::masked;
  p.layout.groups = g.groups;
  p.layout.offsets = g.offsets;
  p.layout.masked_m = g.masked_m;
  p.layout.m_max = int(g.layout == Layout::masked ? g.rows : 0);
  p.layout.rows = int(g.layout == Layout::contiguous ? g.rows : 0);
  p.n_tiles = int(ceil_div(g.N, k.block_n));
  if (k.stream_k) {
    // The division runs in int (common/engine/stream_k.hpp): its units (fewer than the grid's
    // CTAs, and than the tiles, times the K blocks) below 2^31 too.
    const std::int64_t most_units =
        std::min(most_tiles, std::int64_t(impl_->plan->grid_ctas())) * ceil_div(g.K, 128);
    if (most_units >= kStreamKLimit)
      fail("kernel " + k.name + " (stream-K) counts K blocks in 32 bits: up to " +
           std::to_string(most_units) + " here; choose a kernel without _sk");
    const std::size_t ctas = std::size_t(impl_->plan->grid_ctas());
    const std::size_t consumer_wgs = std::size_t(k.threads / 128 - 1);
    impl_->sk_partials = DeviceBuffer<float>(ctas * std::size_t(k.block_m) * std::size_t(k.block_n));
    impl_->sk_flags = DeviceBuffer<int>(ctas * consumer_wgs);
    FP8GEMM_CUDA_CHECK(cudaMemset(impl_->sk_flags.data(), 0, impl_->sk_flags.bytes()));
    FP8GEMM_CUDA_CHECK(cudaStreamSynchronize(nullptr));  // zero before any run() on any stream
    p.sk_partials = impl_->sk_partials.data();
    p.sk_flags = impl_->sk_flags.data();
  }

  if (k.dynamic_schedule && !impl_->caller_counter) {
    impl_->tile_counter = make_tile_counter();
    p.tile_counter = impl_->tile_counter.data();
  }

  if (o.check_offsets) {
    Impl& i = *impl_;
    i.check = true;
    i.layout = g.layout;
    i.groups_desc = description_of(g);
    i.groups = g.groups;
    i.bound = int(g.rows);  // total rows or M_max: at most max_dim, so an int
    i.verdict = DeviceBuffer<GroupViolation>(1);
  }
}

Plan::~Plan() = default;

void Plan::rebind(const GroupedGemm& in) {
  require_plan_device(impl_->plan->device(), kWho);  // before the new pointers are checked
  Impl& I = *impl_;
  const GroupedGemm g = checked_with_defaults(in);
  const GroupedGemm& was = I.gemm;
  auto same = [](const char* what, bool ok) { engine::require_same_field(what, ok, kWho); };
  same("layout", g.layout == was.layout);
  same("groups", g.groups == was.groups);
  same("rows", g.rows == was.rows);
  same("output", g.output == was.output);
  same("accumulate", g.accumulate == was.accumulate);
  same("scale_a_layout", g.scale_a_layout.major == was.scale_a_layout.major &&
                             g.scale_a_layout.ld == was.scale_a_layout.ld);
  same("scale_b_layout", g.scale_b_layout.ld == was.scale_b_layout.ld);
  const GemmArgs args = engine_args(g);
  engine::require_same_call_but_pointers(I.plan->args(), args, kWho);
  validate_gemm(args, requirements());  // non-null and aligned before any CUDA query
  validate_disjoint_from_d(args, description_of(g), description_bytes(g),
                           description_name(g), requirements());
  // What the engine does not check: the description.
  if (description_of(g) != description_of(was))
    require_device_accessible(description_of(g), description_bytes(g), kWho,
                              description_name(g));
  engine::GroupedParams& p = I.plan->policy_params();
  CUtensorMap map_sfa = p.map_sfa;
  if (g.scale_a != was.scale_a) replace_tensor_map_address(map_sfa, g.scale_a);
  I.plan->rebind(args);  // A, B (all G N rows), D, scale pointers checked; their maps re-pointed
  p.map_sfa = map_sfa;
  p.sfb = g.scale_b;
  p.layout.offsets = g.offsets;
  p.layout.masked_m = g.masked_m;
  if (I.check) I.groups_desc = description_of(g);
  I.gemm = g;
  I.checked_counter.store(nullptr, std::memory_order_relaxed);  // run() checks its counter again
}

void Plan::run(cudaStream_t stream) const {
  if (impl_->caller_counter)
    fail("run: this plan draws its tiles from the caller's counter (Options::counter_schedule): "
         "call run(stream, tile_counter)");
  if (impl_->check) {  // the check's launch comes first: the device check before it
    require_plan_device(impl_->plan->device(), kWho);
    impl_->check_groups(stream);
  }
  impl_->plan->run(stream);
}

void Plan::run(cudaStream_t stream, int* tile_counter) const {
  if (!impl_->caller_counter) return run(stream);
  // The device first: the counter's and the check's tests below would otherwise refuse the
  // plan's own buffers as another device's memory.
  require_plan_device(impl_->plan->device(), kWho);
  if (tile_counter == nullptr || reinterpret_cast<std::uintptr_t>(tile_counter) % 4 != 0)
    fail("run: this plan draws its tiles from the caller's counter (Options::counter_schedule): "
         "tile_counter must be two ints of device memory, 4-byte aligned (" +
         std::string(tile_counter == nullptr ? "null" : "misaligned") + " given)");
  // A counter the kernel's atomics and reset would write inside an operand or the group
  // description (the offsets, say: the group boundaries would move during the run), or host
  // memory or a freed pointer, which would fault the kernel (a sticky error): refused here. Once
  // per counter (rebind() forgets it: the buffers may have moved onto it).
  if (impl_->checked_counter.load(std::memory_order_relaxed) != tile_counter) {
    const GroupedGemm& g = impl_->gemm;
    validate_disjoint_from_operands(
        engine_args(g), tile_counter, 2 * sizeof(int), "tile_counter", requirements(),
        {{description_of(g), description_bytes(g), description_name(g)}});
    require_device_accessible(tile_counter, 2 * sizeof(int), kWho, "tile_counter");
    impl_->checked_counter.store(tile_counter, std::memory_order_relaxed);
  }
  if (impl_->check) impl_->check_groups(stream, tile_counter);
  engine::GroupedParams p = impl_->plan->policy_params();
  p.tile_counter = tile_counter;
  impl_->plan->run_with(p, stream);
}

bool Plan::takes_tile_counter() const { return impl_->caller_counter; }

DeviceBuffer<int> make_tile_counter() {
  DeviceBuffer<int> c(2);
  FP8GEMM_CUDA_CHECK(cudaMemset(c.data(), 0, c.bytes()));
  FP8GEMM_CUDA_CHECK(cudaDeviceSynchronize());  // zero before any run() on any stream
  return c;
}

int Plan::grid_ctas() const { return impl_->plan->grid_ctas(); }
const engine::KernelInfo& Plan::kernel() const { return impl_->plan->kernel(); }

std::string Plan::describe() const {
  return impl_->plan->describe() + (impl_->check ? ", checking offsets" : "");
}

}  // namespace fp8gemm::ch08
