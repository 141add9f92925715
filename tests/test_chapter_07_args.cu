// CPU tests of chapter 7's entry point: every bad call is refused with std::invalid_argument
// naming the argument, before any CUDA call (this machine may have no GPU); the per-shape
// table names only compiled kernels.
#include <cstdint>
#include <set>
#include <stdexcept>
#include <utility>
#include <string>

#include "bs_gemm.hpp"
#include "catch.hpp"
#include "ch07_fake_call.hpp"
#include "refusal.hpp"

using namespace fp8gemm;

namespace {

/// A well-formed call (tests/ch07_fake_call.hpp).
ch07::BlockScaledGemm good() { return test::fake_block_scaled_call(256, 512, 1024); }

std::string refusal(const ch07::BlockScaledGemm& g, const ch07::Options& o = {}) {
  return test::plan_refusal(g, o);
}

using test::has;

}  // namespace

TEST_CASE("ch07: bad calls are refused before any CUDA call, naming the argument", "[ch07][cpu]") {
  auto g = good();
  g.K = 100;
  CHECK(has(refusal(g), "K = 100 must be a multiple of 16"));
  g = good();
  g.M = 0;
  CHECK(has(refusal(g), "M = 0"));
  g = good();
  g.scale_a = nullptr;
  CHECK(has(refusal(g), "scale_a"));
  g = good();
  g.scale_b = reinterpret_cast<const float*>(std::uintptr_t(0x40000002));
  CHECK(has(refusal(g), "scale_b"));
  g = good();
  g.A = reinterpret_cast<const std::uint8_t*>(std::uintptr_t(0x10000008));
  CHECK(has(refusal(g), "A"));
  g = good();
  g.scale_a_layout = GroupScaleLayout{ScaleMajor::mn, 255};  // ld < M
  CHECK(has(refusal(g), "scale_a: mn-major, ld 255 is too small"));
  g = good();
  g.scale_a_layout = GroupScaleLayout{ScaleMajor::k, 7};  // ld < ceil(1024 / 128) = 8
  CHECK(has(refusal(g), "k-major needs ld >= ceil(K / 128) = 8"));
  g = good();
  g.scale_b_layout = BlockScaleLayout{7};
  CHECK(has(refusal(g), "scale_b: ld = 7 must be >= ceil(K / 128) = 8"));
  g = good();
  g.accumulate = true;  // bf16 output
  CHECK(has(refusal(g), "accumulate = true needs Output::f32"));
  g = good();
  g.output = ch07::Output::f32;
  g.D = reinterpret_cast<void*>(std::uintptr_t(0x50000002));  // float D must be 4-byte aligned
  CHECK(has(refusal(g), "D"));
  g = good();
  // D overlapping scale_b's extent: ceil(512/128) x round_up(8, 4) = 32 floats from 0x40000000.
  g.D = reinterpret_cast<void*>(std::uintptr_t(0x40000040));
  CHECK(has(refusal(g), "overlap"));
  // A layout enum that is neither mn nor k (it would have been read as k-major).
  g = good();
  g.scale_a_layout = GroupScaleLayout{ScaleMajor(5), 8};
  CHECK(has(refusal(g), "scale_a_layout.major = 5 is not a ScaleMajor"));
  // ... also with ld = 0 (the packed default): until session 70 with_defaults made it k-major.
  g.scale_a_layout = GroupScaleLayout{ScaleMajor(5), 0};
  CHECK(has(refusal(g), "scale_a_layout.major = 5 is not a ScaleMajor"));
  // An ld so large that the layout's extent wraps 64 bits: (rows - 1) x 2^62 floats. Before the
  // check the wrapped extent let an 8 KiB buffer pass the extent and memory checks.
  g = good();
  g.scale_a_layout = GroupScaleLayout{ScaleMajor::k, std::int64_t(1) << 62};
  CHECK(has(refusal(g), "scale_a: the layout's ld is too large"));
  g = good();
  g.scale_a_layout = GroupScaleLayout{ScaleMajor::mn, std::int64_t(1) << 62};
  CHECK(has(refusal(g), "scale_a: the layout's ld is too large"));
  g = good();
  g.scale_b_layout = BlockScaleLayout{std::int64_t(1) << 62};  // N = 512: 4 block rows
  CHECK(has(refusal(g), "scale_b: the layout's ld is too large"));
  // The FP32 kernels by TMA (session 67) for a float D whose rows are not 16-byte aligned: refused
  // by name of the reason and the stride; for a bf16 D: refused as kernels of the other D type.
  int tma_f32 = 0;
  for (const auto& k : ch07::kernels()) {
    if (k.epilogue != engine::EpilogueKind::tma_store_f32) continue;
    INFO(k.name);
    ch07::Options o;
    o.kernel = k.name;
    g = good();
    g.output = ch07::Output::f32;
    g.ldd = g.N + 3;
    CHECK(has(refusal(g, o), "stores D with TMA"));
    CHECK(has(refusal(g, o), "ldd = 515"));
    CHECK(has(refusal(good(), o), "writes float D, the call passes bf16 D"));
    ++tma_f32;
  }
  CHECK(tma_f32 == 2);
}

