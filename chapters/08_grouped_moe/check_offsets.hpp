// The checking mode of chapter 8's plan (Options::check_offsets): the rules a device group
// description must follow, the first entry that breaks one, and the message that names it.
// The rules are written once, as host-and-device functions: the device kernel (check_offsets.cu)
// applies them to the description in device memory, the CPU tests apply them to host arrays.
//
//   contiguous  offsets [G + 1] int32:  offsets[0] == 0,  offsets[g - 1] <= offsets[g] (g = 1..G),
//               offsets[G] == rows (the plan's total rows). Together they keep every offset in
//               [0, rows].
//   masked      masked_m [G] int32:     0 <= masked_m[g] <= M_max (the plan's rows per group).
// The first violation is the one at the lowest index; at one index, the lower rule number.
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
};

/// The first violation of a group description (rule none: it follows every rule). `value` is the
/// offending entry; `other` the entry or bound it was compared with (offsets[g - 1], rows, M_max).
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

/// Launches the device check of the description `v` (device memory) on `stream`: one block
/// writes the first violation (rule none if there is none) to `out` (device memory). Throws
/// std::runtime_error if the launch fails. Reads nothing back: the caller copies `out`.
void launch_group_check(Layout layout, const int* v, int groups, int bound, GroupViolation* out,
                        cudaStream_t stream);

}  // namespace fp8gemm::ch08
