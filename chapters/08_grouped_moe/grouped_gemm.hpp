// Chapter 8: the grouped block-scaled GEMM of a mixture-of-experts layer, one launch for all
// groups, group sizes read on the device only.
//
//   for every group g:  D[rows of g, :] = A[rows of g, :] . B_g^T   (DeepSeek-V3 block scaling)
//   contiguous  A [rows, K], D [rows, N]; group g owns rows offsets[g] .. offsets[g+1] - 1
//               (offsets: G + 1 int32 on the device; offsets[0] = 0, monotone, offsets[G] = rows).
//               Any rows per group, 0 included: no padding.
//   masked      A [G * rows, K], D [G * rows, N] (rows = M_max per group); group g owns rows
//               g * rows .. g * rows + masked_m[g] - 1 (masked_m: G int32 on the device, clamped
//               to [0, rows]); rows past masked_m[g] are neither computed into results nor written.
//   B           [G * N, K] e4m3 (B_g: rows g N .. g N + N - 1), 128 x 128 scales per group:
//               [G][ceil(N/128)][ld] floats, ld = scale_b_layout.ld
//   scale_a     1 x 128 scales over all rows of A (GroupScaleLayout), as chapter 7
//   D           bf16 (Output::bf16, the default), or float (Output::f32; with `accumulate`,
//               D = A.B^T + D in each group's rows), row-major with ldd elements per row. The
//               rows of no group (a masked group's rows past masked_m[g]; contiguous rows are all
//               some group's when the offsets are valid) are never read or written, in either
//               type: with `accumulate` they keep what they held.
// Preconditions on the device data (the host never reads it in the default mode, so a call can
// be captured in a CUDA graph and replayed with other group sizes):
//   contiguous  offsets[0] == 0, offsets[g] <= offsets[g + 1], offsets[G] == rows
//   masked      0 <= masked_m[g] <= M_max
// Without the checking mode a violation is not reported, and gives wrong results, but never a
// store outside D: the schedule (group_rows, common/engine/grouped_schedule.hpp) clamps offsets
// into [0, rows], a decreasing offset makes an empty group (never a negative one), and masked_m
// is clamped to [0, M_max]; the rows a bad description skips keep what D held (CPU test
// "grouped schedule: offsets outside [0, rows] are clamped, never a tile outside D"). Keeping the
// description valid is the caller's precondition; the checking mode catches a violation.
// Checking mode (Options::check_offsets): run() first launches a one-block kernel that validates
// the description where the GEMM reads it (check_offsets.hpp has the rules), copies the first
// violation back and synchronises the stream; a violation throws std::runtime_error naming the
// array, the index, the value and the rule, and the GEMM is not launched. The copy and the
// synchronisation cost a round trip per call and cannot be captured in a CUDA graph: run() on a
// capturing stream throws std::invalid_argument. For debugging and tests, not for production.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "common/cuda.hpp"
#include "common/engine/plan.hpp"
#include "common/scale_layout.hpp"

