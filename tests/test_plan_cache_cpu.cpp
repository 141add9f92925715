// CPU tests of the PyTorch ops' plan cache (chapters/10_production/python/csrc/plan_cache.hpp,
// header-only, no torch): plans keyed by everything but the buffers, a cached plan re-pointed
// (rebind) only when the call's buffers differ from the ones it points at, a refused rebind
// leaving the plan cached and unchanged, the LRU and capacity rules, and rebind + use of one
// cached plan taking turns under its lock when many threads call it at once. A fake plan stands in
// for fp8gemm's (the real ones need a GPU: python/tests/test_ops_gpu.py).
#include <atomic>
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "catch.hpp"
#include "plan_cache.hpp"

using fp8gemm::torch_ops::PlanCache;
using fp8gemm::torch_ops::PlanCacheStats;
using fp8gemm::torch_ops::PlanKey;

namespace {

/// A stand-in plan: built on one buffer, re-pointed by rebind() (which refuses odd addresses,
/// like a plan refusing a misaligned pointer), used by run().
struct FakePlan {
  std::int64_t buffer = 0;
  int rebinds = 0, runs = 0;
  std::atomic<int> inside{0};  // threads inside rebind() or run() now: must never exceed 1
  std::atomic<int> overlaps{0};
  explicit FakePlan(std::int64_t b) : buffer(b) {}
  void enter() {
    if (inside.fetch_add(1) != 0) overlaps.fetch_add(1);
  }
  void leave() { inside.fetch_sub(1); }
  void rebind(std::int64_t b) {
    enter();
    if (b % 2 != 0) {
      leave();
      throw std::invalid_argument("FakePlan: buffer " + std::to_string(b) + " is odd");
    }
    buffer = b;
    ++rebinds;
    leave();
  }
  std::int64_t run() {
    enter();
    ++runs;
    const std::int64_t b = buffer;
    leave();
    return b;
  }
};

PlanKey key_of(std::int64_t shape) { return PlanKey().add(std::int64_t(1)).add(shape); }
PlanKey buffers_of(std::int64_t b) { return PlanKey().add(b); }

/// One "op call": the plan for `shape`, pointed at `buffer`, run; returns the buffer it ran on.
std::int64_t call(PlanCache<FakePlan>& cache, std::int64_t shape, std::int64_t buffer,
                  std::atomic<int>* builds = nullptr) {
  std::int64_t ran_on = -1;
  cache.run(
      key_of(shape), buffers_of(buffer),
      [&] {
        if (builds) builds->fetch_add(1);
        return std::make_unique<FakePlan>(buffer);
      },
      [&](FakePlan& p) { p.rebind(buffer); }, [&](FakePlan& p) { ran_on = p.run(); });
  return ran_on;
}

}  // namespace

TEST_CASE("plan cache: keyed without the buffers, re-pointed only when they change",
          "[plan_cache][cpu]") {
  PlanCacheStats stats;
  PlanCache<FakePlan> cache(stats);
  CHECK(call(cache, 64, 100) == 100);  // miss: built on 100
  CHECK(stats.misses == 1);
  CHECK(stats.hits == 0);
  CHECK(stats.rebinds == 0);
  CHECK(call(cache, 64, 100) == 100);  // hit, same buffers: no rebind
  CHECK(stats.hits == 1);
  CHECK(stats.rebinds == 0);
  CHECK(call(cache, 64, 200) == 200);  // hit, other buffers: re-pointed
  CHECK(stats.hits == 2);
  CHECK(stats.rebinds == 1);
  CHECK(call(cache, 64, 200) == 200);
  CHECK(stats.rebinds == 1);
  CHECK(call(cache, 64, 100) == 100);
  CHECK(stats.rebinds == 2);
  CHECK(cache.size() == 1);
  CHECK(call(cache, 128, 100) == 100);  // another shape: another plan
  CHECK(stats.misses == 2);
  CHECK(cache.size() == 2);
}

TEST_CASE("plan cache: a refused rebind leaves the plan cached and unchanged",
          "[plan_cache][cpu]") {
  PlanCacheStats stats;
  PlanCache<FakePlan> cache(stats);
  CHECK(call(cache, 64, 100) == 100);
  CHECK_THROWS_AS(call(cache, 64, 101), std::invalid_argument);  // odd: refused
  CHECK(stats.rebinds == 0);
  CHECK(cache.size() == 1);
  CHECK(call(cache, 64, 100) == 100);  // still pointing at 100: no rebind needed
  CHECK(stats.rebinds == 0);
  CHECK(stats.misses == 1);
  // A build that throws caches nothing.
  CHECK_THROWS_AS(
      cache.run(
          key_of(7), buffers_of(0),
          []() -> std::unique_ptr<FakePlan> { throw std::invalid_argument("bad call"); },
          [](FakePlan&) {}, [](FakePlan&) {}),
      std::invalid_argument);
  CHECK(cache.size() == 1);
}

TEST_CASE("plan cache: least recently used first out; capacity 0 keeps nothing",
          "[plan_cache][cpu]") {
  PlanCacheStats stats;
  PlanCache<FakePlan> cache(stats);
  cache.set_capacity(2);
  call(cache, 1, 10);
  call(cache, 2, 10);
  call(cache, 1, 10);  // 1 is now the most recent
  call(cache, 3, 10);  // evicts 2
  CHECK(cache.size() == 2);
  const auto misses = stats.misses.load();
  call(cache, 1, 10);
  CHECK(stats.misses == misses);  // still cached
  call(cache, 2, 10);
  CHECK(stats.misses == misses + 1);  // was evicted
  cache.set_capacity(0);
  CHECK(cache.size() == 0);
  std::atomic<int> builds{0};
  CHECK(call(cache, 1, 20, &builds) == 20);
  CHECK(call(cache, 1, 30, &builds) == 30);
  CHECK(builds == 2);
  CHECK(cache.size() == 0);
}

TEST_CASE("plan cache: one cached plan from many threads, rebind and run take turns",
          "[plan_cache][cpu]") {
  PlanCacheStats stats;
  PlanCache<FakePlan> cache(stats);
  constexpr int kThreads = 8, kCalls = 2000;
  std::atomic<int> builds{0}, wrong{0}, ready{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([&, t] {
      ready.fetch_add(1);
      while (ready.load() < kThreads) std::this_thread::yield();
      for (int i = 0; i < kCalls; ++i) {
        const std::int64_t buffer = 2 * (t * kCalls + i);  // every call its own buffers
        if (call(cache, 64, buffer, &builds) != buffer) wrong.fetch_add(1);
      }
    });
  for (auto& th : threads) th.join();
  CHECK(wrong == 0);  // every call ran on its own buffers
  CHECK(cache.size() == 1);
  CHECK(builds >= 1);
  CHECK(builds <= kThreads);  // only threads that missed at once built one
  CHECK(stats.hits + stats.misses == kThreads * kCalls);
  // The cached plan: never two threads inside it at once.
  std::int64_t overlaps = -1;
  cache.run(
      key_of(64), buffers_of(-2), [] { return std::make_unique<FakePlan>(0); },
      [](FakePlan& p) { p.rebind(-2); }, [&](FakePlan& p) { overlaps = p.overlaps.load(); });
  CHECK(overlaps == 0);
}
