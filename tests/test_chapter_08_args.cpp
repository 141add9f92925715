// CPU tests of chapter 8's entry point and tooling: bad grouped calls are refused with
// std::invalid_argument naming the argument, before any CUDA call; the checking mode's rules and
// messages; the executable's cases and --case syntax.
#include <cstdint>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "catch.hpp"
#include "refusal.hpp"
#include "check_offsets.hpp"
#include "grouped_gemm.hpp"
#include "moe_cases.hpp"

using namespace fp8gemm;

namespace {
ch08::GroupedGemm good() {
  ch08::GroupedGemm g;
  g.groups = 4;
  g.rows = 1000;
  g.N = 512;
  g.K = 1024;
  g.offsets = reinterpret_cast<const int*>(std::uintptr_t(0x60000000));
  g.A = reinterpret_cast<const std::uint8_t*>(std::uintptr_t(0x10000000));
  g.B = reinterpret_cast<const std::uint8_t*>(std::uintptr_t(0x20000000));
  g.scale_a = reinterpret_cast<const float*>(std::uintptr_t(0x30000000));
  g.scale_b = reinterpret_cast<const float*>(std::uintptr_t(0x40000000));
  g.D = reinterpret_cast<void*>(std::uintptr_t(0x50000000));
  return g;
}
std::string refusal(const ch08::GroupedGemm& g) {
  return test::refusal_of([&] { ch08::Plan p(g); });
}
using test::has;
}  // namespace

