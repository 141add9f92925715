// GPU tests of row strides larger than the row through every library plan: lda > K, ldb > K and
// ldd > N (PerTensorPlan with bf16 or FP32 D, BlockScaledPlan with bf16 or FP32 D and split-K,
// GroupedPlan contiguous and masked, MxPlan on its three Hopper paths), and the weight gradient's
// ld_dD_t, ld_A_t > token_capacity and lddb > K (WeightGradPlan, FP32 with and without
// accumulate, bf16).
//
// The oracle: the same kernel on packed copies of the same operands, bit for bit (leading
// dimensions change addresses only, never the arithmetic), the packed run itself checked against
// float64 here. A's and B's row padding holds the e4m3 NaN code 0x7F, so that a kernel that
// read it (or used K as the stride) would turn entries of D NaN or wrong; D's holds a sentinel
// no kernel writes, and must hold it after the run, so that a store past a row's last column, or
// at a packed row's address, shows. Where ldd allows them, the plans' TMA-store kernels run (so
// both epilogues meet the strides).
#include <cmath>
#include <cstdint>
#include <cstring>
#include <ostream>
#include <random>
#include <string>
#include <vector>

#include "bs_check.hpp"  // ch07::DeviceOperands, sampled_check
#include "catch.hpp"
#include "common/cuda.hpp"
#include "common/reference.hpp"  // sample_rows
#include "fp8gemm/fp8gemm.hpp"
#include "grouped_check.hpp"  // ch08::GroupedOperands, run_and_check
#include "mx_emulate.hpp"     // ch09::random_operands, mx_call, reference_f64_rows
#include "row_reference.hpp"  // test::RowReference
#include "wgrad_check.hpp"    // ch08::WgradOperands, run_and_check_wgrad

using namespace fp8gemm;

namespace {

constexpr std::uint8_t kNanE4m3 = 0x7F;           // e4m3 NaN: the padding of A and B
constexpr std::uint16_t kSentinelBf16 = 0xABCD;   // -1.46e-12: D's padding (bf16)
constexpr std::uint16_t kPoisonBf16 = 0xFFFF;     // NaN: D's entries before the run
constexpr std::uint32_t kSentinelF32 = 0x7FC0ABCDu;  // a NaN with a payload: D's padding (float)

template <class T>
bool same_bits(const T& a, const T& b) {
  return std::memcmp(&a, &b, sizeof(T)) == 0;
}
template <class T>
bool same_bits(const std::vector<T>& a, const std::vector<T>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(T)) == 0;
}

/// rows x cols elements in a device buffer whose rows are `ld` apart; columns [cols, ld) of every
/// row hold `fill`.
template <class T>
struct Strided {
  std::int64_t rows, cols, ld;
  T fill;
  DeviceBuffer<T> buf;
  /// The rows from `body` (host, rows x cols packed).
  Strided(const std::vector<T>& body, std::int64_t rows_, std::int64_t cols_, std::int64_t ld_,
          T fill_)
      : rows(rows_), cols(cols_), ld(ld_), fill(fill_) {
    REQUIRE(std::int64_t(body.size()) == rows * cols);
    std::vector<T> host(std::size_t(rows * ld), fill);
    for (std::int64_t r = 0; r < rows; ++r)
      std::memcpy(&host[std::size_t(r * ld)], &body[std::size_t(r * cols)],
                  std::size_t(cols) * sizeof(T));
    buf = DeviceBuffer<T>(host);
  }
  /// The rows from `packed` (device, rows x cols packed).
  Strided(const DeviceBuffer<T>& packed, std::int64_t rows_, std::int64_t cols_, std::int64_t ld_,
          T fill_)
      : Strided(packed.download(), rows_, cols_, ld_, fill_) {}
  T* data() const { return buf.data(); }
  /// The rows x cols entries, packed (downloaded; synchronous), and in `padding_changed` how many
  /// padding entries are no longer `fill` (bitwise).
  std::vector<T> packed(std::int64_t& padding_changed) const {
    const std::vector<T> all = buf.download();
    std::vector<T> out(std::size_t(rows * cols));
    padding_changed = 0;
    for (std::int64_t r = 0; r < rows; ++r) {
      std::memcpy(&out[std::size_t(r * cols)], &all[std::size_t(r * ld)],
                  std::size_t(cols) * sizeof(T));
      for (std::int64_t c = cols; c < ld; ++c)
        padding_changed += !same_bits(all[std::size_t(r * ld + c)], fill);
    }
    return out;
  }
};