TEST_CASE("ch07: scale_extent() flags a span past 64-bit byte offsets", "[ch07][cpu]") {
  const std::int64_t big = std::int64_t(1) << 62;
  CHECK(scale_extent(GroupScaleLayout{ScaleMajor::mn, 260}, 257, 1000) ==
        GroupScaleLayout{ScaleMajor::mn, 260}.required_elements(257, 1000));
  CHECK(scale_extent(GroupScaleLayout{ScaleMajor::k, 9}, 257, 1000) == 256 * 9 + 8);
  CHECK(scale_extent(BlockScaleLayout{12}, 300, 1000) == 2 * 12 + 8);
  CHECK(scale_extent(GroupScaleLayout{ScaleMajor::k, big}, 2, 128) == kScaleExtentOverflow);
  CHECK(scale_extent(GroupScaleLayout{ScaleMajor::mn, big}, 4, 256) == kScaleExtentOverflow);
  CHECK(scale_extent(BlockScaleLayout{big}, 129, 128) == kScaleExtentOverflow);
  // One line: ld does not enter the extent, whatever it is.
  CHECK(scale_extent(GroupScaleLayout{ScaleMajor::k, big}, 1, 256) == 2);
  // The largest ld that fits: (lines - 1) ld + tail floats of 4 bytes below 2^63.
  const std::int64_t fits = (INT64_MAX / 4 - 1) / 1;
  CHECK(scale_extent(GroupScaleLayout{ScaleMajor::k, fits}, 2, 128) == fits + 1);
  CHECK(scale_extent(GroupScaleLayout{ScaleMajor::k, fits + 1}, 2, 128) == kScaleExtentOverflow);
}

TEST_CASE("ch07: the table and the fallback rule name compiled kernels", "[ch07][cpu]") {
  for (std::int64_t M : {1, 64, 65, 128, 129, 192, 256, 384, 640, 1000, 4096, 8192})
    for (std::int64_t N : {16, 77, 128, 176, 192, 256, 384, 2112, 4096, 7168, 24576, 32768})
      for (std::int64_t K : {512, 7168}) {
        for (bool tma : {true, false})
          CHECK_NOTHROW(ch07::choose_kernel(M, N, K, ch07::Output::bf16, tma));
        CHECK_NOTHROW(ch07::choose_kernel(M, N, K, ch07::Output::f32, false));
      }
  for (const auto& k : ch07::kernels()) CHECK(k.accumulation == engine::Accumulation::promoted);
  // The table's own shapes.
  for (std::int64_t M : {64, 128, 4096})
    for (auto [N, K] : {std::pair<std::int64_t, std::int64_t>{2112, 7168}, {24576, 1536}, {32768, 512},
                        {7168, 16384}, {4096, 7168}, {7168, 2048}})
      CHECK_NOTHROW(ch07::choose_kernel(M, N, K, ch07::Output::bf16, true));
  CHECK(ch07::choose_kernel(8192, 8192, 8192, ch07::Output::bf16, true).name ==
        "192x128_s4_c1x1_promoted_tma_b2");
}