TEST_CASE("ch08: bad grouped calls are refused before any CUDA call", "[ch08][cpu]") {
  auto g = good();
  g.groups = 0;
  CHECK(has(refusal(g), "groups = 0 must be >= 1"));
  g = good();
  g.offsets = nullptr;
  CHECK(has(refusal(g), "offsets is a null pointer"));
  g = good();
  g.layout = ch08::Layout::masked;
  CHECK(has(refusal(g), "masked_m is a null pointer"));
  g = good();
  g.K = 100;
  CHECK(has(refusal(g), "K = 100 must be a multiple of 16"));
  g = good();
  g.scale_a_layout = GroupScaleLayout::k_major_packed(g.K);
  CHECK(has(refusal(g), "scale_a must be mn-major"));
  // k-major with ld = 0 (the packed default): refused too, not read as mn-major (session 70).
  g.scale_a_layout = GroupScaleLayout{ScaleMajor::k, 0};
  CHECK(has(refusal(g), "scale_a must be mn-major"));
  // An ld past a tensor map's row stride (2^40 bytes), possible with one g-row (K <= 128):
  // refused by name before any CUDA call (session 70; before, make_tensor_map_2d refused it after
  // the engine plan was built, naming neither the plan nor scale_a).
  g = good();
  g.K = 128;
  g.scale_a_layout = GroupScaleLayout{ScaleMajor::mn, std::int64_t(1) << 38};
  CHECK(has(refusal(g), "scale_a: ld = 274877906944 must be <= 274877906943"));
  g.scale_a_layout.ld -= 4;  // a multiple of 4 below the limit: past this check
  CHECK_FALSE(has(refusal(g), "must be <= 274877906943"));
  g = good();
  g.scale_b_layout = BlockScaleLayout{3};
  CHECK(has(refusal(g), "scale_b: ld = 3 must be >= ceil(K / 128) = 8"));
  g = good();
  g.rows = 0;
  CHECK(has(refusal(g), "M = 0"));
  // A stream-K kernel counts the tiles of all groups in 32 bits: 2^18 row tiles x 2^13 column
  // tiles is refused by name, and the same call with the data-parallel twin gets past that rule.
  g = good();
  g.layout = ch08::Layout::masked;
  g.masked_m = g.offsets;
  g.groups = 1;
  g.rows = std::int64_t(1) << 26;
  g.N = std::int64_t(1) << 20;
  g.D = reinterpret_cast<std::uint16_t*>(std::uintptr_t(1) << 48);  // clear of the inputs
  const std::string sk = test::refusal_of([&] {
    ch08::Plan p(g, ch08::Options{.kernel = "256x128_s4_c1x1_promoted_tma_b1_sk"});
  });
  INFO(sk);
  CHECK(has(sk, "counts tiles in 32 bits"));
  CHECK(has(sk, "2147483648"));
  const std::string twin = test::refusal_of([&] {
    ch08::Plan p(g, ch08::Options{.kernel = "256x128_s4_c1x1_promoted_tma_b1"});
  });
  CHECK_FALSE(has(twin, "32 bits"));
  // D over the third expert's weights (B is [G, N, K] = 4 x 512 x 1024 bytes): refused by the
  // engine's own rule, which counts G N rows of B (validate.hpp, b_rows), before any CUDA call.
  g = good();
  g.D = reinterpret_cast<std::uint16_t*>(std::uintptr_t(0x20000000) + 2 * 512 * 1024);
  CHECK(has(refusal(g), "overlaps B (bytes [0x20000000, 0x20200000)"));
  // D over the group offsets (read by every CTA while D is written) or masked_m: refused too.
  g = good();
  g.offsets = reinterpret_cast<const int*>(std::uintptr_t(0x50000000) + 1000);
  CHECK(has(refusal(g), "overlaps offsets (bytes [0x500003e8, 0x500003fc)"));
  g.layout = ch08::Layout::masked;
  g.rows = 250;  // M_max: D is 4 x 250 rows
  g.masked_m = g.offsets;
  CHECK(has(refusal(g), "overlaps masked_m"));
  // A TMA-store kernel writes D through its ragged-rows view, 2^30 rows at most: named for more,
  // it is refused before any CUDA call (the default then takes a registers-epilogue kernel).
  g = good();
  g.rows = (std::int64_t(1) << 30) + 1;
  g.A = reinterpret_cast<const std::uint8_t*>(std::uintptr_t(1) << 44);  // 2^30 rows apart
  g.D = reinterpret_cast<std::uint16_t*>(std::uintptr_t(2) << 44);
  g.scale_a = reinterpret_cast<const float*>(std::uintptr_t(3) << 44);
  ch08::Options o;
  o.kernel = ch08::kernels().front().name;
  REQUIRE(ch08::kernels().front().epilogue == engine::EpilogueKind::tma_store);
  CHECK(has(test::refusal_of([&] { ch08::Plan p(g, o); }),
            "stores D by TMA, through a view of at most 2^30 rows less than 2^34 bytes apart "
            "(1073741825 rows, ldd = 512 given"));
  // ... whose rows are less than 2^34 bytes apart: a wider D is refused to a named TMA kernel
  // the same way (D's 1000 rows of 2^33 + 64 bf16 each end below 2^44 + 2^36).
  g = good();
  g.ldd = (std::int64_t(1) << 33) + 64;  // 2^34 + 128 bytes
  g.D = reinterpret_cast<std::uint16_t*>(std::uintptr_t(1) << 46);
  CHECK(has(test::refusal_of([&] { ch08::Plan p(g, o); }),
            "(1000 rows, ldd = 8589934656 given"));
  // The staged loop's kernels (whole rounds of their stages) refuse other K, by the engine's plan.
  int staged_kernels = 0;
  for (const auto& k : ch08::kernels()) {
    if (k.k_round == 1) continue;
    ++staged_kernels;
    CHECK(k.k_round == k.stages);  // StagedMath: whole rounds of the ring
    o.kernel = k.name;
    g = good();
    g.K = 128 * (2 * k.stages + 1);  // two rounds and one K block more
    CHECK(has(test::refusal_of([&] { ch08::Plan p(g, o); }),
              "runs the K blocks in whole rounds of " + std::to_string(k.stages) + ": K = " +
                  std::to_string(g.K) + " must be a multiple of " +
                  std::to_string(128 * k.stages)));
  }
  CHECK(staged_kernels == 3);  // kernels_grouped_staged.cu
}

