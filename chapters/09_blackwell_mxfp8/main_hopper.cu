// Chapter 9's Hopper executable: the MXFP8 GEMM on the engine (hopper_mx.hpp),
// validated against the float64 definition on sampled rows, then timed beside
// chapter 7's block-scaled kernel (1 x 128 / 128 x 128 scales) and cuBLASLt
// block-scaled on the same shapes, in one process, by common/bench.hpp's method
// (the summary's baseline: chapter 7). Issue 11's target: >= 0.7x chapter 7 at
// 8192^3 and over the M = 4096 DeepSeek shapes (the promotion work is 4x
// chapter 7's). Both Hopper paths (hopper_mx.hpp, HopperPath): the default
// (ch09_hopper_mx) and dequantize_bf16 (ch09_hopper_mx_bf16), and the latter's
// bf16 GEMM alone (ch09_bf16_gemm_alone: its plan's engine(), on the operands
// its last run dequantised), beside cuBLASLt's bf16 GEMM on the same operands
// (cublaslt_bf16); the opt-in, not exact, requantize_block_scaled path
// (ch09_hopper_mx_requant) and its chapter-7 GEMM alone (ch09_requant_gemm_alone,
// on the operands its last run re-quantised); and that path as an inference user
// with fixed MXFP8 weights would run it from the public functions
// (ch09_requant_weights_once: B re-quantised once, outside the timing; per call
// requantize_mx on A alone, then chapter 7's plan).
//
//   ch09_hopper_mxfp8 [--no-bench] [--sizes=...] [--shapes=MxNxK,...]
//   [--json=PATH] [--accuracy=PATH]   (the MXFP8 rows of chapter 7's accuracy study)
//                     [--kernels=a,b|all]   (time these Hopper kernels too,
//                     each validated first; a name ending in _bf16 is one of
//                     the dequantize_bf16 path's) [--float-d]
//                     [Google Benchmark flags]
// --float-d: the float D too (Output::f32, session 64): the three paths' defaults writing
// D = A.B^T in float (ch09_hopper_mx_f32d, ..._bf16_f32d, ..._requant_f32d) and the default
// path adding into it (ch09_hopper_mx_f32d_acc: D = A.B^T + D; since session 67 by the TMA
// kernel's reduce-add where ldd % 4 == 0, as here), on the same operands as the bf16 D's, each
// validated first; FP32 kernels named in --kernels (f32 in their names; e.g.
// 128x128_s5_c1x1_promoted_f32_tma_b2, by TMA, with accumulate a TMA reduce-add) join them,
// each with and without accumulate. (--kernels=all times the bf16 kernels only.)
// Default shapes: 8192^3 and the M = 4096 DeepSeek-V3 shapes (K a multiple of
// 32 in all). MXFP8 operands: random e4m3 codes and UE8M0 exponents 127 +- 6
// (mx_emulate.hpp), the same kind of data chapter 7's operands are (random
// values, power-of-two-spread scales), not the same data.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>
#include <map>
#include <memory>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "accuracy_study.hpp"
#include "bs_check.hpp"
#include "bs_gemm.hpp"
#include "common/bench.hpp"
#include "common/chapter_args.hpp"
#include "common/check.hpp"
#include "common/cublaslt.hpp"
#include "common/cuda.hpp"
#include "common/quantize_gpu.hpp"
#include "common/reference.hpp"
#include "hopper_mx.hpp"
#include "mx_emulate.hpp"

using namespace fp8gemm;

