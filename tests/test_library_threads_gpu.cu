// GPU tests of the library's plans across host threads and streams (fp8gemm.hpp, "Threads,
// streams and devices"), for each kind of plan: per-tensor (PerTensorPlan), block-scaled
// (BlockScaledPlan), grouped contiguous (GroupedPlan) and MXFP8 on Hopper (MxPlan).
//
// Per kind, first a single-threaded run on the legacy stream: its D is checked against the
// float64 reference of the dequantised operands (sampled rows; the chapters' tolerances) and is
// the bit pattern every other run must reproduce. Then, every D poisoned (NaN) first:
//   (a) one plan, 4 host threads at once, each on its own stream with its own output and its
//       own B scales (thread t's are the others' times 2^t, so its D must be the reference D
//       times 2^t, bit for bit: a launch that ran with another thread's operands shows): each
//       thread, 3 times, takes the plan's lock, rebind()s it to its call and run()s it, then
//       synchronises its stream (the PyTorch ops' plan cache does this);
//   (a') one plan, run() from 4 threads at once with no lock at all (run() is const and
//       thread-safe), 3 times each on the thread's stream; every run writes the plan's D, so each
//       thread then copies D into its own output on its own stream (after its own runs, so what
//       it copies was written at least once; every run writes the same bits);
//   (a'') 4 threads build a plan each at once (construction is thread-safe), each on its own
//       output, and run it on their own stream;
//   (b) one plan on 2 streams with different D buffers: stream 1 held by a 20 ms GPU delay,
//       rebind(D1) + run(stream 1), rebind(D2) + run(stream 2): stream 1's launch executes after
//       the plan was re-pointed at D2, so D1 is right only if a launch keeps the pointers it was
//       launched with.
// Every output: against the float64 reference and bit for bit the single-threaded D. Then the
// refusals of rebind() and that a refused rebind leaves the plan as it was. Last, devices (session
// 56): every kind of plan, on every run() path, runs with its own device current; with two GPUs
// ([other-device], CTest's test_library_other_device), run() and rebind() with device 1 current
// are refused before anything is launched.
#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdio>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <random>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "catch.hpp"
#include "common/check.hpp"
#include "common/cuda.hpp"
#include "common/fp8.hpp"
#include "common/reference.hpp"
#include "fp8gemm/fp8gemm.hpp"
#include "grouped_check.hpp"  // ch08::GroupedOperands, check_grouped
#include "wgrad_check.hpp"    // ch08::WgradOperands
#include "mx_emulate.hpp"     // ch09::random_operands, mx_call, reference_f64_rows
#include "refusal.hpp"
#include "row_reference.hpp"  // RowReference

using namespace fp8gemm;
using test::has;
using test::RowReference;