float f32_of_bits(std::uint32_t u) {
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

/// Runs `run` on the legacy stream, synchronises, and checks that `d` holds `want` bit for bit
/// with its padding untouched.
template <class T, class Run>
void check_strided_run(const Strided<T>& d, const std::vector<T>& want, Run&& run) {
  run();
  FP8GEMM_CUDA_CHECK(cudaDeviceSynchronize());
  std::int64_t padding_changed = -1;
  const std::vector<T> got = d.packed(padding_changed);
  CHECK(padding_changed == 0);
  CHECK(same_bits(got, want));
}

/// Runs `packed` into its bf16 D (poisoned first) and checks that against float64
/// (`reference`), then `strided` into Ds, which must then hold the same bits, its padding
/// untouched (check_strided_run).
template <class Plan>
void check_against_packed(const Plan& packed, const DeviceBuffer<std::uint16_t>& D,
                          const test::RowReference& reference, const Plan& strided,
                          const Strided<std::uint16_t>& Ds) {
  poison_bf16(D.data(), D.size());
  packed.run(nullptr);
  FP8GEMM_CUDA_CHECK(cudaDeviceSynchronize());
  const std::vector<std::uint16_t> want = D.download();
  CHECK(reference.check(want) == "");
  check_strided_run(Ds, want, [&] { strided.run(nullptr); });
}

/// The same for FP32 D accumulated into (its accuracy is checked elsewhere against float64: here
/// every entry finite), the strided D then holding the packed one's bits.
template <class Plan>
void check_f32_against_packed(const Plan& packed, const DeviceBuffer<float>& D, const Plan& strided,
                              const Strided<float>& Ds) {
  packed.run(nullptr);
  FP8GEMM_CUDA_CHECK(cudaDeviceSynchronize());
  const std::vector<float> want = D.download();
  bool finite = true;
  for (float x : want) finite = finite && std::isfinite(x);
  CHECK(finite);
  check_strided_run(Ds, want, [&] { strided.run(nullptr); });
}

bool has(const std::string& s, const std::string& w) { return s.find(w) != std::string::npos; }

/// Points a call (PerTensorGemm, BlockScaledGemm, GroupedGemm, MxGemm) at strided operands.
template <class Gemm, class TD>
void point_at(Gemm& g, const Strided<std::uint8_t>& A, const Strided<std::uint8_t>& B,
              const Strided<TD>& D) {
  g.A = A.data();
  g.lda = A.ld;
  g.B = B.data();
  g.ldb = B.ld;
  g.D = D.data();
  g.ldd = D.ld;
}

/// A dense call: M x N x K, and the padding of A's and B's rows (bytes, multiples of 16) and of
/// D's (elements).
struct DenseCase {
  std::int64_t M, N, K, pad_a, pad_b, pad_d;
};
std::ostream& operator<<(std::ostream& os, const DenseCase& c) {
  return os << c.M << "x" << c.N << "x" << c.K << ", lda = K + " << c.pad_a << ", ldb = K + "
            << c.pad_b << ", ldd = N + " << c.pad_d;
}

/// The library's per-tensor plan on strided copies of random operands against the same kernel on
/// the packed ones (checked against float64). `tma_where_ldd_allows`: also require the
/// TMA-store kernels exactly where ldd % 8 == 0 (the cases whose N is a multiple of 8).
void check_per_tensor(const DenseCase& c, Accumulation acc, std::uint64_t seed,
                      bool tma_where_ldd_allows) {
  const std::int64_t M = c.M, N = c.N, K = c.K;
  INFO(c << ", " << engine::to_string(acc));
  DeviceBuffer<std::uint8_t> A(std::size_t(M * K)), B(std::size_t(N * K));
  DeviceBuffer<std::uint16_t> D(std::size_t(M * N));
  DeviceBuffer<float> scales(std::vector<float>{0.75f, 0, 0, 0, 1.25f});
  test::RowReference reference;  // fills A and B with random codes
  reference.init(
      A, B, M, N, K, seed, [](std::int64_t, std::int64_t) { return 0.75; },
      [](std::int64_t, std::int64_t) { return 1.25; });
  const Strided<std::uint8_t> As(A, M, K, K + c.pad_a, kNanE4m3), Bs(B, N, K, K + c.pad_b, kNanE4m3);
  const Strided<std::uint16_t> Ds(std::vector<std::uint16_t>(std::size_t(M * N), kPoisonBf16), M, N,
                                  N + c.pad_d, kSentinelBf16);
  PerTensorGemm g{M, N, K, A.data(), B.data(), D.data(), scales.data(), scales.data() + 4};
  const PerTensorGemm packed_call = g;
  point_at(g, As, Bs, Ds);
  PerTensorOptions o;
  o.accumulation = acc;
  const PerTensorPlan strided(g, o);
  INFO(strided.describe());
  if (tma_where_ldd_allows)
    CHECK(engine::stores_by_tma(strided.kernel().epilogue) == (c.pad_d % 8 == 0));
  o.kernel = strided.kernel().name;
  check_against_packed(PerTensorPlan(packed_call, o), D, reference, strided, Ds);
}

/// The same for the block-scaled plan, bf16 D; `splits` >= 1: its split-K path.
void check_block_scaled(const DenseCase& c, std::uint64_t seed, bool tma_where_ldd_allows,
                        int splits = 0) {
  const std::int64_t M = c.M, N = c.N, K = c.K;
  INFO(c << (splits ? ", split-K S = " + std::to_string(splits) : std::string()));
  ch07::DeviceOperands ops(M, N, K, seed);
  const Strided<std::uint8_t> As(ops.A, M, K, K + c.pad_a, kNanE4m3),
      Bs(ops.B, N, K, K + c.pad_b, kNanE4m3);
  const Strided<std::uint16_t> Ds(std::vector<std::uint16_t>(std::size_t(M * N), kPoisonBf16), M, N,
                                  N + c.pad_d, kSentinelBf16);
  BlockScaledGemm g = ops.gemm();
  point_at(g, As, Bs, Ds);
  const BlockScaledPlan strided(g, BlockScaledOptions{.splits = splits});
  INFO(strided.describe());
  if (tma_where_ldd_allows && splits == 0)
    CHECK(engine::stores_by_tma(strided.kernel().epilogue) == (c.pad_d % 8 == 0));
  const ch07::Plan packed(ops.gemm(),
                          ch07::Options{.kernel = strided.kernel().name, .splits = splits});
  const ch07::SampledCheck r = ch07::sampled_check(ops, packed, 16, seed + 100);  // runs it
  INFO(r.describe);
  CHECK(r.ok);
  check_strided_run(Ds, ops.D.download(), [&] { strided.run(nullptr); });
}

// ldd = N + 8: a D the TMA-store kernels take; N + 3, N + 1, N + 5: the registers epilogue.
const DenseCase kFixedCases[] = {{300, 520, 1008, 16, 48, 8},
                                 {300, 520, 1008, 32, 16, 3},
                                 {129, 256, 640, 16, 16, 1},
                                 {128, 7168, 2048, 48, 32, 8},  // table shapes (small M)
                                 {64, 7168, 2048, 32, 48, 8},
                                 {1, 24, 16, 16, 16, 5}};

}  // namespace