TEST_CASE("ch08: a float D's call: bad output, accumulate on bf16, and a kernel of the other "
          "D type are refused before any CUDA call", "[ch08][cpu]") {
  auto g = good();
  g.output = static_cast<ch08::Output>(7);
  CHECK(has(refusal(g), "output = 7 is neither bf16 nor f32"));
  g = good();
  g.accumulate = true;  // bf16 D
  CHECK(has(refusal(g), "accumulate = true needs Output::f32"));
  // A bf16 kernel for a float D, and an FP32 kernel for a bf16 D, by name.
  g = good();
  g.output = ch08::Output::f32;
  ch08::Options o;
  o.kernel = "128x256_s4_c1x1_promoted_tma_b1";
  CHECK(has(test::refusal_of([&] { ch08::Plan p(g, o); }),
            "kernel 128x256_s4_c1x1_promoted_tma_b1 writes bf16 D, the call passes float D"));
  g = good();
  o.kernel = "128x128_s6_c1x1_promoted_f32";
  CHECK(has(test::refusal_of([&] { ch08::Plan p(g, o); }),
            "kernel 128x128_s6_c1x1_promoted_f32 writes float D, the call passes bf16 D"));
  // A float D 2-byte aligned (4 needed), and its ldd counted in floats (D's extent).
  g = good();
  g.output = ch08::Output::f32;
  g.D = reinterpret_cast<void*>(std::uintptr_t(0x50000002));
  CHECK(has(refusal(g), "must be 4-byte aligned (device pointer to M x N float, row-major)"));
  g = good();
  g.output = ch08::Output::f32;
  g.ldd = 100;  // < N = 512
  CHECK(has(refusal(g), "ldd = 100 must be >= N = 512"));
}

TEST_CASE("ch08: a negative max_sms is refused before any CUDA call", "[ch08][cpu]") {
  ch08::Options o;
  o.max_sms = -1;
  const std::string r = test::refusal_of([&] { ch08::Plan p(good(), o); });
  CHECK(has(r, "fp8gemm::ch08"));
  CHECK(has(r, "max_sms = -1 must be >= 0"));
  o.max_sms = -5;
  o.counter_schedule = true;
  CHECK(has(test::refusal_of([&] { ch08::Plan p(good(), o); }), "max_sms = -5 must be >= 0"));
}

TEST_CASE("ch08: misaligned descriptions and scales, and oversized counts, are refused by the "
          "constructor before any CUDA call", "[ch08][cpu]") {
  // The kernel reads offsets / masked_m as int32 and scale_a by TMA: a misaligned address would
  // fault there (sticky). rebind() refused the scale_a case already; the constructor did not.
  auto g = good();
  g.offsets = reinterpret_cast<const int*>(std::uintptr_t(0x60000002));
  CHECK(has(refusal(g), "offsets must be 4-byte aligned (int32 on the device); its address % 4 = 2"));
  g = good();
  g.layout = ch08::Layout::masked;
  g.rows = 250;
  g.masked_m = reinterpret_cast<const int*>(std::uintptr_t(0x60000001));
  CHECK(has(refusal(g), "masked_m must be 4-byte aligned"));
  g = good();
  g.scale_a = reinterpret_cast<const float*>(std::uintptr_t(0x30000004));
  CHECK(has(refusal(g), "scale_a must be 16-byte aligned (the kernel reads it by TMA)"));
  // M_max x G formed from a huge M_max wrapped 64 bits (2^62 + 256 rows x 4 groups = 1024).
  g = good();
  g.layout = ch08::Layout::masked;
  g.masked_m = g.offsets;
  g.rows = (std::int64_t(1) << 62) + 256;
  CHECK(has(refusal(g), "rows (M_max) = 4611686018427388160 must be <="));
  // G x M_max past the engine's row limit, each factor within it: named as the call names them.
  g.rows = std::int64_t(1) << 30;
  g.groups = 4;
  CHECK(has(refusal(g), "groups x rows (M_max) = 4 x 1073741824 = 4294967296 rows of A and D "
                        "must be <="));
  g = good();
  g.N = std::int64_t(1) << 62;  // G x N = 2^64 wraps to 0
  CHECK(has(refusal(g), "N = 4611686018427387904 must be <="));
  // A scale_b ld whose extent wraps 64 bits.
  g = good();
  g.scale_b_layout = BlockScaleLayout{std::int64_t(1) << 61};
  CHECK(has(refusal(g), "scale_b: the layout's ld is too large"));
}

