#include "common/engine/plan.hpp"

#include <algorithm>
#include <climits>
#include <cmath>
#include <limits>
#include <sstream>
#include <stdexcept>

#include "common/cuda.hpp"
#include "common/launch.hpp"
#include "common/scaling.hpp"  // ceil_div
#include "common/tensor_map.hpp"

namespace fp8gemm::engine {

void check_plan_options(const char* who, int max_sms, const RasterOptions& raster) {
  if (max_sms < 0)
    throw std::invalid_argument(std::string(who) + ": max_sms = " + std::to_string(max_sms) +
                                " must be >= 0 (0: all SMs)");
  if (raster.along_n < -1 || raster.along_n > 1)
    throw std::invalid_argument(std::string(who) + ": raster.along_n = " +
                                std::to_string(raster.along_n) +
                                " (want -1: choose, 0: bands of rows, 1: bands of columns)");
}

int usable_sms(int max_sms, int sm_count) {
  return max_sms > 0 ? std::min(max_sms, sm_count) : sm_count;
}

int rule_sms(int max_sms) {
  // The query's failure is not an error here: it means no GPU answers, and the plan that asked
  // refuses the call right after, in its device check. A failed query's own error is read back
  // (a non-sticky one then does not linger; a sticky one, no driver or no device, stays, and the
  // plan reports it); nothing is read back after a successful query, so an error pending from
  // the caller's earlier work is left alone.
  int device = 0, sms = 0;
  if (cudaGetDevice(&device) != cudaSuccess ||
      cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device) != cudaSuccess) {
    (void)cudaGetLastError();
    sms = kReferenceSms;
  }
  return usable_sms(std::max(max_sms, 0), sms_or_reference(sms));
}

std::int64_t grid_waves(std::int64_t M, std::int64_t N, int block_m, int block_n, int sms,
                        int cluster_m, int cluster_n) {
  const int cm = std::max(cluster_m, 1), cn = std::max(cluster_n, 1), size = cm * cn;
  if (M <= 0 || N <= 0 || block_m <= 0 || block_n <= 0) return 0;
  const std::int64_t units = ceil_div(ceil_div(M, block_m), cm) * ceil_div(ceil_div(N, block_n), cn);
  const std::int64_t clusters = persistent_grid_clusters(
      int(cluster_slots(sms, size) / size), std::max(sms, 1), 0, size, units);
  return ceil_div(units, clusters);
}

bool row_keeps_waves(std::int64_t tiles, int sms) {
  if (tiles <= 0 || sms <= 0) return true;
  return grid_waves(tiles, 1, 1, 1, kReferenceSms) == grid_waves(tiles, 1, 1, 1, sms);
}

std::int64_t cluster_slots(int sms, int cluster_size) {
  const int size = std::max(cluster_size, 1);
  return std::int64_t(std::max(sms / size, 1)) * size;
}

double wave_efficiency(std::int64_t tiles, std::int64_t slots) {
  if (tiles <= 0 || slots <= 0) return 0.0;
  return double(tiles) / double(ceil_div(tiles, slots) * slots);
}

int decode_tile_width(std::int64_t M, std::int64_t N, int block_m, const std::vector<int>& widths,
                      int sms) {
  if (M <= 0 || N <= 0 || block_m <= 0 || sms <= 0) return 0;
  const std::int64_t threshold = ceil_div(std::int64_t(100) * sms, kReferenceSms);
  const auto tiles = [&](int width) { return ceil_div(M, block_m) * ceil_div(N, width); };
  for (std::size_t i = 0; i < widths.size(); ++i) {
    const std::int64_t count = tiles(widths[i]);
    if (count < threshold) continue;
    if (i > 0 && count > sms && 2 * count < 3 * std::int64_t(sms) && tiles(widths[i - 1]) <= sms)
      return widths[i - 1];
    return widths[i];
  }
  return 0;
}

std::int64_t persistent_grid_clusters(int max_clusters, int sm_count, int max_sms,
                                      int cluster_size, std::int64_t work_units) {
  const int sms = usable_sms(max_sms, sm_count);
  const std::int64_t clusters =
      std::max<std::int64_t>(1, std::min<std::int64_t>(max_clusters, sms / cluster_size));
  return std::min(work_units, clusters);
}