TEST_CASE("strided: PerTensorPlan reads A and B at their strides, writes D's columns only",
          "[strided][gpu]") {
  std::uint64_t seed = 5700;
  for (Accumulation acc : {Accumulation::promoted, Accumulation::fast})
    for (const DenseCase& c : kFixedCases) check_per_tensor(c, acc, ++seed, true);

  SECTION("FP32 D with accumulate (PerTensorGemmF32)") {
    // The packed run's accuracy is test_library_gpu's (float64); here the strided one must give
    // its bits, at ldd = N + 4 (float rows 16-byte multiples: by TMA, as the packed D) and N + 1
    // (odd: from registers, single floats, against the packed D's TMA kernel, the same tile or
    // not: each element's sums are the same whatever the tile).
    const std::int64_t M = 200, N = 264, K = 1040;
    DeviceBuffer<std::uint8_t> A(std::size_t(M * K)), B(std::size_t(N * K));
    fill_random_e4m3(A.data(), A.size(), 5722, 1.0f);
    fill_random_e4m3(B.data(), B.size(), 5723, 1.0f);
    DeviceBuffer<float> scales(std::vector<float>{0.75f, 0, 0, 0, 1.25f});
    const Strided<std::uint8_t> As(A, M, K, K + 16, kNanE4m3), Bs(B, N, K, K + 32, kNanE4m3);
    std::mt19937_64 gen(5724);
    std::normal_distribution<float> nd(0.0f, 4.0f);
    std::vector<float> before(std::size_t(M * N));
    for (float& x : before) x = nd(gen);
    for (Accumulation acc : {Accumulation::promoted, Accumulation::fast})
      for (const std::int64_t pad : {4, 1}) {
        INFO("FP32 D += A.B, " << engine::to_string(acc) << ", ldd = N + " << pad);
        const Strided<float> Ds(before, M, N, N + pad, f32_of_bits(kSentinelF32));
        DeviceBuffer<float> D(before);
        PerTensorGemmF32 g{.M = M,
                           .N = N,
                           .K = K,
                           .A = A.data(),
                           .B = B.data(),
                           .D = D.data(),
                           .scale_a = scales.data(),
                           .scale_b = scales.data() + 4,
                           .accumulate = true};
        PerTensorGemmF32 gs = g;
        point_at(gs, As, Bs, Ds);
        PerTensorOptions o;
        o.accumulation = acc;
        const PerTensorPlan strided(gs, o);
        INFO(strided.describe());
        const PerTensorPlan packed(g, o);
        CHECK(packed.kernel().epilogue == engine::EpilogueKind::tma_store_f32);
        CHECK(strided.kernel().epilogue == (pad == 4 ? engine::EpilogueKind::tma_store_f32
                                                     : engine::EpilogueKind::registers_f32));
        // ldd % 4 == 0: the same kernel as packed D. Otherwise from registers, whose rule may
        // pick another tile (fast by TMA at this K: the ping-pong 128 x 128, by TMA only).
        if (pad == 4) CHECK(packed.kernel().name == strided.kernel().name);
        check_f32_against_packed(packed, D, strided, Ds);
      }
  }
}

