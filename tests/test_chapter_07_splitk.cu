// GPU tests of chapter 7's opt-in split-K (Options::splits; chapters/07_block_scaling/splitk.*,
// common/engine/split_k.cuh): against the float64 reference of the dequantised operands at the
// small-M DeepSeek shapes (sampled rows) and at odd shapes (all of D: M = 1, 65, 127; N not a
// multiple of the tile, odd N; K % 128 != 0; S = 2, 3, k_blocks) with every split-K kernel;
// FP32 output with accumulate; a bf16 D with odd ldd; bitwise determinism over runs; S = 1 bit
// for bit equal to the unsplit kernel with the same tile and loop; S >= 2 within the tolerance
// of the table's kernel; rebind; launches back to back without a sync between them (the next
// GEMM overwrites the workspace the previous reduce reads: stream order must keep them apart).
// Outputs are poisoned before every run, so an unwritten D fails.
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "bs_gemm.hpp"
#include "catch.hpp"
#include "ch07_calls.hpp"
#include "common/check.hpp"
#include "common/cuda.hpp"
#include "common/fp8.hpp"
#include "common/quantize.hpp"
#include "common/reference.hpp"
#include "splitk.hpp"

using namespace fp8gemm;
using namespace fp8gemm::test_ch07;

namespace {

ch07::Options split_options(int splits, const std::string& kernel = "") {
  ch07::Options o;
  o.splits = splits;
  o.kernel = kernel;
  return o;
}

/// Runs the call once with `o` and returns D (packed bf16).
std::vector<std::uint16_t> run(DeviceCall& dc, const ch07::Options& o,
                               std::string* describe = nullptr) {
  poison_bf16(dc.d16.data(), dc.d16.size());
  ch07::Plan plan(dc.g, o);
  plan.run(nullptr);
  FP8GEMM_CUDA_CHECK(cudaDeviceSynchronize());
  if (describe) *describe = plan.describe();
  return dc.d_packed();
}

/// D (all M x N) against the reference of `rows` (global relative Frobenius and the worst 128 x 128
/// tile).
bool check(const HostCall& h, const std::vector<std::uint16_t>& d,
           const std::vector<std::int64_t>& rows, const std::vector<double>& ref,
           const std::string& what, const std::string& describe) {
  const ErrorStats e = compare_bf16_rows(d.data(), h.s.N, rows, ref.data());
  const double tile = worst_tile_error(d.data(), h.s.N, rows, ref.data());
  const double tol = per_tensor_tolerance(h.s.K);
  const bool ok = e.non_finite == 0 && e.rel_frobenius <= tol && tile <= tol;
  std::printf("  %-40s %-16s %s rel %.2e tile %.2e  [%s]\n", what.c_str(), name(h.s).c_str(),
              ok ? "ok  " : "FAIL", e.rel_frobenius, tile, describe.c_str());
  return ok;
}

}  // namespace

TEST_CASE("ch07 split-K: the small-M DeepSeek shapes, S = 2, 3, k_blocks", "[ch07][split_k][gpu]") {
  std::uint64_t seed = 4000;
  for (const Shape& s : {Shape{64, 2112, 7168}, Shape{128, 2112, 7168}, Shape{64, 4096, 7168},
                         Shape{128, 4096, 7168}}) {
    const HostCall h(s, seed++);
    const std::vector<std::int64_t> rows = sample_rows(s.M, 12, seed++);
    const std::vector<double> ref = h.reference(rows);
    DeviceCall dc(h);
    std::string desc;
    const std::vector<std::uint16_t> table = run(dc, {}, &desc);
    CHECK(check(h, table, rows, ref, "table kernel", desc));
    for (int S : {2, 3, 56}) {
      const std::vector<std::uint16_t> d = run(dc, split_options(S), &desc);
      CHECK(check(h, d, rows, ref, "split-K S = " + std::to_string(S), desc));
      // Against the table's kernel: another order of the same FP32 additions, so equal within
      // bf16 rounding (1 ulp) almost everywhere; the tolerance of the reference applies.
      std::vector<double> t(table.size());
      for (std::size_t i = 0; i < t.size(); ++i) t[i] = double(bf16_to_float(table[i]));
      const ErrorStats e = compare_bf16(d.data(), t.data(), std::int64_t(t.size()));
      CHECK(e.non_finite == 0);
      CHECK(e.rel_frobenius <= per_tensor_tolerance(s.K));
    }
  }
}

