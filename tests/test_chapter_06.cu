// GPU tests of chapter 6 (the engine): every compiled kernel and both accumulation modes against
// the float64 CPU reference (global and per-128x128-tile error) on shapes chosen to hit the
// scheduler's edges; the table's choice on edge and seeded-random shapes; promoted accumulation
// on the all-positive long-K case; determinism; streams, threads, max_sms; the reliability rule.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "accuracy.hpp"
#include "catch.hpp"
#include "common/check.hpp"
#include "common/cuda.hpp"
#include "common/quantize.hpp"  // random_e4m3
#include "ws_gemm.hpp"

namespace {

using fp8gemm::engine::Accumulation;

struct Shape {
  std::int64_t M, N, K;
};

std::string name(const Shape& s) {
  return std::to_string(s.M) + "x" + std::to_string(s.N) + "x" + std::to_string(s.K);
}

fp8gemm::PerTensorKernel with_kernel(const std::string& kernel, Accumulation mode,
                                     bool persistent = true, int max_sms = 0) {
  return [kernel, mode, persistent, max_sms](const fp8gemm::PerTensorGemm& g, cudaStream_t s) {
    fp8gemm::ch06::Options o;
    o.kernel = kernel;
    o.accumulation = mode;
    o.persistent = persistent;
    o.max_sms = max_sms;
    fp8gemm::ch06::Plan(g, o).run(s);
  };
}

int sm_count() {
  int device = 0, n = 0;
  FP8GEMM_CUDA_CHECK(cudaGetDevice(&device));
  FP8GEMM_CUDA_CHECK(cudaDeviceGetAttribute(&n, cudaDevAttrMultiProcessorCount, device));
  return n;
}

bool check(const fp8gemm::PerTensorKernel& k, const Shape& s, std::uint64_t seed,
           const std::string& what) {
  fp8gemm::CheckOptions opt;
  opt.seed = seed;
  const fp8gemm::CheckResult r = fp8gemm::check_per_tensor(k, s.M, s.N, s.K, opt);
  std::printf("  %-40s %-18s %s %s\n", what.c_str(), name(s).c_str(), r.ok() ? "ok  " : "FAIL",
              r.describe().c_str());
  return r.ok();
}

}  // namespace

TEST_CASE("ch06: every compiled kernel, both modes, at the scheduler's edges", "[ch06][gpu]") {
  const int sms = sm_count();
  std::uint64_t seed = 60000;
  for (const auto& k : fp8gemm::ch06::kernels()) {
    const std::int64_t bm = k.block_m, bn = k.block_n;
    // Tile counts: one tile; fewer than the SMs; exactly the SMs (12 x 11 = 132 on an H200, a
    // cluster count that does not divide one side); one more than the SMs (7 x 19: odd both ways,
    // so one CTA of some clusters has no tile); and K tails of 16 and 144.
    std::vector<Shape> shapes = {
        {bm, bn, 128},
        {2 * bm + 7, 3 * bn - 8, 272},
        {12 * bm, (sms / 12) * bn, 256},
        {7 * bm, 19 * bn, 144},
        {bm - 3, bn + 8, 16},
    };
    if (k.epilogue == fp8gemm::engine::EpilogueKind::registers) {
      shapes.push_back({1, 1, 16});      // M = N = 1
      shapes.push_back({300, 1, 48});    // odd N: only this epilogue stores it
      shapes.push_back({77, 333, 160});  // odd N, tails everywhere
    } else {
      shapes.push_back({1, 8, 16});      // M = 1
    }
    for (const auto& s : shapes) {
      INFO("kernel " << k.name << ", shape " << name(s) << ", seed " << seed);
      CHECK(check(with_kernel(k.name, k.accumulation), s, seed++, k.name));
    }
    // One CTA (or cluster) computes 4-6 tiles whose K is more than twice the ring (the ring
    // wraps within each tile and the ring position runs on across tiles; ping-pong warpgroups
    // pass over each other's tiles: a parity wait more than one phase ahead would read a stage
    // too early, and shapes whose K fits in the ring never show it).
    const Shape long_k{2 * bm + 5, bn + 8, 128 * (2 * k.stages + 3) + 48};
    INFO("kernel " << k.name << ", shape " << name(long_k) << " on one CTA, seed " << seed);
    CHECK(check(with_kernel(k.name, k.accumulation, true, 1), long_k, seed++, k.name + " 1 CTA"));
  }
}

