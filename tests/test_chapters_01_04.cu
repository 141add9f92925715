// GPU correctness of chapters 1-4: each kernel on >= 30 shapes drawn from a seeded generator
// (always including M = 1, N = 1, M and N that are not multiples of the block tile, and K that is
// a multiple of 16 but not of the tile's K), plus one large shape with sampled rows and a
// determinism check. Every run: fresh random e4m3 operands and scales, D poisoned to NaN first,
// float64 CPU reference on the dequantised operands (fp8gemm::check_per_tensor).
#include <cstdint>
#include <cstdio>
#include <random>
#include <vector>

#include "catch.hpp"
#include "chapters/01_naive/naive.cuh"
#include "chapters/02_smem_tiling/smem_tiling.cuh"
#include "chapters/03_mma_sync/mma_sync.cuh"
#include "chapters/04_tma/tma.cuh"
#include "common/check.hpp"

namespace {

struct Shape {
  std::int64_t M, N, K;
};

/// What the shape generator needs to know about a chapter.
struct Chapter {
  const char* name;
  fp8gemm::PerTensorKernel kernel;
  std::int64_t k_multiple;  // K rule (1 or 16)
  std::int64_t tile_m, tile_n, tile_k;  // block tile (K: the K covered per main-loop step)
  Shape big;                // one large shape, checked on sampled rows
};

/// 8 fixed edge shapes (10 for chapter 1), then random ones up to `count`. Random M, N in [1, 400], K a multiple of
/// k_multiple in [k_multiple, 768]; every fixed K is a multiple of 16 but not of tile_k.
std::vector<Shape> shapes_for(const Chapter& c, std::uint64_t seed, int count) {
  const std::int64_t tm = c.tile_m, tn = c.tile_n, tk = c.tile_k;
  const std::int64_t k_tail = tk + 16 == 32 ? 48 : tk + 16;  // 16 past a tile, never a tile multiple
  std::vector<Shape> s = {
      {1, 1, 16},                 // smallest allowed everywhere
      {1, 2 * tn + 3, k_tail},    // M = 1
      {3 * tm + 1, 1, 3 * tk + 16},  // N = 1
      {tm + 1, tn - 1, k_tail},   // M just past a tile, N just short of one
      {2 * tm - 3, 3 * tn + 5, tk > 16 ? 2 * tk - 16 : 7},
      {tm, tn, tk},               // exactly one tile
      {tm - 7, 2 * tn, 16},       // K = 16: one partial K tile only
      {77, 333, 5 * tk + 48},
  };
  if (c.k_multiple == 1) {  // chapter 1 takes any K: add odd ones
    s.push_back({5, 7, 1});
    s.push_back({33, 65, 131});
  }
  std::mt19937_64 gen(seed);
  std::uniform_int_distribution<std::int64_t> mn(1, 400);
  std::uniform_int_distribution<std::int64_t> kk(1, 768 / c.k_multiple);
  while (int(s.size()) < count) s.push_back({mn(gen), mn(gen), kk(gen) * c.k_multiple});
  return s;
}

void check_random_shapes(const Chapter& c, std::uint64_t seed) {
  const std::vector<Shape> shapes = shapes_for(c, seed, 42)  /* 8-10 fixed edges + >= 32 random */;
  std::printf("%s: %zu shapes from seed %llu\n", c.name, shapes.size(),
              static_cast<unsigned long long>(seed));
  std::uint64_t run = seed * 1000;
  for (const Shape& s : shapes) {
    fp8gemm::CheckOptions opt;
    opt.seed = run++;
    const fp8gemm::CheckResult r = fp8gemm::check_per_tensor(c.kernel, s.M, s.N, s.K, opt);
    const bool ok = r.ok();  // per_tensor_tolerance(K): see common/check.hpp
    std::printf("  %s %lldx%lldx%lld (data seed %llu): %s %s\n", c.name,
                static_cast<long long>(s.M), static_cast<long long>(s.N),
                static_cast<long long>(s.K), static_cast<unsigned long long>(opt.seed),
                ok ? "ok" : "FAIL", r.describe().c_str());
    INFO(c.name << " M=" << s.M << " N=" << s.N << " K=" << s.K << " data seed " << opt.seed
                << ": " << r.describe());
    CHECK(ok);
  }
}

void check_big_shape(const Chapter& c, std::uint64_t seed) {
  fp8gemm::CheckOptions opt;
  opt.seed = seed;
  opt.full_reference_max_m = 256;  // sample rows above this
  opt.sample_rows = 32;
  const Shape s = c.big;
  const fp8gemm::CheckResult r = fp8gemm::check_per_tensor(c.kernel, s.M, s.N, s.K, opt);
  const bool ok = r.ok();  // per_tensor_tolerance(K): see common/check.hpp
  std::printf("  %s %lldx%lldx%lld (data seed %llu, sampled rows): %s %s\n", c.name,
              static_cast<long long>(s.M), static_cast<long long>(s.N),
              static_cast<long long>(s.K), static_cast<unsigned long long>(seed),
              ok ? "ok" : "FAIL", r.describe().c_str());
  INFO(c.name << " " << s.M << "x" << s.N << "x" << s.K << ": " << r.describe());
  CHECK(ok);
  // The kernels have no atomics or split-K: the same inputs must give the same bits.
  CHECK(fp8gemm::check_deterministic(c.kernel, 300, 200, 528, 10, seed + 1));
}

const Chapter kCh01{"ch01_naive", fp8gemm::ch01::gemm, 1, fp8gemm::ch01::kBlockM,
                    fp8gemm::ch01::kBlockN, 1, {2048, 2048, 2048}};
const Chapter kCh02{"ch02_smem_tiling", fp8gemm::ch02::gemm, 16, fp8gemm::ch02::kBlockM,
                    fp8gemm::ch02::kBlockN, fp8gemm::ch02::kBlockK, {4096, 4096, 4096}};
const Chapter kCh03{"ch03_mma_sync", fp8gemm::ch03::gemm, 16, fp8gemm::ch03::Tile::kBlockM,
                    fp8gemm::ch03::Tile::kBlockN, fp8gemm::ch03::Tile::kBlockK,
                    {4096, 4096, 4096}};
const Chapter kCh04{"ch04_tma", fp8gemm::ch04::gemm, 16, fp8gemm::ch04::Tile::kBlockM,
                    fp8gemm::ch04::Tile::kBlockN, fp8gemm::ch04::Tile::kBlockK,
                    {4096, 4096, 4096}};

}  // namespace

TEST_CASE("ch01_naive matches the float64 reference on random shapes", "[gpu][ch01]") {
  check_random_shapes(kCh01, 101);
  check_big_shape(kCh01, 1101);
}

TEST_CASE("ch02_smem_tiling matches the float64 reference on random shapes", "[gpu][ch02]") {
  check_random_shapes(kCh02, 202);
  check_big_shape(kCh02, 2202);
}

TEST_CASE("ch03_mma_sync matches the float64 reference on random shapes", "[gpu][ch03]") {
  check_random_shapes(kCh03, 303);
  check_big_shape(kCh03, 3303);
}

TEST_CASE("ch04_tma matches the float64 reference on random shapes", "[gpu][ch04]") {
  check_random_shapes(kCh04, 404);
  check_big_shape(kCh04, 4404);
}
