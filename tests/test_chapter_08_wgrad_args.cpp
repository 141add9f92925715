// CPU tests of chapter 8's weight-gradient entry point: bad calls are refused with
// std::invalid_argument naming the argument, before any CUDA call.
#include <cstdint>
#include <stdexcept>
#include <string>

#include "catch.hpp"
#include "refusal.hpp"
#include "wgrad.hpp"

using namespace fp8gemm;

namespace {
ch08::WeightGradGemm good() {
  ch08::WeightGradGemm g;
  g.groups = 8;
  g.N = 512;
  g.K = 384;
  g.token_capacity = 4096;
  g.offsets = reinterpret_cast<const int*>(std::uintptr_t(0x60000000));
  g.dD_t = reinterpret_cast<const std::uint8_t*>(std::uintptr_t(0x10000000));
  g.A_t = reinterpret_cast<const std::uint8_t*>(std::uintptr_t(0x20000000));
  g.scale_dD_t = reinterpret_cast<const float*>(std::uintptr_t(0x30000000));
  g.scale_A_t = reinterpret_cast<const float*>(std::uintptr_t(0x40000000));
  g.dB = reinterpret_cast<float*>(std::uintptr_t(0x50000000));
  return g;
}
std::string refusal(const ch08::WeightGradGemm& g) {
  return test::refusal_of([&] { ch08::WeightGradPlan p(g); });
}
std::string default_name(std::int64_t N, std::int64_t K, int groups, bool tma_ok = true) {
  return ch08::default_wgrad_kernel(N, K, groups, 132, tma_ok).name;
}
using test::has;
}  // namespace

TEST_CASE("ch08 wgrad: bad calls are refused before any CUDA call", "[ch08][wgrad][cpu]") {
  auto g = good();
  g.groups = 0;
  CHECK(has(refusal(g), "groups = 0 must be >= 1"));
  g = good();
  g.offsets = nullptr;
  CHECK(has(refusal(g), "offsets is a null pointer"));
  g = good();
  g.token_capacity = 0;
  CHECK(has(refusal(g), "token_capacity = 0 must be >= 1"));
  g = good();
  g.token_capacity = 1000;  // a row of dD_t would not be 16-byte aligned
  CHECK(has(refusal(g), "multiple of 16"));
  g = good();
  g.scale_A_t_layout = GroupScaleLayout::k_major_packed(g.token_capacity);
  CHECK(has(refusal(g), "scale_A_t must be mn-major"));
  g = good();
  g.scale_dD_t_layout = GroupScaleLayout{ScaleMajor::mn, 256};
  CHECK(has(refusal(g), "scale_dD_t"));
  CHECK(has(refusal(g), "too small for 512 rows"));
  g = good();
  g.dB = nullptr;
  CHECK(has(refusal(g), "D is a null pointer"));
  g = good();
  g.ld_A_t = 100;
  CHECK(has(refusal(g), "ldb"));
  g = good();
  g.dD_t = reinterpret_cast<const std::uint8_t*>(std::uintptr_t(0x10000001));
  CHECK(has(refusal(g), "aligned"));
  ch08::WeightGradOptions o;
  o.kernel = "no_such_kernel";
  try {
    ch08::WeightGradPlan p(good(), o);
    FAIL("accepted an unknown kernel");
  } catch (const std::invalid_argument& e) {
    CHECK(has(e.what(), "no_such_kernel"));
  }
}

TEST_CASE("ch08 wgrad: the default kernel per shape", "[ch08][wgrad][cpu]") {
  // Session 7's H200 data (chapter 8's README): at each Fp8Linear shape (one group of 4096
  // tokens), the faster of 128 x 256 and 128 x 192 in both sweeps.
  const std::string wide = "128x256_s4_c1x1_promoted_f32_tma_b1";
  const std::string narrow = "128x192_s5_c1x1_promoted_f32_tma_b1";
  CHECK(default_name(2112, 7168, 1) == narrow);   // 476 wide tiles: 3.6 waves
  CHECK(default_name(24576, 1536, 1) == wide);
  CHECK(default_name(32768, 512, 1) == wide);     // 192 columns waste 11% of K = 512
  CHECK(default_name(7168, 16384, 1) == wide);
  CHECK(default_name(4096, 7168, 1) == wide);
  CHECK(default_name(7168, 2048, 1) == narrow);   // 448 wide tiles: 3.4 waves
  // 32 experts: thousands of tiles, no quantisation to speak of.
  CHECK(default_name(4096, 7168, 32) == wide);
  CHECK(default_name(7168, 2048, 32) == wide);
  // A dB that TMA cannot store: the registers epilogue.
  CHECK(default_name(4096, 7168, 1, false) == "128x192_s5_c1x1_promoted_f32");
}