TEST_CASE("ch08: the compiled grouped kernels", "[ch08][cpu]") {
  REQUIRE(!ch08::kernels().empty());
  // Clusters of at most two CTAs, 1 x 2 (one row tile, two column tiles) or 2 x 1 (two row
  // tiles of one group, paired by the schedule); bf16 out, by TMA store (whole warpgroup slabs)
  // or registers; both kinds present, so the plan's default exists for any D (TMA-compatible or
  // not). A float D (session 64): three FP32 kernels, no cluster, f32 in their names: one by TMA
  // (through D's ragged-rows view, as the bf16 TMA kernels) and two from registers.
  int tma = 0, reg = 0, f32 = 0, f32_tma = 0, row_pairs = 0;
  for (const auto& k : ch08::kernels()) {
    INFO(k.name);
    CHECK(k.cluster_m * k.cluster_n <= 2);
    row_pairs += k.cluster_m == 2;
    tma += k.epilogue == engine::EpilogueKind::tma_store;
    reg += k.epilogue == engine::EpilogueKind::registers;
    f32_tma += k.epilogue == engine::EpilogueKind::tma_store_f32;
    if (engine::writes_f32(k.epilogue)) {
      ++f32;
      CHECK(k.name.find("_promoted_f32") != std::string::npos);
      CHECK(k.cluster_m * k.cluster_n == 1);
      CHECK_FALSE(k.stream_k);
      CHECK_FALSE(k.dynamic_schedule);
      CHECK_FALSE(k.comparison_only);
    }
  }
  CHECK(tma >= 1);
  CHECK(reg >= 1);
  CHECK(f32 == 3);
  CHECK(f32_tma == 1);
  CHECK(row_pairs >= 1);
  // Stream-K (session 18): exactly the kernels named _sk / _skr, no cluster, and kept for the
  // comparison only (slower than their data-parallel twins wherever measured).
  int stream_k = 0;
  for (const auto& k : ch08::kernels()) {
    INFO(k.name);
    const bool named = k.name.ends_with("_sk") || k.name.ends_with("_skr");
    CHECK(k.stream_k == named);
    if (k.stream_k) {
      CHECK(k.comparison_only);
      CHECK(k.cluster_m * k.cluster_n == 1);
      ++stream_k;
    }
  }
  CHECK(stream_k == 3);
  // The counter kernel (session 32) and its static twin, which Options::counter_schedule swaps
  // for it (grouped_gemm.cpp): same tile, no cluster; not a comparison kernel since session 33.
  const auto& dyn = engine::find_kernel(ch08::kernels(), "128x256_s4_c1x1_promoted_tma_b1_dyn", "");
  CHECK(dyn.dynamic_schedule);
  CHECK_FALSE(dyn.comparison_only);
  CHECK(dyn.cluster_m * dyn.cluster_n == 1);
  int dynamic = 0;
  for (const auto& k : ch08::kernels()) dynamic += k.dynamic_schedule;
  CHECK(dynamic == 1);
}

