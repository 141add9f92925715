// Chapter 8's executable: validate the grouped block-scaled GEMM (forward pass, contiguous and
// masked layouts) against a float64 reference per group, then time it beside the naive way to do
// the same work with chapter 7: a loop of dense block-scaled calls, one per non-empty expert, on
// the same operands ("ch07_loop", the summary's baseline). One process, one method
// (common/bench.hpp); the Python peers (DeepGEMM grouped, torch._scaled_grouped_mm) are timed by
// bench/peers_moe.py on cases of the same names, so the two JSON files line up by
// "<implementation>/<case>".
//
//   ch08_grouped_moe [--no-bench] [--json=PATH] [--kernels=a,b|all] [--case=NAME:COUNTS:N:K]...
//                    [--only=REGEX] [--sizes=S,...] [--list-cases] [--forward-only]
//                    [Google Benchmark flags]
// The weight gradient (ch08_wgrad, k-grouped: dB_g = dD_g^T . A_g over each expert's tokens,
// FP32) runs on the groups of every skewed case (wgrad_g32_t<T>_n<N>_k<K>, bench/peers_moe.py's
// names), validated on 2 rows of every dB_g against float64 first.
// Cases (moe_cases.hpp): the balanced contiguous ones (bal_g4x8192_n4096_k7168,
// bal_g8x4096_n7168_k2048), every --case (contiguous, COUNTS = rows per expert, comma-separated,
// or masked, COUNTS = masked=GxM_MAX;
// scripts/gpu_loop.sh's step ch08 passes bench/peers_moe.py's seeded skewed groups as
// skew_g32_t<T>_n<N>_k<K>), and the masked ones (masked_g<G>x<rows>_n<N>_k<K>, masked_m = rows).
// --kernels=a,b   time these ch08::kernels() (or "all") instead of the plan's default, each
//                 validated on each case first; named "ch08:<kernel>" (default: "ch08_grouped")
// --only=REGEX    only the cases whose name matches
// --sizes=S,...   small validation cases of side S instead of the standard ones (groups of 0, 1,
//                 127, 128, 129 and S rows; masked_m 0, S/2 + 1, S; 33793, 0 and 33791 rows, so
//                 that every CTA has several tiles): the sanitizer step's call
// --list-cases    print the cases and exit (no GPU needed)
// --forward-only  no weight gradient (a --kernels name can be a forward and a weight-gradient
//                 kernel's: 128x256_s4_c1x1_promoted_tma_b1 is both)
// Validation: 2 rows of every non-empty group (its first and last), all N columns, against
// float64 on the dequantised operands (per group: relative and worst-tile error within
// per_tensor_tolerance(K)); nothing that fails is timed. TFLOPS count real rows only
// (2 x sum(rows) x N x K); GB/s count A's real rows, the weights of non-empty experts, D's real
// rows and the scales, each once.
#include <algorithm>
#include <cstdio>
#include <functional>
#include <map>
#include <memory>
#include <regex>
#include <stdexcept>
#include <string>
#include <vector>

#include "bs_gemm.hpp"
#include "common/bench.hpp"
#include "common/chapter_args.hpp"
#include "common/cuda.hpp"
#include "grouped_check.hpp"
#include "grouped_gemm.hpp"
#include "moe_cases.hpp"
#include "wgrad.hpp"
#include "wgrad_check.hpp"

using namespace fp8gemm;
using ch08::GroupedShape;