TEST_CASE("strided: BlockScaledPlan reads A and B at their strides, writes D's columns only",
          "[strided][gpu]") {
  std::uint64_t seed = 5710;
  for (const DenseCase& c : kFixedCases) check_block_scaled(c, ++seed, true);
  // Split-K (opt-in, S = 3): its partial sums and reduction at ldd = N + 8 and N + 3.
  for (const std::int64_t pad : {8, 3}) check_block_scaled({200, 264, 1040, 16, 32, pad}, ++seed, true, 3);

  SECTION("FP32 D with accumulate") {
    const std::int64_t M = 200, N = 264, K = 1040;
    ch07::DeviceOperands ops(M, N, K, 5720);
    const Strided<std::uint8_t> As(ops.A, M, K, K + 16, kNanE4m3), Bs(ops.B, N, K, K + 32, kNanE4m3);
    std::mt19937_64 gen(5721);
    std::normal_distribution<float> nd(0.0f, 4.0f);
    std::vector<float> before(std::size_t(M * N));
    for (float& x : before) x = nd(gen);
    // ldd = N + 4: float rows 16-byte multiples; N + 1: odd.
    for (const std::int64_t pad : {4, 1}) {
      INFO("FP32 D += A.B, ldd = N + " << pad);
      const Strided<float> Ds(before, M, N, N + pad, f32_of_bits(kSentinelF32));
      DeviceBuffer<float> D(before);
      BlockScaledGemm g = ops.gemm();
      g.output = BlockScaledOutput::f32;
      g.accumulate = true;
      g.D = D.data();
      BlockScaledGemm gs = g;
      point_at(gs, As, Bs, Ds);
      const BlockScaledPlan strided(gs);
      INFO(strided.describe());
      const BlockScaledPlan packed(g, BlockScaledOptions{.kernel = strided.kernel().name});
      check_f32_against_packed(packed, D, strided, Ds);
    }
  }
}

