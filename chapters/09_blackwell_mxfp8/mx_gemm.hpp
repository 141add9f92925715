// Chapter 9, Blackwell half: an MXFP8 GEMM for sm_100a (tcgen05 block-scaled MMA, accumulators
// in tensor memory). NEVER RUN ON HARDWARE in this project (no Blackwell GPU): it compiles, its
// SASS is inspected, its host side is tested on the CPU; see README.md.
//
//   D (M x N, row-major bf16) = sum over 32-wide K blocks kb of
//       2^(sa[m, kb] - 127) * 2^(sb[n, kb] - 127) * (A[m, kb-block] . B[n, kb-block])
//   A: M x K e4m3 row-major (lda), B: N x K e4m3 row-major (ldb) ("NT"),
//   scale_a / scale_b: UE8M0 bytes, one per 1 x 32 block along K, in the Mx1x32 layout of
//   common/scaling.hpp (128-row x 4-column tiles of 512 bytes, tiles row-major, padded to whole
//   tiles) — the layout tcgen05 block scaling and cuBLAS (VEC32_UE8M0) read. The padding may
//   hold any bytes: no kernel of this chapter reads it as data (the quantisers write zeros; the
//   Hopper kernels' test fills it with 0xFF; this kernel, never run, issues no MMA past K).
//
//   fp8gemm::ch09::Plan plan(gemm);   // validate, check the GPU (sm_100 only), tensor maps,
//                                     // launch configuration: once
//   plan.run(stream);                 // launch only
#pragma once

#include <cuda_runtime.h>

#include <cstdint>
#include <memory>
#include <string>

#include "common/validate.hpp"

