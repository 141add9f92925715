// Chapter 9's Hopper half: the MXFP8 GEMM on the chapter-6 engine (hopper_mx.hpp) against the
// float64 definition, D = sum over 32-K blocks of 2^(sa - 127) 2^(sb - 127) A_blk . B_blk, on
// tile edges, K not a multiple of 128 (partial stages), several scale tiles, both kernels (TMA
// store and registers), a D row stride that only the registers kernel takes, wide exponent
// spreads, a NaN scale (its row of D, and only that row, NaN), determinism. Operands from
// mx_emulate.hpp (random e4m3 codes and UE8M0 exponents, the Mx1x32 layout with zero padding).
#include <cmath>
#include <cstdint>
#include <stdexcept>
#include <vector>

#include "catch.hpp"
#include "hopper_mx.hpp"
#include "mx_emulate.hpp"
#include "mx_run.hpp"

using namespace fp8gemm;
using namespace fp8gemm::ch09;

namespace {
struct Shape {
  std::int64_t M, N, K, pad;
};
std::vector<double> run_hopper(const MxOperands& o, const std::string& kernel,
                               std::int64_t pad = 0) {
  HopperOptions opt;
  opt.kernel = kernel;
  return test::run_mx<HopperPlan>(o, pad, opt);
}
}  // namespace

TEST_CASE("ch09 Hopper MXFP8 GEMM matches the float64 definition, every kernel",
          "[ch09][hopper][gpu]") {
  std::vector<engine::KernelInfo> all = hopper_kernels();  // and the earlier versions
  all.insert(all.end(), hopper_earlier_kernels().begin(), hopper_earlier_kernels().end());
  for (const auto& k : all) {
    for (const Shape s : {Shape{128, 128, 128, 0}, Shape{1, 8, 32, 0}, Shape{200, 136, 160, 0},
                          Shape{130, 130, 352, 0}, Shape{257, 392, 672, 0},
                          Shape{777, 520, 2080, 0}, Shape{2048, 2048, 4096, 0}}) {
      const MxOperands o = random_operands(s.M, s.N, s.K, 11 + std::uint64_t(s.M + s.N + s.K));
      INFO(k.name << ": " << s.M << " x " << s.N << " x " << s.K);
      if (k.epilogue == engine::EpilogueKind::tma_store && (s.N + s.pad) % 8 != 0) {
        // A TMA-store kernel needs D's rows 16 bytes apart: asked for by name, it refuses.
        REQUIRE_THROWS_AS(run_hopper(o, k.name, s.pad), std::invalid_argument);
        continue;
      }
      const auto ref = reference_f64(o);
      const auto got = run_hopper(o, k.name, s.pad);
      bool finite = true;
      for (double x : got) finite = finite && std::isfinite(x);
      REQUIRE(finite);  // the NaN poison is gone: every element was written
      // bf16 output (2^-9 relative) dominates; FP32 promotion every 32 K adds ~1e-6 at these K.
      CHECK(relative_frobenius(got, ref) < 4e-3);
    }
  }
}

TEST_CASE("ch09 Hopper MXFP8: wide exponents, an odd D stride, a NaN scale",
          "[ch09][hopper][gpu]") {
  // Exponents 127 +- 40: products of scales from 2^-80 to 2^80, still normal floats.
  const MxOperands wide = random_operands(300, 264, 544, 5, 40);
  CHECK(relative_frobenius(run_hopper(wide, ""), reference_f64(wide)) < 4e-3);
  // ldd = N + 3: not a TMA-store D, the default picks the registers kernel.
  const MxOperands o = random_operands(190, 200, 256, 6);
  CHECK(relative_frobenius(test::run_mx<HopperPlan>(o, 3), reference_f64(o)) < 4e-3);
  // A NaN scale (UE8M0 0xFF) for row 17, block 2 of A: row 17 of D is NaN, the others are not.
  MxOperands n = random_operands(64, 72, 256, 7);
  const Mx1x32 la(n.M, n.K);
  n.sa[std::size_t(la.block_index(17, 2))] = 0xFF;
  const auto got = run_hopper(n, "");
  std::int64_t nan_in_row = 0, nan_elsewhere = 0;
  for (std::int64_t m = 0; m < n.M; ++m)
    for (std::int64_t c = 0; c < n.N; ++c) {
      const bool isnan = std::isnan(got[std::size_t(m * n.N + c)]);
      (m == 17 ? nan_in_row : nan_elsewhere) += isnan ? 1 : 0;
    }
  CHECK(nan_in_row == n.N);
  CHECK(nan_elsewhere == 0);
}

TEST_CASE("ch09 Hopper MXFP8 GEMM is deterministic", "[ch09][hopper][gpu]") {
  const MxOperands o = random_operands(512, 512, 2048, 42);
  CHECK(run_hopper(o, "") == run_hopper(o, ""));
}