GemmRequirements engine_requirements(const char* who) {
  GemmRequirements r;
  r.who = who;
  // TMA zero-fills the K tail of the last 128-wide block, so K needs no multiple of 128; the row
  // strides of A and B must be multiples of 16 bytes, which for packed operands is K % 16 == 0.
  r.k_multiple = 16;
  r.k_reason = "TMA needs the row stride of A and B, K bytes, to be a multiple of 16";
  r.operand_alignment = 16;
  r.output_alignment = 2;
  r.packed_only = false;
  r.max_dim = (std::int64_t(1) << 31) - 1024;
  r.operand_stride_limit_bytes = std::int64_t(1) << 40;
  return r;
}

const KernelInfo& find_kernel(const std::vector<KernelInfo>& list, const std::string& name,
                              const char* who) {
  for (const auto& k : list)
    if (k.name == name) return k;
  std::string names;
  for (const auto& k : list) names += (names.empty() ? "" : ", ") + k.name;
  throw std::invalid_argument(std::string(who) + ": no kernel named '" + name +
                              "'; there are: " + names);
}

bool tma_store_compatible(const GemmArgs& a) {
  // In elements, so that nothing is multiplied: a one-row D may have any ldd up to 2^63 - 1.
  const std::int64_t bytes = a.d_element_bytes;  // 2 or 4: both divide 16
  return reinterpret_cast<std::uintptr_t>(a.D) % 16 == 0 && a.ldd % (16 / bytes) == 0 &&
         a.ldd < (std::int64_t(1) << 40) / bytes;  // TMA's global stride limit
}

void require_same_call_but_pointers(const GemmArgs& built, const GemmArgs& next, const char* who) {
  auto differs = [&](const char* field, std::int64_t was, std::int64_t now) {
    if (was == now) return;
    throw std::invalid_argument(std::string(who) + ": rebind: " + field + " = " +
                                std::to_string(now) + " differs from the plan's " + field + " = " +
                                std::to_string(was) +
                                "; a plan is re-pointed only at the buffers of the call it was "
                                "built for (same shape, leading dimensions, layouts and recipes): "
                                "build a new plan for another call");
  };
  differs("M", built.M, next.M);
  differs("N", built.N, next.N);
  differs("K", built.K, next.K);
  differs("lda", built.lda, next.lda);
  differs("ldb", built.ldb, next.ldb);
  differs("b_rows", built.b_rows, next.b_rows);
  differs("ldd", built.ldd, next.ldd);
  differs("d_rows", built.d_rows, next.d_rows);
  differs("d_element_bytes", built.d_element_bytes, next.d_element_bytes);
  differs("recipe_a", std::int64_t(built.recipe_a), std::int64_t(next.recipe_a));
  differs("recipe_b", std::int64_t(built.recipe_b), std::int64_t(next.recipe_b));
  differs("scale_a_extent", built.scale_a_extent, next.scale_a_extent);
  differs("scale_b_extent", built.scale_b_extent, next.scale_b_extent);
}

void require_same_field(const char* field, bool same, const char* who) {
  if (same) return;
  throw std::invalid_argument(std::string(who) + ": rebind: " + field +
                              " differs from the call the plan was built for; a plan is re-pointed "
                              "only at the buffers of the same call: build a new plan");
}

namespace {

/// The call's tiles in units of the kernel's cluster (cluster_m x cluster_n tiles each), in 64 bits.
struct UnitGrid {
  std::int64_t m, n;
};
UnitGrid unit_grid(const KernelInfo& kernel, const GemmArgs& args) {
  return {ceil_div(ceil_div(args.M, kernel.block_m), kernel.cluster_m),
          ceil_div(ceil_div(args.N, kernel.block_n), kernel.cluster_n)};
}

/// The launch configuration of `kernel` on `ctas` CTAs: its threads and shared memory, and the
/// cluster dimension as a launch attribute (written to `attr`, which must outlive the config).
/// `for_launch`: a kernel of one-CTA clusters (c1x1) is launched as a plain grid, without the
/// attribute (its code uses no cluster feature then, kernel.cuh); the occupancy query keeps it.
cudaLaunchConfig_t launch_config(const KernelInfo& kernel, int ctas, cudaStream_t stream,
                                 cudaLaunchAttribute& attr, bool for_launch) {
  cudaLaunchConfig_t cfg{};
  cfg.gridDim = dim3(unsigned(ctas), 1, 1);
  cfg.blockDim = dim3(unsigned(kernel.threads), 1, 1);
  cfg.dynamicSmemBytes = kernel.smem_bytes;
  cfg.stream = stream;
  attr = cudaLaunchAttribute{};
  attr.id = cudaLaunchAttributeClusterDimension;
  attr.val.clusterDim.x = unsigned(kernel.cluster_size());
  attr.val.clusterDim.y = 1;
  attr.val.clusterDim.z = 1;
  cfg.attrs = &attr;
  cfg.numAttrs = (for_launch && kernel.cluster_size() == 1) ? 0 : 1;
  return cfg;
}

}  // namespace