TEST_CASE("ch08: the default kernel by layout and mean rows per group", "[ch08][cpu]") {
  auto g = good();  // contiguous, 4 groups
  g.rows = 4 * 1024;
  CHECK(ch08::default_kernel(g, true).name == "256x128_s3_c1x2_promoted_tma_b4");
  g.rows = 4 * 1024 - 1;
  CHECK(ch08::default_kernel(g, true).name == "128x256_s4_c1x1_promoted_tma_b1");
  g.layout = ch08::Layout::masked;
  g.rows = 256;  // M_max
  g.K = 2048;    // short K: without the early first wave (session 23)
  CHECK(ch08::default_kernel(g, true).name == "256x128_s4_c1x1_promoted_tma_b1_noew");
  g.rows = 1023;
  CHECK(ch08::default_kernel(g, true).name == "256x128_s4_c1x1_promoted_tma_b1_noew");
  // K <= 4096 and M_max >= 1024: 3 stages, a staging buffer per store unit (session 35 up to
  // K = 2048, session 37 up to 4096).
  g.rows = 1024;
  CHECK(ch08::default_kernel(g, true).name == "256x128_s3_c1x1_promoted_tma_b4");
  g.K = 1024;
  CHECK(ch08::default_kernel(g, true).name == "256x128_s3_c1x1_promoted_tma_b4");
  g.K = 2049;
  CHECK(ch08::default_kernel(g, true).name == "256x128_s3_c1x1_promoted_tma_b4");
  g.K = 4096;
  CHECK(ch08::default_kernel(g, true).name == "256x128_s3_c1x1_promoted_tma_b4");
  g.K = 4097;
  CHECK(ch08::default_kernel(g, true).name == "256x128_s4_c1x1_promoted_tma_b1");
  g.K = 7168;
  CHECK(ch08::default_kernel(g, true).name == "256x128_s4_c1x1_promoted_tma_b1");
  g.rows = 1023;
  g.K = 4096;  // below 1024 rows, the early-wave default past K = 2048
  CHECK(ch08::default_kernel(g, true).name == "256x128_s4_c1x1_promoted_tma_b1");
  g.rows = 256;
  g.K = 2049;
  CHECK(ch08::default_kernel(g, true).name == "256x128_s4_c1x1_promoted_tma_b1");
  g.rows = 255;
  CHECK(ch08::default_kernel(g, true).name == "128x256_s4_c1x1_promoted_tma_b1");
  CHECK(ch08::default_kernel(g, false).epilogue == engine::EpilogueKind::registers);
  // A float D: the FP32 128 x 256, by TMA where D allows it, else from registers, whatever the
  // layout or size; never the counter kernel (bf16).
  for (auto layout : {ch08::Layout::contiguous, ch08::Layout::masked})
    for (std::int64_t rows : {1, 255, 1024, 65536})
      for (bool tma : {true, false}) {
        auto f = good();
        f.layout = layout;
        f.rows = rows;
        f.output = ch08::Output::f32;
        const std::string want =
            tma ? "128x256_s4_c1x1_promoted_f32_tma_b1" : "128x256_s4_c1x1_promoted_f32";
        CHECK(ch08::default_kernel(f, tma).name == want);
        CHECK(ch08::counter_schedule_kernel(f, tma).name == want);
      }
  // The rule never takes a comparison kernel (a loop version, the spinning wait, stream-K),
  // nor the counter kernel (its plan would own the counter: one stream at a time).
  for (auto layout : {ch08::Layout::contiguous, ch08::Layout::masked})
    for (std::int64_t rows : {1, 128, 255, 256, 1024, 4096, 65536})
      for (std::int64_t K : {1024, 2048, 2049, 4096, 4097, 7168})
        for (bool tma : {true, false}) {
          g.layout = layout;
          g.rows = rows;
          g.K = K;
          CHECK_FALSE(ch08::default_kernel(g, tma).comparison_only);
          CHECK_FALSE(ch08::default_kernel(g, tma).dynamic_schedule);
        }
}

TEST_CASE("ch08: the counter schedule's kernel by mean rows per group and K", "[ch08][cpu]") {
  // counter_schedule_kernel() (grouped_gemm.cpp): the counter kernel below 1024 rows per group
  // on average, and below 2048 at K >= 4096 (session 35); elsewhere default_kernel()'s pick.
  const std::string dyn = "128x256_s4_c1x1_promoted_tma_b1_dyn";
  auto g = good();  // contiguous, 4 groups
  for (std::int64_t K : {656, 2048, 4095, 4096, 7168}) {
    g.K = K;
    INFO("K = " << K);
    g.rows = 4 * 1024 - 1;
    CHECK(ch08::counter_schedule_kernel(g, true).name == dyn);
    g.rows = 4 * 1024;
    CHECK(ch08::counter_schedule_kernel(g, true).name ==
          (K >= 4096 ? dyn : std::string("256x128_s3_c1x2_promoted_tma_b4")));
    g.rows = 4 * 2048 - 1;
    CHECK(ch08::counter_schedule_kernel(g, true).name ==
          (K >= 4096 ? dyn : std::string("256x128_s3_c1x2_promoted_tma_b4")));
    g.rows = 4 * 2048;
    CHECK(ch08::counter_schedule_kernel(g, true).name == "256x128_s3_c1x2_promoted_tma_b4");
  }
  // Masked calls and a D the TMA cannot store keep default_kernel()'s pick, at every size.
  for (std::int64_t rows : {1, 255, 256, 1024, 4095, 8191, 65536})
    for (std::int64_t K : {656, 7168}) {
      g.rows = rows;
      g.K = K;
      g.layout = ch08::Layout::contiguous;
      CHECK(ch08::counter_schedule_kernel(g, false).name == ch08::default_kernel(g, false).name);
      CHECK(ch08::counter_schedule_kernel(g, false).epilogue == engine::EpilogueKind::registers);
      g.layout = ch08::Layout::masked;
      CHECK(ch08::counter_schedule_kernel(g, true).name == ch08::default_kernel(g, true).name);
      CHECK_FALSE(ch08::counter_schedule_kernel(g, true).comparison_only);
    }
}