namespace fp8gemm::ch08 {

enum class Layout : int { contiguous = 0, masked = 1 };

/// D's element type (chapter 7's choice, the same names).
enum class Output : int {
  bf16 = 0,  ///< D is bf16 (std::uint16_t bits), rounded to nearest even from the FP32 sum
  f32 = 1,   ///< D is float; with `accumulate`, D = A.B^T + D (no rounding to bf16 at all)
};

struct GroupedGemm {
  Layout layout = Layout::contiguous;
  int groups = 0;                   ///< G >= 1
  std::int64_t rows = 0;            ///< contiguous: total rows; masked: M_max
  std::int64_t N = 0, K = 0;
  const int* offsets = nullptr;     ///< contiguous: G + 1 device int32
  const int* masked_m = nullptr;    ///< masked: G device int32
  const std::uint8_t* A = nullptr;  ///< e4m3, lda (0: K)
  std::int64_t lda = 0;
  const std::uint8_t* B = nullptr;  ///< e4m3 [G * N, K], ldb (0: K)
  std::int64_t ldb = 0;
  const float* scale_a = nullptr;
  GroupScaleLayout scale_a_layout{};  ///< mn-major only; ld 0: TMA-aligned over all rows
  const float* scale_b = nullptr;
  BlockScaleLayout scale_b_layout{};  ///< ld 0: padded
  void* D = nullptr;                ///< bf16 or float as `output` says, ldd (0: N)
  std::int64_t ldd = 0;
  Output output = Output::bf16;
  bool accumulate = false;          ///< only with Output::f32: D = A.B^T + D
};

struct Options {
  /// By name (kernels()); "" = default_kernel()'s choice. A stream-K kernel (_sk, _skr; session
  /// 18, comparison-only) makes the plan own a workspace that every run() writes: run such a plan
  /// on one stream at a time (two runs at once may mix partial tiles, or leave one waiting for a
  /// flag the other consumed). So does a kernel that draws its tiles from a counter (_dyn;
  /// session 32) chosen by name: its counter is then the plan's, and two runs at once would share
  /// it, each computing only the tiles it drew (counter_schedule below gives it the caller's).
  std::string kernel;
  /// Validate the device group description before every run() (see the top of this file): a
  /// round trip to the host per call, not capturable in a CUDA graph.
  bool check_offsets = false;
  /// Opt in to the counter schedule (session 33), for a caller that gives every run its own
  /// tile counter: run(stream, tile_counter). For a contiguous call with fewer than 1024 rows
  /// per group on average, or (session 35) fewer than 2048 at K >= 4096, the plan takes
  /// 128x256_s4_c1x1_promoted_tma_b1_dyn (counter_schedule_kernel()), whose CTAs draw their tiles
  /// from that counter, so that a CTA whose tiles were cheap (a group's last, partly idle row
  /// tile) takes more of them: 0.952x and 0.980x the static kernel's time on the skewed
  /// 8192-token cases, 0.965-0.999x the 256 x 128 default's at K = 4096 and 7168 with 1024-1536
  /// rows per group (README, "Session 33", "Session 35"). Elsewhere the plan is the default one and
  /// ignores the counter (takes_tile_counter() says which). Not with `kernel` (this option picks
  /// the kernel). The PyTorch ops opt in.
  bool counter_schedule = false;
  /// SMs the persistent grid may use (0: all), to leave the rest to kernels running beside it (an
  /// expert-parallel all-to-all overlapping the GEMM, for one). At least one cluster runs: a
  /// kernel with 2-CTA clusters given 1 uses 2. Every schedule covers all tiles with fewer CTAs.
  int max_sms = 0;
};

/// Every compiled grouped kernel.
const std::vector<engine::KernelInfo>& kernels();

/// The kernel a Plan without Options::kernel runs for `gemm` (layout, G, rows, output filled
/// in): `tma_store_ok` says whether D can be written by TMA (16-byte aligned, rows 16 bytes
/// apart, at most 2^30 rows less than 2^34 bytes apart); grouped_gemm.cpp gives the rule and the
/// measurements behind it. A float D (Output::f32) takes an FP32 kernel (f32 in its name: by TMA
/// where `tma_store_ok`, else from registers). Pure C++.
const engine::KernelInfo& default_kernel(const GroupedGemm& gemm, bool tma_store_ok);

/// The kernel a Plan with Options::counter_schedule runs for `gemm` (same arguments): the
/// counter kernel (dynamic_schedule) for contiguous calls with fewer than 1024 rows per group on
/// average, or fewer than 2048 at K >= 4096; elsewhere default_kernel()'s. Pure C++.
const engine::KernelInfo& counter_schedule_kernel(const GroupedGemm& gemm, bool tma_store_ok);

GemmRequirements requirements();

class Plan {
 public:
  /// Throws std::invalid_argument (bad arguments, before any GPU work) or std::runtime_error.
  explicit Plan(const GroupedGemm& gemm, const Options& options = {});
  ~Plan();
  Plan(const Plan&) = delete;
  Plan& operator=(const Plan&) = delete;
  /// Launches on `stream` (no host read of the offsets: capturable in a CUDA graph). In checking
  /// mode: first the device check, a copy of its verdict and a stream synchronisation; throws
  /// std::runtime_error for a bad description (nothing launched after the check) and
  /// std::invalid_argument when `stream` is capturing.
  /// A plan that takes a tile counter (takes_tile_counter()) refuses this one
  /// (std::invalid_argument): it has no counter of its own.
  void run(cudaStream_t stream) const;
  /// Launches on `stream` as run(stream) does; a plan that takes a tile counter
  /// (Options::counter_schedule) draws its tiles from `tile_counter`: two ints of device memory,
  /// 4-byte aligned, zero before the first run that uses them; every run leaves them zero again,
  /// so one counter serves any number of runs that are ordered (one stream), but never two runs
  /// at once (they would share out the tiles and each leave the other's unwritten): one counter
  /// per stream, and a CUDA graph its own (zeroed inside the graph, or used by that graph only).
  /// A plan that takes none ignores `tile_counter` (null is fine). Throws std::invalid_argument,
  /// before any launch, for a null or misaligned counter when one is needed, one that shares a
  /// byte with A, B, D, a scale tensor or the offsets / masked_m (the kernel writes the counter
  /// while it reads them; since session 57), or one that is not device memory of the current
  /// device (host memory, freed: checked by a driver query); these checks run the first time a
  /// counter is seen, then are remembered until rebind(). The counter's value is device data, read by
  /// the host only in checking mode (Options::check_offsets: std::runtime_error, nothing
  /// launched, unless it reads {0, 0}); otherwise a positive count left in it makes the kernel skip
  /// that many tiles (their part of D unwritten), and a second int that is not 0 keeps the last
  /// CTA from resetting the counter, so that later runs compute nothing. A negative count never makes it write outside
  /// D: a CTA that draws a negative tile number stops drawing, and the others go on (below minus
  /// the grid's CTAs, none is left and D stays unwritten).
  void run(cudaStream_t stream, int* tile_counter) const;
  /// Whether run() needs a tile counter (Options::counter_schedule took a _dyn kernel).
  bool takes_tile_counter() const;
  /// Re-points the plan at the buffers of `gemm`: the call the plan was built for in everything
  /// but its pointers (offsets or masked_m, A, B, scale_a, scale_b, D); anything else that differs
  /// is refused (std::invalid_argument naming it). The new pointers are checked as the
  /// constructor checks them; the tensor maps' addresses are rewritten (host work only, nothing
  /// launched). If it throws, the plan is unchanged. Not concurrently with run() of this plan on
  /// another thread.
  void rebind(const GroupedGemm& gemm);
  std::string describe() const;
  /// CTAs of the persistent grid (what a stream-K kernel's division runs on).
  int grid_ctas() const;
  /// The kernel the plan runs.
  const engine::KernelInfo& kernel() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

/// A tile counter for Plan::run(stream, tile_counter): two ints of device memory, zeroed, the
/// zeroing finished before it returns (so any stream may use it first). One per stream.
DeviceBuffer<int> make_tile_counter();

}  // namespace fp8gemm::ch08
