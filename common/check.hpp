// Correctness checks shared by the chapter executables and the GPU tests: fresh random operands,
// poisoned output, the kernel, and the float64 CPU reference on the dequantised operands.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "common/gemm.hpp"
#include "common/reference.hpp"

namespace fp8gemm {

/// Tolerance on the relative Frobenius error of a bf16 D computed with FP32 accumulation, as a
/// function of K. The reference is exact on the dequantised operands, so what is left is
///  (a) the rounding of D to bf16: at most 2^-8 = 3.9e-3 relative for one element (half an ulp
///      of a 7-bit mantissa; a 1 x 1 D can hit it: 3.3e-3 was seen on the H200), about 1.66e-3 in
///      Frobenius norm over many elements (measured on every standard shape);
///  (b) the accumulation: Hopper's FP8 tensor cores add products into an FP32 accumulator with
///      reduced (~14-bit, truncating) alignment unless the kernel promotes partial sums. Measured
///      on the H200 with cuBLASLt fast accumulation on N(0,1) e4m3 data, in Frobenius norm:
///      1.70e-3 at K = 512, 2.11e-3 at 4096, 2.67e-3 at 8192, 3.55e-3 at 16384
///      (plots/data/h200/baseline_cublaslt.json); chapter 5 (wgmma) measured the same.
/// 2^-8 + 2.5e-7 K covers (a) for any output size plus (b) with margin (6.0e-3 at K = 8192,
/// 8.0e-3 at 16384) and still fails on any indexing, tiling or scale bug: those give errors of
/// order 1, and even one missing 128-wide K slice at K = 16384 gives about
/// sqrt(128 / 16384) = 9e-2 — in the tiles that miss it. A bug confined to a few output tiles is
/// diluted in the global error (one 128 x 128 tile of 4096^3 missing 1 of its 32 K blocks: about
/// 5.5e-3 globally, 0.18 in that tile), so the same tolerance bounds the worst tile's error too
/// (CheckResult::worst_tile_error).
inline double per_tensor_tolerance(std::int64_t K) { return 0x1p-8 + 2.5e-7 * double(K); }
/// The tolerance at the largest K we test (16384): an upper bound for any shape.
inline const double kPerTensorTolerance = per_tensor_tolerance(16384);

/// Where the operands of a check live.
enum class OperandMemory {
  device,   ///< cudaMalloc
  managed,  ///< cudaMallocManaged (the kernels must accept it: docs/contract.md)
};

struct CheckOptions {
  std::uint64_t seed = 1;
  /// Compare every row of D when M <= this; otherwise `sample_rows` rows drawn at random
  /// (the first and last row always among them).
  std::int64_t full_reference_max_m = 1024;
  std::int64_t sample_rows = 48;
  bool skip_reference_if_large = false;

  // The operands.
  float stddev = 1.0f;            ///< A and B: e4m3 of N(0, stddev) (saturated to +-448)
  /// A and B: uniform integers in [-4, 4] instead, exact in e4m3 (check_per_tensor_exact sets it).
  bool integer_values = false;
  std::optional<float> scale_a;   ///< the per-tensor scales; drawn from [0.25, 2) when unset
  std::optional<float> scale_b;
  std::int64_t zero_row_a = -1;   ///< >= 0: this row of A is all zeros

  // Where they live and how the kernel runs.
  OperandMemory memory = OperandMemory::device;
  /// D starts this many bytes (0 .. 15) into its buffer. The buffer holds 16 bytes before and
  /// after D's M x N; every byte of it outside D is a guard that must stay untouched. An odd
  /// offset gives a D the kernels must refuse (bf16 needs 2-byte alignment).
  std::size_t d_byte_offset = 0;
  cudaStream_t stream = nullptr;  ///< the kernel (and the poisoning of D) run on this stream
  /// The byte D's whole buffer (guards included) is filled with before the kernel runs: 0xFF makes
  /// every bf16 NaN, so an unwritten entry fails the comparison; where the expected result is
  /// itself NaN, a finite pattern (0x3F: bf16 0x3F3F, about 0.75) keeps an unwritten D visible.
  std::uint8_t d_poison_byte = 0xFF;
};

struct CheckResult {
  ErrorStats error;                       ///< against the float64 reference
  std::vector<std::uint16_t> d;           ///< the kernel's D, downloaded (M x N bf16 bits)
  std::int64_t rows_checked = 0;
  float scale_a = 0, scale_b = 0;
  double tolerance = 0;                   ///< per_tensor_tolerance(K)
  /// The worst 128 x 128 output tile's relative error (worst_tile_error() in reference.hpp),
  /// over the checked rows: one wrong tile fails the check even when the global error, diluted
  /// over every other tile, does not.
  double worst_tile_error = 0;
  std::int64_t guard_bytes_written = 0;   ///< bytes of D's buffer outside D that changed
  // Exact mode (check_per_tensor_exact) only:
  std::int64_t exact_elements = 0;        ///< checked entries whose exact value bf16 represents
  std::int64_t exact_mismatches = 0;      ///< of those, entries where D is not that value
  std::int64_t inexact_out_of_tolerance = 0;  ///< the others, off by more than `tolerance` relative
  std::string describe() const;           ///< "rel 1.1e-03, worst tile 1.3e-03, diff 3e-07, 48 rows"
  /// Every entry of D finite, the global and the worst tile's error within per_tensor_tolerance(K),
  /// nothing written outside D, and in exact mode every exactly representable entry exact.
  bool ok() const {
    return error.ok(tolerance) && worst_tile_error <= tolerance && guard_bytes_written == 0 &&
           exact_mismatches == 0 && inexact_out_of_tolerance == 0;
  }
};

/// The operands of one checked call, built as `opt` says: random e4m3 A (M x K) and B (N x K)
/// with host copies for the reference, the two scales, and D inside a guarded buffer, in device
/// or managed memory. For tests that need more than check_per_tensor(): a call on another
/// thread, a pointer swapped for a bad one, a stream held back. Move-only.
class CheckOperands {
 public:
  CheckOperands(std::int64_t M, std::int64_t N, std::int64_t K, const CheckOptions& opt);
  ~CheckOperands();
  CheckOperands(CheckOperands&&) noexcept;
  CheckOperands& operator=(CheckOperands&&) noexcept;

