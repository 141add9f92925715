// Operands and checks for chapter 8's executable and GPU tests (test and benchmark code: links
// the float64 reference of fp8gemm::common, which the kernel library does not).
//
// The check is per group: group g's rows of D against a float64 GEMM of the dequantised operands
// A[rows of g] . B_g^T, the rows outside every group (a masked group's padding, everything when
// all groups are empty) still holding the poison.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "common/cuda.hpp"
#include "common/reference.hpp"
#include "common/scale_layout.hpp"
#include "grouped_gemm.hpp"
#include "moe_cases.hpp"

namespace fp8gemm::ch08 {

/// Device operands of one grouped call for a GroupedShape:
///   A            [all_rows, K] e4m3 of N(0, 1), filled on the device from the seed
///   B            [G N, K] e4m3 likewise (B_g = rows g N .. g N + N - 1)
///   scale_a      1 x 128, mn-major TMA-aligned over all rows ([ceil(K/128)][round_up(rows, 4)])
///   scale_b      128 x 128 per group, padded: [G][ceil(N/128)][round_up(ceil(K/128), 4)]
///   D            [all_rows, N] bf16 (D), or float (D_f32) for Output::f32
///   description  G + 1 offsets (contiguous) or G masked_m (masked), as the shape says
/// Scales are 2^x, x ~ N(0, 1.5) clipped to [-4, 4], so a scale read for the wrong row, K block
/// or group shows in the error.
/// Move-only; the host never keeps a copy of A or B (the checks download what they compare).
struct GroupedOperands {
  Layout layout = Layout::contiguous;
  int groups = 0;
  std::int64_t rows = 0;      ///< contiguous: total rows; masked: M_max
  std::int64_t all_rows = 0;  ///< rows of A and D
  std::int64_t N = 0, K = 0;
  DeviceBuffer<std::uint8_t> A, B;
  DeviceBuffer<float> scale_a, scale_b;
  Output output = Output::bf16;
  DeviceBuffer<std::uint16_t> D;  ///< bf16 D (empty for Output::f32)
  DeviceBuffer<float> D_f32;      ///< float D (empty for Output::bf16)
  DeviceBuffer<int> description;

  GroupedOperands(const GroupedShape& shape, std::uint64_t seed, Output output = Output::bf16);

  GroupScaleLayout scale_a_layout() const { return GroupScaleLayout::mn_major_tma_aligned(all_rows); }
  BlockScaleLayout scale_b_layout() const { return BlockScaleLayout::padded(K); }
  /// Floats between two groups' 128 x 128 scales.
  std::int64_t scale_b_group_stride() const { return ceil_div(N, 128) * scale_b_layout().ld; }

  /// The grouped call on these operands (default leading dimensions; `output`, no accumulate).
  GroupedGemm gemm() const;
  /// Every element of D (bf16 or float) NaN (all bits set), on `stream`.
  void poison_d(cudaStream_t stream = nullptr) const;
  /// Copies a description (G + 1 offsets or G masked_m, any values: tests of the checking mode
  /// write bad ones) into the device buffer the call reads; synchronous.
  void upload_description(const std::vector<int>& values);
};

struct GroupedCheck {
  bool ok = false;
  double worst_rel = 0;            ///< the worst group's relative Frobenius error
  double worst_tile = 0;           ///< the worst 128 x 128 tile of any group (reference.hpp)
  int worst_group = -1;            ///< the group with worst_rel
  int groups_checked = 0;          ///< non-empty groups compared
  std::int64_t rows_checked = 0;
  std::int64_t non_finite = 0;     ///< compared entries that are NaN or inf (unwritten: poison)
  std::int64_t stray_entries = 0;  ///< entries of D outside every group that lost the poison
  double tolerance = 0;            ///< per_tensor_tolerance(K) (bf16 D), kF32Tolerance (float D)
  /// With d_before (D = A.B^T + D): D's earlier values beside the expected result over the
  /// compared entries. Unless they are >= 1 % of it (20 x kF32Tolerance), a skipped add could
  /// pass: not ok, "BLIND" in describe.
  EarlierShare earlier;
  std::string describe;            ///< "worst group 3 rel 1.2e-03, worst tile 1.5e-03, 64 rows
                                   ///<  of 32 groups, 0 stray entries"
};

/// A float D's tolerance, relative and per tile: no bf16 rounding (alone ~1.7e-3), only the
/// tensor cores' accumulation inside each 128-K block (chapter 7's FP32 output measured
/// 4e-5 .. 1.3e-4 on the H200; its test allows 5e-4).
inline constexpr double kF32Tolerance = 5e-4;

/// Compares the D on the device (already computed, after a poison) with the float64 reference,
/// group by group as `shape` describes them (the shape may differ from the one the operands were
/// made for, after upload_description(), but not in layout, G, rows, N or K): for every non-empty
/// group, all its rows (rows_per_group = 0) or that many rows drawn by sample_rows() (its first
/// and last among them), all N columns. ok: in every group, every compared entry finite and the
/// relative and worst-tile errors within per_tensor_tolerance(K) (a float D: kF32Tolerance); no
/// stray entry. `d_before` (a float D only: all of D before an accumulating call, as uploaded):
/// the reference is d_before + A.B^T in each group's rows, and a row of no group must still hold
/// d_before bit for bit; without it such a row must hold the poison. Synchronous.
GroupedCheck check_grouped(const GroupedOperands& ops, const GroupedShape& shape,
                           std::int64_t rows_per_group, std::uint64_t seed,
                           const std::vector<float>* d_before = nullptr);

/// Poisons D (NaN, all bits set) or, given `d_before` (a float D, accumulating: all of D), uploads
/// it into D, runs `launch` on the legacy stream, synchronises and returns check_grouped().
GroupedCheck run_and_check(const GroupedOperands& ops, const GroupedShape& shape,
                           const std::function<void(cudaStream_t)>& launch,
                           std::int64_t rows_per_group, std::uint64_t seed,
                           const std::vector<float>* d_before = nullptr);

}  // namespace fp8gemm::ch08