TEST_CASE("ch08: the counter schedule picks the kernel itself", "[ch08][cpu]") {
  ch08::Options o;
  o.counter_schedule = true;
  o.kernel = "128x256_s4_c1x1_promoted_tma_b1";
  CHECK(has(test::refusal_of([&] { ch08::Plan p(good(), o); }),
            "Options::counter_schedule picks the kernel itself; leave Options::kernel empty "
            "('128x256_s4_c1x1_promoted_tma_b1' given)"));
  // And a bad call is still refused before any CUDA call with the option set.
  o.kernel.clear();
  auto g = good();
  g.offsets = nullptr;
  CHECK(has(test::refusal_of([&] { ch08::Plan p(g, o); }), "offsets is a null pointer"));
}

TEST_CASE("ch08: a plan in checking mode refuses the same bad calls", "[ch08][cpu]") {
  ch08::Options o;
  o.check_offsets = true;
  auto g = good();
  g.groups = 0;
  std::string e;
  try {
    ch08::Plan p(g, o);
  } catch (const std::invalid_argument& x) {
    e = x.what();
  }
  CHECK(has(e, "groups = 0 must be >= 1"));
}

// The checking mode's rules (check_offsets.hpp), applied to host arrays: the device kernel applies
// the same functions to device memory.
namespace {
std::string verdict(ch08::Layout layout, const std::vector<int>& v, int groups, int bound) {
  return ch08::describe_group_violation(ch08::first_group_violation(layout, v.data(), groups, bound),
                                        layout, groups);
}
}  // namespace

TEST_CASE("ch08: checking mode rules on contiguous offsets", "[ch08][cpu]") {
  using ch08::Layout;
  CHECK(verdict(Layout::contiguous, {0, 100, 150, 350, 357}, 4, 357).empty());
  CHECK(verdict(Layout::contiguous, {0, 0, 0, 0, 357}, 4, 357).empty());   // empty groups
  CHECK(verdict(Layout::contiguous, {0, 357}, 1, 357).empty());            // G = 1
  const std::string dec = verdict(Layout::contiguous, {0, 100, 90, 350, 357}, 4, 357);
  CHECK(has(dec, "fp8gemm::ch08_grouped_moe"));
  CHECK(has(dec, "offsets[2] = 90 is less than offsets[1] = 100"));
  CHECK(has(dec, "must not decrease"));
  CHECK(has(dec, "the GEMM was not launched"));
  CHECK(has(verdict(Layout::contiguous, {5, 100, 150, 350, 357}, 4, 357), "offsets[0] = 5 must be 0"));
  CHECK(has(verdict(Layout::contiguous, {-5, 100, 150, 350, 357}, 4, 357), "offsets[0] = -5 must be 0"));
  CHECK(has(verdict(Layout::contiguous, {0, 100, 150, 350, 356}, 4, 357),
            "offsets[4] = 356 must equal rows = 357 (offsets[G = 4]"));
  CHECK(has(verdict(Layout::contiguous, {0, 100, 150, 350, 400}, 4, 357), "offsets[4] = 400"));
  // The first violation (lowest index), not a later one; at one index the lower rule.
  CHECK(has(verdict(Layout::contiguous, {0, 100, 150, 100, 400}, 4, 357), "offsets[3] = 100"));
  CHECK(has(verdict(Layout::contiguous, {3, 1, 150, 100, 400}, 4, 357), "offsets[0] = 3"));
  CHECK(has(verdict(Layout::contiguous, {0, 100, 150, 350, 300}, 4, 357),
            "offsets[4] = 300 is less than offsets[3] = 350"));
  // The first violation of a long description, past any one thread's first entries.
  std::vector<int> off(1001);
  for (int i = 0; i <= 1000; ++i) off[std::size_t(i)] = i;
  CHECK(verdict(Layout::contiguous, off, 1000, 1000).empty());
  off[700] = 600;
  off[900] = 0;
  CHECK(has(verdict(Layout::contiguous, off, 1000, 1000), "offsets[700] = 600 is less than offsets[699] = 699"));
}