TEST_CASE("strided: seeded random shapes and strides, per-tensor and block-scaled",
          "[strided][gpu]") {
  // M in [1, 700], N in [1, 700], K a multiple of 16 in [16, 2064], pads of A and B multiples of
  // 16 bytes in [0, 64], of D in [0, 9] (ldd kept off a multiple of 8 where N is not one, so
  // that the packed and the strided D can take the same epilogue). The per-tensor cases
  // alternate between the fast mode (whose error grows with K, chapter 6's README: within the
  // per-tensor tolerance on N(0, 1) data at these K, as chapter 6's tests check it) and promoted.
  std::mt19937_64 gen(5790);
  std::uniform_int_distribution<std::int64_t> mn(1, 700), k16(1, 129), pad16(0, 4), padd(0, 9);
  for (int i = 0; i < 12; ++i) {
    DenseCase c{mn(gen), mn(gen), 16 * k16(gen), 0, 0, 0};
    c.pad_a = 16 * pad16(gen);
    c.pad_b = 16 * pad16(gen);
    c.pad_d = padd(gen);
    if (c.N % 8 != 0 && (c.N + c.pad_d) % 8 == 0) ++c.pad_d;
    INFO("case " << i);
    if (i % 2 == 0)
      check_block_scaled(c, 5791 + std::uint64_t(i), false);
    else
      check_per_tensor(c, i % 4 == 1 ? Accumulation::promoted : Accumulation::fast,
                       5791 + std::uint64_t(i), false);
  }
}

TEST_CASE("strided: GroupedPlan, contiguous and masked, reads and writes at the strides",
          "[strided][gpu]") {
  ch08::GroupedShape contiguous;
  contiguous.name = "strided_contiguous";
  contiguous.layout = ch08::Layout::contiguous;
  contiguous.rows = {0, 1, 127, 129, 200};
  contiguous.N = 264;
  contiguous.K = 656;  // a partial last K block
  ch08::GroupedShape masked = contiguous;
  masked.name = "strided_masked";
  masked.layout = ch08::Layout::masked;
  masked.rows = {200, 0, 77, 129};
  masked.m_max = 200;
  std::uint64_t seed = 5730;
  for (const ch08::GroupedShape& shape : {contiguous, masked})
    for (const std::int64_t pad_d : {8, 1}) {
      const std::int64_t rows = shape.all_rows(), N = shape.N, K = shape.K;
      INFO(shape.name << ", lda = K + 16, ldb = K + 32, ldd = N + " << pad_d);
      ch08::GroupedOperands ops(shape, ++seed);
      const Strided<std::uint8_t> As(ops.A, rows, K, K + 16, kNanE4m3),
          Bs(ops.B, std::int64_t(shape.groups()) * N, K, K + 32, kNanE4m3);
      const Strided<std::uint16_t> Ds(std::vector<std::uint16_t>(std::size_t(rows * N), kPoisonBf16),
                                      rows, N, N + pad_d, kSentinelBf16);
      GroupedGemm g = ops.gemm();
      point_at(g, As, Bs, Ds);
      const GroupedPlan strided(g);
      const ch08::Plan probe(g);  // the library's grouped plan runs the chapter's default
      const std::string kernel = probe.kernel().name;
      INFO(strided.describe());
      CHECK(has(strided.describe(), kernel));
      CHECK(engine::stores_by_tma(probe.kernel().epilogue) == (pad_d % 8 == 0));
      ch08::Options o;
      o.kernel = kernel;
      const ch08::Plan packed(ops.gemm(), o);
      const ch08::GroupedCheck r =
          ch08::run_and_check(ops, shape, [&](cudaStream_t s) { packed.run(s); }, 0, seed);
      INFO(r.describe);
      CHECK(r.ok);
      // Rows outside every group (a masked group's padding) hold the poison in both.
      check_strided_run(Ds, ops.D.download(), [&] { strided.run(nullptr); });
    }

  SECTION("the counter schedule") {
    ch08::GroupedOperands ops(contiguous, 5740);
    const std::int64_t rows = contiguous.all_rows(), N = contiguous.N, K = contiguous.K;
    const Strided<std::uint8_t> As(ops.A, rows, K, K + 48, kNanE4m3),
        Bs(ops.B, std::int64_t(contiguous.groups()) * N, K, K + 16, kNanE4m3);
    const Strided<std::uint16_t> Ds(std::vector<std::uint16_t>(std::size_t(rows * N), kPoisonBf16),
                                    rows, N, N + 8, kSentinelBf16);
    GroupedGemm g = ops.gemm();
    point_at(g, As, Bs, Ds);
    GroupedOptions o;
    o.counter_schedule = true;
    const GroupedPlan strided(g, o);
    INFO(strided.describe());
    CHECK(strided.takes_tile_counter());
    const ch08::Plan packed(ops.gemm(), o);
    const DeviceBuffer<int> counter = ch08::make_tile_counter();
    const ch08::GroupedCheck r = ch08::run_and_check(
        ops, contiguous, [&](cudaStream_t s) { packed.run(s, counter.data()); }, 0, 5741);
    INFO(r.describe);
    CHECK(r.ok);
    check_strided_run(Ds, ops.D.download(), [&] { strided.run(nullptr, counter.data()); });
  }
}

