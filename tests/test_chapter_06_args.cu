// CPU tests of chapter 6's host side: bad calls are refused with std::invalid_argument before any
// CUDA call (this runs without a GPU), the per-shape table only names kernels that exist, and
// every compiled kernel's configuration is one a Hopper SM can run.
#include <algorithm>
#include <cstdint>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include "catch.hpp"
#include "common/engine/scheduler.cuh"
#include "ws_gemm.hpp"

namespace {

using fp8gemm::engine::Accumulation;

fp8gemm::PerTensorGemm valid_call() {
  fp8gemm::PerTensorGemm g;
  g.M = 256;
  g.N = 256;
  g.K = 256;
  // Fake but well-aligned, non-overlapping addresses: validation never dereferences them, and
  // every case below must be refused before anything would.
  g.A = reinterpret_cast<const std::uint8_t*>(std::uintptr_t(1) << 32);
  g.B = reinterpret_cast<const std::uint8_t*>(std::uintptr_t(2) << 32);
  g.D = reinterpret_cast<std::uint16_t*>(std::uintptr_t(3) << 32);
  g.scale_a = reinterpret_cast<const float*>(std::uintptr_t(4) << 32);
  g.scale_b = reinterpret_cast<const float*>((std::uintptr_t(4) << 32) + 16);
  return g;
}

std::string refusal(const fp8gemm::PerTensorGemm& g) {
  try {
    fp8gemm::ch06::Plan plan(g);
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST_CASE("ch06 refuses bad calls before any CUDA call", "[ch06][cpu]") {
  fp8gemm::PerTensorGemm g = valid_call();
  g.K = 40;
  CHECK(refusal(g).find("K = 40 must be a multiple of 16") != std::string::npos);
  g = valid_call();
  g.M = 0;
  CHECK(refusal(g).find("M = 0 must be >= 1") != std::string::npos);
  g = valid_call();
  g.N = (std::int64_t(1) << 31) - 1;  // past the engine's int32 TMA coordinate limit
  CHECK(refusal(g).find("N = ") != std::string::npos);
  g = valid_call();
  g.A = nullptr;
  CHECK(refusal(g).find("A is a null pointer") != std::string::npos);
  g = valid_call();
  g.B = g.B + 8;  // TMA needs 16-byte aligned operands
  CHECK(refusal(g).find("B = ") != std::string::npos);
  g = valid_call();
  g.D = reinterpret_cast<std::uint16_t*>(reinterpret_cast<std::uintptr_t>(g.D) + 1);  // bf16: 2 B
  CHECK(refusal(g).find("D = ") != std::string::npos);
  g = valid_call();
  g.D = reinterpret_cast<std::uint16_t*>(const_cast<std::uint8_t*>(g.A) + 4096);  // inside A
  CHECK(refusal(g).find("overlap") != std::string::npos);
  // Row strides (session 57): >= the row, and multiples of 16 bytes for A and B (TMA).
  g = valid_call();
  g.lda = 248;
  CHECK(refusal(g).find("lda = 248 must be >= K = 256") != std::string::npos);
  g = valid_call();
  g.ldb = 264;
  CHECK(refusal(g).find("ldb = 264 elements (264 bytes) must be a multiple of 16 bytes") !=
        std::string::npos);
  g = valid_call();
  g.ldd = 255;
  CHECK(refusal(g).find("ldd = 255 must be >= N = 256") != std::string::npos);
  // ... which the engine's rules take (chapters 1-5 refuse them: test_chapter_args).
  g = valid_call();
  g.lda = 272;
  g.ldb = 512;
  g.ldd = 259;
  CHECK_NOTHROW(fp8gemm::validate_gemm(g.args(), fp8gemm::ch06::requirements()));
  fp8gemm::ch06::Options o;
  o.kernel = "no_such_kernel";
  CHECK_THROWS_AS(fp8gemm::ch06::Plan(valid_call(), o), std::invalid_argument);
  // A raster direction other than -1 (choose), 0 or 1 (was: any nonzero value taken as along N).
  for (int along_n : {2, -2}) {
    fp8gemm::ch06::Options r;
    r.raster.along_n = along_n;
    try {
      fp8gemm::ch06::Plan(valid_call(), r);
      FAIL("raster.along_n = " << along_n << " not refused");
    } catch (const std::invalid_argument& e) {
      CHECK(std::string(e.what()).find("raster.along_n = " + std::to_string(along_n)) !=
            std::string::npos);
    }
  }
}

TEST_CASE("ch06 kernels: unique names, configurations a Hopper SM can run", "[ch06][cpu]") {
  std::set<std::string> names;
  for (const auto& k : fp8gemm::ch06::kernels()) {
    INFO(k.name);
    CHECK(names.insert(k.name).second);
    CHECK(k.kernel != nullptr);
    CHECK(k.smem_bytes <= 232448);
    CHECK((k.threads == 256 || k.threads == 384 || k.threads == 512));
    CHECK(k.cluster_size() <= 2);
    CHECK(&fp8gemm::ch06::kernel_named(k.name) == &k);
  }
  CHECK(names.size() >= 40);
}

TEST_CASE("ch06 table: every shape gets a compiled kernel of the asked mode", "[ch06][cpu]") {
  const std::int64_t ms[] = {1, 64, 100, 128, 129, 256, 1000, 4096, 8192};
  const std::int64_t ns[] = {8, 16, 264, 2112, 4096, 7168, 24576, 32768};
  for (int sms : {132, 1, 78, 112, 1000})  // the rules plan for the SMs a grid may use
    for (auto m : ms)
      for (auto n : ns)
        for (auto mode : {Accumulation::fast, Accumulation::promoted})
          for (bool tma : {true, false}) {
            const auto& k = fp8gemm::ch06::choose_kernel(m, n, 4096, mode, tma, sms);
            INFO(sms << " SMs " << m << " x " << n << " " << fp8gemm::engine::to_string(mode)
                     << " tma " << tma << " -> " << k.name);
            CHECK(k.accumulation == mode);
            if (!tma) CHECK(k.epilogue == fp8gemm::engine::EpilogueKind::registers);
          }
}

TEST_CASE("ch06 rule: plans for the SMs the grid may use", "[ch06][cpu]") {
  using fp8gemm::ch06::choose_kernel;
  // Outside the hand table: 64 x 2048 is 128 tiles of 64 x 16, one wave on 132 SMs, two on 112.
  CHECK(choose_kernel(64, 2048, 7168, Accumulation::promoted, true).name ==
        "64x16_s16_c1x1_promoted_tma_b1");
  CHECK(choose_kernel(64, 2048, 7168, Accumulation::promoted, true, 112).name ==
        "64x32_s14_c1x1_promoted_tma_b1");
  CHECK(choose_kernel(64, 2048, 7168, Accumulation::fast, true, 112).name ==
        "64x32_s14_c1x1_fast_tma_b1");
  // Large M, wave efficiency on the grid's slots (promoted: 256 x 128 at 1.05, 192 x 128 at 1.00
  // on whole waves): 4096 x 8192 is 1024 tiles of 256 x 128, 8 waves of 132 (0.970), 10 of 112
  // (0.914 x 1.05 = 0.960); 1408 of 192 x 128, 11 waves (0.970) and 13 (0.967).
  CHECK(choose_kernel(4096, 8192, 4096, Accumulation::promoted, true, 132).name ==
        "256x128_s4_c1x2_promoted_tma_b2");
  CHECK(choose_kernel(4096, 8192, 4096, Accumulation::promoted, true, 112).name ==
        "192x128_s4_c2x1_promoted_tma_b2");
  CHECK(choose_kernel(4096, 8192, 4096, Accumulation::fast, true, 132).name ==
        "128x256_s4_c2x1_fast_tma_b2");
  CHECK(choose_kernel(4096, 8192, 4096, Accumulation::fast, true, 112).name ==
        "192x128_s4_c2x1_fast_tma_b2");
  // The other decode shapes of session 47's call 2, on 112 and on 132 SMs.
  CHECK(choose_kernel(64, 4096, 4096, Accumulation::promoted, true, 112).name ==
        "64x64_s12_c1x1_promoted_tma_b1");
  CHECK(choose_kernel(128, 4096, 4096, Accumulation::fast, true, 112).name ==
        "128x64_s8_c1x1_fast_tma_b1");
  CHECK(choose_kernel(64, 2304, 7168, Accumulation::promoted, true, 132).name ==
        "64x32_s14_c1x1_promoted_tma_b1");
  CHECK(choose_kernel(128, 4608, 7168, Accumulation::fast, true, 132).name ==
        "128x64_s8_c1x1_fast_tma_b1");
  // A hand row at M <= 128 gives way to the rule where its waves change: 64 x 2112 x 7168
  // promoted is 132 tiles of 64 x 16 (two waves on 112 SMs); 64 x 7168 x 16384's 112 tiles of
  // 64 x 64 stay one wave.
  CHECK(choose_kernel(64, 2112, 7168, Accumulation::promoted, true, 132).name ==
        "64x16_s16_c1x1_promoted_tma_b1");
  CHECK(choose_kernel(64, 2112, 7168, Accumulation::promoted, true, 112).name ==
        "64x32_s14_c1x1_promoted_tma_b1");
  CHECK(choose_kernel(64, 7168, 16384, Accumulation::promoted, true, 112).name ==
        "64x64_s12_c1x1_promoted_tma_b1");
}

TEST_CASE("engine scheduler: the banded raster visits every unit exactly once", "[ch06][cpu]") {
  // banded_unit() is the device scheduler's mapping (DenseTileScheduler::next), compiled for the
  // host too. For grids of many sizes, both band directions and band widths from 1 to past the
  // grid: a permutation of all units, and every band's units within `group` rows (or columns).
  int cases = 0;
  for (int units_m : {1, 2, 3, 7, 16, 33})
    for (int units_n : {1, 2, 5, 8, 31})
      for (int along_n : {0, 1})
        for (int group : {1, 2, 3, 4, 8, 16, 40}) {
          const fp8gemm::engine::DenseSchedule s = fp8gemm::engine::make_dense_schedule(
              units_m, units_n, std::min(group, along_n == 0 ? units_m : units_n), along_n);
          std::vector<int> seen(std::size_t(s.num_units), 0);
          bool in_range = true, banded = true;
          for (int u = 0; u < s.num_units; ++u) {
            int um = -1, un = -1;
            fp8gemm::engine::banded_unit(s, u, um, un);
            if (um < 0 || um >= units_m || un < 0 || un >= units_n) {
              in_range = false;
              continue;
            }
            ++seen[std::size_t(um * units_n + un)];
            const int band = u / (s.group * (along_n == 0 ? units_n : units_m));
            const int inner = along_n == 0 ? um : un;
            banded &= inner / s.group == band;
          }
          INFO(units_m << " x " << units_n << " units, group " << s.group << ", along_n "
                       << along_n);
          CHECK(in_range);
          CHECK(banded);
          CHECK(std::all_of(seen.begin(), seen.end(), [](int c) { return c == 1; }));
          ++cases;
        }
  CHECK(cases == 6 * 5 * 2 * 7);
}

TEST_CASE("engine scheduler: a schedule with bad counts is refused", "[ch06][cpu]") {
  using fp8gemm::engine::make_dense_schedule;
  CHECK_NOTHROW(make_dense_schedule(1, 1, 1, 0));
  CHECK_NOTHROW(make_dense_schedule(1 << 15, 1 << 15, 1 << 15, 0));  // 2^30 units: the limit
  CHECK_THROWS_AS(make_dense_schedule(0, 4, 1, 0), std::invalid_argument);
  CHECK_THROWS_AS(make_dense_schedule(4, 0, 1, 1), std::invalid_argument);
  CHECK_THROWS_AS(make_dense_schedule((1 << 15) + 1, 1 << 15, 1, 0), std::invalid_argument);
  CHECK_THROWS_AS(make_dense_schedule(4, 8, 0, 0), std::invalid_argument);
  CHECK_THROWS_AS(make_dense_schedule(4, 8, 5, 0), std::invalid_argument);  // group > units_m
  CHECK_NOTHROW(make_dense_schedule(4, 8, 8, 1));                           // along N: <= units_n
  CHECK_THROWS_AS(make_dense_schedule(4, 8, 9, 1), std::invalid_argument);
  CHECK_THROWS_AS(make_dense_schedule(4, 8, 1, 2), std::invalid_argument);
  CHECK_THROWS_AS(fp8gemm::engine::FastDiv::make(0), std::invalid_argument);
  CHECK_THROWS_AS(fp8gemm::engine::FastDiv::make(-3), std::invalid_argument);
  const auto s = make_dense_schedule(7, 5, 3, 0);  // the divisors are the counts'
  CHECK(s.num_units == 35);
  CHECK(s.per_band.d == 15u);
  CHECK(s.width.d == 3u);
  CHECK(s.last_width.d == 1u);  // 7 = 3 + 3 + 1
}

TEST_CASE("engine scheduler: FastDiv divides exactly", "[ch06][cpu]") {
  // Every divisor the scheduler can get is below 2^30 and every dividend below 2^31; check small
  // and large divisors (powers of two and their neighbours included) against integer division
  // at dividends near 0, near multiples of d and near 2^31.
  std::vector<int> divisors;
  for (int d = 1; d <= 1000; ++d) divisors.push_back(d);
  for (int e = 10; e < 31; ++e)
    for (int delta : {-1, 0, 1}) divisors.push_back((1 << e) + delta);
  divisors.push_back(1000003);
  divisors.push_back((1 << 30) - 3);
  long long checks = 0, wrong = 0;
  for (int d : divisors) {
    const auto f = fp8gemm::engine::FastDiv::make(d);
    std::vector<long long> ns;
    for (long long n = 0; n < 300; ++n) ns.push_back(n);
    for (long long k : {1LL, 2LL, 3LL, 7LL, 1000LL, 123457LL})
      for (long long delta : {-1LL, 0LL, 1LL}) ns.push_back(k * d + delta);
    for (long long n = (1LL << 31) - 300; n < (1LL << 31); ++n) ns.push_back(n);
    for (long long n : ns) {
      if (n < 0 || n >= (1LL << 31)) continue;
      ++checks;
      if (f.div(int(n)) != int(n / d)) {
        if (++wrong < 5) FAIL_CHECK("n " << n << " / d " << d << ": " << f.div(int(n)));
      }
    }
  }
  CHECK(wrong == 0);
  CHECK(checks > 500000);
}
