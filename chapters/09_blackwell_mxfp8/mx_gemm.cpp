#include "mx_gemm.hpp"

#include <cuda.h>

#include <algorithm>
#include <cstdint>
#include <stdexcept>
#include <string>

#include "common/cuda.hpp"
#include "common/engine/plan.hpp"
#include "common/launch.hpp"
#include "common/scaling.hpp"
#include "common/tensor_map.hpp"
#include "kernel_sm100.hpp"
#include "sm100_config.hpp"

namespace fp8gemm::ch09 {

namespace {

constexpr const char* kWho = "fp8gemm::ch09_blackwell_mxfp8";

[[noreturn]] void fail(const std::string& what) {
  throw std::invalid_argument(std::string(kWho) + ": " + what);
}

/// Options::max_sms and Options::cta_group, by name (std::invalid_argument).
void check_options(int max_sms, int cta_group) {
  if (max_sms < 0) fail("Options::max_sms = " + std::to_string(max_sms) + " must be >= 0 (0: all)");
  if (cta_group != 1 && cta_group != 2)
    fail("Options::cta_group = " + std::to_string(cta_group) +
         " must be 1 (a CTA per tile) or 2 (a CTA pair per 256-row tile)");
}

}  // namespace

GemmArgs gemm_args(const MxGemm& g) {
  // Mx1x32 scale counts are bytes (scale_count returns bytes).
  GemmArgs a{.M = g.M, .N = g.N, .K = g.K, .A = g.A, .lda = g.lda, .B = g.B, .ldb = g.ldb,
             .D = g.D, .ldd = g.ldd, .scale_a = g.scale_a, .scale_b = g.scale_b,
             .recipe_a = ScaleRecipe::mx_1x32, .recipe_b = ScaleRecipe::mx_1x32,
             .scale_a_count = g.scale_a_bytes, .scale_b_count = g.scale_b_bytes};
  // gemm_extents() multiplies the extent by 4 (float scales); the MX tensors are whole 512-byte
  // tiles, so bytes / 4 is exact.
  if (g.M >= 1 && g.K >= 1) a.scale_a_extent = scale_bytes(g.M, g.K) / 4;
  if (g.N >= 1 && g.K >= 1) a.scale_b_extent = scale_bytes(g.N, g.K) / 4;
  a.d_element_bytes = g.output == Output::f32 ? 4 : 2;
  return a;
}

void check_output(const MxGemm& g, const char* who) {
  if (g.output != Output::bf16 && g.output != Output::f32)
    throw std::invalid_argument(std::string(who) + ": output = " + std::to_string(int(g.output)) +
                                " is neither bf16 nor f32");
  if (g.accumulate && g.output != Output::f32)
    throw std::invalid_argument(std::string(who) +
                                ": accumulate = true needs Output::f32 (D = A.B^T + D is kept in "
                                "float; a bf16 D would be rounded twice)");
}


bool d_vector_stores(const MxGemm& g) {
  // 16-byte aligned rows: the base and ldd elements of 2 (bf16) or 4 (float) bytes.
  const std::int64_t per_16_bytes = g.output == Output::f32 ? 4 : 8;
  return reinterpret_cast<std::uintptr_t>(g.D) % 16 == 0 && g.ldd % per_16_bytes == 0;
}

std::int64_t scale_bytes(std::int64_t rows, std::int64_t K) { return Mx1x32(rows, K).size(); }

GemmRequirements requirements() {
  GemmRequirements r;
  r.who = kWho;
  r.k_multiple = kMxBlock;
  r.k_reason =
      "MXFP8 has one UE8M0 scale per 32 K elements and tcgen05.mma kind::mxf8f6f4 consumes K in "
      "steps of 32; pad K with zeros to a multiple of 32";
  r.operand_alignment = 16;  // TMA: 16-byte aligned base and row stride
  r.output_alignment = 2;
  r.scale_alignment = 16;    // the scale tiles are read by TMA
  r.recipe_a = ScaleRecipe::mx_1x32;
  r.recipe_b = ScaleRecipe::mx_1x32;
  // TMA coordinates and the kernel's tile arithmetic are 32-bit.
  r.max_dim = (std::int64_t(1) << 31) - 1024;
  return r;
}

MxGemm with_defaults(const MxGemm& in) {
  MxGemm g = in;
  if (g.lda == 0) g.lda = g.K;
  if (g.ldb == 0) g.ldb = g.K;
  if (g.ldd == 0) g.ldd = g.N;
  return g;
}

void validate(const MxGemm& in) {
  const MxGemm g = with_defaults(in);
  check_output(g, kWho);
  // The generic rules (dimensions, K % 32 with its reason, pointers, alignment, leading
  // dimensions, scale sizes from the Mx1x32 layout, D overlapping an input).
  validate_gemm(gemm_args(g), requirements());
}

LaunchConfig launch_config(std::int64_t M, std::int64_t N, std::int64_t K, int num_sms,
                           int max_sms, int cta_group) {
  if (num_sms < 1) fail("num_sms = " + std::to_string(num_sms) + " must be >= 1");
  check_options(max_sms, cta_group);
  if (num_sms < cta_group)
    fail("num_sms = " + std::to_string(num_sms) + ": the GPU has no room for a CTA pair (cta_group = 2 "
         "runs clusters of two CTAs, one per SM)");
  const Sm100Layout l = sm100_layout(cta_group);
  LaunchConfig c;
  c.cta_group = cta_group;
  c.tile_rows = l.umma_m;
  const TileGrid t = tile_grid(M, N, l.umma_m, kBlockN, kWho);
  c.tiles_m = t.tiles_m;
  c.tiles_n = t.tiles_n;
  c.tiles = t.blocks;
  c.k_blocks = ceil_div(K, kBlockK);
  // The engine's grid rule (chapters 6-8 and the Hopper MXFP8 path): max_sms / cta_group pairs,
  // at least one (cta_group = 2 given max_sms = 1 runs one pair, 2 CTAs), at most one per tile.
  c.units = int(engine::persistent_grid_clusters(num_sms / cta_group, num_sms, max_sms, cta_group,
                                                 c.tiles));
  c.grid = c.units * cta_group;
  c.block = kThreads;
  c.stages = l.stages;
  c.smem_bytes = int(l.bytes);
  c.tmem_columns = int(kTmemCols);
  return c;
}

bool compiled_for_sm100() {
#if defined(FP8GEMM_HAS_SM100)
  return true;
#else
  return false;
#endif
}

void require_sm100_device() {
  if (!compiled_for_sm100())
    throw std::runtime_error(std::string(kWho) +
                             ": this build has no sm_100a code (configure with "
                             "-DFP8GEMM_BUILD_SM100=ON, e.g. the `full` preset, with nvcc >= 12.8)");
  if (cuda_device_count() == 0)
    throw std::runtime_error(std::string(kWho) +
                             ": no CUDA GPU present; this kernel needs a Blackwell B200/GB200 "
                             "(compute capability 10.0, sm_100a)");
  int dev = 0;
  FP8GEMM_CUDA_CHECK(cudaGetDevice(&dev));
  cudaDeviceProp prop{};
  FP8GEMM_CUDA_CHECK(cudaGetDeviceProperties(&prop, dev));
  if (prop.major != 10 || prop.minor != 0)
    throw std::runtime_error(std::string(kWho) + ": the GPU is " + prop.name +
                             " (compute capability " + std::to_string(prop.major) + "." +
                             std::to_string(prop.minor) +
                             "); this kernel uses tcgen05 and tensor memory and is compiled for "
                             "sm_100a only, which runs on compute capability 10.0 (B200/GB200)");
}

struct Plan::Impl {
  MxGemm gemm;
  LaunchConfig config;
  KernelArgs args{};
  int device = -1;  // the device the plan was built on (run() refuses any other)
};

Plan::Plan(const MxGemm& in, const Options& o) : impl_(std::make_unique<Impl>()) {
  const MxGemm g = with_defaults(in);
  validate(g);                            // std::invalid_argument, no CUDA call
  check_options(o.max_sms, o.cta_group);  // likewise
  require_sm100_device();  // std::runtime_error on anything but an sm_100 GPU
  Impl& I = *impl_;
  I.gemm = g;
  FP8GEMM_CUDA_CHECK(cudaGetDevice(&I.device));
  const GemmArgs args = gemm_args(g);
  check_gemm_pointers(args, requirements());
  const int sms = current_device_sm_count();
  I.config = launch_config(g.M, g.N, g.K, sms, o.max_sms, o.cta_group);
#if defined(FP8GEMM_HAS_SM100)
  const Sm100Layout layout = sm100_layout(o.cta_group);
  KernelArgs& k = I.args;
  k.cta_group = o.cta_group;
  k.map_a = make_tensor_map_2d(g.A, CU_TENSOR_MAP_DATA_TYPE_UINT8, 1, std::uint64_t(g.M),
                               std::uint64_t(g.K), std::uint64_t(g.lda), kBlockM, kBlockK,
                               CU_TENSOR_MAP_SWIZZLE_128B);
  // B's box: the rows one CTA loads (all 128 alone, 64 in a pair).
  k.map_b = make_tensor_map_2d(g.B, CU_TENSOR_MAP_DATA_TYPE_UINT8, 1, std::uint64_t(g.N),
                               std::uint64_t(g.K), std::uint64_t(g.ldb), std::uint32_t(layout.b_rows),
                               kBlockK, CU_TENSOR_MAP_SWIZZLE_128B);
  // The scale tensors as uint32 [ceil(rows / 128)][ceil(K / 128) * 128]: one box = one tile.
  k.map_sfa = make_tensor_map_2d(g.scale_a, CU_TENSOR_MAP_DATA_TYPE_UINT32, 4,
                                 std::uint64_t(sf_view_rows(g.M)), std::uint64_t(sf_view_cols_u32(g.K)),
                                 std::uint64_t(sf_view_cols_u32(g.K)), 1, 128,
                                 CU_TENSOR_MAP_SWIZZLE_NONE);
  k.map_sfb = make_tensor_map_2d(g.scale_b, CU_TENSOR_MAP_DATA_TYPE_UINT32, 4,
                                 std::uint64_t(sf_view_rows(g.N)), std::uint64_t(sf_view_cols_u32(g.K)),
                                 std::uint64_t(sf_view_cols_u32(g.K)), 1, 128,
                                 CU_TENSOR_MAP_SWIZZLE_NONE);
  k.D = g.D;
  k.ldd = g.ldd;
  k.M = std::int32_t(g.M);
  k.N = std::int32_t(g.N);
  k.K = std::int32_t(g.K);
  k.tiles_m = std::int32_t(I.config.tiles_m);
  k.tiles_n = std::int32_t(I.config.tiles_n);
  k.f32 = g.output == Output::f32;
  k.accumulate = g.accumulate;
  k.vector_stores = d_vector_stores(g);
  // TMA store: the same alignment (the map's base and row stride 16-byte multiples); one box per
  // epilogue warp and 32 columns (a float D: two of 16), clipped by the TMA unit at M and N.
  k.tma_store = o.tma_store && k.vector_stores;
  if (k.tma_store)
    k.map_d = k.f32 ? make_tensor_map_2d(g.D, CU_TENSOR_MAP_DATA_TYPE_FLOAT32, 4, std::uint64_t(g.M),
                                         std::uint64_t(g.N), std::uint64_t(g.ldd), kEpiBoxRows,
                                         kEpiBoxColsF32, CU_TENSOR_MAP_SWIZZLE_NONE)
                    : make_tensor_map_2d(g.D, CU_TENSOR_MAP_DATA_TYPE_BFLOAT16, 2, std::uint64_t(g.M),
                                         std::uint64_t(g.N), std::uint64_t(g.ldd), kEpiBoxRows,
                                         kEpiBoxCols, CU_TENSOR_MAP_SWIZZLE_NONE);
  prepare_kernel(mxfp8_sm100_kernel(o.cta_group), "mxfp8_gemm_sm100_kernel", "sm_100a",
                 I.config.smem_bytes);
  if (o.cta_group == 2) {
    // How many pairs the GPU can hold at once (GPCs may have an odd number of free SMs): the
    // persistent grid should not exceed it, and zero means the pair cannot run at all.
    const int clusters = max_active_pairs(I.config.grid, I.config.block, I.config.smem_bytes);
    if (clusters < 1)
      throw std::runtime_error(std::string(kWho) + ": a cluster of two CTAs with " +
                               std::to_string(I.config.smem_bytes) +
                               " bytes of shared memory each cannot be resident on this GPU "
                               "(cudaOccupancyMaxActiveClusters = 0); use Options::cta_group = 1");
    if (clusters < I.config.units) {
      I.config.units = clusters;
      I.config.grid = 2 * clusters;
    }
  }
#endif
}

Plan::~Plan() = default;
Plan::Plan(Plan&&) noexcept = default;
Plan& Plan::operator=(Plan&&) noexcept = default;

int Plan::device() const { return impl_->device; }

void Plan::run(cudaStream_t stream) const {
#if defined(FP8GEMM_HAS_SM100)
  const Impl& I = *impl_;
  require_ready_to_launch(I.device, kWho);
  launch_mxfp8_sm100(I.args, I.config.grid, I.config.block, I.config.smem_bytes, stream);
  check_launch(kWho);
#else
  (void)stream;
  require_sm100_device();  // throws: never reached with a constructed plan
#endif
}

const LaunchConfig& Plan::config() const { return impl_->config; }

std::string Plan::describe() const {
  const LaunchConfig& c = impl_->config;
  return std::string("sm100 mxfp8 ") + std::to_string(c.tile_rows) + "x128x128, cta_group::" +
         std::to_string(c.cta_group) + ", " + std::to_string(c.stages) + " stages, " +
         std::to_string(c.tiles) + " tiles on " + std::to_string(c.grid) + " CTAs (persistent" +
         (c.cta_group == 2 ? std::string(", clusters of 2), ") : std::string("), ")) +
         std::to_string(c.smem_bytes) + " B smem, " + std::to_string(c.tmem_columns) +
         " TMEM columns, " + (impl_->args.f32 ? "float D" : "bf16 D") +
         (impl_->args.accumulate ? " (accumulated)" : "") + " by " +
         (impl_->args.tma_store ? (impl_->args.accumulate ? "TMA reduce-add" : "TMA store")
                                : "stores from registers");
}

void gemm(const MxGemm& g, cudaStream_t stream) { Plan(g).run(stream); }

}  // namespace fp8gemm::ch09
