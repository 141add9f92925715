// The device side of chapter 8's checking modes (check_offsets.hpp): one block reads the group
// description (or the weight gradient's offsets) where the GEMM will read it (device memory) and
// writes its first violation.
#include "check_offsets.hpp"

#include <cstdint>
#include <stdexcept>
#include <string>

#include "common/cuda.hpp"
#include "common/launch.hpp"

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

/// The weight gradient's rules: the first entry breaking rule 1 or 2 (as group_check_kernel), and
/// the padded total summed by every thread over its entries, added up in shared memory.
__global__ void wgrad_check_kernel(const int* __restrict__ v, int groups, long long capacity,
                                   GroupViolation* __restrict__ out) {
  __shared__ unsigned long long first;
  __shared__ unsigned long long padded;
  if (threadIdx.x == 0) {
    first = ~0ull;
    padded = 0;
  }
  __syncthreads();
  for (int i = int(threadIdx.x); i <= groups; i += kThreads) {
    const GroupRule rule = wgrad_entry_rule(v, i);
    if (rule != GroupRule::none) {
      atomicMin(&first, (unsigned long long)(i) * 8ull + unsigned(rule));
      break;
    }
  }
  unsigned long long mine = 0;
  for (int g = int(threadIdx.x); g < groups; g += kThreads)
    mine += (unsigned long long)padded_token_count(std::int64_t(v[g + 1]) - v[g]);
  atomicAdd(&padded, mine);
  __syncthreads();
  if (threadIdx.x == 0) {
    if (first != ~0ull)
      *out = group_violation(v, 0, int(first / 8), GroupRule(int(first % 8)));
    else if ((long long)padded > capacity)
      *out = capacity_violation(groups, (long long)padded, capacity);
    else
      *out = GroupViolation{};
  }
}

/// The violated rule in words (describe_*_violation's middle part).
std::string rule_text(const GroupViolation& v, Layout layout, int groups) {
  const std::string name = layout == Layout::contiguous ? "offsets" : "masked_m";
  const std::string entry = name + "[" + std::to_string(v.index) + "] = " + std::to_string(v.value);
  switch (GroupRule(v.rule)) {
    case GroupRule::none:
      return {};
    case GroupRule::first_offset_zero:
      return entry + " must be 0 (offsets[0] == 0)";
    case GroupRule::offsets_not_decreasing:
      return entry + " is less than offsets[" + std::to_string(v.index - 1) + "] = " +
             std::to_string(v.other) + " (offsets must not decrease: offsets[g] <= offsets[g + 1])";
    case GroupRule::last_offset_rows:
      return entry + " must equal rows = " + std::to_string(v.other) + " (offsets[G = " +
             std::to_string(groups) + "] == the plan's total rows)";
    case GroupRule::masked_not_negative:
      return entry + " is negative (0 <= masked_m[g] <= M_max)";
    case GroupRule::masked_at_most_max:
      return entry + " exceeds M_max = " + std::to_string(v.other) + " (0 <= masked_m[g] <= M_max)";
    case GroupRule::padded_within_capacity:
      return "the padded token total P_G = " + std::to_string(v.value) +
             (v.value == 2147483647 ? " or more" : "") +
             " (each expert's count rounded up to 128, summed over the G = " +
             std::to_string(groups) + " experts) exceeds token_capacity = " +
             std::to_string(v.other) +
             " (the columns dD_t and A_t hold; max_padded_tokens(T, G) is always enough): the "
             "experts past it would read zeros";
  }
  return "rule " + std::to_string(v.rule);
}

}  // namespace

void launch_wgrad_check(const int* offsets, int groups, std::int64_t token_capacity,
                        GroupViolation* out, cudaStream_t stream) {
  wgrad_check_kernel<<<1, kThreads, 0, stream>>>(offsets, groups, (long long)token_capacity, out);
  FP8GEMM_CUDA_CHECK(cudaGetLastError());
}

std::string describe_wgrad_violation(const GroupViolation& v, int groups) {
  if (v.rule == int(GroupRule::none)) return {};
  return "fp8gemm::ch08_weight_grad: checking mode (WeightGradOptions::check_offsets): the "
         "offsets on the device are invalid: " + rule_text(v, Layout::contiguous, groups) +
         "; the GEMM was not launched";
}

void require_checkable_stream(const char* who, const char* option, cudaStream_t stream) {
  // A copy to the host and a synchronisation cannot be captured: refuse before enqueuing
  // anything (an error inside a capture would invalidate the caller's whole graph). On the legacy
  // stream while another stream captures, the query itself says so (and leaves that capture
  // valid); its error is cleared so that it is not taken for the next launch's.
  cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;
  const cudaError_t err = cudaStreamIsCapturing(stream, &status);
  if (err == cudaErrorStreamCaptureImplicit) {
    (void)cudaGetLastError();
    status = cudaStreamCaptureStatusActive;
  } else {
    FP8GEMM_CUDA_CHECK(err);
  }
  if (status != cudaStreamCaptureStatusNone)
    throw std::invalid_argument(std::string(who) + ": " + option +
                                " is set but the stream is capturing a CUDA graph: the checking "
                                "mode copies its verdict to the host and synchronises, which a "
                                "graph cannot hold (plan without it to capture)");
  require_no_pending_error(who);
}

void launch_group_check(Layout layout, const int* v, int groups, int bound, GroupViolation* out,
                        cudaStream_t stream) {
  group_check_kernel<<<1, kThreads, 0, stream>>>(layout, v, groups, bound, out);
  FP8GEMM_CUDA_CHECK(cudaGetLastError());
}

std::string describe_group_violation(const GroupViolation& v, Layout layout, int groups) {
  if (v.rule == int(GroupRule::none)) return {};
  return "fp8gemm::ch08_grouped_moe: checking mode (Options::check_offsets): the group "
         "description on the device is invalid: " + rule_text(v, layout, groups) +
         "; the GEMM was not launched";
}

}  // namespace fp8gemm::ch08
