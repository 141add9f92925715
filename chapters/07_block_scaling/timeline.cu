// ch07_timeline: where a block-scaled kernel's cycles go, from clock64 stamps of its ring's
// barriers taken by the producer warpgroup's idle warps (common/engine/timeline.cuh; the
// NOTEBOOK.md's "A timeline of the kernel" reads them with
// plots/data/h200/ch07/timeline/analyse.py).
//
//   ch07_timeline [--shapes=MxNxK,...] [--kernels=NAME_timeline,...] [--reps=N] [--json=PATH]
//
// For each shape and kernel: validate the "_timeline" kernel (sampled float64 check, as the
// chapter's executable does), time it with the stamp buffer set beside its twin (interleaved, L2
// flushed before each launch, median of --reps: what observing costs), then write the stamps of
// its last launch (CTAs 0-3) to the JSON. Without a GPU it says so and exits 2, as the chapters
// do.
#include <algorithm>
#include <cstdio>
#include <fstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "bs_check.hpp"
#include "bs_gemm.hpp"
#include "common/bench.hpp"
#include "common/chapter_args.hpp"
#include "common/cuda.hpp"
#include "common/engine/timeline.cuh"
#include "common/scaling.hpp"
#include "kernels.hpp"

using namespace fp8gemm;

namespace {

float median(std::vector<float> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  std::printf("ch07_timeline: clock64 stamps inside chapter 7's block-scaled kernels\n");
  // Every argument is checked here, before any GPU work: a bad shape or count, an unknown
  // argument, or a kernel that is not one of chapter 7's _timeline kernels is refused.
  int reps = 21;
  ChapterArgs args;
  const bool args_ok = parse_arguments("ch07_timeline", [&] {
    args = parse_chapter_args(argc, argv, {8192}, "ch07_timeline.json", [&](const std::string& a) {
      if (a.rfind("--reps=", 0) != 0) return false;
      reps = int(parse_count(a, "--reps=", 1));
      return true;
    });
  });
  if (!args_ok) return 1;
  if (args.rest.size() > 1) {
    std::fprintf(stderr, "unknown argument %s\n", args.rest[1]);
    return 1;
  }
  const std::vector<Shape> shapes =
      args.custom.empty() ? std::vector<Shape>{{8192, 8192, 8192}} : args.custom;
  const std::vector<std::string> kernels =
      args.kernels.empty() ? std::vector<std::string>{"256x128_s3_c1x2_promoted_tma_b4_timeline"}
                           : args.kernels;
  const std::string& json = args.json;
  const std::string suffix = "_timeline";
  for (const std::string& name : kernels) {
    const bool known = std::any_of(ch07::kernels().begin(), ch07::kernels().end(),
                                   [&](const engine::KernelInfo& k) { return k.name == name; });
    if (!known || name.size() <= suffix.size() || !name.ends_with(suffix)) {
      std::fprintf(stderr, "%s: not one of chapter 7's timeline kernels (names ending in %s)\n",
                   name.c_str(), suffix.c_str());
      return 1;
    }
  }
  if (cuda_device_count() == 0) {
    std::printf(
        "No CUDA GPU found: ch07_timeline was built, but running it needs an NVIDIA "
        "Hopper GPU (sm_90a).\n");
    return 2;
  }
  std::printf("GPU: %s\ncommit: %s\n", describe_device().c_str(), git_commit());
  std::ofstream out(json);
  if (!out) {
    std::fprintf(stderr, "cannot write %s\n", json.c_str());
    return 1;
  }
  out << "{\"gpu\": \"" << describe_device() << "\", \"commit\": \"" << git_commit()
      << "\", \"record_ctas\": " << engine::timeline::kRecordCtas << ", \"runs\": [\n";
  bool first_run = true;
  int failures = 0;
  L2Flush flush;
  EventTimer timer;
  for (const Shape& s : shapes) {
    const std::string sa = s.name();
    ch07::DeviceOperands ops(s.M, s.N, s.K, 7000 + std::uint64_t(s.M + s.N + s.K));
    for (const std::string& name : kernels) {
      const std::string twin = name.substr(0, name.size() - suffix.size());
      ch07::Options o_tl, o_twin;
      o_tl.kernel = name;
      o_twin.kernel = twin;
      const ch07::Plan tl(ops.gemm(), o_tl), base(ops.gemm(), o_twin);
      ch07::set_timeline_buffer(nullptr, 0);
      const auto check = ch07::sampled_check(ops, tl, 8, 77);
      std::printf("%s %s: %s %s\n", sa.c_str(), name.c_str(), check.ok ? "valid" : "WRONG",
                  check.describe.c_str());
      if (!check.ok) {
        ++failures;
        continue;
      }
      // The buffer: every K block of CTAs 0-3 (at most ceil(tiles / 66) tiles each, counting
      // 128 x 128 tiles, the smallest here).
      const int k_blocks = int(ceil_div(s.K, 128));
      const std::int64_t tiles = ceil_div(s.M, 128) * ceil_div(s.N, 128);
      const int capacity = int((tiles + 65) / 66 + 1) * k_blocks;
      DeviceBuffer<unsigned long long> buf(std::size_t(engine::timeline::kRecordCtas) * 2 *
                                           capacity);
      FP8GEMM_CUDA_CHECK(cudaMemset(buf.data(), 0, buf.bytes()));
      const int block_m = tl.kernel().block_m, block_n = tl.kernel().block_n;
      const int tiles_m = int(ceil_div(s.M, block_m)), tiles_n = int(ceil_div(s.N, block_n));
      DeviceBuffer<unsigned long long> tile_buf(std::size_t(tiles_m) * tiles_n * 2 * 3);
      FP8GEMM_CUDA_CHECK(cudaMemset(tile_buf.data(), 0, tile_buf.bytes()));
      ch07::set_timeline_buffer(buf.data(), capacity, tile_buf.data(), tiles_n);
      // The kernel observed against its twin: interleaved, L2 flushed before each launch.
      std::vector<float> t_tl, t_base;
      for (int r = 0; r < reps + 2; ++r) {
        for (int which = 0; which < 2; ++which) {
          const ch07::Plan& p = (r + which) % 2 == 0 ? tl : base;
          flush.flush();
          timer.start();
          p.run(nullptr);
          timer.stop();
          const float ms = timer.elapsed_ms();
          if (r >= 2) (&p == &tl ? t_tl : t_base).push_back(ms);
        }
      }
      FP8GEMM_CUDA_CHECK(cudaDeviceSynchronize());
      ch07::set_timeline_buffer(nullptr, 0);
      const std::vector<unsigned long long> stamps = buf.download();  // the last launch's
      const std::vector<unsigned long long> tile_stamps = tile_buf.download();
      const float ms_tl = median(t_tl), ms_base = median(t_base);
      const double tflops = 2.0 * double(s.M) * double(s.N) * double(s.K) / (ms_base * 1e-3) / 1e12;
      std::printf("  twin %.1f us (%.1f TFLOPS), observed %.1f us (%.4fx), %d reps\n",
                  ms_base * 1e3, tflops, ms_tl * 1e3, ms_tl / ms_base, reps);
      out << (first_run ? "" : ",\n") << "  {\"shape\": [" << s.M << ", " << s.N << ", " << s.K
          << "], \"kernel\": \"" << name << "\", \"twin\": \"" << twin
          << "\", \"block_m\": " << tl.kernel().block_m << ", \"block_n\": " << tl.kernel().block_n
          << ", \"k_blocks\": " << k_blocks << ", \"twin_us\": " << ms_base * 1e3
          << ", \"observed_us\": " << ms_tl * 1e3 << ", \"reps\": " << reps << ", \"check\": \""
          << check.describe << "\", \"ctas\": [";
      first_run = false;
      // Per CTA: [first-of-tile, clock] of each K block, full barriers then empty barriers.
      for (int cta = 0; cta < engine::timeline::kRecordCtas; ++cta) {
        out << (cta ? "," : "") << "\n    {\"cta\": " << cta;
        for (int o = 0; o < 2; ++o) {
          out << (o == 0 ? ", \"full\": [" : "], \"empty\": [");
          const std::size_t base_i = (std::size_t(cta) * 2 + o) * capacity;
          for (int j = 0; j < capacity && stamps[base_i + j] != 0; ++j) {
            const unsigned long long w = stamps[base_i + j];
            out << (j ? "," : "") << "[" << ((w >> 55) & 1) << "," << (w & ((1ull << 55) - 1))
                << "]";
          }
        }
        out << "]";
        // This CTA's tiles: [m_block, n_block, warpgroup, loop start, loop end, epilogue end].
        out << ", \"tiles\": [";
        bool first_tile = true;
        for (int tm = 0; tm < tiles_m; ++tm)
          for (int tn = 0; tn < tiles_n; ++tn)
            for (int w = 0; w < 2; ++w) {
              const std::size_t i = ((std::size_t(tm) * tiles_n + tn) * 2 + w) * 3;
              if (tile_stamps[i] == 0 || int(tile_stamps[i] >> 56) != cta) continue;
              out << (first_tile ? "" : ",") << "[" << tm << "," << tn << "," << w;
              for (int e = 0; e < 3; ++e) out << "," << (tile_stamps[i + e] & ((1ull << 56) - 1));
              out << "]";
              first_tile = false;
            }
        out << "]}";
      }
      out << "]}";
    }
  }
  out << "\n]}\n";
  std::printf("wrote %s\n", json.c_str());
  return failures == 0 ? 0 : 1;
}
