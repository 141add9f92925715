// fp8gemm's dispatch: which GPU architecture runs which kernels, and which kernel a plan runs for
// a shape. Everything here is pure C++ apart from current_device_arch(), so every rule is tested
// on a machine without a GPU (tests/test_library_cpu.cpp).
//
// Kernel choice, in order (the first that applies wins; describe() of a plan names it):
//   1. option       Options::kernel, a kernel by name (the chapter's kernels() list)
//   2. environment  FP8GEMM_KERNEL_<FAMILY> (dispatch_env_var()), for calls the table serves:
//                   "NAME" (every shape) or "MxNxK=NAME,...[,*=NAME]" (exact shapes, * the rest)
//   3. table        the exact (M, N, K) in the table learned from the committed H200 sweep
//                   (src/dispatch_table.inc, generated with dispatch_table.md from the JSON by
//                   tools/gen_dispatch_table.py)
//      table_sms    the same row for a plan whose grid may use another number of SMs than the
//                   sweep's GPU had (Options::max_sms below it, or another GPU's count): the
//                   sweep's time of every kernel on that shape, each scaled by its waves on the
//                   plan's SMs over its waves on the sweep's (rescaled_choice). Only the waves are
//                   rescaled: another GPU's clocks and memory are not modelled. Measured against
//                   sweeps run on 112 SMs (H200 and H100, sessions 46-49): within 3% of the
//                   fastest at 94 of 106 picks; the misses are short-K decode shapes (K = 512,
//                   up to 1.137x) and large shapes where the sweep's rankings disagree (8192^3
//                   fast: 1.069x the row's time with each kernel alone on an H100). Where one
//                   shape matters, time it and name the kernel (step 1 or 2).
//   4. chapter      otherwise the chapter's own rule (chapters 6-7: choose_kernel, a small table
//                   and a wave-efficiency heuristic; chapter 9: its default kernel)
// A call the table cannot serve gets, unless an option names a kernel: for a bf16 D that TMA
// cannot store (not 16-byte aligned, or ldd % 8 != 0), chapter 7's registers-epilogue kernel
// (rule `epilogue`); for a block-scaled FP32 D, chapter 7's FP32 kernel (rule `epilogue`: by TMA
// with accumulate where D is 16-byte aligned with ldd % 4 == 0, else from registers; since
// session 69); for the per-tensor FP32 D, choose_per_tensor_f32's rule (rule `epilogue`; by TMA
// for M > 128 where D is 16-byte aligned with ldd % 4 == 0); for an MXFP8 float D, chapter 9's
// FP32 default (rule `chapter`: where D is 16-byte aligned with ldd % 4 == 0 by TMA, on the
// default path with accumulate only, on the dequantize_bf16 path always; else from registers).
// Names that do not exist or do not fit the call throw std::invalid_argument naming the option or
// the variable.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "common/engine/params.hpp"  // engine::Accumulation

namespace fp8gemm::engine {
struct KernelInfo;  // common/engine/plan.hpp
}  // namespace fp8gemm::engine