namespace fp8gemm::ch09 {

/// D's element type (chapter 7's choice, the same names). A float D on Hopper (HopperPlan,
/// every path; session 64) and on the sm_100a kernel (session 65: its epilogue stores the
/// tensor memory's FP32 unrounded; compiled and SASS-checked, never run, as the whole kernel).
enum class Output : int {
  bf16 = 0,  ///< D is bf16 (std::uint16_t bits)
  f32 = 1,   ///< D is float; with `accumulate`, D = A.B^T + D
};

/// One MXFP8 GEMM call. Leading dimensions in elements; 0 means packed (lda = ldb = K, ldd = N).
/// scale_*_bytes: how many bytes the caller allocated for the scales (-1: unknown, not checked).
struct MxGemm {
  std::int64_t M = 0, N = 0, K = 0;
  const std::uint8_t* A = nullptr;
  std::int64_t lda = 0;
  const std::uint8_t* B = nullptr;
  std::int64_t ldb = 0;
  const std::uint8_t* scale_a = nullptr;
  std::int64_t scale_a_bytes = -1;
  const std::uint8_t* scale_b = nullptr;
  std::int64_t scale_b_bytes = -1;
  void* D = nullptr;  ///< bf16 bits, or float (Output::f32)
  std::int64_t ldd = 0;
  Output output = Output::bf16;
  bool accumulate = false;  ///< only with Output::f32: D = A.B^T + D
};

struct Options {
  int max_sms = 0;  ///< SMs the persistent grid may use (0: all)
  /// D by TMA store (a float D with accumulate: TMA reduce-add) where D's rows are 16-byte
  /// aligned (d_vector_stores) (false: always the stores from registers, the kernel's other
  /// path; for its test).
  bool tma_store = true;
  /// 1 (default): every CTA computes its 128 x 128 tiles alone (tcgen05 .cta_group::1).
  /// 2: clusters of two CTAs compute 256 x 128 tiles with one M = 256 MMA per k step, each CTA
  /// loading its 128 rows of A and half of B (.cta_group::2). Both never run here (README).
  int cta_group = 1;
};

/// Whether D's rows are 16-byte aligned: D 16-byte aligned and ldd a multiple of 8 (bf16) or 4
/// (float). The sm_100a kernel's vector stores and TMA store need it. Pure C++.
bool d_vector_stores(const MxGemm& gemm);

/// Bytes of the Mx1x32 scale tensor of a rows x K operand: round_up(rows, 128) x
/// round_up(ceil(K / 32), 4) (common/scaling.hpp's Mx1x32::size()).
std::int64_t scale_bytes(std::int64_t rows, std::int64_t K);

/// The kernel's rules: any M, N >= 1; K >= 32 and a multiple of 32 (one UE8M0 scale per 32 K
/// elements; a partial MX block has no meaning); A, B 16-byte aligned with lda, ldb multiples of
/// 16 (TMA); D 2-byte aligned, ldd >= N; scale pointers 16-byte aligned (TMA) and, when their
/// size is given, at least scale_bytes(M or N, K) bytes.
GemmRequirements requirements();

/// The call as the generic validation sees it (scale recipes Mx1x32, their extents from the
/// layout); the Hopper plan (hopper_mx.hpp) hands it to the engine.
GemmArgs gemm_args(const MxGemm& gemm);

/// The call with packed leading dimensions filled in.
MxGemm with_defaults(const MxGemm& gemm);

/// Pure C++ validation (no CUDA call): throws std::invalid_argument naming the argument and the
/// rule ("fp8gemm::ch09_blackwell_mxfp8: K = 48 must be a multiple of 32 (...)"). The rules both
/// halves share: with a float D, 4-byte aligned; `accumulate` only with Output::f32.
void validate(const MxGemm& gemm);

/// The output rules of validate() alone (a valid Output; accumulate only with Output::f32), with
/// `who` starting the message: both halves' plans call it.
void check_output(const MxGemm& gemm, const char* who);

/// The launch: a persistent grid of units (a CTA, or with cta_group 2 a cluster of two CTAs) of
/// kThreads threads each, min(tiles, SMs / cta_group) of them, unit u walking the tiles
/// u, u + units, ... (m fastest) of tile_rows x 128.
struct LaunchConfig {
  int cta_group = 1;           ///< also the CTAs per cluster
  std::int64_t tile_rows = 0;  ///< rows of D per tile: 128 * cta_group
  std::int64_t tiles_m = 0, tiles_n = 0, tiles = 0;
  std::int64_t k_blocks = 0;  ///< ceil(K / 128) pipeline stages per tile
  int units = 0;              ///< CTAs or CTA pairs
  int grid = 0, block = 0;    ///< grid = units * cta_group CTAs
  int stages = 0;
  int smem_bytes = 0;
  int tmem_columns = 0;
};
/// Pure C++. `num_sms`: the GPU's SM count; `max_sms` (0: all) caps the CTAs by the engine's rule
/// (engine::persistent_grid_clusters: at least one CTA pair, so cta_group = 2 given max_sms = 1
/// runs 2 CTAs, as the Hopper plans do); `cta_group` 1 or 2 (Options::cta_group). Throws
/// std::invalid_argument for a bad count, or a GPU of fewer SMs than a pair.
LaunchConfig launch_config(std::int64_t M, std::int64_t N, std::int64_t K, int num_sms,
                           int max_sms = 0, int cta_group = 1);

/// Whether this build compiled the sm_100a kernel (FP8GEMM_BUILD_SM100=ON, the `full` preset).
bool compiled_for_sm100();

/// Throws std::runtime_error unless the current device is compute capability 10.0 (B200/GB200;
/// the sm_100a code runs there only) and the kernel was compiled. Never a silent wrong answer.
void require_sm100_device();

class Plan {
 public:
  /// Throws std::invalid_argument (bad arguments, before any CUDA call) or std::runtime_error
  /// (not built for sm_100a, no sm_100 GPU, CUDA failure).
  explicit Plan(const MxGemm& gemm, const Options& options = {});
  ~Plan();
  Plan(const Plan&) = delete;
  Plan& operator=(const Plan&) = delete;
  Plan(Plan&&) noexcept;
  Plan& operator=(Plan&&) noexcept;

  /// Launches on `stream`. No validation, no allocation, no host sync.
  void run(cudaStream_t stream) const;
  /// The device the plan was built on; run() refuses any other current device.
  int device() const;
  const LaunchConfig& config() const;
  std::string describe() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

/// Plan + run.
void gemm(const MxGemm& gemm, cudaStream_t stream);

}  // namespace fp8gemm::ch09