TEST_CASE("ch07: a float D's kernel: from registers, by TMA with accumulate where TMA can store D",
          "[ch07][cpu]") {
  for (const std::int64_t M : {1, 128, 129, 4096})
    for (const bool tma : {false, true})
      for (const bool accumulate : {false, true}) {
        const engine::KernelInfo& k =
            ch07::choose_kernel(M, 7168, 2048, ch07::Output::f32, tma, 132, accumulate);
        INFO("M " << M << " tma_store_ok " << tma << " accumulate " << accumulate << ": " << k.name);
        const bool by_tma = accumulate && tma;
        CHECK(k.epilogue == (by_tma ? engine::EpilogueKind::tma_store_f32
                                    : engine::EpilogueKind::registers_f32));
        CHECK(k.block_m == 128);
        CHECK(k.block_n == (M <= 128 ? 128 : 256));
      }
  // The default of the trailing argument is D = A.B^T.
  CHECK(ch07::choose_kernel(4096, 7168, 2048, ch07::Output::f32, true).epilogue ==
        engine::EpilogueKind::registers_f32);
}

TEST_CASE("ch07: the rule plans for the SMs the grid may use", "[ch07][cpu]") {
  using ch07::Output;
  // Outside the hand table. 64 x 2048: 128 tiles of 64 x 16 are one wave on 132 SMs, two on 112
  // (the second 16 tiles): 64 x 32 (64 tiles) there.
  CHECK(ch07::choose_kernel(64, 2048, 7168, Output::bf16, true).name ==
        "64x16_s16_c1x1_promoted_tma_b1");
  CHECK(ch07::choose_kernel(64, 2048, 7168, Output::bf16, true, 132).name ==
        "64x16_s16_c1x1_promoted_tma_b1");
  CHECK(ch07::choose_kernel(64, 2048, 7168, Output::bf16, true, 112).name ==
        "64x32_s14_c1x1_promoted_tma_b1");
  // Large M, wave efficiency on the grid's slots: 4096 x 8192 is 1024 tiles of 256 x 128 (7.76
  // waves on 132, 9.14 on 112) or 1408 of 192 x 128 (10.7 on 132, 12.57 on 112).
  CHECK(ch07::choose_kernel(4096, 8192, 4096, Output::bf16, true, 132).name ==
        "256x128_s3_c1x2_promoted_tma_b4");
  CHECK(ch07::choose_kernel(4096, 8192, 4096, Output::bf16, true, 112).name ==
        "192x128_s4_c2x1_promoted_tma_b2");
  // 64 x 4096 (not the table's K): 128 tiles of 64 x 32 spill on 112 SMs, 64 x 64 (64 tiles);
  // 128 x 4096: 128 of 128 x 32, 128 x 64 (32). On 132 SMs the thin-second-wave clause moves
  // 64 x 2304 (144 tiles of 64 x 16) to 64 x 32 and 128 x 4608 (144 of 128 x 32) to 128 x 64: the
  // H100's sweeps of session 47 (call 2), 0.67-0.84x the old picks' time.
  CHECK(ch07::choose_kernel(64, 4096, 4096, Output::bf16, true, 112).name ==
        "64x64_s12_c1x1_promoted_tma_b1");
  CHECK(ch07::choose_kernel(64, 4096, 4096, Output::bf16, true, 132).name ==
        "64x32_s14_c1x1_promoted_tma_b1");
  CHECK(ch07::choose_kernel(128, 4096, 4096, Output::bf16, true, 112).name ==
        "128x64_s8_c1x1_promoted_tma_b1");
  CHECK(ch07::choose_kernel(64, 2304, 7168, Output::bf16, true, 132).name ==
        "64x32_s14_c1x1_promoted_tma_b1");
  CHECK(ch07::choose_kernel(64, 2560, 7168, Output::bf16, true, 132).name ==
        "64x32_s14_c1x1_promoted_tma_b1");
  CHECK(ch07::choose_kernel(128, 4608, 7168, Output::bf16, true, 132).name ==
        "128x64_s8_c1x1_promoted_tma_b1");
  // The hand table is the 132-SM sweep's: on 112 SMs a decode row stays where its tiles take as
  // many waves (64 x 7168 x 16384: 112 tiles of 64 x 64, one wave either way), else the rule
  // decides (64 x 2112 x 7168: 132 tiles of 64 x 16, two waves on 112, so 64 x 32); large-M rows
  // stay.
  CHECK(ch07::choose_kernel(64, 2112, 7168, Output::bf16, true, 132).name ==
        "64x16_s16_c1x1_promoted_tma_b1");
  CHECK(ch07::choose_kernel(64, 2112, 7168, Output::bf16, true, 112).name ==
        "64x32_s14_c1x1_promoted_tma_b1");
  CHECK(ch07::choose_kernel(64, 7168, 16384, Output::bf16, true, 112).name ==
        "64x64_s12_c1x1_promoted_tma_b1");
  CHECK(ch07::choose_kernel(4096, 7168, 2048, Output::bf16, true, 112).name ==
        ch07::choose_kernel(4096, 7168, 2048, Output::bf16, true).name);
  // Any count names a compiled kernel (1 SM and more than the GPU has included).
  for (int sms : {1, 2, 3, 16, 66, 78, 112, 114, 132, 1000})
    for (std::int64_t M : {1, 64, 100, 128, 129, 4096})
      for (std::int64_t N : {16, 2048, 4096, 8192, 32768}) {
        INFO(sms << " SMs, " << M << " x " << N);
        CHECK_NOTHROW(ch07::choose_kernel(M, N, 4096, Output::bf16, true, sms));
      }
}