  /// The call on these operands (D at opt.d_byte_offset into its buffer).
  PerTensorGemm gemm() const;
  /// Fills all of D's buffer, guards included, with opt.d_poison_byte (NaN by default) on `stream`.
  void poison_d(cudaStream_t stream) const;
  /// Downloads D's M x N entries (synchronous; D must be 2-byte aligned).
  std::vector<std::uint16_t> download_d() const;
  /// Downloads D and its guards (synchronous) and compares D with the float64 reference on the
  /// rows `opt` selects; in exact mode (opt.integer_values) also entry by entry.
  CheckResult result() const;

  float scale_a() const;
  float scale_b() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

/// Runs `kernel` once on fresh random e4m3 operands (CheckOperands(M, N, K, opt)) with D poisoned
/// to NaN first, on opt.stream, and compares with the float64 reference (CheckOperands::result).
/// Propagates what the kernel throws (a refused call: std::invalid_argument).
CheckResult check_per_tensor(const PerTensorKernel& kernel, std::int64_t M, std::int64_t N,
                             std::int64_t K, const CheckOptions& opt = {});

/// The exact mode: A and B hold integers in [-4, 4] (exact in e4m3), both scales are 1, so every
/// product and every partial sum the kernels form is an integer far below 2^24: exact in FP32
/// (and in Hopper's reduced-precision FP8 accumulation at these magnitudes). D must then be the
/// exact integer dot product wherever bf16 represents it (|value| <= 256, and beyond that the
/// integers with 8 significant bits) and within `tolerance` relative elsewhere; the counts are in
/// CheckResult's exact fields. Other options as for check_per_tensor.
CheckResult check_per_tensor_exact(const PerTensorKernel& kernel, std::int64_t M, std::int64_t N,
                                   std::int64_t K, const CheckOptions& opt = {});

/// Runs `kernel` `runs` times on one set of random inputs (poisoning D before each run) and
/// returns true if every run's D is bitwise identical to the first.
bool check_deterministic(const PerTensorKernel& kernel, std::int64_t M, std::int64_t N,
                         std::int64_t K, int runs, std::uint64_t seed);

/// ||d - ref|| / ||ref|| (Frobenius) of two bf16 matrices of n entries each (bits, device
/// memory), summed in double on the GPU (default stream; returns when done): how the sweeps
/// compare every kernel's D with a reference D without downloading either. NaN if d holds a NaN
/// (the poison of an entry the kernel did not write).
double relative_difference_bf16(const std::uint16_t* d, const std::uint16_t* ref, std::size_t n);

/// The result of check_float_d_rows: whether it passed, and "rel 1.10e-04, 8 rows, 0 non-finite"
/// (", BLIND (earlier D too small)" where the earlier values could not show a skipped add).
struct FloatDCheck {
  bool ok = false;
  std::string describe;
  ErrorStats stats;    ///< of the checked rows against the expected result
  bool blind = false;  ///< accumulate, and the earlier values < 0.1 of the result (not ok)
};

/// A float D (M x N, row-major, packed, device memory) written by `run`, checked on sampled rows:
/// D first poisoned (NaN), or with `accumulate` filled with N(0, rms(want)) values drawn with
/// `seed` (as large as the product, so a skipped add fails; EarlierShare) and those added to
/// `want` here. `want`: float64 rows `rows` of A.B^T (rows.size() x N). Passes when every checked
/// entry is finite, the relative Frobenius error is within `tolerance` and, with accumulate, the
/// earlier values are visible (share >= 0.1). The executables' float D checks (chapters 7, 9) and
/// chapter 7's FP32-output tests (all rows).
FloatDCheck check_float_d_rows(float* D, std::int64_t M, std::int64_t N,
                               const std::vector<std::int64_t>& rows, std::vector<double> want,
                               bool accumulate, double tolerance, std::uint64_t seed,
                               const std::function<void()>& run);

}  // namespace fp8gemm