void check_kernel_fits(const KernelInfo& kernel, const GemmArgs& args, const std::string& who,
                       int max_sms, RasterOptions raster) {
  // D's element type first (the TMA check below counts ldd in D's elements).
  const bool f32_kernel = writes_f32(kernel.epilogue);
  if (f32_kernel != (args.d_element_bytes == 4))
    throw std::invalid_argument(who + ": kernel " + kernel.name + " writes " +
                                (f32_kernel ? "float" : "bf16") + " D, the call passes " +
                                (args.d_element_bytes == 4 ? "float" : "bf16") + " D");
  // A TMA epilogue (bf16 or FP32, through D's 2-D map or a policy's own: chapter 8's weight
  // gradient) needs D 16-byte aligned with rows 16 bytes apart.
  if (stores_by_tma(kernel.epilogue) && !tma_store_compatible(args)) {
    std::ostringstream d;
    d << args.D;
    throw std::invalid_argument(
        who + ": kernel " + kernel.name + " stores D with TMA, which needs D 16-byte aligned and " +
        "ldd a multiple of " + std::string(f32_kernel ? "4" : "8") +
        " (rows 16 bytes apart); got D = " + d.str() + ", ldd = " + std::to_string(args.ldd) +
        " (pick a kernel with the registers epilogue for this D)");
  }
  // A loop that takes the K blocks in whole rounds from ring stage 0 (staged_loop.cuh).
  if (kernel.k_round > 1 && args.K % (128 * kernel.k_round) != 0)
    throw std::invalid_argument(who + ": kernel " + kernel.name + " runs the K blocks in whole "
                                "rounds of " + std::to_string(kernel.k_round) + ": K = " +
                                std::to_string(args.K) + " must be a multiple of " +
                                std::to_string(128 * kernel.k_round));
  check_plan_options(who.c_str(), max_sms, raster);

  // The tile space, in 64 bits, then refused if the kernel's int arithmetic could overflow.
  const UnitGrid u = unit_grid(kernel, args);
  const std::int64_t units = u.m * u.n;
  if (units > (std::int64_t(1) << 30))
    throw std::invalid_argument(who + ": M x N = " + std::to_string(args.M) + " x " +
                                std::to_string(args.N) + " needs " + std::to_string(units) +
                                " tiles, more than 2^30 (the scheduler's int arithmetic)");
}