TEST_CASE("ch08: checking mode rules on masked_m", "[ch08][cpu]") {
  using ch08::Layout;
  CHECK(verdict(Layout::masked, {0, 128, 7}, 3, 128).empty());
  CHECK(has(verdict(Layout::masked, {5, -1, 7}, 3, 128), "masked_m[1] = -1 is negative"));
  CHECK(has(verdict(Layout::masked, {5, 7, 129}, 3, 128), "masked_m[2] = 129 exceeds M_max = 128"));
  CHECK(has(verdict(Layout::masked, {-2, 7, 129}, 3, 128), "masked_m[0] = -2"));
}

TEST_CASE("ch08: checking mode rules on the weight gradient's offsets", "[ch08][cpu]") {
  // WeightGradOptions::check_offsets (session 55): from 0, not decreasing, and the padded token
  // total P_G (each count rounded up to 128) within token_capacity; no rule on the last offset.
  auto wv = [](const std::vector<int>& v, std::int64_t capacity) {
    const int groups = int(v.size()) - 1;
    return ch08::describe_wgrad_violation(ch08::first_wgrad_violation(v.data(), groups, capacity),
                                          groups);
  };
  CHECK(wv({0, 129, 129, 130}, 384).empty());  // 256 + 0 + 128 columns
  CHECK(wv({0, 0, 0}, 0).empty());             // every expert empty
  const std::string over = wv({0, 129, 129, 130}, 383);
  CHECK(has(over, "fp8gemm::ch08_weight_grad"));
  CHECK(has(over, "WeightGradOptions::check_offsets"));
  CHECK(has(over, "P_G = 384"));
  CHECK(has(over, "exceeds token_capacity = 383"));
  CHECK(has(over, "the GEMM was not launched"));
  // T instead of max_padded_tokens(T, G) as the capacity: refused (three experts of one token)
  CHECK(has(wv({0, 1, 2, 3}, 3), "P_G = 384 "));
  CHECK(has(wv({4, 129, 130}, 1024), "offsets[0] = 4 must be 0"));
  CHECK(has(wv({0, 129, 100, 300}, 1024), "offsets[2] = 100 is less than offsets[1] = 129"));
  // Rules 1 and 2 come first: a decreasing offset is reported, not the total it distorts.
  CHECK(has(wv({0, 500, 100, 9000}, 256), "offsets[2] = 100"));
  // A total past int: clamped in the record, still refused.
  CHECK(has(wv({0, 2147483000, 2147483600}, 1 << 30), "P_G = 2147483647 or more"));
}

// The executable's cases (moe_cases.hpp): names as bench/peers_moe.py writes them, so that the
// JSON of both lines up.
TEST_CASE("ch08: standard cases carry bench/peers_moe.py's names", "[ch08][cpu]") {
  std::vector<std::string> names;
  for (const auto& c : ch08::standard_cases()) names.push_back(c.name);
  const std::vector<std::string> peers = {
      "bal_g4x8192_n4096_k7168",    "bal_g8x4096_n7168_k2048",    "masked_g1x1024_n4096_k7168",
      "masked_g1x1024_n7168_k2048", "masked_g2x512_n4096_k7168",  "masked_g2x512_n7168_k2048",
      "masked_g4x256_n4096_k7168",  "masked_g4x256_n7168_k2048"};
  CHECK(names == peers);
  const auto bal = ch08::standard_cases()[0];
  CHECK(bal.layout == ch08::Layout::contiguous);
  CHECK(bal.all_rows() == 4 * 8192);
  CHECK(bal.device_description() == std::vector<int>{0, 8192, 16384, 24576, 32768});
  const auto m = ch08::standard_cases()[6];
  CHECK(m.layout == ch08::Layout::masked);
  CHECK(m.m_max == 256);
  CHECK(m.all_rows() == 1024);
  CHECK(m.device_description() == std::vector<int>{256, 256, 256, 256});
}