namespace {

struct Ch08Args {
  ChapterArgs common;
  std::vector<GroupedShape> cases;
  bool list = false;
  bool forward_only = false;  ///< --forward-only: no weight gradient validated or timed
};

bool has_wgrad(const GroupedShape& s, bool small);

/// Whether `list` (ch08::kernels() or ch08::wgrad_kernels()) has a kernel named `name`.
bool compiled(const std::vector<engine::KernelInfo>& list, const std::string& name) {
  return std::any_of(list.begin(), list.end(), [&](const auto& k) { return k.name == name; });
}

/// The command line: common/chapter_args.hpp's options plus --case, --only, --list-cases and
/// --forward-only.
/// Throws std::invalid_argument for a bad --case or --only, or an option chapter 8 does not have.
Ch08Args parse_args(int argc, char** argv) {
  Ch08Args r;
  std::vector<GroupedShape> extra;
  std::string only = ".";
  r.common = parse_chapter_args(argc, argv, {}, "ch08_grouped_moe.json", [&](const std::string& a) {
    if (a.rfind("--case=", 0) == 0) {
      extra.push_back(ch08::parse_case(a.substr(7)));
    } else if (a.rfind("--only=", 0) == 0) {
      only = a.substr(7);
    } else if (a == "--list-cases") {
      r.list = true;
    } else if (a == "--forward-only") {
      r.forward_only = true;
    } else {
      return false;
    }
    return true;
  });
  if (!r.common.custom.empty() || !r.common.accuracy_json.empty())
    throw std::invalid_argument("--shapes and --accuracy are not chapter 8's: give grouped cases "
                                "with --case=NAME:COUNTS:N:K");
  std::vector<GroupedShape> base;
  if (r.common.sizes_given) {
    for (auto s : r.common.sizes)
      for (auto& c : ch08::small_cases(s)) base.push_back(c);
  } else {
    base = ch08::standard_cases();
  }
  std::regex re;
  try {
    re = std::regex(only);
  } catch (const std::regex_error& e) {
    throw std::invalid_argument("--only='" + only + "' is not a regular expression: " + e.what());
  }
  // Contiguous cases, then the given ones, then masked ones.
  std::vector<GroupedShape> all;
  for (const auto& c : base)
    if (c.layout == ch08::Layout::contiguous) all.push_back(c);
  all.insert(all.end(), extra.begin(), extra.end());
  for (const auto& c : base)
    if (c.layout == ch08::Layout::masked) all.push_back(c);
  std::string names;  // for the error below
  for (const auto& c : all) names += (names.empty() ? "" : ", ") + c.name;
  for (auto& c : all)
    if (std::regex_search(c.name, re)) r.cases.push_back(std::move(c));
  // A filter that selects nothing would run nothing and exit 0 (session 30: a profile of
  // --only=skew_... without the skewed cases' --case found no kernel to profile).
  if (r.cases.empty())
    throw std::invalid_argument(
        "--only='" + only + "' matches no case. The cases: " + names +
        ". The skewed workload's cases are not built in: give them with --case=NAME:COUNTS:N:K "
        "(bench/peers_moe.py --dry-run --groups-out writes their counts; scripts/gpu_loop.sh's "
        "ch08 step passes them)");
  // A --kernels name that is no compiled kernel would be skipped at every case, and one of the
  // weight gradient's runs only on the cases that have a weight gradient (has_wgrad below): either
  // way the run would time nothing of it and exit 0 (session 31: --case=lin_...:4096:N:K without
  // the skew_ prefix timed no weight-gradient kernel). Both are refused here, before any GPU work.
  bool names_wgrad = false, names_forward = false;
  for (const auto& k : r.common.kernels) {
    const bool wgrad = compiled(ch08::wgrad_kernels(), k);
    const bool forward = k == "all" || compiled(ch08::kernels(), k);
    if (!wgrad && !forward)
      throw std::invalid_argument("--kernels: '" + k + "' is no compiled kernel of chapter 8 "
                                  "(forward: ch08::kernels(), weight gradient: "
                                  "ch08::wgrad_kernels(); names as in the README's tables)");
    names_wgrad |= wgrad;
    names_forward |= forward;
  }
  // --forward-only (session 32: a name such as 128x256_s4_c1x1_promoted_tma_b1 is a forward and a
  // weight-gradient kernel's, and a comparison of forward kernels by name ran out of time in the
  // weight gradients' validation): with only weight-gradient kernels named it would time nothing.
  if (r.forward_only && !r.common.kernels.empty() && !names_forward)
    throw std::invalid_argument("--forward-only: --kernels names weight-gradient kernels only, so "
                                "nothing would run; name forward kernels (ch08::kernels()) or "
                                "leave --forward-only out");
  if (r.forward_only) names_wgrad = false;
  bool any_wgrad = false;
  for (const auto& c : r.cases) any_wgrad |= has_wgrad(c, r.common.sizes_given);
  if (names_wgrad && !any_wgrad)
    throw std::invalid_argument(
        "--kernels names weight-gradient kernels, but no selected case has a weight gradient: "
        "they run on the skewed cases (names starting with skew_, e.g. "
        "--case=skew_NAME:COUNTS:N:K) and, with --sizes, on the small contiguous ones");
  return r;
}

/// What the benchmark counts (real rows only): flops 2 x sum(rows) x N x K; bytes: A's real rows,
/// the weights of non-empty experts, D's real rows (bf16) and their scales, each once.
GemmCost grouped_cost(const GroupedShape& s) {
  const double rows = double(s.real_rows()), experts = double(s.non_empty_groups());
  const double N = double(s.N), K = double(s.K), kb = double(ceil_div(s.K, 128));
  GemmCost c;
  c.flops = 2.0 * rows * N * K;
  c.bytes = rows * K + experts * N * K + 2.0 * rows * N +
            4.0 * kb * (rows + experts * double(ceil_div(s.N, 128)));
  return c;
}

/// The baseline: one chapter-7 dense block-scaled call per non-empty expert of a contiguous case,
/// on the grouped operands (the expert's rows of A and D, B_g, its 128 x 128 scales). The plans
/// are built before timing from the counts the host knows. A's scales of each expert are copied
/// once into a tensor of its own (mn-major, TMA-aligned): the expert's slice of the grouped
/// tensor starts at any row, so it is not 16-byte aligned, and chapter 7 would convert it on
/// every call; the copy keeps the baseline at its best.
struct Ch07Loop {
  std::vector<DeviceBuffer<float>> scales;
  std::vector<std::unique_ptr<ch07::Plan>> plans;