TEST_CASE("ch06: TMA-store kernels refuse a D that TMA cannot store; the table falls back",
          "[ch06][gpu]") {
  // N = 300 is not a multiple of 8: rows of D are 600 bytes apart, not a multiple of 16.
  CHECK_THROWS_AS(check(with_kernel("128x256_s4_c2x1_promoted_tma_b2", Accumulation::promoted),
                        {128, 300, 64}, 1, "forced TMA kernel, N = 300"),
                  std::invalid_argument);
  CHECK(fp8gemm::ch06::choose_kernel(128, 300, 64, Accumulation::promoted, false).epilogue ==
        fp8gemm::engine::EpilogueKind::registers);
  CHECK(check(fp8gemm::ch06::gemm, {1000, 300, 512}, 2, "table, N = 300"));
  CHECK(cudaPeekAtLastError() == cudaSuccess);
}

TEST_CASE("ch06: the table's kernels on edge and seeded-random shapes, both modes", "[ch06][gpu]") {
  std::vector<Shape> shapes = {
      {1, 8, 16},       {1, 1, 16},        {127, 129, 48},    {129, 255, 208},
      {256, 512, 640},  {200, 264, 656},   {333, 77, 1040},   {1031, 1000, 1168},
      {64, 2112, 512},  {128, 7168, 1024}, {4096, 4096, 512}, {2048, 2112, 2048},
  };
  std::mt19937_64 rng(0x06C0FFEEull);
  auto uniform = [&](std::int64_t lo, std::int64_t hi) {
    return std::uniform_int_distribution<std::int64_t>(lo, hi)(rng);
  };
  for (int i = 0; i < 32; ++i) {
    Shape s;
    s.M = uniform(1, 4) == 1 ? uniform(1, 8) : uniform(1, 1500);
    s.N = uniform(1, 4) == 1 ? uniform(1, 8) : uniform(1, 1500);
    s.K = 16 * uniform(1, 100);
    shapes.push_back(s);
  }
  std::uint64_t seed = 61000;
  for (const auto& s : shapes) {
    INFO("shape " << name(s));
    CHECK(check(fp8gemm::ch06::gemm, s, seed++, "table, promoted"));
    CHECK(check(fp8gemm::ch06::gemm_fast, s, seed++, "table, fast"));
  }
}

TEST_CASE("ch06: promoted accumulation stays accurate on all-positive data at K = 65536",
          "[ch06][gpu]") {
  // e4m3 of U[0.5, 1]: every product positive, so the tensor cores' truncating accumulation
  // drifts low as K grows. Promotion every 128 K must hold the error at the bf16 level; the fast
  // mode's error must be visibly larger (proof that the data does exercise the effect).
  const auto promoted =
      fp8gemm::ch06::uniform_data_error(fp8gemm::ch06::gemm, 256, 256, 65536, 0.5f, 1.0f, 7);
  const auto fast =
      fp8gemm::ch06::uniform_data_error(fp8gemm::ch06::gemm_fast, 256, 256, 65536, 0.5f, 1.0f, 7);
  std::printf("  all-positive 256x256x65536: promoted %.2e (worst tile %.2e), fast %.2e\n",
              promoted.rel_frobenius, promoted.worst_tile, fast.rel_frobenius);
  CHECK(promoted.non_finite == 0);
  CHECK(promoted.rel_frobenius <= 2e-3);
  CHECK(promoted.worst_tile <= 2e-3);
  CHECK(fast.rel_frobenius >= 1e-2);
  // A cluster kernel with two promotion halves (128 x 256) at K = 16384.
  const auto cluster = fp8gemm::ch06::uniform_data_error(
      with_kernel("128x256_s4_c2x1_promoted_tma_b2", Accumulation::promoted), 512, 512, 16384,
      0.5f, 1.0f, 8);
  std::printf("  all-positive 512x512x16384, 128x256 c2x1 promoted: %.2e\n", cluster.rel_frobenius);
  CHECK(cluster.rel_frobenius <= 2e-3);
}

TEST_CASE("ch06: exact integer products", "[ch06][gpu]") {
  for (const Shape& s : {Shape{300, 520, 1040}, Shape{1, 8, 16}, Shape{513, 264, 4096}}) {
    for (const auto& k : {fp8gemm::PerTensorKernel(fp8gemm::ch06::gemm),
                          fp8gemm::PerTensorKernel(fp8gemm::ch06::gemm_fast)}) {
      fp8gemm::CheckOptions opt;
      opt.seed = 62000 + std::uint64_t(s.M);
      const auto r = fp8gemm::check_per_tensor_exact(k, s.M, s.N, s.K, opt);
      std::printf("  exact %-18s %s, %lld exact entries, %lld mismatches\n", name(s).c_str(),
                  r.describe().c_str(), static_cast<long long>(r.exact_elements),
                  static_cast<long long>(r.exact_mismatches));
      CHECK(r.exact_elements > 0);
      CHECK(r.ok());
    }
  }
}