EnginePlan::EnginePlan(const KernelInfo& kernel, const GemmArgs& args, const GemmRequirements& req,
                       int max_sms, RasterOptions raster, bool persistent, std::int64_t work_tiles)
    : kernel_(kernel), who_(req.who), args_(args), req_(req) {
  validate_gemm(args, req);
  check_kernel_fits(kernel, args, who_, max_sms, raster);
  const UnitGrid u = unit_grid(kernel, args);
  const std::int64_t units_m = u.m, units_n = u.n, units = u.m * u.n;
  const bool f32_kernel = writes_f32(kernel.epilogue);
  check_gemm_pointers(args, req);
  prepare_kernel(kernel.kernel, kernel.name.c_str(), "sm_90a", int(kernel.smem_bytes));
  FP8GEMM_CUDA_CHECK(cudaGetDevice(&device_));  // the device the kernel was prepared on

  // The persistent grid: as many clusters as fit on the GPU at once (some SMs may not pair up in
  // a GPC), limited by max_sms, never more than there are units.
  const int sm_count = current_device_sm_count();
  cudaLaunchAttribute attr;
  const cudaLaunchConfig_t cfg = launch_config(kernel, kernel.cluster_size(), nullptr, attr, false);
  int max_clusters = 0;
  FP8GEMM_CUDA_CHECK(cudaOccupancyMaxActiveClusters(&max_clusters, kernel.kernel, &cfg));
  if (max_clusters < 1)
    throw std::runtime_error(who_ + ": kernel " + kernel.name +
                             " cannot run on this GPU (no cluster of it fits on an SM pair)");
  const std::int64_t clusters = persistent_grid_clusters(max_clusters, sm_count, max_sms,
                                                          kernel.cluster_size(),
                                                          std::numeric_limits<std::int64_t>::max());
  if (work_tiles < 0)
    throw std::invalid_argument(who_ + ": work_tiles = " + std::to_string(work_tiles) +
                                " must be >= 0 (0: the M x N tiles)");
  // The units of work the grid is sized for (a grouped kernel's tiles of all groups, in units).
  const std::int64_t work_units =
      work_tiles > 0 ? ceil_div(work_tiles, kernel.cluster_size()) : units;
  const std::int64_t grid_units = persistent ? std::min(work_units, clusters) : work_units;
  grid_ctas_ = int(grid_units * kernel.cluster_size());

  // The tile order.
  const int along_n = raster.along_n >= 0 ? raster.along_n : 0;
  int group = raster.group;
  if (group <= 0) {
    // The units in flight at once (the co-resident clusters, also when the grid is larger),
    // arranged as g x (in_flight / g): A panels of g x BlockM x ClusterM rows, B panels of
    // (in_flight / g) x BlockN x ClusterN rows; equal when g = sqrt(in_flight x BlockN_c /
    // BlockM_c) for bands of rows (the inverse for bands of columns).
    const double in_flight = double(std::min(grid_units, clusters));
    const double bm = double(kernel.block_m * kernel.cluster_m);
    const double bn = double(kernel.block_n * kernel.cluster_n);
    const double ratio = along_n == 0 ? bn / bm : bm / bn;
    group = std::max(1, int(std::lround(std::sqrt(in_flight * ratio))));
  }
  group = std::max(1, std::min(group, int(along_n == 0 ? units_m : units_n)));
  params_.schedule = make_dense_schedule(int(units_m), int(units_n), group, along_n);

  params_.M = int(args.M);
  params_.N = int(args.N);
  params_.K = int(args.K);
  params_.k_blocks = int(ceil_div(args.K, 128));
  params_.ldd = args.ldd;
  if (f32_kernel) {
    params_.D_f32 = static_cast<float*>(const_cast<void*>(args.D));
    params_.d_pairs_ok = (reinterpret_cast<std::uintptr_t>(args.D) % 8 == 0 && args.ldd % 2 == 0);
  } else {
    params_.D = static_cast<std::uint16_t*>(const_cast<void*>(args.D));
    params_.d_pairs_ok = (reinterpret_cast<std::uintptr_t>(args.D) % 4 == 0 && args.ldd % 2 == 0);
  }
  params_.scale_a = static_cast<const float*>(args.scale_a);
  params_.scale_b = static_cast<const float*>(args.scale_b);
  params_.map_a = make_tensor_map_2d(args.A, CU_TENSOR_MAP_DATA_TYPE_UINT8, 1,
                                     std::uint64_t(args.M), std::uint64_t(args.K),
                                     std::uint64_t(args.lda),
                                     std::uint32_t(kernel.block_m / kernel.cluster_n), 128,
                                     CU_TENSOR_MAP_SWIZZLE_128B);
  // B's map spans every row the kernel reads (b_rows_of: N, or chapter 8's G N stacked experts);
  // its box is the CTA's share of the tile's BlockN rows, half in a 2 x 1 cluster, whose two CTAs
  // each load one half and multicast it to both (kernel.cuh, load_tile). A whole tile per CTA
  // would bring each full barrier twice the bytes it expects: session 14's first run of chapter
  // 8's 2 x 1 kernels hung on that, when chapter 8 still built a map of B of its own.
  params_.map_b = make_tensor_map_2d(args.B, CU_TENSOR_MAP_DATA_TYPE_UINT8, 1,
                                     std::uint64_t(b_rows_of(args)), std::uint64_t(args.K),
                                     std::uint64_t(args.ldb),
                                     std::uint32_t(kernel.block_n / kernel.cluster_m), 128,
                                     CU_TENSOR_MAP_SWIZZLE_128B);
  // D's 2-D map for the TMA epilogues (a policy with a map of its own replaces it: chapter 8's
  // weight gradient), bf16 or FP32 units of 64 rows x epi_cols.
  if (stores_by_tma(kernel.epilogue))
    params_.map_d = make_tensor_map_2d(
        args.D, f32_kernel ? CU_TENSOR_MAP_DATA_TYPE_FLOAT32 : CU_TENSOR_MAP_DATA_TYPE_BFLOAT16,
        f32_kernel ? 4 : 2, std::uint64_t(args.M), std::uint64_t(args.N), std::uint64_t(args.ldd),
        64, std::uint32_t(kernel.epi_cols), swizzle_of_span(kernel.epi_swizzle_bytes));
}