TEST_CASE("ch07 split-K: every split-K kernel at odd shapes, all of D", "[ch07][split_k][gpu]") {
  std::uint64_t seed = 5000;
  // M = 1, 65, 127; N not a multiple of the tile (and odd: the reduce's scalar path); K % 128 != 0.
  const std::vector<Shape> shapes = {{1, 8, 16},       {1, 77, 656},     {65, 264, 656},
                                     {127, 100, 1040}, {65, 2112, 1936}, {127, 41, 400},
                                     {64, 32, 128},    {128, 4096, 272}};
  for (const auto& k : ch07::splitk_kernels()) {
    for (const Shape& s : shapes) {
      const HostCall h(s, seed++);
      const std::vector<std::int64_t> rows = all_rows(s.M);
      const std::vector<double> ref = h.reference(rows);
      DeviceCall dc(h);
      const int k_blocks = int(ceil_div(s.K, 128));
      for (int S : {1, 2, 3, k_blocks}) {
        if (S > k_blocks) continue;
        std::string desc;
        const std::vector<std::uint16_t> d = run(dc, split_options(S, k.name), &desc);
        CHECK(check(h, d, rows, ref, k.name + " S = " + std::to_string(S), desc));
      }
    }
  }
}

TEST_CASE("ch07 split-K: S = 1 equals the unsplit kernel of the same tile bit for bit",
          "[ch07][split_k][gpu]") {
  // The same tile, stages and promoted loop; only the epilogue differs (FP32 to the workspace,
  // then the reduce's cvt.rn against the TMA store's cvt.rn): the same bits.
  const std::vector<std::pair<std::string, std::string>> pairs = {
      {"64x32_s14_c1x1_promoted_tma_b1", "64x32_s14_c1x1_promoted_f32_splitk"},
      {"64x64_s12_c1x1_promoted_tma_b1", "64x64_s12_c1x1_promoted_f32_splitk"},
      {"128x32_s10_c1x1_promoted_tma_b1", "128x32_s10_c1x1_promoted_f32_splitk"},
      {"128x64_s8_c1x1_promoted_tma_b1", "128x64_s8_c1x1_promoted_f32_splitk"}};
  std::uint64_t seed = 6000;
  for (const Shape& s : {Shape{64, 2112, 7168}, Shape{128, 264, 656}, Shape{65, 512, 1040}}) {
    const HostCall h(s, seed++);
    DeviceCall dc(h);
    const std::vector<double> ref = h.reference();
    for (const auto& [unsplit, split] : pairs) {
      ch07::Options o;
      o.kernel = unsplit;
      const std::vector<std::uint16_t> want = run(dc, o);
      // `want` itself against float64 (two unwritten, all-NaN outputs would compare equal).
      const ErrorStats e = compare_bf16(want.data(), ref.data(), std::int64_t(ref.size()));
      CHECK(e.non_finite == 0);
      CHECK(e.rel_frobenius <= per_tensor_tolerance(s.K));
      const std::vector<std::uint16_t> got = run(dc, split_options(1, split));
      std::printf("  S = 1 %-36s vs %-32s %s: %s\n", split.c_str(), unsplit.c_str(),
                  name(s).c_str(), got == want ? "equal" : "DIFFERENT");
      CHECK(got == want);
    }
  }
}

TEST_CASE("ch07 split-K: FP32 output, with and without accumulate", "[ch07][split_k][gpu]") {
  for (const Shape& s : {Shape{1, 9, 16}, Shape{65, 270, 656}, Shape{128, 2112, 1024}}) {
    const HostCall h(s, 7000 + std::uint64_t(s.M));
    const std::vector<double> ref = h.reference(all_rows(s.M));
    const int S = int(std::min<std::int64_t>(3, ceil_div(s.K, 128)));
    for (bool accumulate : {false, true}) {
      const std::string label = "S = " + std::to_string(S);
      const ErrorStats e = f32_output_error(h, ref, accumulate, split_options(S), label.c_str());
      CHECK(e.non_finite == 0);
      CHECK(e.rel_frobenius <= 5e-4);  // as the unsplit FP32 output (test_chapter_07)
    }
  }
}

TEST_CASE("ch07 split-K: a bf16 D with odd ldd and an unaligned start", "[ch07][split_k][gpu]") {
  const Shape s{65, 264, 656};
  const HostCall h(s, 7500);
  const std::vector<double> ref = h.reference(all_rows(s.M));
  DeviceCall dc(h, ch07::Output::bf16, s.N + 1);  // rows 2 (mod 4) bytes apart: scalar stores
  std::string desc;
  CHECK(check(h, run(dc, split_options(3), &desc), all_rows(s.M), ref, "split-K S = 3, ldd = N + 1",
              desc));
  // Each row's padding entry (column N) is not D's: still the poison.
  const std::vector<std::uint16_t> strided = dc.d16.download();
  std::int64_t padding_written = 0;
  for (std::int64_t r = 0; r < s.M; ++r)
    padding_written += strided[std::size_t(r * (s.N + 1) + s.N)] != 0xFFFF;
  CHECK(padding_written == 0);
  // D starting 2 bytes into its buffer, ldd even: pairs are misaligned, so scalar stores again.
  DeviceBuffer<std::uint16_t> big(std::size_t(s.M * (s.N + 2) + 2));
  poison_bf16(big.data(), big.size());
  ch07::BlockScaledGemm g = dc.g;
  g.D = big.data() + 1;
  g.ldd = s.N + 2;
  ch07::Plan plan(g, split_options(2));
  plan.run(nullptr);
  FP8GEMM_CUDA_CHECK(cudaDeviceSynchronize());
  const std::vector<std::uint16_t> all = big.download();
  std::vector<std::uint16_t> d(std::size_t(s.M * s.N));
  for (std::int64_t r = 0; r < s.M; ++r)
    for (std::int64_t n = 0; n < s.N; ++n)
      d[std::size_t(r * s.N + n)] = all[std::size_t(1 + r * (s.N + 2) + n)];
  CHECK(check(h, d, all_rows(s.M), ref, "split-K S = 2, D + 1 element", plan.describe()));
  // Outside D (the element before it, each row's two padding entries, the tail): the poison.
  std::int64_t outside_written = all[0] != 0xFFFF;
  for (std::int64_t r = 0; r < s.M; ++r)
    for (std::int64_t n = s.N; n < s.N + 2; ++n)
      if (1 + r * (s.N + 2) + n < std::int64_t(all.size()))
        outside_written += all[std::size_t(1 + r * (s.N + 2) + n)] != 0xFFFF;
  CHECK(outside_written == 0);
}

