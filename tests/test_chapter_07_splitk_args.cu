// CPU tests of chapter 7's opt-in split-K (Options::splits): bad values are refused with
// std::invalid_argument naming "splits", before any CUDA call (this machine may have no GPU); a
// non-split-K kernel name is refused in split mode and a split-K kernel name outside it; the
// split-K kernels are FP32-epilogue, cluster-free and absent from kernels().
#include <cstdint>
#include <limits>
#include <stdexcept>
#include <string>

#include "bs_gemm.hpp"
#include "catch.hpp"
#include "ch07_fake_call.hpp"
#include "refusal.hpp"
#include "splitk.hpp"

using namespace fp8gemm;

namespace {

/// A well-formed small-M call (tests/ch07_fake_call.hpp); K = 7168 is 56 K blocks.
ch07::BlockScaledGemm good() { return test::fake_block_scaled_call(64, 2112, 7168); }

std::string refusal(const ch07::BlockScaledGemm& g, const ch07::Options& o = {}) {
  return test::plan_refusal(g, o);
}

ch07::Options splits(int s, const std::string& kernel = "") {
  ch07::Options o;
  o.splits = s;
  o.kernel = kernel;
  return o;
}

using test::has;

}  // namespace

TEST_CASE("ch07 split-K: bad splits are refused before any CUDA call, naming splits",
          "[ch07][split_k][cpu]") {
  const auto g = good();
  CHECK(has(refusal(g, splits(-1)), "Options::splits = -1 must be >= 0"));
  CHECK(has(refusal(g, splits(57)), "Options::splits = 57 must be <= ceil(K / 128) = 56"));
  CHECK(has(refusal(g, splits(1000)), "splits = 1000"));
  auto g2 = good();
  g2.K = 16;  // one K block: only S = 1 fits
  CHECK(has(refusal(g2, splits(2)), "must be <= ceil(K / 128) = 1"));
  g2.K = 656;  // 6 blocks, the last one partial
  CHECK(has(refusal(g2, splits(7)), "must be <= ceil(K / 128) = 6"));
  // Too many workspace rows for the epilogue's int row index.
  // (Fake addresses 2^40 apart: the operands of such an M would overlap the ones above.)
  auto g3 = good();
  g3.M = (std::int64_t(1) << 23) + 8;
  g3.N = 16;
  g3.K = 16384;  // 128 K blocks; 128 x M > 2^30
  g3.A = reinterpret_cast<const std::uint8_t*>(std::uintptr_t(1) << 40);
  g3.B = reinterpret_cast<const std::uint8_t*>(std::uintptr_t(2) << 40);
  g3.scale_a = reinterpret_cast<const float*>(std::uintptr_t(3) << 40);
  g3.scale_b = reinterpret_cast<const float*>(std::uintptr_t(4) << 40);
  g3.D = reinterpret_cast<void*>(std::uintptr_t(5) << 40);
  CHECK(has(refusal(g3, splits(128)), "Options::splits = 128 x M = 1073742848 workspace rows"));
  // The argument rules still come first.
  auto g4 = good();
  g4.K = 100;
  CHECK(has(refusal(g4, splits(2)), "K = 100 must be a multiple of 16"));
  // The plan options, before the workspace is allocated (the engine plan behind it used to check
  // them only after the allocation; raster was dropped on the way).
  auto o = splits(2);
  o.max_sms = -1;
  CHECK(has(refusal(g, o), "max_sms = -1 must be >= 0"));
  o = splits(2);
  o.raster.along_n = 7;
  CHECK(has(refusal(g, o), "raster.along_n = 7"));
}

TEST_CASE("ch07 split-K: kernel names in and out of split mode", "[ch07][split_k][cpu]") {
  const auto g = good();
  // A table kernel is not a split-K kernel: refused in split mode, listing the split-K ones.
  CHECK(has(refusal(g, splits(2, "64x32_s14_c1x1_promoted_tma_b1")),
            "no kernel named '64x32_s14_c1x1_promoted_tma_b1'"));
  CHECK(has(refusal(g, splits(2, "64x32_s14_c1x1_promoted_tma_b1")),
            "64x32_s14_c1x1_promoted_f32_splitk"));
  // A split-K kernel without splits: not one of kernels().
  CHECK(has(refusal(g, splits(0, "64x32_s14_c1x1_promoted_f32_splitk")), "no kernel named"));
}

TEST_CASE("ch07 split-K: the kernels", "[ch07][split_k][cpu]") {
  REQUIRE(ch07::splitk_kernels().size() >= 2);
  for (const auto& k : ch07::splitk_kernels()) {
    CHECK(k.epilogue == engine::EpilogueKind::registers_f32);
    CHECK(k.cluster_size() == 1);
    CHECK(k.accumulation == engine::Accumulation::promoted);
    CHECK(k.name.size() > 7);
    CHECK(k.name.substr(k.name.size() - 7) == "_splitk");
    for (const auto& other : ch07::kernels()) CHECK(other.name != k.name);
  }
  // The small-M DeepSeek shapes: 64 or 66 output tiles, so S = 2 fills 132 SMs.
  CHECK(ch07::choose_splitk_kernel(64, 2112).name == "64x32_s14_c1x1_promoted_f32_splitk");
  CHECK(ch07::choose_splitk_kernel(64, 4096).name == "64x64_s12_c1x1_promoted_f32_splitk");
  CHECK(ch07::choose_splitk_kernel(128, 2112).name == "128x32_s10_c1x1_promoted_f32_splitk");
  CHECK(ch07::choose_splitk_kernel(128, 4096).name == "128x64_s8_c1x1_promoted_f32_splitk");
  CHECK(ch07::choose_splitk_kernel(1, 8).block_m == 64);
  CHECK(ch07::choose_splitk_kernel(65, 8).block_m == 128);
  CHECK_NOTHROW(ch07::validate_splits(0, 64, 2112, 7168, 64, 32, "t"));
  CHECK_NOTHROW(ch07::validate_splits(56, 64, 2112, 7168, 64, 32, "t"));
  CHECK_THROWS_AS(ch07::validate_splits(57, 64, 2112, 7168, 64, 32, "t"), std::invalid_argument);
}