TEST_CASE("ch07 kernels: unique names; loop twins are comparison-only and never picked",
          "[ch07][cpu]") {
  // The loop versions' twins (kPromotedLoop other than the tile's default: _loopN, _ew8 / _ew4
  // without pinned addresses, _2deep, ...) carry their version in the name and are there for the
  // same-run comparisons only; a default kernel carries none. Two kernels with one name would
  // make --kernels= and kernel_named() time or run the wrong one.
  std::set<std::string> names;
  for (const auto& k : ch07::kernels()) {
    INFO(k.name);
    CHECK(names.insert(k.name).second);
    CHECK(&ch07::kernel_named(k.name) == &k);
    const bool twin_name = k.name.find("_loop") != std::string::npos ||
                           k.name.find("_ew") != std::string::npos ||
                           k.name.find("_2deep") != std::string::npos ||
                           k.name.find("_pin") != std::string::npos;
    if (twin_name) CHECK(k.comparison_only);
  }
  CHECK(names.count("256x128_s3_c1x2_promoted_tma_b4_ew8") == 1);  // the unpinned twin
  CHECK_FALSE(ch07::kernel_named("256x128_s3_c1x2_promoted_tma_b4").comparison_only);
  for (std::int64_t M : {64, 128, 129, 1000, 4096, 8192})
    for (std::int64_t N : {77, 2112, 4096, 7168, 24576, 32768})
      for (std::int64_t K : {512, 1536, 7168, 16384}) {
        INFO(M << " x " << N << " x " << K);
        CHECK_FALSE(ch07::choose_kernel(M, N, K, ch07::Output::bf16, true).comparison_only);
      }
}

TEST_CASE("ch07: B-scale rows a tile can touch", "[ch07][cpu]") {
  CHECK(engine::sfb_rows_for(128) == 1);
  CHECK(engine::sfb_rows_for(64) == 1);
  CHECK(engine::sfb_rows_for(16) == 1);
  CHECK(engine::sfb_rows_for(256) == 2);
  CHECK(engine::sfb_rows_for(192) == 2);  // n0 % 128 = 64: columns 64 .. 255
  CHECK(engine::sfb_rows_for(176) == 3);  // n0 % 128 = 112: 112 .. 287 spans three blocks
}