TEST_CASE("ch06: 10-run bitwise determinism", "[ch06][gpu]") {
  CHECK(fp8gemm::check_deterministic(fp8gemm::ch06::gemm, 333, 520, 1040, 10, 77));
  CHECK(fp8gemm::check_deterministic(fp8gemm::ch06::gemm_fast, 333, 520, 1040, 10, 78));
  CHECK(fp8gemm::check_deterministic(fp8gemm::ch06::gemm, 2048, 2048, 2048, 10, 79));
  CHECK(fp8gemm::check_deterministic(fp8gemm::ch06::gemm_fast, 2048, 2048, 2048, 10, 80));
}

TEST_CASE("ch06: one CTA per tile (not persistent) computes the same", "[ch06][gpu]") {
  CHECK(check(with_kernel("128x256_s4_c1x1_fast_reg", Accumulation::fast, false),
              {1000, 1000, 1040}, 63000, "non-persistent, registers epilogue"));
  CHECK(check(with_kernel("128x256_s4_c2x1_promoted_tma_b2", Accumulation::promoted, false),
              {1000, 1000, 1040}, 63001, "non-persistent, cluster"));
}

TEST_CASE("ch06: max_sms limits the grid and the result stays right", "[ch06][gpu]") {
  for (int max_sms : {1, 2, 16}) {
    fp8gemm::CheckOptions opt;
    opt.seed = 64000 + std::uint64_t(max_sms);
    fp8gemm::CheckOperands ops(700, 900, 272, opt);
    fp8gemm::ch06::Options o;
    o.max_sms = max_sms;
    const fp8gemm::ch06::Plan plan(ops.gemm(), o);
    CHECK(plan.engine().grid_ctas() <= std::max(max_sms, plan.engine().kernel().cluster_size()));
    ops.poison_d(nullptr);
    plan.run(nullptr);
    FP8GEMM_CUDA_CHECK(cudaDeviceSynchronize());
    const auto r = ops.result();
    std::printf("  max_sms %2d: grid %d (%s): %s\n", max_sms, plan.engine().grid_ctas(),
                plan.engine().describe().c_str(), r.describe().c_str());
    CHECK(r.ok());
  }
  fp8gemm::CheckOperands ops(64, 64, 64, {});
  fp8gemm::ch06::Options o;
  o.max_sms = -1;
  CHECK_THROWS_AS(fp8gemm::ch06::Plan(ops.gemm(), o), std::invalid_argument);
}

TEST_CASE("ch06: one plan on several streams and threads", "[ch06][gpu]") {
  fp8gemm::CheckOptions opt;
  opt.seed = 65000;
  fp8gemm::CheckOperands ops(1000, 1024, 1040, opt);
  // The operands' uploads ran on the legacy stream, which the non-blocking streams below do not
  // wait for (a pageable cudaMemcpy may return before its copy lands): finish them first.
  FP8GEMM_CUDA_CHECK(cudaDeviceSynchronize());
  const fp8gemm::ch06::Plan plan(ops.gemm());
  cudaStream_t s1 = nullptr, s2 = nullptr;
  FP8GEMM_CUDA_CHECK(cudaStreamCreateWithFlags(&s1, cudaStreamNonBlocking));
  FP8GEMM_CUDA_CHECK(cudaStreamCreateWithFlags(&s2, cudaStreamNonBlocking));
  for (cudaStream_t s : {s1, s2}) {
    ops.poison_d(s);
    plan.run(s);
    FP8GEMM_CUDA_CHECK(cudaStreamSynchronize(s));
    CHECK(ops.result().ok());
  }
  // Two threads run the same plan on their own streams, one after the other on D.
  ops.poison_d(nullptr);
  FP8GEMM_CUDA_CHECK(cudaDeviceSynchronize());
  bool ok1 = false, ok2 = false;
  std::thread t1([&] {
    try {
      plan.run(s1);
      ok1 = cudaStreamSynchronize(s1) == cudaSuccess;
    } catch (...) {
    }
  });
  t1.join();
  // Thread 1's result, then D poisoned again, so that thread 2's run is checked on its own.
  CHECK(ops.result().ok());
  ops.poison_d(nullptr);
  FP8GEMM_CUDA_CHECK(cudaDeviceSynchronize());
  std::thread t2([&] {
    try {
      plan.run(s2);
      ok2 = cudaStreamSynchronize(s2) == cudaSuccess;
    } catch (...) {
    }
  });
  t2.join();
  CHECK(ok1);
  CHECK(ok2);
  CHECK(ops.result().ok());
  FP8GEMM_CUDA_CHECK(cudaStreamDestroy(s1));
  FP8GEMM_CUDA_CHECK(cudaStreamDestroy(s2));
}