TEST_CASE("ch07 split-K: bitwise deterministic over 10 runs", "[ch07][split_k][gpu]") {
  for (const Shape& s : {Shape{128, 2112, 7168}, Shape{65, 77, 1936}}) {
    const HostCall h(s, 8000 + std::uint64_t(s.M));
    DeviceCall dc(h);
    const ch07::Plan plan(dc.g, split_options(3));
    const auto outputs = repeated_outputs(plan, dc, 10);
    // The first run against float64 on every row (ten equal but wrong, or unwritten, outputs
    // would pass the comparison below).
    const std::vector<std::int64_t> rows = all_rows(s.M);
    CHECK(check(h, outputs.front(), rows, h.reference(rows), "split-K S = 3, first of 10 runs",
                plan.describe()));
    for (const auto& d : outputs) CHECK(d == outputs.front());
  }
}

TEST_CASE("ch07 split-K: launches back to back", "[ch07][split_k][gpu]") {
  // Many tiles (a 128-row and a 64-row kernel), an odd shape with partial tiles; S = 2 and 4.
  // Five launches without a sync: each GEMM rewrites the workspace while the previous launch's
  // reduce may still be queued; stream order must give the same D as one launch.
  std::uint64_t seed = 8500;
  for (const Shape& s : {Shape{128, 7168, 2048}, Shape{65, 1000, 1040}}) {
    const HostCall h(s, seed++);
    // Every row: `first` is checked here and the five launches only against it.
    const std::vector<std::int64_t> rows = all_rows(s.M);
    const std::vector<double> ref = h.reference(rows);
    DeviceCall dc(h);
    for (const char* kernel :
         {"64x64_s12_c1x1_promoted_f32_splitk", "128x64_s8_c1x1_promoted_f32_splitk"}) {
      for (int S : {2, 4}) {
        const ch07::Plan plan(dc.g, split_options(S, kernel));
        poison_bf16(dc.d16.data(), dc.d16.size());
        plan.run(nullptr);
        FP8GEMM_CUDA_CHECK(cudaDeviceSynchronize());
        const std::vector<std::uint16_t> first = dc.d_packed();
        CHECK(check(h, first, rows, ref, std::string(kernel) + " S = " + std::to_string(S),
                    plan.describe()));
        poison_bf16(dc.d16.data(), dc.d16.size());
        for (int i = 0; i < 5; ++i) plan.run(nullptr);  // no sync between them
        FP8GEMM_CUDA_CHECK(cudaDeviceSynchronize());
        const std::vector<std::uint16_t> fifth = dc.d_packed();
        std::printf("  5 launches back to back: %s\n", fifth == first ? "equal" : "DIFFERENT");
        CHECK(fifth == first);
      }
    }
  }
}

TEST_CASE("ch07 split-K: rebind to new buffers gives what a new plan gives",
          "[ch07][split_k][gpu]") {
  const Shape s{64, 264, 1040};
  const HostCall h1(s, 9000), h2(s, 9100);
  DeviceCall d1(h1), d2(h2);
  ch07::Plan plan(d1.g, split_options(3));
  plan.rebind(d2.g);
  poison_bf16(d2.d16.data(), d2.d16.size());
  plan.run(nullptr);
  FP8GEMM_CUDA_CHECK(cudaDeviceSynchronize());
  const std::vector<std::uint16_t> got = d2.d_packed();
  const std::vector<std::uint16_t> want = run(d2, split_options(3));
  CHECK(got == want);
  CHECK(check(h2, got, all_rows(s.M), h2.reference(all_rows(s.M)), "split-K rebound plan",
              plan.describe()));
  // A different ldd is another call: refused, the plan unchanged.
  DeviceCall d3(h2, ch07::Output::bf16, s.N + 1);
  CHECK_THROWS_AS(plan.rebind(d3.g), std::invalid_argument);
  CHECK(cudaGetLastError() == cudaSuccess);
}
