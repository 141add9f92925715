// Chapter 9, Blackwell MXFP8 kernel on an sm_100 GPU (B200/GB200): the kernel against the
// float64 reference of the definition, on tile edges, partial K blocks and several scale tiles;
// the store paths (TMA store, vector and scalar stores from registers); a float D with and
// without accumulate (session 65); CTA pairs
// (Options::cta_group = 2); determinism. NEVER RUN in this project (no Blackwell GPU): on any other
// machine it exits 77 and CTest reports it skipped. Its own main() (Catch2 2.x has no SKIP):
// skip without a GPU, without the sm_100a build, or on a GPU that is not compute capability 10.0.
#define CATCH_CONFIG_RUNNER
#include <cuda_runtime.h>

#include <array>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <random>
#include <vector>

#include "catch.hpp"
#include "common/cuda.hpp"
#include "common/reference.hpp"
#include "mx_emulate.hpp"
#include "mx_gemm.hpp"
#include "mx_run.hpp"

using namespace fp8gemm;
using namespace fp8gemm::ch09;

namespace {
/// The Blackwell plan on o (ldd = N + pad), D as doubles.
std::vector<double> run_gpu(const MxOperands& o, std::int64_t ldd_pad = 0) {
  return test::run_mx<Plan>(o, ldd_pad);
}
}  // namespace

TEST_CASE("ch09 sm100 MXFP8 GEMM matches the float64 reference", "[ch09][gpu]") {
  struct Shape {
    std::int64_t M, N, K, pad;
  };
  for (const Shape s : {Shape{128, 128, 128, 0}, Shape{1, 8, 32, 0}, Shape{200, 136, 160, 0},
                        Shape{130, 130, 352, 0}, Shape{256, 384, 1024, 8}, Shape{777, 520, 2080, 0},
                        Shape{2048, 2048, 4096, 0}}) {
    const MxOperands o = random_operands(s.M, s.N, s.K, 7 + std::uint64_t(s.M + s.N + s.K));
    const auto ref = reference_f64(o);
    const auto got = run_gpu(o, s.pad);
    bool finite = true;
    for (double x : got) finite = finite && std::isfinite(x);
    INFO(s.M << " x " << s.N << " x " << s.K << " ldd pad " << s.pad);
    REQUIRE(finite);  // the NaN poison is gone: every element was written
    // bf16 output (2^-8 relative) dominates; FP32 accumulation adds ~1e-6 at these K.
    CHECK(relative_frobenius(got, ref) < 4e-3);
  }
}

TEST_CASE("ch09 sm100 MXFP8 GEMM: the stores from registers where the TMA store could run",
          "[ch09][gpu]") {
  // Aligned D (the TMA store's case) with Options::tma_store = false: the vector stores.
  Options opt;
  opt.tma_store = false;
  for (const auto [M, N, K] : {std::array<std::int64_t, 3>{200, 136, 160},
                               std::array<std::int64_t, 3>{256, 384, 1024}}) {
    const MxOperands o = random_operands(M, N, K, 11 + std::uint64_t(M + N + K));
    INFO(M << " x " << N << " x " << K);
    CHECK(relative_frobenius(test::run_mx<Plan>(o, 0, opt), reference_f64(o)) < 4e-3);
  }
}

TEST_CASE("ch09 sm100 MXFP8 GEMM on CTA pairs (Options::cta_group = 2)", "[ch09][gpu]") {
  // The pair's edges: the odd CTA's rows all or partly past M (1, 130), its half of B partly
  // past N (72), several pair tiles, an ldd pad; both store paths. Against the reference and
  // bit for bit against the single-CTA kernel (same MMAs per row in the same order).
  Options pair;
  pair.cta_group = 2;
  Options pair_registers = pair;
  pair_registers.tma_store = false;
  struct Shape {
    std::int64_t M, N, K, pad;
  };
  for (const Shape s : {Shape{256, 128, 128, 0}, Shape{1, 8, 32, 0}, Shape{130, 72, 160, 0},
                        Shape{300, 200, 352, 0}, Shape{777, 520, 2080, 8},
                        Shape{2048, 2048, 4096, 0}}) {
    const MxOperands o = random_operands(s.M, s.N, s.K, 13 + std::uint64_t(s.M + s.N + s.K));
    const auto ref = reference_f64(o);
    INFO(s.M << " x " << s.N << " x " << s.K << " ldd pad " << s.pad);
    const auto got = test::run_mx<Plan>(o, s.pad, pair);
    bool finite = true;
    for (double x : got) finite = finite && std::isfinite(x);
    REQUIRE(finite);
    CHECK(relative_frobenius(got, ref) < 4e-3);
    CHECK(test::run_mx<Plan>(o, s.pad, pair_registers) == got);
    // A prediction, not a rule of the hardware: each row gets the same 128 x 32 products per k
    // step in the same K order, alone or in a pair. Should this fail while the reference check
    // above passes, the pair sums in another order: relax it to the reference and say so.
    CHECK(run_gpu(o, s.pad) == got);
  }
}

