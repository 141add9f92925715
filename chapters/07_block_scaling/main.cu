// Chapter 7's executable: validate the block-scaled GEMM against the float64 reference, then
// benchmark it beside cuBLASLt block-scaled (VEC128 x BLK128x128) on the standard shapes, in one
// process, by one method (common/bench.hpp). The Python peers (torch._scaled_mm blockwise,
// DeepGEMM) are timed by bench/peers.py with the same method.
//
//   ch07_block_scaling [--no-bench] [--sizes=...] [--shapes=MxNxK,...] [--json=PATH]
//                      [--kernels=a,b] [--accuracy=PATH] [Google Benchmark flags]
// --kernels=a,b   tuning: time these kernels (ch07::kernels() names, or "all") instead of the
//                 table's choice, beside cuBLASLt; each is validated on each shape first
// --accuracy=PATH the accuracy study (README): relative error against float64 of four recipes on
//                 three kinds of data, K up to 65536, as JSON
// --splits=S,...  also time split-K (Options::splits = S, the default split-K kernel for the
//                 shape) beside the table's kernel (or --kernels), validated first; impl
//                 "ch07_splitk_s<S>". Opt-in; measured in the README, "Small M (decode)"
// --splitk-kernels=a,b   with --splits: these split-K kernels (ch07::splitk_kernels() names, or
//                 "all") instead of the default one; impl "ch07_splitk_s<S>:<kernel>"
// --float-d       the float D too (Output::f32, session 67), on the same operands: the default
//                 FP32 kernel writing D = A.B^T (ch07_f32d) and adding into it (ch07_f32d_acc:
//                 D = A.B^T + D), beside the bf16 D's default; FP32 kernels named in --kernels
//                 (_f32 in their names; refused without --float-d) join them, each with and
//                 without accumulate
//                 ("ch07_f32d:<kernel>", "ch07_f32d_acc:<kernel>"). Each validated first on 8
//                 sampled rows (within 1e-3 of float64; with accumulate over earlier values as
//                 large as the product); bytes counted with D's 4 (8 with accumulate) per entry
// For M <= 128 shapes (memory-bound) a "device_copy/<shape>" benchmark copies N x K bytes in the
// same run: the bandwidth their GB/s is compared with.
#include <algorithm>
#include <cstdio>
#include <fstream>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "accuracy_study.hpp"
#include "bs_check.hpp"
#include "bs_gemm.hpp"
#include "splitk.hpp"
#include "common/bench.hpp"
#include "common/check.hpp"
#include "common/cublaslt.hpp"
#include "common/cuda.hpp"
#include "common/chapter_args.hpp"

using namespace fp8gemm;