TEST_CASE("strided: WeightGradPlan reads dD^T and A^T at their strides, writes dB's columns only",
          "[strided][gpu]") {
  ch08::WgradShape shape;
  shape.name = "strided_wgrad";
  shape.counts = {0, 130, 1, 255};  // an empty expert, counts not multiples of 128
  shape.N = 200;
  shape.K = 264;
  ch08::WgradOperands ops(shape, 5750);
  const std::int64_t N = shape.N, K = shape.K, cap = ops.capacity, G = shape.groups();
  const Strided<std::uint8_t> dDs(ops.dD_t, N, cap, cap + 32, kNanE4m3),
      As(ops.A_t, K, cap, cap + 16, kNanE4m3);
  const auto strided_operands = [&](WeightGradGemm g) {
    g.dD_t = dDs.data();
    g.ld_dD_t = dDs.ld;
    g.A_t = As.data();
    g.ld_A_t = As.ld;
    return g;
  };
  std::mt19937_64 gen(5751);
  std::normal_distribution<float> nd(0.0f, 4.0f);
  std::vector<float> before(std::size_t(G * N * K));
  for (float& x : before) x = nd(gen);

  // FP32 dB: lddb = K + 4 (TMA stores), K + 1 (registers); written, then accumulated.
  for (const std::int64_t pad : {4, 1})
    for (const bool accumulate : {false, true}) {
      INFO("FP32 dB, lddb = K + " << pad << (accumulate ? ", accumulate" : ""));
      const Strided<float> dBs(accumulate ? before
                                          : std::vector<float>(before.size(), std::nanf("")),
                               G * N, K, K + pad, f32_of_bits(kSentinelF32));
      WeightGradGemm g = strided_operands(ops.gemm(accumulate));
      g.dB = dBs.data();
      g.lddb = dBs.ld;
      const WeightGradPlan strided(g);
      const ch08::WeightGradPlan probe(g);
      INFO(strided.describe());
      CHECK(engine::stores_by_tma(probe.kernel().epilogue) == (pad % 4 == 0));
      const ch08::WeightGradPlan packed(ops.gemm(accumulate),
                                        ch08::WeightGradOptions{.kernel = probe.kernel().name});
      if (accumulate) {
        ops.dB.upload(before);
        packed.run(nullptr);
        FP8GEMM_CUDA_CHECK(cudaDeviceSynchronize());
      } else {
        const ch08::WgradCheck r =
            ch08::run_and_check_wgrad(ops, [&](cudaStream_t s) { packed.run(s); }, 16, 5752);
        INFO(r.describe);
        CHECK(r.ok);
      }
      check_strided_run(dBs, ops.dB.download(), [&] { strided.run(nullptr); });
    }
  // bf16 dB: lddb = K + 8 (TMA stores), K + 3 (registers).
  for (const std::int64_t pad : {8, 3}) {
    INFO("bf16 dB, lddb = K + " << pad);
    const Strided<std::uint16_t> dBs(std::vector<std::uint16_t>(std::size_t(G * N * K), kPoisonBf16),
                                     G * N, K, K + pad, kSentinelBf16);
    WeightGradGemm g = strided_operands(ops.gemm(false, WeightGradOutput::bf16));
    g.dB = dBs.data();
    g.lddb = dBs.ld;
    const WeightGradPlan strided(g);
    const ch08::WeightGradPlan probe(g);
    INFO(strided.describe());
    CHECK(engine::stores_by_tma(probe.kernel().epilogue) == (pad % 8 == 0));
    const ch08::WeightGradPlan packed(ops.gemm(false, WeightGradOutput::bf16),
                                      ch08::WeightGradOptions{.kernel = probe.kernel().name});
    const ch08::WgradCheck r = ch08::run_and_check_wgrad(
        ops, [&](cudaStream_t s) { packed.run(s); }, 16, 5753, WeightGradOutput::bf16);
    INFO(r.describe);
    CHECK(r.ok);
    check_strided_run(dBs, ops.dB_bf16.download(), [&] { strided.run(nullptr); });
  }
}