namespace {

/// One plan to time: a kernel by name ("" the path's default) on one path, writing a bf16 or a
/// float D (with accumulate: D = A.B^T + D).
struct Variant {
  std::string kernel;
  ch09::HopperPath path = ch09::HopperPath::promote_per_block;
  ch09::Output output = ch09::Output::bf16;
  bool accumulate = false;
  bool f32() const { return output == ch09::Output::f32; }
};

/// The requantize_block_scaled path with weights that do not change, from the
/// public functions (chapter 9's README, "A third Hopper path"): B re-quantised
/// once at construction (requantize_mx(nullptr, ..., &b, ...)), then each run()
/// re-quantises A alone and runs chapter 7's plan on the results. Chapter 7's
/// default layouts, as HopperPlan's own path takes them. A's call is checked
/// and prepared once here and only launched in run(), as HopperPlan does
/// (validate_ / prepare_ / launch_requantize_mx).
struct WeightsOnce {
  GroupScaleLayout layout_a;
  BlockScaleLayout layout_b;
  DeviceBuffer<std::uint8_t> a, b;  // chapter 7's A (M x K) and B (N x K) e4m3
  DeviceBuffer<float> scale_a, scale_b;
  MxRequantOperand rq_a{};
  std::unique_ptr<ch07::Plan> plan;
  explicit WeightsOnce(const ch09::MxGemm& g)
      : layout_a(GroupScaleLayout::mn_major_tma_aligned(g.M)),
        layout_b(BlockScaleLayout::padded(g.K)),
        a(std::size_t(g.M * g.K)),
        b(std::size_t(g.N * g.K)),
        scale_a(std::size_t(layout_a.required_elements(g.M, g.K))),
        scale_b(std::size_t(layout_b.required_elements(g.N, g.K))) {
    // mx_call's operands are packed (lda = ldb = K, ldd = N).
    const MxRequantOperand rq_b{g.B, g.N, g.K, g.K, g.scale_b, b.data(), g.K, scale_b.data()};
    requantize_mx(nullptr, layout_a, &rq_b, layout_b);  // once
    rq_a = {g.A, g.M, g.K, g.K, g.scale_a, a.data(), g.K, scale_a.data()};
    validate_requantize_mx(&rq_a, layout_a, nullptr, layout_b);
    prepare_requantize_mx();
    plan = std::make_unique<ch07::Plan>(ch07::BlockScaledGemm{
        .M = g.M, .N = g.N, .K = g.K, .A = a.data(), .lda = g.K, .B = b.data(), .ldb = g.K,
        .scale_a = scale_a.data(), .scale_a_layout = layout_a, .scale_b = scale_b.data(),
        .scale_b_layout = layout_b, .D = g.D, .ldd = g.N, .output = ch07::Output::bf16});
  }
  void run(cudaStream_t stream) const {
    launch_requantize_mx(&rq_a, layout_a, nullptr, layout_b, stream);
    plan->run(stream);
  }
};

/// The MXFP8 operands of one shape on the device, and a plan over them per
/// variant asked for (a bf16 D, M x N, for the bf16 variants; a float D, M x N, only where a
/// variant writes one).
struct MxCall {
  ch09::MxOperands host;
  DeviceBuffer<std::uint8_t> A, B, sa, sb;
  DeviceBuffer<std::uint16_t> D;
  DeviceBuffer<float> D32;
  std::vector<Variant> variants;
  std::vector<std::unique_ptr<ch09::HopperPlan>> plans;
  MxCall(const Shape& s, std::uint64_t seed, const std::vector<Variant>& variants_)
      : host(ch09::random_operands(s.M, s.N, s.K, seed)),
        A(host.A),
        B(host.B),
        sa(host.sa),
        sb(host.sb),
        D(std::size_t(s.M * s.N)),
        D32(std::any_of(variants_.begin(), variants_.end(), [](const Variant& v) { return v.f32(); })
                ? std::size_t(s.M * s.N)
                : 0),
        variants(variants_) {
    for (const auto& v : variants) {
      ch09::MxGemm g = ch09::mx_call(host, A.data(), B.data(), sa.data(), sb.data(),
                                     v.f32() ? static_cast<void*>(D32.data()) : D.data());
      g.output = v.output;
      g.accumulate = v.accumulate;
      plans.push_back(std::make_unique<ch09::HopperPlan>(g, ch09::HopperOptions{v.kernel, v.path}));
    }
  }
  /// D poisoned, one run of plan i, `rows` sampled rows (first and last among
  /// them) against the float64 definition: the relative Frobenius error over
  /// them, every entry finite.
  std::string check(std::size_t i, std::int64_t rows, std::uint64_t seed, bool& ok) {
    if (variants[i].f32()) return check_f32(i, rows, seed, ok);
    return check_run([&] { plans[i]->run(nullptr); }, rows, seed, ok);
  }
  /// The same for a float D (common/check.hpp's check_float_d_rows: poisoned, or with accumulate
  /// holding values as large as the product), against the definition within 1e-3 (the tests'
  /// float D bound is 5e-4 at K <= 672; the FP32 sums' error grows with K), or
  /// per_tensor_tolerance(K) on the requantize path, whose re-quantisation (not D) is what
  /// departs from the definition.
  std::string check_f32(std::size_t i, std::int64_t rows, std::uint64_t seed, bool& ok) {
    const Variant& v = variants[i];
    const auto picked = sample_rows(host.M, std::min(rows, host.M), seed);
    const double tolerance = v.path == ch09::HopperPath::requantize_block_scaled
                                 ? per_tensor_tolerance(host.K)
                                 : 1e-3;
    const FloatDCheck c = check_float_d_rows(
        D32.data(), host.M, host.N, picked, ch09::reference_f64_rows(host, picked), v.accumulate,
        tolerance, seed, [&] { plans[i]->run(nullptr); });
    ok = c.ok;
    return c.describe;
  }
  /// The same for any call that writes D.
  std::string check_run(const std::function<void()>& run, std::int64_t rows, std::uint64_t seed,
                        bool& ok) {
    poison_bf16(D.data(), D.size());
    run();
    FP8GEMM_CUDA_CHECK(cudaDeviceSynchronize());
    const auto picked = sample_rows(host.M, std::min(rows, host.M), seed);
    const auto ref = ch09::reference_f64_rows(host, picked);
    const auto all = D.download();
    std::vector<std::uint16_t> got;
    for (std::int64_t m : picked)
      got.insert(got.end(), all.begin() + m * host.N, all.begin() + (m + 1) * host.N);
    const ErrorStats e = compare_bf16(got.data(), ref.data(), std::int64_t(ref.size()));
    ok = e.ok(per_tensor_tolerance(host.K));
    char buf[160];
    std::snprintf(buf, sizeof buf, "rel %.2e, %lld rows, %lld non-finite", e.rel_frobenius,
                  static_cast<long long>(picked.size()), static_cast<long long>(e.non_finite));
    return buf;
  }
};

/// The name a plan is timed under: the default plan is "ch09_hopper_mx", a
/// chosen kernel "ch09_hopper_mx:<kernel>"; on the dequantize_bf16 path
/// "ch09_hopper_mx_bf16" and "ch09_hopper_mx_bf16:<kernel>". A float D adds "_f32d" to the
/// path's stem ("_f32d_acc" with accumulate): "ch09_hopper_mx_f32d:<kernel>".
std::string impl_name(const Variant& v) {
  const std::string path = v.path == ch09::HopperPath::dequantize_bf16 ? "ch09_hopper_mx_bf16"
                           : v.path == ch09::HopperPath::requantize_block_scaled
                               ? "ch09_hopper_mx_requant"
                               : "ch09_hopper_mx";
  const std::string stem = path + (v.f32() ? (v.accumulate ? "_f32d_acc" : "_f32d") : "");
  return v.kernel.empty() ? stem : stem + ":" + v.kernel;
}

}  // namespace

