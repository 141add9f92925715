// The checking mode of chapter 8's plan (Options::check_offsets): the rules a device group
// description must follow, the first entry that breaks one, and the message that names it.
// The rules are written once, as host-and-device functions: the device kernel (check_offsets.cu)
// applies them to the description in device memory, the CPU tests apply them to host arrays.
//
//   contiguous  offsets [G + 1] int32:  offsets[0] == 0,  offsets[g - 1] <= offsets[g] (g = 1..G),
//               offsets[G] == rows (the plan's total rows). Together they keep every offset in
//               [0, rows].
//   masked      masked_m [G] int32:     0 <= masked_m[g] <= M_max (the plan's rows per group).
//   weight gradient (WeightGradOptions::check_offsets, session 55) offsets [G + 1] int32:
//               offsets[0] == 0, offsets[g - 1] <= offsets[g], and the padded token total
//               P_G = sum over g of round_up(offsets[g + 1] - offsets[g], 128) <= token_capacity
//               (the plan does not know T, so there is no last-offset rule).
// The first violation is the one at the lowest index; at one index, the lower rule number; the
// weight gradient's capacity rule only when no entry breaks another.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>
#include <string>

#include "common/fp8.hpp"  // FP8GEMM_HD
#include "grouped_gemm.hpp"

namespace fp8gemm::ch08 {

enum class GroupRule : int {
  none = 0,
  first_offset_zero = 1,     ///< offsets[0] == 0
  offsets_not_decreasing = 2,///< offsets[g - 1] <= offsets[g]
  last_offset_rows = 3,      ///< offsets[G] == rows
  masked_not_negative = 4,   ///< masked_m[g] >= 0
  masked_at_most_max = 5,    ///< masked_m[g] <= M_max
  padded_within_capacity = 6,///< weight gradient: P_G <= token_capacity
};

/// The first violation of a group description (rule none: it follows every rule). `value` is the
/// offending entry; `other` the entry or bound it was compared with (offsets[g - 1], rows, M_max);
/// for padded_within_capacity, P_G and token_capacity (each clamped to INT_MAX here).
struct GroupViolation {
  int rule = 0;  ///< a GroupRule
  int index = 0;
  int value = 0;
  int other = 0;
};

/// The rule entry `i` of a description breaks (the lowest-numbered one), or none. `v` holds
/// G + 1 offsets (contiguous, i in [0, G]) or G counts (masked, i in [0, G)); `bound` is the
/// plan's total rows (contiguous) or M_max (masked).
FP8GEMM_HD inline GroupRule group_entry_rule(Layout layout, const int* v, int groups, int bound,
                                             int i) {
  if (layout == Layout::masked)
    return v[i] < 0 ? GroupRule::masked_not_negative
                    : v[i] > bound ? GroupRule::masked_at_most_max : GroupRule::none;
  if (i == 0 && v[0] != 0) return GroupRule::first_offset_zero;
  if (i > 0 && v[i] < v[i - 1]) return GroupRule::offsets_not_decreasing;
  if (i == groups && v[i] != bound) return GroupRule::last_offset_rows;
  return GroupRule::none;
}

/// Entries of a description: G + 1 offsets or G counts.
FP8GEMM_HD inline int group_entries(Layout layout, int groups) {
  return layout == Layout::contiguous ? groups + 1 : groups;
}

/// The violation record for entry `i` breaking `rule`.
FP8GEMM_HD inline GroupViolation group_violation(const int* v, int bound, int i, GroupRule rule) {
  GroupViolation r;
  r.rule = int(rule);
  r.index = i;
  r.value = v[i];
  r.other = rule == GroupRule::offsets_not_decreasing ? v[i - 1]
            : rule == GroupRule::first_offset_zero    ? 0
                                                      : bound;
  return r;
}

/// The weight gradient's rules for entry `i` of its G + 1 offsets: rules 1 and 2 (its offsets
/// need not end at any given total).
FP8GEMM_HD inline GroupRule wgrad_entry_rule(const int* v, int i) {
  if (i == 0 && v[0] != 0) return GroupRule::first_offset_zero;
  if (i > 0 && v[i] < v[i - 1]) return GroupRule::offsets_not_decreasing;
  return GroupRule::none;
}

/// Expert g's columns in the padded token layout: its count rounded up to 128 (0 for a negative
/// count, which rule 2 reports).
FP8GEMM_HD inline std::int64_t padded_token_count(std::int64_t count) {
  return count <= 0 ? 0 : (count + 127) / 128 * 128;
}

/// The record of padded_within_capacity (index G), its values clamped to int.
FP8GEMM_HD inline GroupViolation capacity_violation(int groups, std::int64_t padded,
                                                    std::int64_t capacity) {
  GroupViolation r;
  r.rule = int(GroupRule::padded_within_capacity);
  r.index = groups;
  r.value = int(padded < 2147483647 ? padded : 2147483647);
  r.other = int(capacity < 2147483647 ? capacity : 2147483647);
  return r;
}

/// The first violation of the weight gradient's offsets in host memory (what the device check
/// reports).
inline GroupViolation first_wgrad_violation(const int* v, int groups, std::int64_t capacity) {
  std::int64_t padded = 0;
  for (int i = 0; i <= groups; ++i) {
    const GroupRule rule = wgrad_entry_rule(v, i);
    if (rule != GroupRule::none) return group_violation(v, 0, i, rule);
    if (i > 0) padded += padded_token_count(std::int64_t(v[i]) - v[i - 1]);
  }
  return padded > capacity ? capacity_violation(groups, padded, capacity) : GroupViolation{};
}

/// The first violation of a description in host memory (what the device check reports).
inline GroupViolation first_group_violation(Layout layout, const int* v, int groups, int bound) {
  for (int i = 0; i < group_entries(layout, groups); ++i) {
    const GroupRule rule = group_entry_rule(layout, v, groups, bound, i);
    if (rule != GroupRule::none) return group_violation(v, bound, i, rule);
  }
  return {};
}

/// "fp8gemm::ch08_grouped_moe: checking mode: offsets[5] = 100 is less than offsets[4] = 120
/// (offsets must not decrease); the GEMM was not launched" (empty for rule none).
std::string describe_group_violation(const GroupViolation& v, Layout layout, int groups);

/// "fp8gemm::ch08_weight_grad: checking mode (WeightGradOptions::check_offsets): ... the padded
/// token total P_G = 384 exceeds token_capacity = 256 ...; the GEMM was not launched".
std::string describe_wgrad_violation(const GroupViolation& v, int groups);

/// Launches the device check of the description `v` (device memory) on `stream`: one block
/// writes the first violation (rule none if there is none) to `out` (device memory). Throws
/// std::runtime_error if the launch fails. Reads nothing back: the caller copies `out`.
void launch_group_check(Layout layout, const int* v, int groups, int bound, GroupViolation* out,
                        cudaStream_t stream);
/// The same for the weight gradient's offsets (first_wgrad_violation's rules).
void launch_wgrad_check(const int* offsets, int groups, std::int64_t token_capacity,
                        GroupViolation* out, cudaStream_t stream);

/// What both checking modes do before their check: refuse a stream that is capturing a CUDA
/// graph (std::invalid_argument naming `who` and `option`: the check copies its verdict to the
/// host and synchronises, which a graph cannot hold; the capture is left valid) and an earlier
/// CUDA error still pending (require_no_pending_error).
void require_checkable_stream(const char* who, const char* option, cudaStream_t stream);

}  // namespace fp8gemm::ch08
