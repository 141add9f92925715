// The device side of chapter 8's checking mode (check_offsets.hpp): one block reads the group
// description where the GEMM will read it (device memory) and writes its first violation.
#include "check_offsets.hpp"

#include <cstdint>
#include <string>

#include "common/cuda.hpp"

namespace fp8gemm::ch08 {

namespace {

constexpr int kThreads = 256;

/// Each thread walks its entries i = tid, tid + 256, ... in increasing order and keeps the first
/// that breaks a rule; the block takes the smallest (index, rule) key and thread 0 writes it.
/// One block: G is the number of experts (hundreds at most), so the walk is a few iterations.
__global__ void group_check_kernel(Layout layout, const int* __restrict__ v, int groups, int bound,
                                   GroupViolation* __restrict__ out) {
  __shared__ unsigned long long first;
  if (threadIdx.x == 0) first = ~0ull;
  __syncthreads();
  const int entries = group_entries(layout, groups);
  for (int i = int(threadIdx.x); i < entries; i += kThreads) {
    const GroupRule rule = group_entry_rule(layout, v, groups, bound, i);
    if (rule != GroupRule::none) {
      atomicMin(&first, (unsigned long long)(i) * 8ull + unsigned(rule));
      break;
    }
  }
  __syncthreads();
  if (threadIdx.x == 0)
    *out = first == ~0ull ? GroupViolation{}
                          : group_violation(v, bound, int(first / 8), GroupRule(int(first % 8)));
}

}  // namespace

void launch_group_check(Layout layout, const int* v, int groups, int bound, GroupViolation* out,
                        cudaStream_t stream) {
  group_check_kernel<<<1, kThreads, 0, stream>>>(layout, v, groups, bound, out);
  FP8GEMM_CUDA_CHECK(cudaGetLastError());
}

std::string describe_group_violation(const GroupViolation& v, Layout layout, int groups) {
  const std::string name = layout == Layout::contiguous ? "offsets" : "masked_m";
  const std::string entry = name + "[" + std::to_string(v.index) + "] = " + std::to_string(v.value);
  std::string what;
  switch (GroupRule(v.rule)) {
    case GroupRule::none:
      return {};
    case GroupRule::first_offset_zero:
      what = entry + " must be 0 (offsets[0] == 0)";
      break;
    case GroupRule::offsets_not_decreasing:
      what = entry + " is less than offsets[" + std::to_string(v.index - 1) + "] = " +
             std::to_string(v.other) + " (offsets must not decrease: offsets[g] <= offsets[g + 1])";
      break;
    case GroupRule::last_offset_rows:
      what = entry + " must equal rows = " + std::to_string(v.other) + " (offsets[G = " +
             std::to_string(groups) + "] == the plan's total rows)";
      break;
    case GroupRule::masked_not_negative:
      what = entry + " is negative (0 <= masked_m[g] <= M_max)";
      break;
    case GroupRule::masked_at_most_max:
      what = entry + " exceeds M_max = " + std::to_string(v.other) + " (0 <= masked_m[g] <= M_max)";
      break;
  }
  return "fp8gemm::ch08_grouped_moe: checking mode (Options::check_offsets): the group "
         "description on the device is invalid: " + what + "; the GEMM was not launched";
}

}  // namespace fp8gemm::ch08