int main(int argc, char** argv) {
  std::printf(
      "Chapter 9, Hopper half: MXFP8 (e4m3, UE8M0 scale per 1 x 32) on "
      "the engine, a "
      "promotion per 32 K\n");
  // The arguments first, so that a bad one is refused with a message, GPU or not.
  ChapterArgs args;
  bool float_d = false;
  std::vector<std::string> f32_named;  // FP32 kernels named in --kernels (with --float-d)
  const bool args_ok = parse_arguments("ch09_hopper_mxfp8", [&] {
    args = parse_chapter_args(argc, argv, {8192}, "ch09_hopper_mxfp8.json",
                              [&](const std::string& a) {
                                if (a != "--float-d") return false;
                                float_d = true;
                                return true;
                              });
    // An FP32 kernel (f32 in its name) writes a float D: timed with --float-d, refused here by
    // name otherwise.
    f32_named = float_d_kernels(args.kernels, float_d, [](const std::string& k) {
      for (const auto* list : {&ch09::hopper_kernels(), &ch09::hopper_bf16_kernels()})
        for (const auto& info : *list)
          if (info.name == k) return engine::writes_f32(info.epilogue);
      return false;
    });
  });
  if (!args_ok) return 1;
  if (cuda_device_count() == 0) {
    std::printf(
        "No CUDA GPU found: ch09_hopper_mxfp8 was built, but running "
        "it needs an NVIDIA "
        "Hopper GPU (sm_90a).\n");
    return 2;
  }
  std::printf("GPU: %s\ncommit: %s\n", describe_device().c_str(), git_commit());
  // --accuracy=PATH: the MXFP8 rows of chapter 7's accuracy study (accuracy_study.hpp), as JSON.
  if (!args.accuracy_json.empty()) {
    if (!ch09::run_accuracy_study(args.accuracy_json, git_commit())) return 1;
    if (!args.bench) return 0;
  }
  std::vector<Shape> shapes;
  for (const auto& s : args.shapes())  // the squares and the M = 4096 DeepSeek shapes
    if (args.sizes_given || !args.custom.empty() || s.M == s.N || s.M == 4096) shapes.push_back(s);

  // The three paths' defaults; --kernels=a,b (or all): these Hopper kernels too.
  constexpr auto kBf16 = ch09::HopperPath::dequantize_bf16;
  constexpr std::size_t kBf16Plan = 1, kRequantPlan = 2;  // indices of the paths' default plans
  std::vector<Variant> kernels{{"", ch09::HopperPath::promote_per_block},
                               {"", kBf16},
                               {"", ch09::HopperPath::requantize_block_scaled}};
  for (const auto& k : args.kernels) {
    if (std::find(f32_named.begin(), f32_named.end(), k) != f32_named.end()) continue;  // below
    if (k != "all") {
      kernels.push_back({k, k.ends_with("_bf16") ? kBf16 : ch09::HopperPath::promote_per_block});
      continue;
    }
    // (bf16 D only here: the FP32 kernels, f32 in their names, write a float D; the tests cover
    // them.)
    for (const auto* list : {&ch09::hopper_kernels(), &ch09::hopper_earlier_kernels()})
      for (const auto& info : *list)
        if (!engine::writes_f32(info.epilogue)) kernels.push_back({info.name});
    for (const auto& info : ch09::hopper_bf16_kernels())
      if (!engine::writes_f32(info.epilogue)) kernels.push_back({info.name, kBf16});
  }
  if (float_d) {
    constexpr auto kF32 = ch09::Output::f32;
    kernels.push_back({"", ch09::HopperPath::promote_per_block, kF32});
    kernels.push_back({"", kBf16, kF32});
    kernels.push_back({"", ch09::HopperPath::requantize_block_scaled, kF32});
    kernels.push_back({"", ch09::HopperPath::promote_per_block, kF32, true});
    for (const auto& k : f32_named)
      for (const bool accumulate : {false, true})
        kernels.push_back({k, k.ends_with("_bf16") ? kBf16 : ch09::HopperPath::promote_per_block,
                           kF32, accumulate});
  }
  std::map<std::string, std::string> errors;
  std::vector<std::unique_ptr<MxCall>> mx;
  std::vector<std::unique_ptr<WeightsOnce>> once;  // per MxCall
  std::vector<std::unique_ptr<ch07::DeviceOperands>> bs_ops;
  std::vector<std::unique_ptr<ch07::Plan>> bs_plans;
  bool ok = true;
  std::uint64_t seed = 9100;
  CublasLtGemm cublas;
  std::printf(
      "\nvalidation against float64 (8 sampled rows; tolerance 2^-8 + "
      "2.5e-7 K):\n");
  for (const auto& s : shapes) {
    if (s.K % 32 != 0) {
      std::printf("  %-20s skipped: K is not a multiple of 32 (MXFP8 blocks)\n", s.name().c_str());
      continue;
    }
    mx.push_back(std::make_unique<MxCall>(s, seed++, kernels));
    for (std::size_t i = 0; i < kernels.size(); ++i) {
      bool mx_ok = false;
      const std::string d = mx.back()->check(i, 8, seed++, mx_ok);
      errors[impl_name(kernels[i]) + "/" + s.name()] = d;
      std::printf("  %-20s %s  %s  %s  [%s]\n", s.name().c_str(), impl_name(kernels[i]).c_str(),
                  mx_ok ? "ok  " : "FAIL", d.c_str(), mx.back()->plans[i]->describe().c_str());
      ok &= mx_ok;
    }
    {
      // The weights-once recipe, validated as the paths are (on this random data the
      // re-quantisation is within the tolerance of the MX definition).
      once.push_back(std::make_unique<WeightsOnce>(
          ch09::mx_call(mx.back()->host, mx.back()->A.data(), mx.back()->B.data(),
                        mx.back()->sa.data(), mx.back()->sb.data(), mx.back()->D.data())));
      bool w_ok = false;
      const WeightsOnce* w = once.back().get();
      const std::string d = mx.back()->check_run([w] { w->run(nullptr); }, 8, seed++, w_ok);
      errors["ch09_requant_weights_once/" + s.name()] = d;
      std::printf("  %-20s ch09_requant_weights_once  %s  %s\n", s.name().c_str(),
                  w_ok ? "ok  " : "FAIL", d.c_str());
      ok &= w_ok;
    }
    if (s.N % 8 == 0) {
      // cuBLASLt's bf16 GEMM on the dequantize_bf16 path's operands (its plan ran above).
      const ch09::HopperPlan& p = *mx.back()->plans[kBf16Plan];
      bool cb_ok = false;
      const std::string d = mx.back()->check_run(
          [&] {
            cublas.bf16(s.M, s.N, s.K, static_cast<const std::uint16_t*>(p.engine().args().A),
                        static_cast<const std::uint16_t*>(p.engine().args().B),
                        mx.back()->D.data(), nullptr);
          },
          8, seed++, cb_ok);
      errors["cublaslt_bf16/" + s.name()] = d;
      std::printf("  %-20s cublaslt_bf16  %s  %s\n", s.name().c_str(), cb_ok ? "ok  " : "FAIL",
                  d.c_str());
      ok &= cb_ok;
    }
    bs_ops.push_back(std::make_unique<ch07::DeviceOperands>(s.M, s.N, s.K, seed++));
    bs_plans.push_back(std::make_unique<ch07::Plan>(bs_ops.back()->gemm()));
    const auto r = ch07::sampled_check(*bs_ops.back(), *bs_plans.back(), 8, seed++);
    errors["ch07_block_scaled/" + s.name()] = r.describe;
    std::printf("  %-20s ch07_block_scaled  %s  %s\n", s.name().c_str(), r.ok ? "ok  " : "FAIL",
                r.describe.c_str());
    ok &= r.ok;
  }
  if (!ok) {
    std::printf("\nVALIDATION FAILED: not benchmarking a wrong kernel.\n");
    return 1;
  }
  if (!args.bench) return 0;

  // (extra_d_bytes_per_entry: a float D's 2 more bytes per entry written than bf16's, and with
  // accumulate 4 more read.)
  auto add = [&](const std::string& impl, const Shape& s, std::function<void(cudaStream_t)> f,
                 double scale_bytes, double extra_d_bytes_per_entry = 0) {
    GemmCost cost = fp8_gemm_cost(s.M, s.N, s.K, scale_bytes);
    cost.bytes += extra_d_bytes_per_entry * double(s.M) * double(s.N);
    add_gpu_benchmark(impl, s.name(), std::move(f), cost);
  };
  for (std::size_t i = 0; i < mx.size(); ++i) {
    const Shape s{mx[i]->host.M, mx[i]->host.N, mx[i]->host.K};
    for (std::size_t j = 0; j < kernels.size(); ++j) {
      const ch09::HopperPlan* p = mx[i]->plans[j].get();
      add(
          impl_name(kernels[j]), s, [p](cudaStream_t st) { p->run(st); },
          double(mx[i]->host.sa.size() + mx[i]->host.sb.size()),
          kernels[j].f32() ? (kernels[j].accumulate ? 6.0 : 2.0) : 0.0);
    }
    // The dequantize_bf16 path's GEMM alone (that path's default plan); its bytes
    // are the bf16 operands it reads, so its GB/s is the GEMM's.
    const engine::EnginePlan* gemm_alone = &mx[i]->plans[kBf16Plan]->engine();
    add(
        "ch09_bf16_gemm_alone", s, [gemm_alone](cudaStream_t st) { gemm_alone->run(st); },
        double(s.M + s.N) * double(s.K));
    if (s.N % 8 == 0) {
      const auto* a16 = static_cast<const std::uint16_t*>(gemm_alone->args().A);
      const auto* b16 = static_cast<const std::uint16_t*>(gemm_alone->args().B);
      std::uint16_t* d = mx[i]->D.data();
      add(
          "cublaslt_bf16", s,
          [s, a16, b16, d, &cublas](cudaStream_t st) { cublas.bf16(s.M, s.N, s.K, a16, b16, d, st); },
          double(s.M + s.N) * double(s.K));
    }
    // The requantize_block_scaled path's chapter-7 GEMM alone, on the operands the path's last
    // run re-quantised (its scales: chapter 7's), so that the path's time minus this one is the
    // re-quantisation's.
    const ch07::Plan* rq_alone = mx[i]->plans[kRequantPlan]->block_scaled();
    add(
        "ch09_requant_gemm_alone", s, [rq_alone](cudaStream_t st) { rq_alone->run(st); },
        4.0 * double(ceil_div(s.K, 128)) * double(s.M + ceil_div(s.N, 128)));
    const WeightsOnce* w = once[i].get();
    add(
        "ch09_requant_weights_once", s, [w](cudaStream_t st) { w->run(st); },
        double(mx[i]->host.sa.size() + mx[i]->host.sb.size()));
    const ch07::Plan* q = bs_plans[i].get();
    const double bs_scale_bytes =
        4.0 * double(ceil_div(s.K, 128)) * double(s.M + ceil_div(s.N, 128));
    add(
        "ch07_block_scaled", s, [q](cudaStream_t st) { q->run(st); }, bs_scale_bytes);
    const ch07::BlockScaledGemm g = bs_ops[i]->gemm();
    if (g.M % 4 == 0 && g.N % 8 == 0)  // cuBLASLt's block-scaled rules
      add(
          "cublaslt_block_scaled", s,
          [g, &cublas](cudaStream_t st) {
            cublas.block_scaled(g.M, g.N, g.K, g.A, g.B, static_cast<std::uint16_t*>(g.D),
                                g.scale_a, g.scale_b, st);
          },
          bs_scale_bytes);
  }
  std::vector<char*> rest = args.rest;
  const auto results = run_benchmarks(int(rest.size()), rest.data(), args.json);
  print_summary(results, "ch07_block_scaled",
                [&](const std::string& impl, const std::string& shape) {
                  const auto it = errors.find(impl + "/" + shape);
                  return it == errors.end() ? std::string() : it->second;
                });
  return 0;
}