int main(int argc, char** argv) {
  std::printf("Chapter 7: DeepSeek-V3 block scaling (A 1x128, B 128x128, FP32 promotion every "
              "128 K) on the engine\n");

  // The arguments first, so that a bad one is refused with a message, GPU or not.
  std::vector<int> splits;                 // --splits
  std::vector<std::string> splitk_kernels;  // --splitk-kernels
  bool float_d = false;                     // --float-d
  std::vector<std::string> f32_kernels;     // FP32 kernels named in --kernels (with --float-d)
  ChapterArgs args;
  const bool args_ok = parse_arguments("ch07_block_scaling", [&] {
    args = parse_chapter_args(
        argc, argv, {2048, 4096, 8192}, "ch07_block_scaling.json", [&](const std::string& a) {
          if (a == "--float-d") {
            float_d = true;
            return true;
          }
          if (a.rfind("--splits=", 0) == 0) {
            for (const auto& t : split_list(a.substr(9)))
              splits.push_back(int(parse_count("--splits=" + t, "--splits=", 1)));
            return true;
          }
          if (a.rfind("--splitk-kernels=", 0) == 0) {
            for (const auto& t : split_list(a.substr(17))) {
              if (t != "all") {
                splitk_kernels.push_back(t);
                continue;
              }
              for (const auto& info : ch07::splitk_kernels()) splitk_kernels.push_back(info.name);
            }
            return true;
          }
          return false;
        });
    // An FP32 kernel writes a float D: timed with --float-d, refused here by name otherwise.
    f32_kernels = float_d_kernels(args.kernels, float_d, [](const std::string& k) {
      for (const auto& info : ch07::kernels())
        if (info.name == k) return engine::writes_f32(info.epilogue);
      return false;
    });
  });
  if (!args_ok) return 1;
  if (cuda_device_count() == 0) {
    std::printf("No CUDA GPU found: ch07_block_scaling was built, but running it needs an NVIDIA "
                "Hopper GPU (sm_90a).\nOn a machine with one, run this binary again; see "
                "README.md, 'Running on a GPU'.\n");
    return 2;
  }
  std::printf("GPU: %s\ncommit: %s\n", describe_device().c_str(), git_commit());
  const std::vector<Shape> shapes = args.shapes();
  std::vector<std::string> kernels;  // --kernels: the bf16 D's (the float D's: f32_kernels)
  for (const auto& k : args.kernels) {
    if (std::find(f32_kernels.begin(), f32_kernels.end(), k) != f32_kernels.end()) continue;
    if (k != "all") {
      kernels.push_back(k);
      continue;
    }
    for (const auto& info : ch07::kernels())  // every kernel a standard call can use
      if (info.epilogue == engine::EpilogueKind::tma_store) kernels.push_back(info.name);
  }
  const bool bench = args.bench;
  const std::string& json = args.json;
  const std::string& accuracy_json = args.accuracy_json;
  std::vector<char*> rest = args.rest;

  if (!accuracy_json.empty()) {
    ch07::run_accuracy_study(accuracy_json, git_commit());
    if (!bench) return 0;
  }

  // 1. Correctness on the benchmark's own operands: 8 sampled rows of each shape against the
  //    float64 reference on the dequantised operands, for the table's kernel or every kernel
  //    being tuned. Nothing wrong is timed.
  std::map<std::string, std::unique_ptr<ch07::DeviceOperands>> operands;
  auto ops_for = [&](const Shape& s) -> ch07::DeviceOperands& {
    auto& p = operands[s.name()];
    if (!p) p = std::make_unique<ch07::DeviceOperands>(s.M, s.N, s.K, 7000 + std::uint64_t(s.M + s.N + s.K));
    return *p;
  };
  std::vector<std::unique_ptr<ch07::Plan>> plans;
  std::map<std::string, std::string> errors;
  bool all_ok = true;
  std::uint64_t seed = 7100;
  std::printf("\nvalidation against the float64 CPU reference on dequantised operands (8 sampled "
              "rows, tolerance 2^-8 + 2.5e-7 K, every 128x128 tile too):\n");
  struct Timed {
    std::string impl;
    Shape shape;
    const ch07::Plan* plan;
    double extra_d_bytes = 0;  // per entry of D beyond bf16's 2: a float D 2, with accumulate 6
  };
  std::vector<Timed> timed;
  // What is timed per shape: the table's kernel (or each --kernels one), then split-K per --splits
  // value (the default split-K kernel, or each --splitk-kernels one).
  struct Variant {
    std::string kernel;
    int splits = 0;
    std::string impl;
    bool f32 = false;         // Output::f32 (--float-d)
    bool accumulate = false;  // D = A.B^T + D
  };
  std::vector<Variant> variants;
  if (kernels.empty()) variants.push_back({"", 0, "ch07_block_scaled"});
  if (float_d) {
    variants.push_back({"", 0, "ch07_f32d", true, false});
    variants.push_back({"", 0, "ch07_f32d_acc", true, true});
    for (const auto& k : f32_kernels)
      for (const bool accumulate : {false, true})
        variants.push_back(
            {k, 0, (accumulate ? "ch07_f32d_acc:" : "ch07_f32d:") + k, true, accumulate});
  }
  for (const auto& k : kernels) variants.push_back({k, 0, "ch07:" + k});
  for (int S : splits) {
    const std::string impl = "ch07_splitk_s" + std::to_string(S);
    if (splitk_kernels.empty()) variants.push_back({"", S, impl});
    for (const auto& k : splitk_kernels) variants.push_back({k, S, impl + ":" + k});
  }
  const bool tuning = !kernels.empty() || !splits.empty() || !f32_kernels.empty();
  // One float D per shape (--float-d), M x N, packed; its checks' 8 sampled rows and their float64
  // reference, computed once per shape (it dequantises all of B).
  std::map<std::string, std::unique_ptr<DeviceBuffer<float>>> float_ds;
  std::map<std::string, std::pair<std::vector<std::int64_t>, std::vector<double>>> float_refs;
  for (const auto& s : shapes) {
    for (const auto& v : variants) {
      const std::string& name = v.kernel;
      ch07::Options o;
      o.kernel = name;
      o.splits = v.splits;
      ch07::DeviceOperands& ops = ops_for(s);
      ch07::BlockScaledGemm g = ops.gemm();
      if (v.f32) {
        auto& d32 = float_ds[s.name()];
        if (!d32) d32 = std::make_unique<DeviceBuffer<float>>(std::size_t(s.M * s.N));
        g.output = ch07::Output::f32;
        g.D = d32->data();
        g.accumulate = v.accumulate;
      }
      std::unique_ptr<ch07::Plan> p;
      try {
        p = std::make_unique<ch07::Plan>(g, o);
      } catch (const std::exception& e) {
        std::printf("  %-20s skipped %s: %s\n", s.name().c_str(), v.impl.c_str(), e.what());
        continue;
      }
      bool ok = false;
      std::string describe;
      if (v.f32) {
        auto& ref = float_refs[s.name()];
        if (ref.first.empty()) {
          ref.first = sample_rows(s.M, std::min<std::int64_t>(8, s.M), seed + 1000);
          ref.second = ch07::reference_rows(ops, ref.first);
        }
        const FloatDCheck c =
            check_float_d_rows(static_cast<float*>(g.D), s.M, s.N, ref.first, ref.second,
                               v.accumulate, 1e-3, seed++, [&] { p->run(nullptr); });
        ok = c.ok;
        describe = c.describe;
      } else {
        const auto r = ch07::sampled_check(ops, *p, 8, seed++);
        ok = r.ok;
        describe = r.describe;
      }
      const std::string& impl = v.impl;
      all_ok &= ok;
      errors[impl + "/" + s.name()] = describe;
      std::printf("  %-20s %-16s %s  %s  [%s]\n", s.name().c_str(), impl.c_str(),
                  ok ? "ok  " : "FAIL", describe.c_str(), p->describe().c_str());
      // Tuning: a kernel that fails is reported and left out of the timing, the others go on.
      if (ok || !tuning) timed.push_back({impl, s, p.get(), v.f32 ? (v.accumulate ? 6.0 : 2.0) : 0.0});
      plans.push_back(std::move(p));
    }
  }
  if (!all_ok && !tuning) {
    std::printf("\nVALIDATION FAILED: not benchmarking a wrong kernel.\n");
    return 1;
  }
  if (!bench) return all_ok ? 0 : 1;

  // 2. Benchmarks: ours and cuBLASLt block-scaled on the same operands, same process and method.
  CublasLtGemm cublas;
  auto add = [&](const std::string& impl, const Shape& s, std::function<void(cudaStream_t)> f,
                 double extra_d_bytes = 0) {
    // Bytes: A, B, D and the scales (A: 4 bytes per 128 K per row; B: per 128 x 128 block); a
    // float D's extra bytes (read and written with accumulate).
    const double scale_bytes = 4.0 * double(ceil_div(s.K, 128)) *
                               double(s.M + ceil_div(s.N, 128));
    GemmCost cost = fp8_gemm_cost(s.M, s.N, s.K, scale_bytes);
    cost.bytes += extra_d_bytes * double(s.M) * double(s.N);
    add_gpu_benchmark(impl, s.name(), std::move(f), cost);
  };
  std::map<std::string, bool> cublas_added;
  for (const auto& t : timed) {
    const ch07::Plan* p = t.plan;
    add(t.impl, t.shape, [p](cudaStream_t st) { p->run(st); }, t.extra_d_bytes);
    if (cublas_added[t.shape.name()]) continue;
    cublas_added[t.shape.name()] = true;
    const ch07::BlockScaledGemm g = ops_for(t.shape).gemm();
    if (t.shape.M <= 128) {
      // Memory-bound shapes: the device's copy bandwidth in the same run, as the yardstick for
      // their GB/s ("device_copy": the bytes the GEMM must move at least, read once and written
      // once by cudaMemcpyAsync, counted as read + write).
      const std::size_t bytes = std::size_t(t.shape.N * t.shape.K);
      auto buffers = std::make_shared<std::pair<DeviceBuffer<std::uint8_t>, DeviceBuffer<std::uint8_t>>>(
          DeviceBuffer<std::uint8_t>(bytes), DeviceBuffer<std::uint8_t>(bytes));
      GemmCost cost;
      cost.bytes = 2.0 * double(bytes);
      cost.flops = 0;
      add_gpu_benchmark("device_copy", t.shape.name(), [buffers, bytes](cudaStream_t stream) {
        FP8GEMM_CUDA_CHECK(cudaMemcpyAsync(buffers->second.data(), buffers->first.data(), bytes,
                                           cudaMemcpyDeviceToDevice, stream));
      }, cost);
    }
    if (g.M % 4 != 0 || g.N % 8 != 0) continue;  // cuBLASLt's block-scaled rules
    add("cublaslt_block_scaled", t.shape, [g, &cublas](cudaStream_t st) {
      cublas.block_scaled(g.M, g.N, g.K, g.A, g.B, static_cast<std::uint16_t*>(g.D), g.scale_a,
                          g.scale_b, st);
    });
  }
  const auto results = run_benchmarks(int(rest.size()), rest.data(), json);
  print_summary(results, "cublaslt_block_scaled", [&](const std::string& impl, const std::string& shape) {
    const auto it = errors.find(impl + "/" + shape);
    return it == errors.end() ? std::string() : it->second;
  });
  if (!all_ok) std::printf("\nVALIDATION FAILED for some tuning kernels (FAIL above): not timed.\n");
  return all_ok ? 0 : 1;
}