TEST_CASE("ch08: group rows, real rows and non-empty groups", "[ch08][cpu]") {
  const ch08::GroupedShape c{"c", ch08::Layout::contiguous, {3, 0, 5}, 0, 16, 16};
  CHECK(c.group_rows(0) == std::pair<std::int64_t, std::int64_t>{0, 3});
  CHECK(c.group_rows(1) == std::pair<std::int64_t, std::int64_t>{3, 3});
  CHECK(c.group_rows(2) == std::pair<std::int64_t, std::int64_t>{3, 8});
  CHECK(c.real_rows() == 8);
  CHECK(c.non_empty_groups() == 2);
  // masked_m outside [0, M_max] is clamped as the kernel clamps it.
  const ch08::GroupedShape m{"m", ch08::Layout::masked, {-1, 10, 3}, 8, 16, 16};
  CHECK(m.group_rows(0) == std::pair<std::int64_t, std::int64_t>{0, 0});
  CHECK(m.group_rows(1) == std::pair<std::int64_t, std::int64_t>{8, 16});
  CHECK(m.group_rows(2) == std::pair<std::int64_t, std::int64_t>{16, 19});
  CHECK(m.all_rows() == 24);
  CHECK(m.real_rows() == 11);
  CHECK(m.non_empty_groups() == 2);
  CHECK(ch08::small_cases(256)[0].name == "edge_g7_n256_k256");
  CHECK(ch08::small_cases(256)[1].device_description() == std::vector<int>{0, 129, 256});
  CHECK(ch08::small_cases(256)[2].name == "ring_g3_n256_k256");
  CHECK(ch08::small_cases(256)[2].real_rows() == 67584);
}

TEST_CASE("ch08: --case=NAME:COUNTS:N:K", "[ch08][cpu]") {
  const auto c = ch08::parse_case("skew_g32_t8192_n4096_k7168:281,0,38:4096:7168");
  CHECK(c.name == "skew_g32_t8192_n4096_k7168");
  CHECK(c.layout == ch08::Layout::contiguous);
  CHECK(c.rows == std::vector<int>{281, 0, 38});
  CHECK(c.N == 4096);
  CHECK(c.K == 7168);
  auto refused = [](const std::string& text) {
    try {
      ch08::parse_case(text);
    } catch (const std::invalid_argument& e) {
      return std::string(e.what());
    }
    return std::string("accepted");
  };
  CHECK(has(refused("a:1,2:4096"), "4 fields"));
  CHECK(has(refused(":1,2:4096:7168"), "NAME must be non-empty"));
  CHECK(has(refused("a/b:1,2:4096:7168"), "without '/'"));
  CHECK(has(refused("a:1,x:4096:7168"), "count 'x' is not an integer"));
  CHECK(has(refused("a:1,,2:4096:7168"), "count '' is not an integer"));
  CHECK(has(refused("a:1,-2:4096:7168"), "count -2 is negative"));
  CHECK(has(refused("a:0,0:4096:7168"), "every expert is empty"));
  CHECK(has(refused("a::4096:7168"), "no counts"));
  const auto m = ch08::parse_case("masked_g8x128_n7168_k2048:masked=8x128:7168:2048");
  CHECK(m.layout == ch08::Layout::masked);
  CHECK(m.m_max == 128);
  CHECK(m.rows == std::vector<int>(8, 128));
  CHECK(m.all_rows() == 1024);
  CHECK(m.N == 7168);
  CHECK(has(refused("a:masked=8:4096:7168"), "GxM_MAX"));
  CHECK(has(refused("a:masked=0x128:4096:7168"), "must be >= 1"));
  CHECK(has(refused("a:masked=100000x1:4096:7168"), "G must be <= 65536"));
  CHECK(has(refused("a:masked=8xq:4096:7168"), "M_MAX 'q' is not an integer"));
  CHECK(has(refused("a:1:40x:7168"), "N '40x' is not an integer"));
  CHECK(has(refused("a:1:4096:0"), "N and K must be >= 1"));
  CHECK(has(refused("a:2000000000,2000000000:4096:7168"), "more than 2^31 - 1024 rows"));
}