TEST_CASE("ch09 sm100 MXFP8 GEMM: a float D, with and without accumulate", "[ch09][gpu]") {
  // Output::f32 (session 65): the tensor memory's FP32 unrounded, against float64 within 5e-4
  // (the Hopper float D's bound; a bf16 D alone is ~1e-3 off), and with accumulate against
  // before + A.B^T. Every store path: the TMA store / reduce-add (ldd pad 4: 16-byte rows), the
  // vector stores (the same D, Options::tma_store = false) and the scalar stores (pad 3); alone
  // and in pairs. D's columns N .. ldd - 1 are never written. D's earlier values as large as the
  // product (N(0, rms of it)), so that a skipped add fails.
  std::mt19937_64 gen(65);
  struct Shape {
    std::int64_t M, N, K, pad;
  };
  int cases = 0;
  for (const Shape s : {Shape{200, 136, 160, 4}, Shape{257, 392, 672, 3}, Shape{1, 8, 32, 4},
                        Shape{777, 520, 2080, 3}}) {
    const MxOperands o = random_operands(s.M, s.N, s.K, 650 + std::uint64_t(s.M + s.K));
    const auto ref = reference_f64(o);
    std::normal_distribution<float> nd(0.0f, float(rms(ref)));
    for (const int group : {1, 2})
      for (const bool tma : {true, false})
        for (const bool accumulate : {false, true}) {
          Options opt;
          opt.cta_group = group;
          opt.tma_store = tma;
          INFO(s.M << " x " << s.N << " x " << s.K << " pad " << s.pad << " cta_group " << group
                   << (tma ? " TMA" : " registers") << (accumulate ? " D += A.B^T" : " D = A.B^T"));
          std::vector<float> before(std::size_t(s.M * (s.N + s.pad)));
          for (auto& x : before) x = nd(gen);
          std::int64_t padding_changed = -1;
          const auto got =
              test::run_mx_f32<Plan>(o, s.pad, accumulate ? &before : nullptr, padding_changed, opt);
          const std::vector<double> want =
              test::expected_f32(ref, accumulate ? &before : nullptr, s.M, s.N, s.N + s.pad);
          bool finite = true;
          for (double x : got) finite = finite && std::isfinite(x);
          REQUIRE(finite);  // every element written (the NaN poison, without accumulate)
          CHECK(relative_frobenius(got, want) < 5e-4);
          CHECK(padding_changed == 0);
          ++cases;
        }
  }
  CHECK(cases == 32);
}

TEST_CASE("ch09 sm100 MXFP8 GEMM is deterministic", "[ch09][gpu]") {
  const MxOperands o = random_operands(512, 512, 2048, 42);
  const auto ref = reference_f64(o);
  const auto first = run_gpu(o);
  CHECK(relative_frobenius(first, ref) < 4e-3);  // equal, and right
  CHECK(run_gpu(o) == first);
  Options pair;
  pair.cta_group = 2;
  const auto first_pair = test::run_mx<Plan>(o, 0, pair);
  CHECK(relative_frobenius(first_pair, ref) < 4e-3);
  CHECK(test::run_mx<Plan>(o, 0, pair) == first_pair);
}

int main(int argc, char** argv) {
  bool listing = false;
  for (int i = 1; i < argc; ++i) listing |= std::strncmp(argv[i], "--list", 6) == 0;
  if (!listing) {
    if (cuda_device_count() == 0) {
      std::printf("SKIPPED: no CUDA GPU present; %s needs a Blackwell B200/GB200 (sm_100a).\n", argv[0]);
      return 77;
    }
    if (!compiled_for_sm100()) {
      std::printf("SKIPPED: this build has no sm_100a code (configure with the `full` preset).\n");
      return 77;
    }
    cudaDeviceProp p{};
    if (cudaGetDeviceProperties(&p, 0) != cudaSuccess || p.major != 10 || p.minor != 0) {
      std::printf("SKIPPED: %s is not compute capability 10.0; the kernel runs on B200/GB200 only.\n",
                  p.name);
      return 77;
    }
    std::printf("GPU: %s\n", describe_device().c_str());
  }
  return Catch::Session().run(argc, argv);
}