namespace fp8gemm {

// ---- architecture ----

/// A GPU as the architecture checks see it.
struct DeviceArch {
  int device = -1;  ///< the CUDA device; -1: no CUDA GPU (or no driver)
  int major = 0, minor = 0;
  std::string name;  ///< e.g. "NVIDIA H200"
  int sm_count = 0;  ///< multiprocessors (132 on the H200)
};

/// The current device of the calling thread (cudaGetDevice): its compute capability and name,
/// cached per device. device = -1 when there is no GPU. Never throws.
DeviceArch current_device_arch();

/// The rule of the engine plans (per-tensor, block-scaled, grouped, weight gradient): their
/// kernels are sm_90a code (wgmma, setmaxnreg, clusters with TMA multicast), which runs on compute
/// capability 9.0 only (H100, H200, H800, GH200). Throws std::runtime_error naming `who`, the
/// device and what is supported otherwise; on a device of -1 (no GPU) it does nothing (the plan
/// then reports the missing GPU itself, after validating the call). Pure C++.
void require_hopper(const DeviceArch& arch, const char* who);

/// Which MXFP8 kernel a device runs.
enum class MxKernelArch : int {
  hopper_sm90a = 0,      ///< chapter 9's Hopper kernels (wgmma, MX scales applied per 32 K)
  blackwell_sm100a = 1,  ///< chapter 9's tcgen05 kernel (block-scaled MMA, TMEM)
};
const char* to_string(MxKernelArch a);

/// MXFP8's rule: compute capability 9.0 -> Hopper; 10.0 -> Blackwell when the build has sm_100a
/// code (`sm100_compiled`, FP8GEMM_BUILD_SM100=ON); anything else (other 10.x: sm_100a code does
/// not run there; 12.x; 8.x; no GPU) throws std::runtime_error naming the device and what is
/// supported. Pure C++.
MxKernelArch mx_kernel_arch(const DeviceArch& arch, bool sm100_compiled);

// ---- kernel choice ----

/// The kernel families that have a dispatch table (the sweep's families).
enum class DispatchFamily : int {
  block_scaled = 0,         ///< chapter 7, bf16 D
  per_tensor_promoted = 1,  ///< chapter 6
  per_tensor_fast = 2,      ///< chapter 6, Accumulation::fast
  mxfp8_hopper = 3,         ///< chapter 9, Hopper kernels
};
/// "block_scaled", "per_tensor_promoted", "per_tensor_fast", "mxfp8_hopper" (the names in the
/// sweep's JSON and the table).
const char* to_string(DispatchFamily f);
/// "FP8GEMM_KERNEL_BLOCK_SCALED", "FP8GEMM_KERNEL_PER_TENSOR_PROMOTED",
/// "FP8GEMM_KERNEL_PER_TENSOR_FAST", "FP8GEMM_KERNEL_MXFP8_HOPPER".
const char* dispatch_env_var(DispatchFamily f);

/// How a plan's kernel was chosen.
enum class DispatchRule : int {
  option = 0,       ///< Options::kernel
  environment = 1,  ///< FP8GEMM_KERNEL_<FAMILY>
  table = 2,        ///< the exact shape in the dispatch table
  chapter = 3,      ///< no table entry, or a path the table does not serve (split-K,
                    ///< dequantize_bf16, requantize_block_scaled: chapter 7's per-shape
                    ///< table; an MXFP8 float D: chapter 9's FP32 default): the chapter's own
                    ///< rule
  epilogue = 4,     ///< a D the table does not serve: a bf16 D that TMA cannot store (the
                    ///< chapter's registers epilogue), or an FP32 D of the block-scaled family
                    ///< (chapter 7's FP32 kernel: by TMA with accumulate where it can, else from
                    ///< registers) or of the per-tensor one (its FP32 rule, by TMA where it can)
  single = 5,       ///< one kernel for the architecture (MXFP8 on Blackwell)
  table_sms = 6,    ///< the table's row rescaled to the plan's SMs (rescaled_choice)
};
const char* to_string(DispatchRule r);

/// One row of the dispatch table (src/dispatch_table.inc; dispatch_table.md shows them all).
struct DispatchEntry {
  const char* family;  ///< to_string(DispatchFamily)
  std::int64_t M, N, K;
  const char* kernel;     ///< the fastest correct kernel in the sweep
  double us;              ///< its median time there
  const char* runner_up;  ///< the second fastest ("" if it was the only one)
  double runner_up_us;
  int candidates;  ///< kernels the sweep timed on this shape
  int source;      ///< index into dispatch_sources()
};
/// Where a table row was measured: the sweep's JSON, its commit and GPU.
struct DispatchSource {
  const char* path;  ///< relative to the repository, e.g. "plots/data/h200/ch07/sweep_large.json"
  const char* commit;
  const char* gpu;
  int sms = 0;  ///< the GPU's SMs, all of which every kernel's grid used (0: unknown)
};
/// A kernel the sweep of a table row timed on its shape and found correct: every such kernel, not
/// only the row's fastest, by its block median (every kernel timed the same way; the row itself
/// may have been ranked by the sweep's interleaved confirmation of its fastest few, and the two
/// can differ by ~10% on large shapes: "The dispatch sweep" in the README). What rescaled_choice
/// ranks.
struct DispatchCandidate {
  const char* family;
  std::int64_t M, N, K;
  const char* kernel;
  double us;   ///< its block median in the sweep
  int source;  ///< index into dispatch_sources()
};
/// Every candidate of every row, per row by block median (not always the row's kernel first).
const std::vector<DispatchCandidate>& dispatch_candidates();
/// Every row of the table, in the generated order (family, M, N, K).
const std::vector<DispatchEntry>& dispatch_table();
const std::vector<DispatchSource>& dispatch_sources();
/// The row for exactly this shape, or nullptr.
const DispatchEntry* dispatch_table_entry(DispatchFamily f, std::int64_t M, std::int64_t N,
                                          std::int64_t K);

/// Waves of the engine's persistent grid for an M x N call of block_m x block_n tiles in clusters
/// of cluster_m x cluster_n CTAs on `sms` SMs: engine::grid_waves (common/engine/plan.hpp), which
/// the chapters' hand tables use too. Pure.
std::int64_t grid_waves(std::int64_t M, std::int64_t N, int block_m, int block_n, int sms,
                        int cluster_m = 1, int cluster_n = 1);

/// A kernel as rescaled_choice sees it: its name, tile and cluster shape.
struct TileShape {
  std::string name;
  int block_m = 0, block_n = 0, cluster_m = 1, cluster_n = 1;
};
/// One candidate rescaled: its sweep time `us` on the sweep's SMs, its waves on the plan's SMs and
/// on the sweep's, and `predicted` = us * waves_usable / waves_sweep.
struct RescaledTime {
  std::string name;
  double us = 0;
  std::int64_t waves_usable = 0, waves_sweep = 0;
  double predicted = 0;
};
/// Every candidate of `candidates` (name, us: times on `sweep_sms` SMs) that `tiles` describes,
/// rescaled to `usable_sms` for an M x N call, in the given order. Pure.
std::vector<RescaledTime> rescaled_times(
    const std::vector<std::pair<std::string, double>>& candidates, std::int64_t M,
    std::int64_t N, int sweep_sms, int usable_sms, const std::vector<TileShape>& tiles);
/// The kernel for `usable_sms` among `times` (rescaled_times' answer for those counts): `row` (the
/// table's kernel) where it keeps its waves on fewer SMs than the sweep's (every other kernel can
/// only gain waves then, so nothing argues for a change), else the least `predicted`, unless
/// `row`'s predicted time is within
/// `margin` (3%) of it (the sweep's times are not that exact). "" if no candidate has a tile
/// shape. Why it works where it does: the sweep's time per wave holds when the waves change (each
/// wave does the same work), which the 112-SM sweep of session 46 confirmed on the 18 DeepSeek-V3
/// block-scaled shapes (every pick within 3% of its fastest; the 132-SM table's kernel up to 1.53x
/// slower). Pure.
std::string rescaled_choice(const std::vector<RescaledTime>& times, int sweep_sms, int usable_sms,
                            const std::string& row, double margin = 0.03);

/// What a plan runs and why.
struct KernelChoice {
  std::string kernel;  ///< a kernel's name: of the chapter's kernels() list, or of
                       ///< ch07::splitk_kernels() (split-K), ch09::hopper_bf16_kernels()
                       ///< (dequantize_bf16), ch07::kernels() (MXFP8's
                       ///< requantize_block_scaled path); on Blackwell the label of the one
                       ///< sm_100a kernel
  DispatchRule rule = DispatchRule::chapter;
  std::string why;  ///< one line: "dispatch table: 4096x7168x2048 ran 116.6 us in ..."
};

/// The override an environment value gives a shape: `value` is "NAME" (every shape) or a comma
/// list of "MxNxK=NAME" and at most one "*=NAME" (the shapes not listed); "" when nothing
/// applies (value null or empty, or no entry for the shape). Throws std::invalid_argument naming
/// `variable` when the value is malformed. Names are not checked here.
std::string env_kernel_for(const char* variable, const char* value, std::int64_t M, std::int64_t N,
                           std::int64_t K);

/// The block-scaled plan's choice (fp8gemm::BlockScaledPlan). `f32_output`: Output::f32;
/// `tma_store_ok`: TMA can store D, 16-byte aligned rows of D's element type (ldd % 8 == 0 for
/// bf16, ldd % 4 == 0 for float) less than 2^40 bytes apart (engine::tma_store_compatible);
/// `option`: Options::kernel; `env`: the value of FP8GEMM_KERNEL_BLOCK_SCALED (null: unset).
/// Throws std::invalid_argument when the option names no kernel of chapter 7 or one that cannot
/// write this D (an FP32 D needs a *_f32 kernel, by TMA only where TMA can store D; a bf16 D TMA
/// cannot store needs a registers one), or when the variable names no kernel (every name is
/// checked) or, for a bf16 D stored by TMA (the only calls the variable applies to), one that
/// cannot write it. `usable_sms`: the SMs the plan's grid may use (engine::usable_sms of
/// Options::max_sms and the GPU's count); 0 or the table sweep's count: the table's row as it is;
/// another count: the row rescaled to it (rule table_sms). A shape with no row gets the chapter's
/// rule for `usable_sms` SMs (engine::kReferenceSms, 132, when 0). The same for the two below,
/// except that chapter 9's Hopper fallback (no row) takes its first kernel whose epilogue fits D,
/// whatever the SM count. A grid that is not persistent uses every SM: its plan passes the GPU's
/// count here. `accumulate`: Gemm::accumulate (FP32 D only); with it and `tma_store_ok` the
/// chapter's rule takes its FP32 kernel by TMA (ch07::choose_kernel).
KernelChoice choose_block_scaled(std::int64_t M, std::int64_t N, std::int64_t K, bool f32_output,
                                 bool tma_store_ok, const std::string& option, const char* env,
                                 int usable_sms = 0, bool accumulate = false);

/// The per-tensor plan's choice (fp8gemm::PerTensorPlan). The kernel named by the option or the
/// variable (FP8GEMM_KERNEL_PER_TENSOR_PROMOTED or _FAST, after `accumulation`) must accumulate
/// the way `accumulation` says: fast accumulation stays opt-in.
KernelChoice choose_per_tensor(std::int64_t M, std::int64_t N, std::int64_t K,
                               engine::Accumulation accumulation, bool tma_store_ok,
                               const std::string& option, const char* env, int usable_sms = 0);

/// The per-tensor GEMM's FP32-output kernels (the library's own: src/per_tensor_f32.cu, chapter
/// 6's math with the engine's FP32 epilogues), promoted and fast, named as chapter 6 names kernels:
/// from registers (registers_f32, "128x64_s8_c1x1_promoted_f32") 128 x 256 in 2 x 1 clusters,
/// 128 x 192, the decode tiles 128 x {128, 64, 32, 16} and 64 x {128, 64, 32, 16} and a ping-pong
/// 128 x 128; by TMA (tma_store_f32, "..._f32_tma_b2": D 16-byte aligned, ldd a multiple of 4)
/// 128 x 256 in 2 x 1 clusters, 128 x 192, 128 x 128 and its ping-pong form (15 a mode), and two
/// promoted comparison kernels by TMA, by name only (comparison_only).
const std::vector<engine::KernelInfo>& per_tensor_f32_kernels();

/// The per-tensor plan's choice for FP32 D (fp8gemm::PerTensorGemmF32): Options::kernel, a name of
/// per_tensor_f32_kernels() that accumulates the way `accumulation` says (and, when it stores by
/// TMA, with `tma_store_ok`: D 16-byte aligned, ldd a multiple of 4), else rule `epilogue`: for
/// M <= 128 the FP32 twin (registers_f32) of chapter 6's decode tile for the shape on `usable_sms`
/// SMs (kReferenceSms when 0; ch06::choose_kernel: its hand table, else its decode rule), or
/// where the library has no kernel of that size, the narrowest with its rows and at least its
/// columns (128 x 56 -> 128 x 64), then half as wide while its tiles still fit one wave of the
/// SMs (fast 64 x 2112 x 7168: 64 x 32 -> 64 x 16), for
/// larger M the candidate of per_tensor_f32_candidates(K, ...) with the best wave efficiency x
/// fill x speed (fill: the part of its tiles inside D).
/// No sweep behind it (by-name timings at M = 4096 on an H100 and the H200). The dispatch table and
/// FP8GEMM_KERNEL_PER_TENSOR_* serve bf16 D only: a variable set is still checked (a typo shows
/// on every call) and the choice's `why` says it did not apply.
KernelChoice choose_per_tensor_f32(std::int64_t M, std::int64_t N, std::int64_t K,
                                   engine::Accumulation accumulation, bool tma_store_ok,
                                   const std::string& option, const char* env,
                                   int usable_sms = 0);

/// One kernel the FP32 rule weighs for M > 128: its tile, cluster and epilogue are the compiled
/// kernel's (per_tensor_f32_kernels()), its speed measured.
struct PerTensorF32Candidate {
  const engine::KernelInfo* kernel;  ///< an element of per_tensor_f32_kernels()
  double speed;  ///< on whole waves, relative to the list's first candidate (the ping-pong's > 1)
};
/// The FP32 rule's candidates for one K and accumulation mode (M > 128), by TMA where
/// `tma_store_ok`, their speeds measured by name at M = 4096 on an H100 and the H200 (dispatch.cpp
/// says which timing gave which number): from registers 128 x 256 (2 x 1 clusters), 128 x 192,
/// 128 x 128; fast by TMA the same, and with 512 < K <= 3072 the ping-pong 128 x 128; promoted by
/// TMA 128 x 128, 128 x 192 and 128 x 256.
std::vector<PerTensorF32Candidate> per_tensor_f32_candidates(std::int64_t K,
                                                             engine::Accumulation accumulation,
                                                             bool tma_store_ok);

/// The MXFP8 plan's choice on Hopper (fp8gemm::MxPlan; chapter 9's hopper_kernels()).
KernelChoice choose_mx_hopper(std::int64_t M, std::int64_t N, std::int64_t K, bool tma_store_ok,
                              const std::string& option, const char* env, int usable_sms = 0);

}  // namespace fp8gemm