namespace {

constexpr int kThreads = 4;
constexpr int kRunsPerThread = 3;

using Bf16 = std::vector<std::uint16_t>;

/// Runs `body(t)` on kThreads threads that start together (a spin barrier), each with the
/// calling thread's device current; returns the messages of the exceptions they threw (Catch2's
/// assertions are not thread-safe, so the threads only record).
std::vector<std::string> on_threads(const std::function<void(int)>& body) {
  int device = 0;
  FP8GEMM_CUDA_CHECK(cudaGetDevice(&device));
  std::atomic<int> ready{0};
  std::vector<std::string> errors(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([&, t] {
      try {
        FP8GEMM_CUDA_CHECK(cudaSetDevice(device));
        ready.fetch_add(1);
        while (ready.load() < kThreads) std::this_thread::yield();
        body(t);
      } catch (const std::exception& e) {
        errors[std::size_t(t)] = e.what();
      }
    });
  for (auto& th : threads) th.join();
  std::vector<std::string> failed;
  for (int t = 0; t < kThreads; ++t)
    if (!errors[std::size_t(t)].empty())
      failed.push_back("thread " + std::to_string(t) + ": " + errors[std::size_t(t)]);
  return failed;
}

/// kThreads non-blocking streams (they do not wait for the legacy stream or each other).
struct Streams {
  std::vector<cudaStream_t> s;
  explicit Streams(int n) : s(std::size_t(n), nullptr) {
    for (auto& x : s) FP8GEMM_CUDA_CHECK(cudaStreamCreateWithFlags(&x, cudaStreamNonBlocking));
  }
  ~Streams() {
    for (auto x : s) cudaStreamDestroy(x);
  }
  cudaStream_t operator[](int i) const { return s[std::size_t(i)]; }
};

/// No entry of d is still the poison (0xFFFF, poison_bf16's NaN): every entry was written.
bool all_written(const Bf16& d) {
  return std::none_of(d.begin(), d.end(), [](std::uint16_t v) { return v == 0xFFFF; });
}

/// d x 2^t, exactly: every element's exponent moved by t (t may be negative). The runs this
/// compares scale one operand's scales by 2^t, which scales every FP32 sum by 2^t before its one
/// rounding to bf16, so their D is the reference D times 2^t where that D is normal or zero
/// (throws otherwise: a subnormal or overflowing element would not scale exactly).
Bf16 times_pow2(const Bf16& d, int t) {
  Bf16 out = d;
  for (auto& x : out) {
    const int e = (x >> 7) & 0xFF;
    if (e == 0 && (x & 0x7F) == 0) continue;  // +-0
    if (e == 0 || e == 0xFF || e + t <= 0 || e + t >= 0xFF)
      throw std::logic_error("times_pow2: an element that 2^t does not scale exactly");
    x = std::uint16_t(x + t * 128);
  }
  return out;
}

// ---- the four kinds: operands, the call on a given D (and the B scales of thread t: the
// ---- others' times 2^t), the reference check ----

/// Block-scaled (chapter 7's call): A 1 x 128 scales mn-major TMA-aligned, B 128 x 128 padded.
struct BlockScaledKind {
  using Plan = BlockScaledPlan;
  static constexpr const char* kName = "BlockScaledPlan";
  std::int64_t M = 256, N = 2112, K = 1536;
  DeviceBuffer<std::uint8_t> A, B;
  DeviceBuffer<float> sa;
  std::vector<DeviceBuffer<float>> sb;  // [t]: scale_b x 2^t
  RowReference reference;
  BlockScaledKind() : A(std::size_t(M * K)), B(std::size_t(N * K)) {
    const GroupScaleLayout la = GroupScaleLayout::mn_major_tma_aligned(M);
    const BlockScaleLayout lb = BlockScaleLayout::padded(K);
    std::mt19937_64 rng(4100);
    std::uniform_real_distribution<float> e(-4.0f, 4.0f);
    std::vector<float> hsa(std::size_t(ceil_div(K, 128) * la.ld)),
        hsb(std::size_t(ceil_div(N, 128) * lb.ld));
    for (auto& x : hsa) x = std::exp2(e(rng));
    for (auto& x : hsb) x = std::exp2(e(rng));
    sa = DeviceBuffer<float>(hsa);
    for (int t = 0; t < kThreads; ++t) {
      std::vector<float> scaled = hsb;
      for (auto& x : scaled) x = std::ldexp(x, t);
      sb.emplace_back(scaled);
    }
    reference.init(
        A, B, M, N, K, 4100,
        [&](std::int64_t r, std::int64_t k) {
          return double(hsa[std::size_t(la.offset(r, k / 128))]);
        },
        [&](std::int64_t n, std::int64_t k) {
          return double(hsb[std::size_t(lb.offset(n / 128, k / 128))]);
        });
  }
  std::size_t d_elems() const { return std::size_t(M * N); }
  BlockScaledGemm call(std::uint16_t* D, int t = 0) const {
    return {.M = M,
            .N = N,
            .K = K,
            .A = A.data(),
            .B = B.data(),
            .scale_a = sa.data(),
            .scale_a_layout = GroupScaleLayout::mn_major_tma_aligned(M),
            .scale_b = sb[std::size_t(t)].data(),
            .scale_b_layout = BlockScaleLayout::padded(K),
            .D = D};
  }
  std::string check(const Bf16& d) const { return reference.check(d); }
};

/// Per-tensor (chapter 6's call): scale_a 0.75, scale_b 1.25 on the device.
struct PerTensorKind {
  using Plan = PerTensorPlan;
  static constexpr const char* kName = "PerTensorPlan";
  std::int64_t M = 384, N = 1536, K = 2048;
  DeviceBuffer<std::uint8_t> A, B;
  std::vector<DeviceBuffer<float>> scales;  // [t]: scale_a at 0, scale_b x 2^t at 4
  RowReference reference;
  PerTensorKind() : A(std::size_t(M * K)), B(std::size_t(N * K)) {
    for (int t = 0; t < kThreads; ++t)
      scales.emplace_back(std::vector<float>{0.75f, 0, 0, 0, std::ldexp(1.25f, t)});
    reference.init(
        A, B, M, N, K, 4200, [](std::int64_t, std::int64_t) { return 0.75; },
        [](std::int64_t, std::int64_t) { return 1.25; });
  }
  std::size_t d_elems() const { return std::size_t(M * N); }
  PerTensorGemm call(std::uint16_t* D, int t = 0) const {
    const float* s = scales[std::size_t(t)].data();
    return {M, N, K, A.data(), B.data(), D, s, s + 4};
  }
  std::string check(const Bf16& d) const { return reference.check(d); }
};

/// Grouped contiguous (chapter 8's call): 4 experts of 128, 0, 300 and 77 rows; checked group by
/// group by chapter 8's check_grouped (it reads the operands' own D: a result is copied there).
struct GroupedKind {
  using Plan = GroupedPlan;
  static constexpr const char* kName = "GroupedPlan";
  ch08::GroupedShape shape;
  std::unique_ptr<ch08::GroupedOperands> ops;
  std::vector<DeviceBuffer<float>> sb;  // [t]: the operands' scale_b x 2^t
  GroupedKind() {
    shape.name = "threads_contiguous";
    shape.layout = ch08::Layout::contiguous;
    shape.rows = {128, 0, 300, 77};
    shape.N = 1024;
    shape.K = 1536;
    ops = std::make_unique<ch08::GroupedOperands>(shape, 4300);
    const std::vector<float> hsb = ops->scale_b.download();
    for (int t = 0; t < kThreads; ++t) {
      std::vector<float> scaled = hsb;
      for (auto& x : scaled) x = std::ldexp(x, t);
      sb.emplace_back(scaled);
    }
  }
  std::size_t d_elems() const { return ops->D.size(); }
  GroupedGemm call(std::uint16_t* D, int t = 0) const {
    GroupedGemm g = ops->gemm();
    g.D = D;
    g.scale_b = sb[std::size_t(t)].data();
    return g;
  }
  std::string check(const Bf16& d) const {
    FP8GEMM_CUDA_CHECK(cudaMemcpy(ops->D.data(), d.data(), ops->D.bytes(), cudaMemcpyHostToDevice));
    const ch08::GroupedCheck c = ch08::check_grouped(*ops, shape, 16, 4301);
    return c.ok ? "" : "float64 check failed: " + c.describe;
  }
};

/// A GroupedPlan with the counter schedule (GroupedOptions::counter_schedule) run the way the
/// PyTorch op runs it: each stream its own tile counter (zeroed once, left zero by every run).
class CounterGroupedPlan {
 public:
  explicit CounterGroupedPlan(const GroupedGemm& g) : plan_(g, options()) {
    // The call picks the counter kernel (128 x 256). Thrown, not REQUIREd: plans are also built
    // on the worker threads, where Catch2's assertions are not safe (on_threads reports it).
    if (!plan_.takes_tile_counter())
      throw std::logic_error("CounterGroupedPlan: the plan took no counter: " + plan_.describe());
  }
  void run(cudaStream_t stream) const { plan_.run(stream, counter_for(stream)); }
  void rebind(const GroupedGemm& g) { plan_.rebind(g); }
  std::string describe() const { return plan_.describe(); }

 private:
  static GroupedOptions options() {
    GroupedOptions o;
    o.counter_schedule = true;
    return o;
  }
  int* counter_for(cudaStream_t stream) const {
    const std::lock_guard<std::mutex> hold(lock_);
    DeviceBuffer<int>& c = counters_[stream];
    if (c.size() == 0) c = ch08::make_tile_counter();
    return c.data();
  }
  GroupedPlan plan_;
  mutable std::mutex lock_;
  mutable std::map<cudaStream_t, DeviceBuffer<int>> counters_;
};

/// Grouped contiguous on the counter schedule: GroupedKind's call and check, CounterGroupedPlan.
struct GroupedCounterKind : GroupedKind {
  using Plan = CounterGroupedPlan;
  static constexpr const char* kName = "GroupedPlan (counter schedule)";
};

/// MXFP8 on Hopper (chapter 9's call): random e4m3 codes and UE8M0 exponents, the definition in
/// float64 on sampled rows, chapter 9's criterion (relative Frobenius error < 4e-3).
struct MxKind {
  using Plan = MxPlan;
  static constexpr const char* kName = "MxPlan";
  ch09::MxOperands host;
  DeviceBuffer<std::uint8_t> A, B, sa;
  std::vector<DeviceBuffer<std::uint8_t>> sb;  // [t]: B's UE8M0 exponents + t (the padding's 0s kept)
  std::vector<std::int64_t> rows;
  std::vector<double> ref;
  MxKind()
      : host(ch09::random_operands(256, 1536, 1024, 4400)),
        A(host.A),
        B(host.B),
        sa(host.sa),
        rows(sample_rows(256, 24, 4401)),
        ref(ch09::reference_f64_rows(host, rows)) {
    for (int t = 0; t < kThreads; ++t) {
      std::vector<std::uint8_t> scaled = host.sb;
      for (auto& x : scaled)
        if (x != 0) x = std::uint8_t(x + t);  // random_operands' exponents are 127 +- 6
      sb.emplace_back(scaled);
    }
  }
  std::size_t d_elems() const { return std::size_t(host.M * host.N); }
  MxGemm call(std::uint16_t* D, int t = 0) const {
    return ch09::mx_call(host, A.data(), B.data(), sa.data(), sb[std::size_t(t)].data(), D);
  }
  std::string check(const Bf16& d) const {
    std::vector<double> got(rows.size() * std::size_t(host.N));
    for (std::size_t i = 0; i < rows.size(); ++i)
      for (std::int64_t n = 0; n < host.N; ++n)
        got[i * std::size_t(host.N) + std::size_t(n)] =
            double(bf16_to_float(d[std::size_t(rows[i] * host.N + n)]));
    const double rel = ch09::relative_frobenius(got, ref);
    return rel < 4e-3 ? "" : "float64 check failed: rel " + std::to_string(rel);
  }
};

/// What one output must be: the single-threaded D, bit for bit, and within the float64 check.
template <class Kind>
void check_output(const Kind& kind, const Bf16& expected, const Bf16& got,
                  const std::string& what) {
  INFO(std::string(Kind::kName) + ", " + what);
  CHECK(kind.check(got) == "");
  CHECK(got == expected);
}

template <class Kind>
void threads_and_streams(Kind& kind) {
  using Plan = typename Kind::Plan;
  const std::size_t n = kind.d_elems();

  // The single-threaded run: the reference bits.
  DeviceBuffer<std::uint16_t> d0(n);
  Plan plan(kind.call(d0.data()));
  INFO(std::string(Kind::kName) + ": " + plan.describe());
  poison_bf16(d0.data(), n);
  plan.run(nullptr);
  FP8GEMM_CUDA_CHECK(cudaDeviceSynchronize());
  const Bf16 expected = d0.download();
  REQUIRE(kind.check(expected) == "");
  // kind.check samples rows; every other run is compared with `expected` bit for bit, so an
  // entry left at the poison in all of them would pass unless `expected` has none.
  REQUIRE(all_written(expected));

  Streams streams(kThreads);
  std::vector<DeviceBuffer<std::uint16_t>> out;
  for (int t = 0; t < kThreads; ++t) out.emplace_back(n);
  auto poison_all = [&] {
    for (auto& d : out) poison_bf16(d.data(), n);
    FP8GEMM_CUDA_CHECK(cudaDeviceSynchronize());
  };
  // No thread threw, and every thread's output is the expected one.
  auto check_threads = [&](const std::vector<std::string>& errors, const std::string& what) {
    CHECK(errors.empty());
    for (const auto& e : errors) UNSCOPED_INFO(e);
    for (int t = 0; t < kThreads; ++t)
      check_output(kind, expected, out[std::size_t(t)].download(),
                   what + ", thread " + std::to_string(t));
  };

  // (a) one plan, 4 threads, each its own stream, output and B scales (x 2^t): rebind + run
  // under the plan's lock. Thread t's D must be the reference D times 2^t, bit for bit.
  poison_all();
  std::mutex lock;
  {
    const auto errors = on_threads([&](int t) {
      for (int r = 0; r < kRunsPerThread; ++r) {
        std::lock_guard<std::mutex> hold(lock);
        plan.rebind(kind.call(out[std::size_t(t)].data(), t));
        plan.run(streams[t]);
      }
      FP8GEMM_CUDA_CHECK(cudaStreamSynchronize(streams[t]));
    });
    CHECK(errors.empty());
    for (const auto& e : errors) UNSCOPED_INFO(e);
    for (int t = 0; t < kThreads; ++t) {
      const Bf16 got = out[std::size_t(t)].download();
      INFO(std::string(Kind::kName) + ", (a) shared plan, rebind + run under a lock, thread " +
           std::to_string(t) + " (B scales x 2^" + std::to_string(t) + ")");
      REQUIRE_NOTHROW(times_pow2(expected, t));  // the reference scales exactly
      CHECK(got == times_pow2(expected, t));
    }
  }

  // (a') one plan's run() from 4 threads at once, no lock; each thread copies the plan's D.
  plan.rebind(kind.call(d0.data()));
  poison_bf16(d0.data(), n);
  poison_all();
  check_threads(on_threads([&](int t) {
                  for (int r = 0; r < kRunsPerThread; ++r) plan.run(streams[t]);
                  FP8GEMM_CUDA_CHECK(cudaMemcpyAsync(out[std::size_t(t)].data(), d0.data(), n * 2,
                                                     cudaMemcpyDeviceToDevice, streams[t]));
                  FP8GEMM_CUDA_CHECK(cudaStreamSynchronize(streams[t]));
                }),
                "(a') concurrent run() of one plan, no lock");
  check_output(kind, expected, d0.download(), "(a') the plan's own D");

  // (a'') 4 threads build their own plans at once and run them on their own streams.
  poison_all();
  check_threads(on_threads([&](int t) {
                  Plan own(kind.call(out[std::size_t(t)].data()));
                  for (int r = 0; r < kRunsPerThread; ++r) own.run(streams[t]);
                  FP8GEMM_CUDA_CHECK(cudaStreamSynchronize(streams[t]));
                }),
                "(a'') a plan per thread, built at once");

  // (b) one plan on 2 streams with different D buffers; stream 0's launch runs after the rebind
  // to D2 (it waits behind a 20 ms GPU delay), so it must keep the D it was launched with.
  poison_all();
  gpu_delay(20000, streams[0]);
  plan.rebind(kind.call(out[0].data()));
  plan.run(streams[0]);
  plan.rebind(kind.call(out[1].data()));
  plan.run(streams[1]);
  FP8GEMM_CUDA_CHECK(cudaStreamSynchronize(streams[1]));
  FP8GEMM_CUDA_CHECK(cudaStreamSynchronize(streams[0]));
  check_output(kind, expected, out[0].download(), "(b) stream 1 (delayed), D1");
  check_output(kind, expected, out[1].download(), "(b) stream 2, D2");
  FP8GEMM_CUDA_CHECK(cudaGetLastError());
}

}  // namespace

TEST_CASE("library threads: BlockScaledPlan across 4 threads and 2 streams", "[library][gpu]") {
  BlockScaledKind kind;
  threads_and_streams(kind);
}

TEST_CASE("library threads: PerTensorPlan across 4 threads and 2 streams", "[library][gpu]") {
  PerTensorKind kind;
  threads_and_streams(kind);
}

TEST_CASE("library threads: GroupedPlan (contiguous) across 4 threads and 2 streams",
          "[library][gpu]") {
  GroupedKind kind;
  threads_and_streams(kind);
}

TEST_CASE("library threads: GroupedPlan on the counter schedule across 4 threads and 2 streams",
          "[library][gpu]") {
  // One plan run from 4 threads at once, each stream with its own counter: the counter kernel's
  // tiles drawn per run, every output the single-threaded one bit for bit.
  GroupedCounterKind kind;
  threads_and_streams(kind);
}

TEST_CASE("library threads: MxPlan (Hopper) across 4 threads and 2 streams", "[library][gpu]") {
  MxKind kind;
  threads_and_streams(kind);
}

TEST_CASE("library rebind: refusals name the argument and leave the plan as it was",
          "[library][gpu]") {
  BlockScaledKind kind;
  const std::size_t n = kind.d_elems();
  DeviceBuffer<std::uint16_t> d0(n), d1(n + 8);
  BlockScaledPlan plan(kind.call(d0.data()));
  std::vector<std::uint16_t> host_d(n);

  std::string r = test::refusal_of([&] {
    BlockScaledGemm g = kind.call(d1.data());
    g.N = kind.N - 128;
    plan.rebind(g);
  });
  CHECK(has(r, "rebind: N = 1984 differs from the plan's N = 2112"));
  r = test::refusal_of([&] {
    BlockScaledGemm g = kind.call(d1.data());
    g.ldd = kind.N + 8;
    plan.rebind(g);
  });
  CHECK(has(r, "rebind: ldd = 2120 differs"));
  r = test::refusal_of([&] {
    BlockScaledGemm g = kind.call(d1.data());
    g.scale_b_layout = BlockScaleLayout{g.scale_b_layout.ld + 4};
    plan.rebind(g);
  });
  CHECK(has(r, "rebind: scale_b_layout differs"));
  r = test::refusal_of([&] { plan.rebind(kind.call(nullptr)); });
  CHECK(has(r, "D"));
  CHECK(has(r, "null"));
  r = test::refusal_of([&] { plan.rebind(kind.call(host_d.data())); });
  CHECK(has(r, "D = "));
  CHECK(has(r, "host memory"));
  r = test::refusal_of([&] {
    BlockScaledGemm g = kind.call(d1.data());
    g.A = kind.A.data() + kind.A.size() - 16;  // 16 bytes before the end of A's allocation
    plan.rebind(g);
  });
  CHECK(has(r, "A = "));
  CHECK(has(r, "bytes left in its allocation"));
  if (plan.kernel().epilogue == engine::EpilogueKind::tma_store) {
    r = test::refusal_of([&] { plan.rebind(kind.call(d1.data() + 1)); });  // 2-byte aligned
    CHECK(has(r, "is not 16-byte aligned"));
    CHECK(has(r, "stores D with TMA"));
  }
  r = test::refusal_of([&] {
    BlockScaledGemm g = kind.call(d1.data());
    g.scale_a = kind.sa.data() + 1;  // 4-byte aligned only: this plan reads scale_a by TMA
    plan.rebind(g);
  });
  CHECK(has(r, "scale_a is not 16-byte aligned"));
  // None of them changed the plan: it still writes d0, the same bits as a fresh plan.
  DeviceBuffer<std::uint16_t> fresh_d(n);
  const BlockScaledPlan fresh(kind.call(fresh_d.data()));
  poison_bf16(d0.data(), n);
  poison_bf16(d1.data(), n + 8);
  poison_bf16(fresh_d.data(), n);
  plan.run(nullptr);
  fresh.run(nullptr);
  FP8GEMM_CUDA_CHECK(cudaDeviceSynchronize());
  const Bf16 got = d0.download();
  CHECK(kind.check(got) == "");
  CHECK(all_written(got));
  CHECK(got == fresh_d.download());
  const Bf16 untouched = d1.download();
  CHECK(
      std::all_of(untouched.begin(), untouched.end(), [](std::uint16_t v) { return v == 0xFFFF; }));
  // And a good rebind to a buffer of the same call, then back, works.
  plan.rebind(kind.call(d1.data()));
  plan.run(nullptr);
  FP8GEMM_CUDA_CHECK(cudaDeviceSynchronize());
  const Bf16 d1_out = d1.download();
  CHECK(Bf16(d1_out.begin(), d1_out.begin() + std::ptrdiff_t(n)) == got);
  CHECK(d1_out[n] == 0xFFFF);  // nothing written past D
}

TEST_CASE("library rebind: a grouped plan moved to new offsets and operands", "[library][gpu]") {
  // Two operand sets of the same call (shape, layouts): a plan built on the first, rebound to the
  // second (every pointer changes, offsets included), gives the second's own plan's D.
  GroupedKind first, second_owner;
  // Other data in other buffers (the same seed would give the same bits, and a rebind that kept
  // the first operands would pass).
  second_owner.ops = std::make_unique<ch08::GroupedOperands>(second_owner.shape, 4400);
  ch08::GroupedOperands& second = *second_owner.ops;
  GroupedPlan plan(first.ops->gemm());
  DeviceBuffer<std::uint16_t> d2(second.D.size());
  ch08::GroupedGemm g2 = second.gemm();
  const GroupedPlan own(g2);
  g2.D = d2.data();
  plan.rebind(g2);
  poison_bf16(d2.data(), d2.size());
  poison_bf16(second.D.data(), second.D.size());
  plan.run(nullptr);
  own.run(nullptr);
  FP8GEMM_CUDA_CHECK(cudaDeviceSynchronize());
  const Bf16 a = d2.download(), b = second.D.download();
  CHECK(a == b);
  CHECK(all_written(a));
  CHECK(second_owner.check(a) == "");
  // Another number of groups is another call.
  const std::string r = test::refusal_of([&] {
    ch08::GroupedGemm g = second.gemm();
    g.groups = 3;
    plan.rebind(g);
  });
  CHECK(has(r, "rebind: groups differs"));
}

// A plan belongs to the device it was built on ("Threads, streams and devices"): run() and
// rebind() with another device current are refused with std::invalid_argument before anything is
// launched, and the plan still runs on its own device.

namespace {

/// Every kind of plan, and each run() path that launches something before the GEMM (the scale
/// conversion, split-K's reduce, the checking modes' check kernels, chapter 9's two conversion
/// paths, the counter schedule), built on the current device; run() of each through `plans`.
struct EveryPlan {
  BlockScaledKind bs;
  PerTensorKind pt;
  GroupedKind gr;
  MxKind mx;
  DeviceBuffer<std::uint16_t> d_bs{bs.d_elems()}, d_pt{pt.d_elems()}, d_gr{gr.d_elems()},
      d_mx{mx.d_elems()};
  ch08::WgradOperands wg{[] {
                           ch08::WgradShape ws;
                           ws.name = "devices";
                           ws.counts = {130, 0, 257};
                           ws.N = 256;
                           ws.K = 384;
                           return ws;
                         }(),
                         4500};
  DeviceBuffer<int> counter = ch08::make_tile_counter();
  struct Entry {
    std::string name;
    std::function<void()> run, rebind;  // rebind: to the call it was built with
  };
  std::vector<Entry> plans;