void EnginePlan::launch(const void* params, cudaStream_t stream) const {
  require_ready_to_launch(device_, who_.c_str());
  cudaLaunchAttribute attr;
  const cudaLaunchConfig_t cfg = launch_config(kernel_, grid_ctas_, stream, attr, true);
  void* kernel_args[] = {const_cast<void*>(params)};
  throw_if_launch_failed(cudaLaunchKernelExC(&cfg, kernel_.kernel, kernel_args), who_,
                         kernel_.name);
  check_launch(who_.c_str());
}

void EnginePlan::rebind(const GemmArgs& next) {
  const char* who = who_.c_str();
  require_plan_device(device_, who);  // the new pointers are checked against the current device
  require_same_call_but_pointers(args_, next, who);
  GemmRequirements req = req_;
  req.who = who;             // this plan's own copy of the name
  validate_gemm(next, req);  // non-null, alignment, overlap: pure C++
  const bool tma_d = stores_by_tma(kernel_.epilogue);
  if (tma_d && !tma_store_compatible(next)) {
    std::ostringstream p;
    p << next.D;
    throw std::invalid_argument(
        who_ + ": rebind: D = " + p.str() + " is not 16-byte aligned, and this plan's kernel " +
        kernel_.name +
        " stores D with TMA, which needs it; build a plan for this D (it gets a "
        "registers-epilogue kernel)");
  }
  // The memory behind the pointers that changed (the others were checked when they were bound).
  const GemmExtents e = gemm_extents(next);
  const bool a = next.A != args_.A, b = next.B != args_.B, d = next.D != args_.D;
  const bool sa = next.scale_a != args_.scale_a, sb = next.scale_b != args_.scale_b;
  if (a) require_device_accessible(next.A, e.a, who, "A");
  if (b) require_device_accessible(next.B, e.b, who, "B");
  if (d) require_device_accessible(next.D, e.d, who, "D");
  if (sa) require_device_accessible(next.scale_a, e.scale_a, who, "scale_a");
  if (sb) require_device_accessible(next.scale_b, e.scale_b, who, "scale_b");

  // New parameter blocks on the side (a driver refusal leaves the plan as it was), then commit.
  const bool f32 = writes_f32(kernel_.epilogue);
  auto repoint = [&](const GemmParams& from) {
    GemmParams t = from;
    if (a) replace_tensor_map_address(t.map_a, next.A);
    if (b) replace_tensor_map_address(t.map_b, next.B);
    if (d && tma_d) replace_tensor_map_address(t.map_d, next.D);
    const std::uintptr_t dp = reinterpret_cast<std::uintptr_t>(next.D);
    if (f32) {
      t.D_f32 = static_cast<float*>(const_cast<void*>(next.D));
      t.d_pairs_ok = (dp % 8 == 0 && next.ldd % 2 == 0);
    } else {
      t.D = static_cast<std::uint16_t*>(const_cast<void*>(next.D));
      t.d_pairs_ok = (dp % 4 == 0 && next.ldd % 2 == 0);
    }
    t.scale_a = static_cast<const float*>(next.scale_a);
    t.scale_b = static_cast<const float*>(next.scale_b);
    return t;
  };
  const GemmParams base = repoint(params_);
  GemmParams* policy = policy_gemm_params();
  const GemmParams derived = policy ? repoint(*policy) : GemmParams{};
  params_ = base;
  if (policy) *policy = derived;
  args_ = next;
}

std::string EnginePlan::describe() const {
  std::ostringstream s;
  s << kernel_.name << ", grid " << grid_ctas_ << ", raster " << params_.schedule.group
    << (params_.schedule.along_n ? " along N" : " along M");
  return s.str();
}

}  // namespace fp8gemm::engine