TEST_CASE("ch06: the reliability rule (docs/contract.md)", "[ch06][gpu]") {
  // D at every byte offset 0 .. 15: odd offsets refused; even ones correct (not 16-byte aligned:
  // the table takes the registers epilogue).
  for (std::size_t off = 0; off < 16; ++off) {
    fp8gemm::CheckOptions opt;
    opt.seed = 66000 + off;
    opt.d_byte_offset = off;
    INFO("D offset " << off);
    if (off % 2 == 1) {
      CHECK_THROWS_AS(fp8gemm::check_per_tensor(fp8gemm::ch06::gemm, 200, 264, 656, opt),
                      std::invalid_argument);
    } else {
      const auto r = fp8gemm::check_per_tensor(fp8gemm::ch06::gemm, 200, 264, 656, opt);
      std::printf("  D offset %2zu: %s\n", off, r.describe().c_str());
      CHECK(r.ok());
    }
  }
  // Host memory for any operand: refused, naming it.
  fp8gemm::CheckOperands ops(256, 256, 256, {});
  std::vector<std::uint8_t> host(256 * 256);
  fp8gemm::PerTensorGemm g = ops.gemm();
  g.A = host.data();
  try {
    fp8gemm::ch06::gemm(g, nullptr);
    FAIL("a host pointer for A was accepted");
  } catch (const std::invalid_argument& e) {
    CHECK(std::string(e.what()).find("A = ") != std::string::npos);
  }
  // Managed memory works.
  fp8gemm::CheckOptions managed;
  managed.memory = fp8gemm::OperandMemory::managed;
  managed.seed = 66100;
  CHECK(fp8gemm::check_per_tensor(fp8gemm::ch06::gemm, 300, 264, 512, managed).ok());
  // Huge scales whose FP32 product overflows: an all-zero row of A gives zeros, not NaN.
  fp8gemm::CheckOptions big;
  big.seed = 66200;
  big.scale_a = 1e30f;
  big.scale_b = 1e10f;   // the FP32 product 1e40 overflows
  big.stddev = 0.01f;    // |acc| ~ 1e-3: |D| ~ 1e37, finite in bf16
  big.zero_row_a = 5;
  const auto r = fp8gemm::check_per_tensor(fp8gemm::ch06::gemm, 130, 264, 256, big);
  CHECK(r.ok());
  // No error left behind by any of the refused calls.
  CHECK(cudaPeekAtLastError() == cudaSuccess);
}

TEST_CASE("ch06: sampled_check on a strided call reads its rows where they are", "[ch06][gpu]") {
  // A (lda = K + 16), B (ldb = K + 32) and D (ldd = N + 8) with random e4m3 bytes in the operands'
  // row padding: a check that read rows K or N apart would compare wrong rows and fail. D's
  // padding holds a pattern that must be there afterwards (sampled_check poisons only the N
  // entries of each row). Before session 66 it refused strided calls.
  const std::int64_t M = 300, N = 264, K = 656, lda = K + 16, ldb = K + 32, ldd = N + 8;
  using fp8gemm::DeviceBuffer;
  DeviceBuffer<std::uint8_t> A(fp8gemm::random_e4m3(std::size_t(M * lda), 6601));
  DeviceBuffer<std::uint8_t> B(fp8gemm::random_e4m3(std::size_t(N * ldb), 6602));
  DeviceBuffer<std::uint16_t> D(std::vector<std::uint16_t>(std::size_t(M * ldd), 0x1234));
  DeviceBuffer<float> scales(std::vector<float>{0.5f, 2.0f});
  const fp8gemm::PerTensorGemm g{M,     N,           K,     A.data(), B.data(), D.data(),
                                 scales.data(), scales.data() + 1, lda, ldb, ldd};
  for (const Accumulation mode : {Accumulation::promoted, Accumulation::fast}) {
    fp8gemm::ch06::Options o;
    o.accumulation = mode;
    const auto r = fp8gemm::ch06::sampled_check(g, o, 16, 6603);
    std::printf("  strided sampled_check %-8s %s %s\n", fp8gemm::engine::to_string(mode),
                r.ok ? "ok  " : "FAIL", r.describe.c_str());
    CHECK(r.ok);
    const std::vector<std::uint16_t> d = D.download();
    std::int64_t padding_changed = 0;
    for (std::int64_t m = 0; m < M; ++m)
      for (std::int64_t n = N; n < ldd; ++n) padding_changed += d[std::size_t(m * ldd + n)] != 0x1234;
    CHECK(padding_changed == 0);
  }
}