TEST_CASE("strided: MxPlan's three Hopper paths read A and B at their strides", "[strided][gpu]") {
  struct Case {
    std::int64_t M, N, K, pad_d;
  };
  const Case cases[] = {{300, 520, 992, 8}, {129, 256, 640, 3}};
  for (const Case& c : cases) {
    const std::int64_t M = c.M, N = c.N, K = c.K;
    const ch09::MxOperands host = ch09::random_operands(M, N, K, 5760 + std::uint64_t(M));
    DeviceBuffer<std::uint8_t> A(host.A), B(host.B), sa(host.sa), sb(host.sb);
    DeviceBuffer<std::uint16_t> D(std::size_t(M * N));
    const Strided<std::uint8_t> As(host.A, M, K, K + 16, kNanE4m3), Bs(host.B, N, K, K + 48, kNanE4m3);
    const std::vector<std::int64_t> rows = sample_rows(M, 16, 5770 + std::uint64_t(M));
    const test::RowReference reference =
        test::RowReference::of_rows(N, rows, ch09::reference_f64_rows(host, rows), K);
    for (int path = 0; path < 3; ++path) {
      INFO(M << "x" << N << "x" << K << ", lda = K + 16, ldb = K + 48, ldd = N + " << c.pad_d
              << ", path " << path);
      MxOptions o;
      o.hopper_dequantize_bf16 = path == 1;
      o.hopper_requantize_block_scaled = path == 2;
      const Strided<std::uint16_t> Ds(std::vector<std::uint16_t>(std::size_t(M * N), kPoisonBf16),
                                      M, N, N + c.pad_d, kSentinelBf16);
      MxGemm g = ch09::mx_call(host, A.data(), B.data(), sa.data(), sb.data(), D.data());
      point_at(g, As, Bs, Ds);
      const MxPlan strided(g, o);
      INFO(strided.describe());
      o.kernel = strided.choice().kernel;
      // The packed run against the MX definition in float64 (the bf16 path exactly so; the
      // re-quantising path is not exact, but random_operands' 13 binades lose nothing it would
      // show: chapter 9's test).
      check_against_packed(
          MxPlan(ch09::mx_call(host, A.data(), B.data(), sa.data(), sb.data(), D.data()), o), D,
          reference, strided, Ds);
    }
  }
}