  Ch07Loop(const ch08::GroupedOperands& ops, const GroupedShape& s) {
    const GroupScaleLayout la = ops.scale_a_layout();
    const std::int64_t kb = ceil_div(s.K, 128);
    for (int g = 0; g < s.groups(); ++g) {
      const auto [begin, end] = s.group_rows(g);
      const std::int64_t M = end - begin;
      if (M == 0) continue;
      const GroupScaleLayout lg = GroupScaleLayout::mn_major_tma_aligned(M);
      DeviceBuffer<float> sa(std::size_t(lg.required_elements(M, s.K)));
      FP8GEMM_CUDA_CHECK(cudaMemcpy2D(sa.data(), std::size_t(lg.ld) * 4, ops.scale_a.data() + begin,
                                      std::size_t(la.ld) * 4, std::size_t(M) * 4, std::size_t(kb),
                                      cudaMemcpyDeviceToDevice));
      const ch07::BlockScaledGemm call{
          .M = M, .N = s.N, .K = s.K, .A = ops.A.data() + begin * s.K,
          .B = ops.B.data() + std::int64_t(g) * s.N * s.K, .scale_a = sa.data(),
          .scale_a_layout = lg, .scale_b = ops.scale_b.data() + g * ops.scale_b_group_stride(),
          .scale_b_layout = ops.scale_b_layout(), .D = ops.D.data() + begin * s.N};
      plans.push_back(std::make_unique<ch07::Plan>(call));
      scales.push_back(std::move(sa));
    }
  }
  void run(cudaStream_t stream) const {
    for (const auto& p : plans) p->run(stream);
  }
};

const char* kBaseline = "ch07_loop";

/// The weight gradient of a contiguous case (every skewed one; every small one with --sizes):
/// dB_g [N, K] over each expert's tokens, named as bench/peers_moe.py names it
/// (skew_g32_t8192_n4096_k7168 -> wgrad_g32_t8192_n4096_k7168).
bool has_wgrad(const GroupedShape& s, bool small) {
  return s.layout == ch08::Layout::contiguous && (small || s.name.rfind("skew_", 0) == 0);
}
ch08::WgradShape wgrad_shape(const GroupedShape& s) {
  const std::string tail = s.name.rfind("skew_", 0) == 0 ? s.name.substr(5) : s.name;
  return {"wgrad_" + tail, s.rows, s.N, s.K};
}
/// Flops 2 x N x K x real tokens; bytes: both transposed operands over the real tokens, the
/// scales, and dB written once (FP32) for every expert with tokens.
GemmCost wgrad_cost(const ch08::WgradShape& s) {
  const double T = double(s.tokens()), N = double(s.N), K = double(s.K);
  int experts = 0;
  for (int c : s.counts) experts += c > 0;
  GemmCost c;
  c.flops = 2.0 * T * N * K;
  c.bytes = T * (N + K) + 4.0 * double(ceil_div(std::int64_t(T), 128)) * (N + K) +
            4.0 * double(experts) * N * K;
  return c;
}

}  // namespace