  /// Builds the plan of `call` with `options`, keeps it with its run and a rebind to `call`.
  template <class Call, class Options, class Run>
  auto& keep(std::string name, const Call& call, const Options& options, Run run) {
    using Plan = decltype(plan_of(call, options));
    auto p = std::make_shared<Plan>(call, options);
    plans.push_back({std::move(name), [p, run] { run(*p); }, [p, call] { p->rebind(call); }});
    return *p;
  }
  // The library plan of each call type (declarations only: keep's decltype).
  static PerTensorPlan plan_of(const PerTensorGemm&, const PerTensorOptions&);
  static BlockScaledPlan plan_of(const BlockScaledGemm&, const BlockScaledOptions&);
  static GroupedPlan plan_of(const GroupedGemm&, const GroupedOptions&);
  static WeightGradPlan plan_of(const WeightGradGemm&, const WeightGradOptions&);
  static MxPlan plan_of(const MxGemm&, const MxOptions&);

  EveryPlan() {
    const auto plain = [](const auto& p) { p.run(nullptr); };
    keep("PerTensorPlan", pt.call(d_pt.data()), PerTensorOptions{}, plain);
    keep("BlockScaledPlan", bs.call(d_bs.data()), BlockScaledOptions{}, plain);
    BlockScaledGemm g = bs.call(d_bs.data());  // k-major A scales: converted by every run()
    g.scale_a_layout = GroupScaleLayout::k_major_packed(bs.K);
    if (!keep("BlockScaledPlan (converting scale_a)", g, BlockScaledOptions{}, plain)
             .converts_scale_a())
      throw std::logic_error("EveryPlan: no conversion");
    BlockScaledOptions split;
    split.splits = 2;
    keep("BlockScaledPlan (split-K)", bs.call(d_bs.data()), split, plain);
    GroupedOptions go;
    go.check_offsets = true;
    keep("GroupedPlan (checking offsets)", gr.call(d_gr.data()), go, plain);
    go.counter_schedule = true;
    int* c = counter.data();
    // Without the counter kernel, run(stream, counter) would fall back to run(stream) unnoticed.
    if (!keep("GroupedPlan (counter schedule, checking offsets)", gr.call(d_gr.data()), go,
              [c](const GroupedPlan& p) { p.run(nullptr, c); })
             .takes_tile_counter())
      throw std::logic_error("EveryPlan: no counter kernel");
    WeightGradOptions wo;
    wo.check_offsets = true;
    keep("WeightGradPlan (checking offsets)", wg.gemm(), wo, plain);
    keep("MxPlan", mx.call(d_mx.data()), MxOptions{}, plain);
    MxOptions deq;
    deq.hopper_dequantize_bf16 = true;
    keep("MxPlan (dequantize_bf16)", mx.call(d_mx.data()), deq, plain);
    MxOptions rq;
    rq.hopper_requantize_block_scaled = true;
    keep("MxPlan (requantize_block_scaled)", mx.call(d_mx.data()), rq, plain);
  }
  /// Runs every plan (outputs poisoned first), synchronises, and checks that each output was
  /// written, the per-tensor one against float64 too.
  void run_all_and_check() {
    for (DeviceBuffer<std::uint16_t>* d : {&d_bs, &d_pt, &d_gr, &d_mx})
      poison_bf16(d->data(), d->size());
    FP8GEMM_CUDA_CHECK(cudaMemset(wg.dB.data(), 0xFF, wg.dB.bytes()));  // FP32 NaN everywhere
    for (const Entry& e : plans) {
      INFO(e.name);
      CHECK(test::refusal_of(e.run) == "accepted");
    }
    FP8GEMM_CUDA_CHECK(cudaDeviceSynchronize());
    CHECK(all_written(d_pt.download()));
    CHECK(all_written(d_bs.download()));
    CHECK(all_written(d_gr.download()));
    CHECK(all_written(d_mx.download()));
    const std::vector<float> dB = wg.dB.download();  // every dB_g written (0 for the empty expert)
    CHECK(std::all_of(dB.begin(), dB.end(), [](float x) { return std::isfinite(x); }));
    CHECK(pt.check(d_pt.download()) == "");
  }
};

}  // namespace

TEST_CASE("library devices: every kind of plan runs with the device it was built on current",
          "[library][gpu]") {
  // The device check of run() and rebind() on every path accepts the plan's own device (one GPU
  // suffices): each plan re-bound to its own call, then run.
  EveryPlan every;
  for (const EveryPlan::Entry& e : every.plans) {
    INFO(e.name);
    CHECK(test::refusal_of(e.rebind) == "accepted");
  }
  every.run_all_and_check();
}

// Needs two GPUs: CTest's test_library_other_device runs this case alone with
// FP8GEMM_TEST_MIN_GPUS=2 (skipped with fewer); test_library_threads_gpu leaves it out.
TEST_CASE("library devices: a plan run or rebound with another device current is refused",
          "[library][gpu][other-device]") {
  const int devices = cuda_device_count();
  if (devices < 2) {
    std::printf("  only %d GPU: nothing to check\n", devices);
    return;
  }
  FP8GEMM_CUDA_CHECK(cudaSetDevice(0));
  EveryPlan every;
  FP8GEMM_CUDA_CHECK(cudaSetDevice(1));
  for (const EveryPlan::Entry& e : every.plans) {
    INFO(e.name);
    CHECK(has(test::refusal_of(e.run), "this plan was built on device 0, but device 1 is current"));
    // rebind() checks the new pointers against the current device: the device is refused first
    // (the same pointers: anything else it checks would accept them).
    CHECK(has(test::refusal_of(e.rebind),
              "this plan was built on device 0, but device 1 is current"));
    CHECK(cudaPeekAtLastError() == cudaSuccess);
  }
  // Nothing was launched on device 1 (a launch with device 0's buffers would fault there).
  FP8GEMM_CUDA_CHECK(cudaDeviceSynchronize());
  FP8GEMM_CUDA_CHECK(cudaGetLastError());
  // Back on device 0, every plan runs.
  FP8GEMM_CUDA_CHECK(cudaSetDevice(0));
  every.run_all_and_check();
}
