// GPU tests of chapter 5 (wgmma + TMA ring): correctness against the float64 CPU reference on
// >= 30 shapes (fixed edge cases plus shapes from a seeded generator: M = 1, N = 1, M and N off
// the 128 x 256 tile, K a multiple of 16 but not of 128, one 4096^3 with sampled rows), and
// bitwise determinism over 10 runs.
#include <cstdint>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include "catch.hpp"
#include "chapters/05_wgmma/wgmma.cuh"
#include "common/check.hpp"

namespace {

struct Shape {
  std::int64_t M, N, K;
};

std::string name(const Shape& s) {
  return std::to_string(s.M) + "x" + std::to_string(s.N) + "x" + std::to_string(s.K);
}

constexpr std::uint64_t kShapeSeed = 0x05C0FFEEull;

/// The shapes: fixed edge cases first, then random ones from kShapeSeed.
std::vector<Shape> shapes() {
  std::vector<Shape> v = {
      {1, 1, 16},          // one output, one 16-byte K slice (111 bytes of the K block zero-filled)
      {1, 300, 128},       // M = 1: 127 zero rows of A in the tile, 2 N tiles
      {300, 1, 144},       // N = 1: odd N, scalar stores; K = 128 + 16
      {1, 1, 2048},        // long K, single element
      {127, 257, 48},      // one short of / one past the tiles; K < one K block
      {129, 255, 208},     // one past / one short; K tail of 80
      {128, 256, 128},     // exactly one tile, one K block
      {256, 512, 640},     // whole tiles, K = 5 blocks (ring wraps: 4 stages)
      {200, 264, 656},     // odd tails, K tail of 16
      {333, 77, 1040},     // N < tile, odd N
      {1031, 1000, 1168},  // several tile groups along M (kGroupM = 8 tiles = 1024 rows)
      {64, 2112, 512},     // DeepSeek-like skinny M
  };
  std::mt19937_64 rng(kShapeSeed);
  auto uniform = [&](std::int64_t lo, std::int64_t hi) {
    return std::uniform_int_distribution<std::int64_t>(lo, hi)(rng);
  };
  for (int i = 0; i < 32; ++i) {  // >= 30 random shapes besides the fixed edges
    Shape s;
    s.M = uniform(1, 4) == 1 ? uniform(1, 8) : uniform(1, 700);
    s.N = uniform(1, 4) == 1 ? uniform(1, 8) : uniform(1, 900);
    s.K = 16 * uniform(1, 80);  // up to 1280: up to 10 K blocks, most not a multiple of 128
    v.push_back(s);
  }
  v.push_back({4096, 4096, 4096});  // large: the check samples 48 rows (first and last included)
  return v;
}

const fp8gemm::PerTensorKernel kKernel = fp8gemm::ch05::gemm;

}  // namespace

TEST_CASE("ch05 wgmma matches the float64 reference on edge and random shapes", "[ch05][gpu]") {
  const std::vector<Shape> all = shapes();
  std::printf("ch05 shapes (generator seed 0x%llx, %zu shapes):", (unsigned long long)kShapeSeed,
              all.size());
  for (const auto& s : all) std::printf(" %s", name(s).c_str());
  std::printf("\n");
  REQUIRE(all.size() >= 30);

  std::uint64_t seed = 5000;
  for (const auto& s : all) {
    fp8gemm::CheckOptions opt;
    opt.seed = seed++;
    const fp8gemm::CheckResult r = fp8gemm::check_per_tensor(kKernel, s.M, s.N, s.K, opt);
    std::printf("  %-18s seed %llu  %s\n", name(s).c_str(), (unsigned long long)opt.seed,
                r.describe().c_str());
    INFO("shape " << name(s) << ", data seed " << opt.seed << ": " << r.describe()
                  << ", tolerance " << r.tolerance);
    CHECK(r.tolerance <= fp8gemm::kPerTensorTolerance);
    CHECK(r.ok());
  }
}

TEST_CASE("ch05 wgmma is deterministic: 10 runs give bitwise identical D", "[ch05][gpu]") {
  // Edge tiles in M and N, a K tail, and several tiles and K blocks per tile.
  CHECK(fp8gemm::check_deterministic(kKernel, 333, 520, 1040, 10, 77));
  CHECK(fp8gemm::check_deterministic(kKernel, 2048, 2048, 2048, 10, 78));
}

TEST_CASE("ch05 wgmma rejects bad arguments before launching", "[ch05][gpu]") {
  // With a GPU present too: validation comes first, the device is never touched.
  fp8gemm::DeviceBuffer<std::uint8_t> a(64 * 48 + 16), b(64 * 48);
  fp8gemm::DeviceBuffer<std::uint16_t> d(64 * 64);
  fp8gemm::DeviceBuffer<float> scales(2);
  fp8gemm::PerTensorGemm g;
  g.M = 64;
  g.N = 64;
  g.K = 48;
  g.A = a.data();
  g.B = b.data();
  g.D = d.data();
  g.scale_a = scales.data();
  g.scale_b = scales.data() + 1;
  g.A = a.data() + 1;  // not 16-byte aligned: TMA cannot start there
  CHECK_THROWS_AS(fp8gemm::ch05::gemm(g, nullptr), std::invalid_argument);
  g.A = a.data();
  g.K = 40;  // not a multiple of 16
  CHECK_THROWS_AS(fp8gemm::ch05::gemm(g, nullptr), std::invalid_argument);
}
