// GPU tests of chapter 8 (grouped block-scaled GEMM for MoE). Written with the first version of
// the kernels and not yet run on a GPU: the next GPU run decides.
//
// Every check is chapters/08_grouped_moe/grouped_check.hpp's: every row of every group against a
// float64 reference of the dequantised operands, per group (relative and worst-tile error within
// per_tensor_tolerance(K), every entry finite), and every row of no group still the poison.
// N = 264, K = 656 (neither a multiple of the 128 x 128 tile) wherever the case allows.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <random>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "catch.hpp"
#include "common/cuda.hpp"
#include "common/engine/stream_k.hpp"
#include "common/reference.hpp"  // bf16_to_float, float_to_bf16
#include "grouped_check.hpp"
#include "grouped_gemm.hpp"
#include "moe_cases.hpp"
#include "refusal.hpp"

using namespace fp8gemm;
using ch08::GroupedShape;
using ch08::Layout;

namespace {

GroupedShape contiguous(std::vector<int> rows, std::int64_t N, std::int64_t K) {
  return {"contiguous", Layout::contiguous, std::move(rows), 0, N, K};
}
GroupedShape masked(std::vector<int> masked_m, int m_max, std::int64_t N, std::int64_t K) {
  return {"masked", Layout::masked, std::move(masked_m), m_max, N, K};
}

/// Whether a full check (rows_per_group = 0) compared every row of every non-empty group: a
/// check that compared nothing must not pass for one that compared everything.
bool complete(const GroupedShape& s, const ch08::GroupedCheck& r) {
  return r.groups_checked == s.non_empty_groups() && r.rows_checked == s.real_rows();
}

void report(const GroupedShape& s, const ch08::GroupedCheck& r, const ch08::Plan& plan,
            const char* what = "") {
  std::printf("  %s%s G=%d rows=%lld N=%lld K=%lld: %s  [%s] %s\n", r.ok ? "" : "FAIL ",
              s.layout == Layout::contiguous ? "contiguous" : "masked", s.groups(),
              static_cast<long long>(s.all_rows()), static_cast<long long>(s.N),
              static_cast<long long>(s.K), r.describe.c_str(), plan.describe().c_str(), what);
}

/// The D type the plan of `o` writes: a float D for a kernel named with f32 in it (the FP32
/// kernels, kernels_grouped_f32.cu), else bf16.
ch08::Output output_for(const ch08::Options& o) {
  for (const auto& k : ch08::kernels())
    if (k.name == o.kernel && engine::writes_f32(k.epilogue)) return ch08::Output::f32;
  return ch08::Output::bf16;
}

/// One plan on fresh random operands for `s` (D of the type the plan writes), every row of every
/// group checked.
bool run_case(const GroupedShape& s, std::uint64_t seed, const ch08::Options& o = {}) {
  const ch08::GroupedOperands ops(s, seed, output_for(o));
  const ch08::Plan plan(ops.gemm(), o);
  const auto r = ch08::run_and_check(ops, s, [&](cudaStream_t st) { plan.run(st); }, 0, seed);
  report(s, r, plan);
  return r.ok && complete(s, r);
}

/// A stream of its own (non-blocking: nothing on the legacy stream joins a capture by accident).
struct Stream {
  cudaStream_t s = nullptr;
  explicit Stream(unsigned flags = cudaStreamNonBlocking) {
    FP8GEMM_CUDA_CHECK(cudaStreamCreateWithFlags(&s, flags));
  }
  ~Stream() { cudaStreamDestroy(s); }
};

/// Captures plan.run() into a CUDA graph once, then for each shape of `replays` (same layout, G,
/// rows, N and K as `first`, other group sizes): copies its description into the same device
/// buffer, poisons D, replays the graph and checks D against that shape's own reference.
/// A plan that takes a tile counter (Options::counter_schedule) gets one of its own for the graph
/// (zeroed before the capture; every replay leaves it zero for the next).
void graph_replays(const GroupedShape& first, const std::vector<GroupedShape>& replays,
                   std::uint64_t seed, const ch08::Options& o = {},
                   ch08::Output output = ch08::Output::bf16) {
  ch08::GroupedOperands ops(first, seed, output);
  const ch08::Plan plan(ops.gemm(), o);
  // The cases that ask for the counter schedule are ones it serves (few rows per group): the
  // graph must hold the counter kernel, or this would test the static one twice.
  if (o.counter_schedule) REQUIRE(plan.takes_tile_counter());
  Stream stream;
  const DeviceBuffer<int> counter = ch08::make_tile_counter();
  cudaGraph_t graph = nullptr;
  cudaGraphExec_t exec = nullptr;
  FP8GEMM_CUDA_CHECK(cudaStreamBeginCapture(stream.s, cudaStreamCaptureModeThreadLocal));
  plan.run(stream.s, counter.data());  // run(stream) where the plan takes no counter
  FP8GEMM_CUDA_CHECK(cudaStreamEndCapture(stream.s, &graph));
  FP8GEMM_CUDA_CHECK(cudaGraphInstantiate(&exec, graph, 0));
  int replay = 0;
  for (const GroupedShape& s : replays) {
    ops.upload_description(s.device_description());
    ops.poison_d(stream.s);
    FP8GEMM_CUDA_CHECK(cudaGraphLaunch(exec, stream.s));
    FP8GEMM_CUDA_CHECK(cudaStreamSynchronize(stream.s));
    const auto r = ch08::check_grouped(ops, s, 0, seed + std::uint64_t(++replay));
    report(s, r, plan, ("graph replay " + std::to_string(replay)).c_str());
    CHECK(r.ok);
    CHECK(complete(s, r));
  }
  FP8GEMM_CUDA_CHECK(cudaGraphExecDestroy(exec));
  FP8GEMM_CUDA_CHECK(cudaGraphDestroy(graph));
}

/// What run() throws: the std::runtime_error's message, "OTHER: ..." for another exception,
/// "accepted" for none.
std::string run_error(const ch08::Plan& plan, cudaStream_t stream = nullptr) {
  try {
    plan.run(stream);
    FP8GEMM_CUDA_CHECK(cudaStreamSynchronize(stream));
  } catch (const std::runtime_error& e) {
    return e.what();
  } catch (const std::exception& e) {
    return std::string("OTHER: ") + e.what();
  }
  return "accepted";
}

/// The message of the std::invalid_argument run(stream, counter) throws, "" if none.
std::string run_error_with_counter(const ch08::Plan& plan, int* counter) {
  try {
    plan.run(nullptr, counter);
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "";
}

bool all_poison(const DeviceBuffer<std::uint16_t>& d) {
  for (std::uint16_t v : d.download())
    if (v != 0xFFFF) return false;
  return true;
}

bool has(const std::string& s, const std::string& w) { return s.find(w) != std::string::npos; }

bool staged(const engine::KernelInfo& k) { return k.k_round > 1; }
}  // namespace

TEST_CASE("ch08: contiguous groups of 0, 1, 127, 128, 129 rows, every kernel", "[ch08][gpu]") {
  for (const auto& k : ch08::kernels()) {
    ch08::Options o;
    o.kernel = k.name;
    // The staged loop's kernels take K in whole rounds of their stages (grouped_gemm.cpp).
    const std::int64_t K = staged(k) ? 128 * k.stages * 2 : 656;
    CHECK(run_case(contiguous({0, 1, 127, 128, 129, 0, 300}, 264, K), 10, o));
    // One 256-column tile: a 1 x 2 cluster's second CTA has no column tile of its own.
    CHECK(run_case(contiguous({0, 1, 127, 128, 129, 0, 300}, 136, K), 14, o));
    // Group ends on both sides of a warpgroup's rows (64 of 128 x 256, 128 of 256 x 128): a
    // warpgroup whose rows of a tile all lie past its group computes nothing for it (kernel.cuh,
    // SkipsIdleRows); the one beside it must still see every stage.
    CHECK(run_case(contiguous({64, 65, 63, 192, 193, 191, 257}, 264, K), 15, o));
  }
  CHECK(run_case(contiguous({1000}, 512, 1024), 11));        // G = 1
  CHECK(run_case(contiguous({0, 0, 777, 0}, 384, 512), 12));  // one non-empty group
}

TEST_CASE("ch08: a kernel that draws its tiles from a counter: three launches of one plan",
          "[ch08][gpu]") {
  // No comma in the name: Catch2 reads a comma in a test-name filter as two patterns (session
  // 32's call ran this test by name and ran nothing).
  // GroupedDynamicScheduler's counter must be back at zero after every launch: a launch that
  // found it left over would draw no tile and leave D as the poison before it.
  int dynamic = 0;
  for (const auto& k : ch08::kernels()) {
    if (!k.dynamic_schedule) continue;
    ++dynamic;
    ch08::Options o;
    o.kernel = k.name;
    for (const auto& shape : {contiguous({0, 1, 127, 128, 129, 0, 300}, 264, 656),
                              contiguous({33793, 0, 33791}, 256, 256),  // many tiles per CTA
                              masked({5, 192, 0, 65}, 192, 264, 656)}) {
      const ch08::GroupedOperands ops(shape, 16);
      const ch08::Plan plan(ops.gemm(), o);
      const auto r = ch08::run_and_check(
          ops, shape,
          [&](cudaStream_t st) {
            for (int i = 0; i < 3; ++i) {
              poison_bf16(ops.D.data(), ops.D.size(), st);
              plan.run(st);
            }
          },
          0, 16);
      report(shape, r, plan, "third launch");
      CHECK(r.ok);
      CHECK(complete(shape, r));
    }
  }
  CHECK(dynamic >= 1);  // the test tested something
}

TEST_CASE("ch08: the counter schedule with the caller's counters on two streams at once",
          "[ch08][gpu]") {
  // Options::counter_schedule: the plan takes the counter kernel for contiguous calls with fewer
  // than 1024 rows per group on average (2048 at K >= 4096) and draws its tiles from the
  // counter each run() is given. One plan, re-pointed between launches (rebind) at two sets of
  // operands, launched on two streams at once with a counter each, three times, D poisoned
  // before each launch: a shared or left-over counter would leave tiles of the poison.
  std::mt19937 gen(17);
  std::uniform_int_distribution<int> rows(0, 1500);
  std::vector<int> counts(64);
  for (std::size_t g = 0; g < counts.size(); ++g) counts[g] = g % 11 == 3 ? 0 : rows(gen);
  const GroupedShape shape = contiguous(counts, 512, 512);  // about 750 rows per group
  const ch08::GroupedOperands ops1(shape, 171), ops2(shape, 172);
  ch08::Options o;
  o.counter_schedule = true;
  ch08::Plan plan(ops1.gemm(), o);
  REQUIRE(plan.takes_tile_counter());
  CHECK(has(plan.describe(), "128x256_s4_c1x1_promoted_tma_b1_dyn"));
  // Without a counter the plan refuses to run, before any launch.
  CHECK_THROWS_AS(plan.run(nullptr), std::invalid_argument);
  CHECK_THROWS_AS(plan.run(nullptr, nullptr), std::invalid_argument);
  // Host memory is refused before the launch (the kernel would fault: a sticky error).
  int host_counter[2] = {0, 0};
  CHECK_THROWS_AS(plan.run(nullptr, host_counter), std::invalid_argument);
  // A counter inside the offsets, D, A or a scale (an easy slip: all are device memory) would be
  // written by the kernel's atomics and reset while it reads them: refused before any launch,
  // naming what it overlaps (session 57). The offsets and D are left as they were.
  const auto offsets_before = ops1.description.download();
  poison_bf16(ops1.D.data(), ops1.D.size());
  const auto d_before = ops1.D.download();
  const std::pair<int*, const char*> inside[] = {
      {const_cast<int*>(ops1.description.data()), "overlaps offsets"},
      {reinterpret_cast<int*>(ops1.D.data() + 64), "overlaps D"},
      {reinterpret_cast<int*>(const_cast<std::uint8_t*>(ops1.A.data()) + 4096), "overlaps A"},
      {reinterpret_cast<int*>(const_cast<float*>(ops1.scale_b.data())), "overlaps scale_b"}};
  for (const auto& [counter, what] : inside) {
    INFO("tile_counter inside: " << what);
    CHECK(has(run_error_with_counter(plan, counter), what));
  }
  FP8GEMM_CUDA_CHECK(cudaDeviceSynchronize());
  CHECK(ops1.description.download() == offsets_before);
  CHECK(ops1.D.download() == d_before);
  FP8GEMM_CUDA_CHECK(cudaGetLastError());  // nothing launched, nothing pending
  Stream s1, s2;
  const DeviceBuffer<int> c1 = ch08::make_tile_counter(), c2 = ch08::make_tile_counter();
  for (int i = 0; i < 3; ++i) {
    poison_bf16(ops1.D.data(), ops1.D.size(), s1.s);
    poison_bf16(ops2.D.data(), ops2.D.size(), s2.s);
    plan.rebind(ops1.gemm());
    plan.run(s1.s, c1.data());
    plan.rebind(ops2.gemm());
    plan.run(s2.s, c2.data());
  }
  FP8GEMM_CUDA_CHECK(cudaStreamSynchronize(s1.s));
  FP8GEMM_CUDA_CHECK(cudaStreamSynchronize(s2.s));
  for (const auto* ops : {&ops1, &ops2}) {
    const auto r = ch08::check_grouped(*ops, shape, 0, ops == &ops1 ? 173 : 174);
    report(shape, r, plan, ops == &ops1 ? "stream 1, third launch" : "stream 2, third launch");
    CHECK(r.ok);
    CHECK(complete(shape, r));
  }
  // Where the counter schedule keeps a static kernel (1383 rows per group at K = 656) the plan is
  // the default one and takes no counter.
  const GroupedShape big = contiguous({2048, 0, 2100}, 264, 656);
  const ch08::GroupedOperands ops3(big, 175);
  const ch08::Plan plain(ops3.gemm(), o);
  CHECK_FALSE(plain.takes_tile_counter());
  const auto r = ch08::run_and_check(ops3, big, [&](cudaStream_t st) { plain.run(st, nullptr); },
                                     0, 175);
  report(big, r, plain, "counter schedule, no counter taken");
  CHECK(r.ok);
  CHECK(complete(big, r));
  // At K >= 4096 the counter kernel runs up to 2048 rows per group (session 35): 1125 here, and
  // K = 4160 is not a multiple of the 128-wide K block. Two launches, D poisoned before each.
  const GroupedShape long_k = contiguous({1500, 0, 1700, 1300}, 264, 4160);
  const ch08::GroupedOperands ops4(long_k, 176);
  const ch08::Plan counted(ops4.gemm(), o);
  REQUIRE(counted.takes_tile_counter());
  CHECK(has(counted.describe(), "128x256_s4_c1x1_promoted_tma_b1_dyn"));
  const DeviceBuffer<int> c4 = ch08::make_tile_counter();
  const auto r4 = ch08::run_and_check(
      ops4, long_k,
      [&](cudaStream_t st) {
        for (int i = 0; i < 2; ++i) {
          poison_bf16(ops4.D.data(), ops4.D.size(), st);
          counted.run(st, c4.data());
        }
      },
      0, 176);
  report(long_k, r4, counted, "counter schedule at K = 4160, second launch");
  CHECK(r4.ok);
  CHECK(complete(long_k, r4));
}

TEST_CASE("ch08: a tile counter that is not zero: refused in checking mode, never written past",
          "[ch08][gpu]") {
  // The counter is device data: the host reads it only in checking mode (Options::check_offsets),
  // which must refuse a count left in it (a positive one makes the kernel skip tiles silently).
  // Without checking, a negative count (memory never zeroed) must not make the kernel write
  // outside D (grouped_tile maps a negative tile number to rows before a group's first): D lies
  // inside a larger buffer whose rows before and after it must keep their poison; every tile is
  // still computed (the CTAs that drew a negative number stop, the others go on), and the run
  // leaves the counter zero. Session 55: on the kernel before, this test's control died with an
  // illegal-instruction fault at a counter starting at -3 (tiles at rows before D).
  const GroupedShape shape = contiguous({300, 0, 700, 129, 555}, 264, 512);
  const ch08::GroupedOperands ops(shape, 181);
  auto set_counter = [](int* c, int a, int b) {
    const int v[2] = {a, b};
    FP8GEMM_CUDA_CHECK(cudaMemcpy(c, v, sizeof v, cudaMemcpyHostToDevice));
  };
  auto read_counter = [](const int* c) {
    std::vector<int> v(2);
    FP8GEMM_CUDA_CHECK(cudaMemcpy(v.data(), c, 2 * sizeof(int), cudaMemcpyDeviceToHost));
    return v;
  };
  const DeviceBuffer<int> counter = ch08::make_tile_counter();
  {
    ch08::Options o;
    o.counter_schedule = true;
    o.check_offsets = true;
    const ch08::Plan plan(ops.gemm(), o);
    REQUIRE(plan.takes_tile_counter());
    for (const auto& [a, b] : {std::pair{5, 0}, std::pair{0, 3}, std::pair{-2, 0}}) {
      set_counter(counter.data(), a, b);
      poison_bf16(ops.D.data(), ops.D.size());
      std::string what;
      try {
        plan.run(nullptr, counter.data());
      } catch (const std::runtime_error& e) {
        what = e.what();
      }
      INFO(what);
      CHECK(what.find("tile_counter holds {" + std::to_string(a) + ", " + std::to_string(b) +
                      "}, not {0, 0}") != std::string::npos);
      CHECK(read_counter(counter.data()) == std::vector<int>{a, b});  // nothing launched
    }
    set_counter(counter.data(), 0, 0);
    const auto r = ch08::run_and_check(
        ops, shape, [&](cudaStream_t st) { plan.run(st, counter.data()); }, 0, 181);
    report(shape, r, plan, "checking mode, counter zero");
    CHECK(r.ok);
    CHECK(complete(shape, r));
  }
  ch08::Options o;
  o.counter_schedule = true;
  ch08::Plan plan(ops.gemm(), o);
  REQUIRE(plan.takes_tile_counter());
  const std::int64_t N = shape.N, guard_rows = 512;
  const std::size_t d_elems = std::size_t(ops.all_rows * N);
  const std::size_t guard = std::size_t(guard_rows * N);
  DeviceBuffer<std::uint16_t> big(guard + d_elems + guard);
  ch08::GroupedGemm g = ops.gemm();
  g.D = big.data() + guard;
  plan.rebind(g);
  for (const int start : {-3, -1, -200}) {
    INFO("counter starts at {" << start << ", 0}");
    poison_bf16(big.data(), big.size());
    FP8GEMM_CUDA_CHECK(cudaDeviceSynchronize());
    std::vector<std::uint16_t> before(big.size());
    FP8GEMM_CUDA_CHECK(cudaMemcpy(before.data(), big.data(), big.bytes(), cudaMemcpyDeviceToHost));
    set_counter(counter.data(), start, 0);
    plan.run(nullptr, counter.data());
    FP8GEMM_CUDA_CHECK(cudaDeviceSynchronize());
    std::vector<std::uint16_t> after(big.size());
    FP8GEMM_CUDA_CHECK(cudaMemcpy(after.data(), big.data(), big.bytes(), cudaMemcpyDeviceToHost));
    std::size_t outside = 0;
    for (std::size_t i = 0; i < big.size(); ++i)
      if ((i < guard || i >= guard + d_elems) && after[i] != before[i]) ++outside;
    CHECK(outside == 0);
    CHECK(read_counter(counter.data()) == std::vector<int>{0, 0});  // reset by the last CTA
    if (-start < plan.grid_ctas()) {  // some CTA drew a tile number >= 0: every tile was computed
      FP8GEMM_CUDA_CHECK(cudaMemcpy(ops.D.data(), g.D, ops.D.bytes(), cudaMemcpyDeviceToDevice));
      const auto r = ch08::check_grouped(ops, shape, 0, 181);
      report(shape, r, plan, "a negative counter at the start");
      CHECK(r.ok);
      CHECK(complete(shape, r));
    }
  }
}

TEST_CASE("ch08: max_sms limits the grid and every schedule still covers every tile",
          "[ch08][gpu]") {
  // Options::max_sms (an all-to-all beside the GEMM takes the other SMs): the default static
  // kernel, the counter schedule (the caller's counter), a kernel of 2-CTA clusters, a stream-K
  // kernel, and the masked layout, each with a grid of at most max(max_sms, cluster) CTAs and
  // every row of every group against float64.
  const GroupedShape many = contiguous({0, 1, 127, 128, 129, 0, 300, 517}, 264, 656);
  const GroupedShape masked_shape = masked({5, 192, 0, 65}, 192, 264, 656);
  const engine::KernelInfo* cluster = nullptr;
  const engine::KernelInfo* stream_k = nullptr;
  for (const auto& k : ch08::kernels()) {
    if (!cluster && k.cluster_size() == 2 && !staged(k) && !k.stream_k && !k.dynamic_schedule)
      cluster = &k;
    if (!stream_k && k.stream_k) stream_k = &k;
  }
  REQUIRE(cluster != nullptr);
  REQUIRE(stream_k != nullptr);
  const DeviceBuffer<int> counter = ch08::make_tile_counter();
  int cases = 0;
  for (int max_sms : {1, 2, 16}) {
    struct Variant {
      const char* what;
      GroupedShape shape;
      ch08::Options options;
    };
    std::vector<Variant> variants;
    variants.push_back({"default", many, {}});
    ch08::Options counted;
    counted.counter_schedule = true;
    variants.push_back({"counter schedule", many, counted});
    ch08::Options clustered;
    clustered.kernel = cluster->name;
    variants.push_back({"2-CTA cluster", many, clustered});
    ch08::Options split;
    split.kernel = stream_k->name;
    variants.push_back({"stream-K", many, split});
    variants.push_back({"masked", masked_shape, {}});
    for (Variant& v : variants) {
      v.options.max_sms = max_sms;
      const std::uint64_t seed = 5100 + std::uint64_t(max_sms) * 10 + std::uint64_t(cases % 10);
      const ch08::GroupedOperands ops(v.shape, seed);
      const ch08::Plan plan(ops.gemm(), v.options);
      if (v.options.counter_schedule) REQUIRE(plan.takes_tile_counter());
      const auto r = ch08::run_and_check(
          ops, v.shape, [&](cudaStream_t st) { plan.run(st, counter.data()); }, 0, seed);
      report(v.shape, r, plan, (std::string(v.what) + ", max_sms " + std::to_string(max_sms)).c_str());
      const int cluster_ctas = plan.kernel().cluster_size();
      if (v.options.kernel == cluster->name) CHECK(cluster_ctas == 2);
      CHECK(plan.grid_ctas() >= 1);
      CHECK(plan.grid_ctas() <= std::max(max_sms, cluster_ctas));
      CHECK(r.ok);
      CHECK(complete(v.shape, r));
      ++cases;
    }
  }
  CHECK(cases == 15);
}

TEST_CASE("ch08: G = 256 experts of 0 to 40 rows", "[ch08][gpu]") {
  std::mt19937 gen(13);
  std::uniform_int_distribution<int> rows(0, 40);
  std::vector<int> counts(256);
  for (std::size_t g = 0; g < counts.size(); ++g) counts[g] = g % 9 == 4 ? 0 : rows(gen);
  CHECK(run_case(contiguous(counts, 256, 384), 13));
}

TEST_CASE("ch08: masked groups, masked_m from 0 to M_max", "[ch08][gpu]") {
  CHECK(run_case(masked({0, 1, 256, 129, 300 /* clamped to M_max */}, 256, 264, 656), 20));
  // M_max >= 1024 at K <= 4096: the default takes 3 stages and 4 staging buffers (session 35 at
  // K <= 2048, session 37 up to 4096; K = 3008 ends in a partial K block).
  for (const auto& [s, seed] : {std::pair{masked({1024, 700, 0, 1}, 1024, 264, 656), 24},
                                std::pair{masked({1024, 300, 0, 1}, 1024, 264, 3008), 25}}) {
    const ch08::GroupedOperands ops(s, seed);
    const ch08::Plan plan(ops.gemm());
    CHECK(has(plan.describe(), "256x128_s3_c1x1_promoted_tma_b4"));
    const auto r = ch08::run_and_check(ops, s, [&](cudaStream_t st) { plan.run(st); }, 0, seed);
    report(s, r, plan);
    CHECK(r.ok);
    CHECK(complete(s, r));
  }
  CHECK(run_case(masked({0, 0, 0, 0}, 128, 264, 656), 21));  // nothing written at all
  CHECK(run_case(masked({200, 200, 200}, 200, 264, 656), 22));
  for (const auto& k : ch08::kernels()) {
    ch08::Options o;
    o.kernel = k.name;
    CHECK(run_case(masked({5, 192, 0, 65}, 192, 264, staged(k) ? 128 * k.stages : 656), 23, o));
  }
}

TEST_CASE("ch08: a CUDA graph replayed with other group sizes", "[ch08][gpu]") {
  // Contiguous: 357 rows in all, redistributed between replays; the plan's default, then the
  // counter schedule (the counter kernel, the graph's own counter).
  for (const bool counter_schedule : {false, true}) {
    ch08::Options o;
    o.counter_schedule = counter_schedule;
    graph_replays(contiguous({100, 0, 200, 57}, 264, 656),
                  {contiguous({100, 0, 200, 57}, 264, 656), contiguous({0, 357, 0, 0}, 264, 656),
                   contiguous({1, 128, 128, 100}, 264, 656), contiguous({0, 0, 0, 357}, 264, 656)},
                  counter_schedule ? 31 : 30, o);
  }
  // Masked: M_max 192; a replay after a larger one must leave the rows it no longer owns alone.
  // Also with a float D (the FP32 kernel: each row cut at its group's end from registers).
  for (const auto output : {ch08::Output::bf16, ch08::Output::f32}) {
    graph_replays(masked({192, 5, 0}, 192, 264, 656),
                  {masked({192, 5, 0}, 192, 264, 656), masked({0, 0, 0}, 192, 264, 656),
                   masked({191, 192, 1}, 192, 264, 656), masked({64, 129, 192}, 192, 264, 656)},
                  31, {}, output);
  }
  graph_replays(contiguous({100, 0, 200, 57}, 264, 656),
                {contiguous({0, 357, 0, 0}, 264, 656), contiguous({1, 128, 128, 100}, 264, 656)},
                32, {}, ch08::Output::f32);
}

TEST_CASE("ch08: a float D, with and without accumulate", "[ch08][gpu]") {
  // Output::f32 (session 64): every row of every group against float64 within kF32Tolerance (no
  // bf16 rounding), the default (by TMA where ldd % 4 == 0, else from registers) and every FP32
  // kernel of kernels() by name (read from kernels() since session 69), contiguous and masked; with
  // accumulate, D = A.B^T + D over a D of N(0, 64) values (by TMA a reduce-add through the
  // ragged-rows view; about 0.14-0.3 of the result by the operands' statistics, and run_and_check
  // fails a check whose earlier values are < 1 % of it: session 65, N(0, 4) was ~1-2 %), and a
  // masked group's padding rows keep those values bit for bit (check_grouped's stray count);
  // without it they keep the poison. N = 137 (ldd odd): the default from registers, one float at a
  // time (no float2 is aligned), a TMA kernel by name refused. rebind() refuses another output or
  // accumulate.
  std::mt19937_64 gen(64);
  std::normal_distribution<float> nd(0.0f, 64.0f);
  const std::string tma = "128x256_s4_c1x1_promoted_f32_tma_b1";
  // "" is the default; then every FP32 kernel, each with whether it stores by TMA.
  std::vector<std::pair<std::string, bool>> names{{std::string(), false}};
  int tma_kernels = 0;
  for (const auto& k : ch08::kernels())
    if (engine::writes_f32(k.epilogue)) {
      const bool by_tma = k.epilogue == engine::EpilogueKind::tma_store_f32;
      names.emplace_back(k.name, by_tma);
      tma_kernels += by_tma;
    }
  // The default and the three FP32 kernels (test_chapter_08_args counts them too): a kernel
  // added to kernels_f32() is run here at once, and these counts must then be raised with it.
  REQUIRE(names.size() == 4);
  REQUIRE(tma_kernels == 1);
  REQUIRE(std::find(names.begin(), names.end(), std::pair{tma, true}) != names.end());
  int cases = 0, refused = 0;
  for (const GroupedShape& s : {contiguous({0, 1, 127, 128, 129, 0, 300}, 264, 656),
                                masked({5, 192, 0, 65}, 192, 264, 656),
                                contiguous({64, 65, 63, 192, 193, 191, 257}, 137, 3008)}) {
    const bool tma_ok = s.N % 4 == 0;
    for (const auto& [kernel, by_tma] : names) {
      for (const bool accumulate : {false, true}) {
        const std::uint64_t seed = 6400 + std::uint64_t(cases + refused);
        const ch08::GroupedOperands ops(s, seed, ch08::Output::f32);
        ch08::GroupedGemm g = ops.gemm();
        g.accumulate = accumulate;
        ch08::Options o;
        o.kernel = kernel;
        if (by_tma && !tma_ok) {
          CHECK_THROWS_AS(ch08::Plan(g, o), std::invalid_argument);
          ++refused;
          continue;
        }
        const ch08::Plan plan(g, o);
        CHECK(plan.kernel().name ==
              (!kernel.empty() ? kernel : tma_ok ? tma : "128x256_s4_c1x1_promoted_f32"));
        std::vector<float> before(ops.D_f32.size());
        for (auto& x : before) x = nd(gen);
        const auto r =
            ch08::run_and_check(ops, s, [&](cudaStream_t st) { plan.run(st); }, 0, seed,
                                accumulate ? &before : nullptr);
        report(s, r, plan, accumulate ? "float D += A.B^T" : "float D = A.B^T");
        CHECK(r.tolerance == ch08::kF32Tolerance);
        CHECK(r.ok);
        CHECK(complete(s, r));
        ++cases;
      }
    }
  }
  // Three shapes x four names x two, less the TMA kernel's two refusals at N = 137.
  CHECK(cases == 22);
  CHECK(refused == 2);
  const GroupedShape s = contiguous({0, 1, 127, 128, 129, 0, 300}, 264, 656);
  const ch08::GroupedOperands ops(s, 6490, ch08::Output::f32);
  ch08::Plan plan(ops.gemm());
  ch08::GroupedGemm other = ops.gemm();
  other.accumulate = true;
  CHECK(has(test::refusal_of([&] { plan.rebind(other); }), "rebind: accumulate"));
  const ch08::GroupedOperands ops16(s, 6491);
  CHECK(has(test::refusal_of([&] { plan.rebind(ops16.gemm()); }), "rebind: output"));
}

TEST_CASE("ch08: a float D's check fails on a bf16-rounded D", "[ch08][gpu]") {
  // The float D's tolerance must catch what a bf16 D would do: the FP32 result of the default,
  // rounded to bf16 on the host and put back, is refused (bf16 rounding alone is ~1.7e-3).
  const GroupedShape s = contiguous({0, 1, 127, 128, 129, 0, 300}, 264, 656);
  ch08::GroupedOperands ops(s, 6500, ch08::Output::f32);
  const ch08::Plan plan(ops.gemm());
  const auto good = ch08::run_and_check(ops, s, [&](cudaStream_t st) { plan.run(st); }, 0, 6500);
  REQUIRE(good.ok);
  std::vector<float> d = ops.D_f32.download();
  for (float& x : d)  // the groups' rows only: the rows of no group keep their poison bits
    if (std::isfinite(x)) x = bf16_to_float(float_to_bf16(x));
  ops.D_f32.upload(d);
  const auto rounded = ch08::check_grouped(ops, s, 0, 6500);
  std::printf("  bf16-rounded float D: %s\n", rounded.describe.c_str());
  CHECK_FALSE(rounded.ok);
}

namespace {
/// The tiles of `s` in the kernel's schedule (every group's row tiles x the column tiles).
int tiles_of(const GroupedShape& s, const engine::KernelInfo& k) {
  std::int64_t tiles = 0;
  for (int g = 0; g < s.groups(); ++g) {
    const auto [begin, end] = s.group_rows(g);
    tiles += (end - begin + k.block_m - 1) / k.block_m * ((s.N + k.block_n - 1) / k.block_n);
  }
  return int(tiles);
}
/// Whether the stream-K division splits tiles of `s` on the plan's grid (stream_k.hpp's rule).
bool splits_tiles(const GroupedShape& s, const engine::KernelInfo& k, const ch08::Plan& plan) {
  return engine::stream_k_split(tiles_of(s, k), plan.grid_ctas(), int((s.K + 127) / 128)).units > 0;
}
}  // namespace

TEST_CASE("ch08: stream-K kernels, tiles split over many CTAs", "[ch08][gpu]") {
  // Three calls whose last round the division splits (each checked below, so a case that stopped
  // exercising stream-K fails rather than passing on data-parallel tiles only):
  //   A: 88 tiles, K = 2096 (17 K blocks, the last one partial): no full round, every tile cut
  //      between two or three CTAs;
  //   B: 200 or 208 tiles, K = 656: a data-parallel round, then 68 or 76 tiles of 6 K blocks
  //      over 132 CTAs;
  //   C: contiguous groups of 0, 1, 127, 128, 129, 0, 300 rows, N = 7168 (224 or 336 tiles).
  const std::vector<GroupedShape> cases = {masked({1000, 0, 0, 0}, 1024, 2712, 2096),
                                           masked({1024, 1000}, 1024, 3144, 656),
                                           contiguous({0, 1, 127, 128, 129, 0, 300}, 7168, 656)};
  int kernels = 0;
  for (const auto& k : ch08::kernels()) {
    if (!k.stream_k) continue;
    ++kernels;
    ch08::Options o;
    o.kernel = k.name;
    std::uint64_t seed = 70;
    for (const GroupedShape& s : cases) {
      const ch08::GroupedOperands ops(s, ++seed);
      const ch08::Plan plan(ops.gemm(), o);
      INFO(k.name << " on " << s.all_rows() << " rows, N = " << s.N << ", K = " << s.K);
      CHECK(splits_tiles(s, k, plan));
      // Twice on the same plan: the flags the first run leaves must serve the second, and the
      // fixed order of the partials' sums must give the same bytes.
      std::vector<std::uint16_t> first;
      for (int run = 0; run < 2; ++run) {
        const auto r = ch08::run_and_check(ops, s, [&](cudaStream_t st) { plan.run(st); }, 0, seed);
        report(s, r, plan, run == 0 ? "stream-K" : "stream-K, second run");
        CHECK(r.ok);
        CHECK(complete(s, r));
        if (run == 0) first = ops.D.download();
        else CHECK(ops.D.download() == first);
      }
    }
    // Captured once, replayed with other group sizes: 100 or 104 tiles (no full round, split),
    // 150 or 156 (a last round too small to split), 200 or 208 (split), 100 or 78 (split).
    graph_replays(masked({1024, 1000}, 1024, 3144, 656),
                  {masked({0, 1024}, 1024, 3144, 656), masked({1024, 512}, 1024, 3144, 656),
                   masked({1024, 1024}, 1024, 3144, 656), masked({600, 7}, 1024, 3144, 656)},
                  80, o);
  }
  CHECK(kernels == 3);
}

TEST_CASE("ch08: two runs give byte-identical D", "[ch08][gpu]") {
  const GroupedShape s = contiguous({300, 0, 1, 700, 129, 64}, 264, 656);
  const ch08::GroupedOperands ops(s, 40);
  const ch08::Plan plan(ops.gemm());
  std::vector<std::vector<std::uint16_t>> runs;
  for (int i = 0; i < 2; ++i) {
    const auto r = ch08::run_and_check(ops, s, [&](cudaStream_t st) { plan.run(st); }, 0, 40);
    report(s, r, plan, ("determinism run " + std::to_string(i + 1)).c_str());
    CHECK(r.ok);
    runs.push_back(ops.D.download());
  }
  CHECK(runs[0] == runs[1]);
}

TEST_CASE("ch08: checking mode passes good descriptions", "[ch08][gpu]") {
  ch08::Options o;
  o.check_offsets = true;
  CHECK(run_case(contiguous({0, 1, 127, 128, 129, 0, 300}, 264, 656), 50, o));
  CHECK(run_case(masked({0, 256, 100}, 256, 264, 656), 51, o));
}

TEST_CASE("ch08: checking mode refuses bad offsets and masked_m before the GEMM", "[ch08][gpu]") {
  ch08::Options o;
  o.check_offsets = true;
  struct Bad {
    std::vector<int> values;
    const char* names;  // what the message must name
  };
  auto refuse = [&](const GroupedShape& good, const std::vector<Bad>& bad, std::uint64_t seed) {
    ch08::GroupedOperands ops(good, seed);
    const ch08::Plan plan(ops.gemm(), o);
    for (const Bad& b : bad) {
      ops.upload_description(b.values);
      poison_bf16(ops.D.data(), ops.D.size());
      const std::string e = run_error(plan);
      INFO(e);
      CHECK(has(e, "fp8gemm::ch08_grouped_moe"));
      CHECK(has(e, b.names));
      CHECK(all_poison(ops.D));  // the GEMM never ran on it
    }
    // The same plan on the good description afterwards: correct, nothing left behind.
    ops.upload_description(good.device_description());
    const auto r = ch08::run_and_check(ops, good, [&](cudaStream_t st) { plan.run(st); }, 0, seed);
    report(good, r, plan, "after the refusals");
    CHECK(r.ok);
    CHECK(cudaGetLastError() == cudaSuccess);
  };
  // 357 rows: offsets 0, 100, 150, 350, 357.
  refuse(contiguous({100, 50, 200, 7}, 264, 656),
         {{{0, 100, 90, 350, 357}, "offsets[2] = 90 is less than offsets[1] = 100"},
          {{5, 100, 150, 350, 357}, "offsets[0] = 5 must be 0"},
          {{-5, 100, 150, 350, 357}, "offsets[0] = -5"},
          {{0, 100, 150, 350, 356}, "offsets[4] = 356 must equal rows = 357"},
          {{0, 100, 150, 350, 400}, "offsets[4] = 400"},
          {{0, 100, 150, 100, 400}, "offsets[3] = 100"}},  // the first violation, not the last
         60);
  refuse(masked({5, 7, 128}, 128, 264, 656),
         {{{5, -1, 7}, "masked_m[1] = -1 is negative"},
          {{5, 7, 129}, "masked_m[2] = 129 exceeds M_max = 128"},
          {{-2, 7, 129}, "masked_m[0] = -2"}},
         61);
}

TEST_CASE("ch08: checking mode under stream capture is refused, the capture intact",
          "[ch08][gpu]") {
  const GroupedShape s = contiguous({100, 50}, 264, 656);
  const ch08::GroupedOperands ops(s, 70);
  ch08::Options o;
  o.check_offsets = true;
  const ch08::Plan plan(ops.gemm(), o);
  // The capturing stream itself, then the legacy stream while a blocking stream captures
  // (cudaStreamIsCapturing answers cudaErrorStreamCaptureImplicit there).
  for (const bool legacy : {false, true}) {
    INFO("legacy stream: " << legacy);
    Stream stream(legacy ? cudaStreamDefault : cudaStreamNonBlocking);
    FP8GEMM_CUDA_CHECK(cudaStreamBeginCapture(stream.s, cudaStreamCaptureModeGlobal));
    std::string e;
    try {
      plan.run(legacy ? nullptr : stream.s);
      e = "accepted";
    } catch (const std::invalid_argument& x) {
      e = x.what();
    } catch (const std::exception& x) {
      e = std::string("OTHER: ") + x.what();
    }
    INFO(e);
    CHECK(has(e, "fp8gemm::ch08_grouped_moe"));
    CHECK(has(e, "capturing"));
    cudaGraph_t graph = nullptr;
    CHECK(cudaStreamEndCapture(stream.s, &graph) == cudaSuccess);  // not invalidated
    if (graph) FP8GEMM_CUDA_CHECK(cudaGraphDestroy(graph));
    CHECK(cudaGetLastError() == cudaSuccess);
  }
  // Outside a capture the same plan runs and is right.
  const auto r = ch08::run_and_check(ops, s, [&](cudaStream_t st) { plan.run(st); }, 0, 70);
  report(s, r, plan, "after the refused captures");
  CHECK(r.ok);
}