int main(int argc, char** argv) {
  std::printf("Chapter 8: grouped block-scaled FP8 GEMM for mixture-of-experts (forward pass, "
              "contiguous and masked layouts) on the engine\n");
  Ch08Args args;
  if (!parse_arguments("ch08_grouped_moe", [&] { args = parse_args(argc, argv); })) return 1;
  if (args.list) {
    for (const auto& c : args.cases)
      std::printf("%s %s G=%d rows=%lld N=%lld K=%lld\n", c.name.c_str(),
                  c.layout == ch08::Layout::contiguous ? "contiguous" : "masked", c.groups(),
                  static_cast<long long>(c.real_rows()), static_cast<long long>(c.N),
                  static_cast<long long>(c.K));
    return 0;
  }
  if (cuda_device_count() == 0) {
    std::printf("No CUDA GPU found: ch08_grouped_moe was built, but running it needs an NVIDIA "
                "Hopper GPU (sm_90a).\nOn a machine with one, run this binary again; see "
                "README.md, 'Running it'.\n");
    return 2;
  }
  std::printf("GPU: %s\ncommit: %s\n", describe_device().c_str(), git_commit());
  std::vector<std::string> kernels;
  // The forward kernels among --kernels (parse_args refused names that are no kernel); the
  // weight-gradient ones are taken below, not built as forward plans that every case would skip.
  for (const auto& k : args.common.kernels) {
    if (k != "all") {
      if (compiled(ch08::kernels(), k)) kernels.push_back(k);
      continue;
    }
    for (const auto& info : ch08::kernels()) kernels.push_back(info.name);
  }
  if (args.common.kernels.empty()) kernels.push_back("");  // the plan's default

  // 1. Correctness on the benchmark's own operands; nothing wrong is timed.
  std::vector<std::unique_ptr<ch08::GroupedOperands>> operands;
  std::vector<std::unique_ptr<ch08::Plan>> plans;
  std::vector<std::unique_ptr<Ch07Loop>> loops;
  std::map<std::string, std::string> errors;
  struct Timed {
    std::string impl;
    const GroupedShape* shape;
    std::function<void(cudaStream_t)> launch;
  };
  std::vector<Timed> timed;
  bool ours_ok = true, baseline_ok = true;
  std::uint64_t seed = 8100;
  std::printf("\nvalidation against the float64 CPU reference on dequantised operands (2 rows of "
              "every non-empty group, all columns; tolerance 2^-8 + 2.5e-7 K per group, every "
              "128x128 tile too):\n");
  auto validate = [&](const std::string& impl, const GroupedShape& s,
                      const ch08::GroupedOperands& ops, std::function<void(cudaStream_t)> launch,
                      const std::string& how) {
    const auto r = ch08::run_and_check(ops, s, launch, 2, seed++);
    errors[impl + "/" + s.name] = r.describe;
    std::printf("  %-30s %-22s %s  %s  [%s]\n", s.name.c_str(), impl.c_str(), r.ok ? "ok  " : "FAIL",
                r.describe.c_str(), how.c_str());
    if (r.ok) timed.push_back({impl, &s, std::move(launch)});
    return r.ok;
  };
  for (const auto& s : args.cases) {
    const std::uint64_t ops_seed = 8000 + std::uint64_t(operands.size());
    operands.push_back(std::make_unique<ch08::GroupedOperands>(s, ops_seed));
    const ch08::GroupedOperands& ops = *operands.back();
    // The FP32 kernels (f32 in the name) write a float D: their own operands, made once per case
    // when one is named (the same seed: the same A, B and scales).
    const ch08::GroupedOperands* ops_f32 = nullptr;
    for (const auto& name : kernels) {
      ch08::Options o;
      o.kernel = name;
      const std::string impl = name.empty() ? "ch08_grouped" : "ch08:" + name;
      const bool f32 = !name.empty() && engine::writes_f32(engine::find_kernel(ch08::kernels(), name, "").epilogue);
      if (f32 && ops_f32 == nullptr) {
        operands.push_back(
            std::make_unique<ch08::GroupedOperands>(s, ops_seed, ch08::Output::f32));
        ops_f32 = operands.back().get();
      }
      const ch08::GroupedOperands& use = f32 ? *ops_f32 : ops;
      try {
        plans.push_back(std::make_unique<ch08::Plan>(use.gemm(), o));
      } catch (const std::invalid_argument& e) {
        std::printf("  %-30s %-22s skipped: %s\n", s.name.c_str(), impl.c_str(), e.what());
        continue;
      }
      const ch08::Plan* p = plans.back().get();
      ours_ok &= validate(impl, s, use, [p](cudaStream_t st) { p->run(st); }, p->describe());
    }
    if (s.layout != ch08::Layout::contiguous) continue;
    loops.push_back(std::make_unique<Ch07Loop>(ops, s));
    const Ch07Loop* loop = loops.back().get();
    baseline_ok &= validate(kBaseline, s, ops, [loop](cudaStream_t st) { loop->run(st); },
                            std::to_string(loop->plans.size()) + " chapter-7 calls");
  }
  // The weight gradients (k-grouped): dB_g = dD_g^T . A_g over each expert's tokens, FP32 (the
  // default; a kernel named by --kernels writes the type it was compiled for). With
  // --kernels=all every weight-gradient kernel too ("ch08_wgrad:<kernel>"); with other --kernels
  // names, the weight-gradient kernels among them.
  std::vector<std::string> wgrad_names;
  for (const auto& k : args.common.kernels)
    for (const auto& info : ch08::wgrad_kernels())
      if (k == "all" || k == info.name) wgrad_names.push_back(info.name);
  if (args.common.kernels.empty()) wgrad_names.push_back("");  // the plan's default
  std::vector<std::unique_ptr<ch08::WgradOperands>> wgrad_operands;
  std::vector<std::unique_ptr<ch08::WeightGradPlan>> wgrad_plans;
  for (const auto& s : args.cases) {
    if (args.forward_only || !has_wgrad(s, args.common.sizes_given)) continue;
    const ch08::WgradShape ws = wgrad_shape(s);
    wgrad_operands.push_back(std::make_unique<ch08::WgradOperands>(ws, 8500 + std::uint64_t(wgrad_operands.size())));
    ch08::WgradOperands& ops = *wgrad_operands.back();
    for (const auto& name : wgrad_names) {
      ch08::WeightGradOptions o;
      o.kernel = name;
      const std::string impl = name.empty() ? "ch08_wgrad" : "ch08_wgrad:" + name;
      // A named kernel writes the dB type it was compiled for; the default FP32.
      const ch08::WeightGradOutput output =
          name.empty() ? ch08::WeightGradOutput::f32
                       : ch08::wgrad_output_of(engine::find_kernel(ch08::wgrad_kernels(), name, "ch08"));
      wgrad_plans.push_back(std::make_unique<ch08::WeightGradPlan>(ops.gemm(false, output), o));
      const ch08::WeightGradPlan* p = wgrad_plans.back().get();
      const auto launch = [p](cudaStream_t st) { p->run(st); };
      const auto r = ch08::run_and_check_wgrad(ops, launch, 2, seed++, output);
      errors[impl + "/" + ws.name] = r.describe;
      std::printf("  %-30s %-22s %s  %s  [%s]\n", ws.name.c_str(), impl.c_str(), r.ok ? "ok  " : "FAIL",
                  r.describe.c_str(), p->describe().c_str());
      ours_ok &= r.ok;
      if (!r.ok) continue;
      const GemmCost cost = wgrad_cost(ws);
      add_gpu_benchmark(impl, ws.name, launch, cost);
    }
  }
  if (!ours_ok && args.common.kernels.empty()) {
    std::printf("\nVALIDATION FAILED: not benchmarking a wrong kernel.\n");
    return 1;
  }
  if (!args.common.bench) return ours_ok && baseline_ok ? 0 : 1;

  // 2. Benchmarks: every validated implementation on every case, one method.
  for (const auto& t : timed) {
    const GemmCost cost = grouped_cost(*t.shape);
    const auto launch = t.launch;
    add_gpu_benchmark(t.impl, t.shape->name, launch, cost);
  }
  std::vector<char*> rest = args.common.rest;
  const auto results = run_benchmarks(int(rest.size()), rest.data(), args.common.json);
  print_summary(results, kBaseline, [&](const std::string& impl, const std::string& shape) {
    const auto it = errors.find(impl + "/" + shape);
    return it == errors.end() ? std::string() : it->second;
  });
  if (!ours_ok) std::printf("\nVALIDATION FAILED for some kernels (FAIL above): not timed.\n");
  if (!baseline_ok) std::printf("\nVALIDATION FAILED for the chapter-7 loop (FAIL above): not timed.\n");
  return ours_ok && baseline_ok ? 0 : 1;
}
