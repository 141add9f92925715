// A small LRU cache of fp8gemm plans for the PyTorch ops.
//
// Why: a plan (fp8gemm::PerTensorPlan, BlockScaledPlan, GroupedPlan, WeightGradPlan) validates the
// call, queries every pointer, sizes the persistent grid (an occupancy query) and encodes the TMA
// tensor maps: tens of microseconds of host work. Its run() only launches. A PyTorch op receives
// new tensors on every call, but PyTorch's caching allocator hands the same addresses back in
// steady state (a training step, a benchmark loop, a CUDA-graph warm-up), so a plan keyed by
// everything it was built from (device, shapes, leading dimensions, scale layouts, every data
// pointer, options) is reused and the op costs a hash lookup plus the launch.
//
// Correctness of reuse: a plan depends on nothing but its key (addresses, shapes, layouts,
// options, the device): any tensors that produce the same key are the same call, whoever owns
// the memory now. Plans never own device memory here (the ops always hand chapter 7 a
// TMA-readable scale_a layout, so its plan allocates no conversion workspace), so a cached plan
// pins nothing, and run() is const and may be called from several threads and streams at once.
#pragma once

#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <list>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <unordered_map>
#include <utility>

namespace fp8gemm::torch_ops {

/// Everything a plan is built from, as integers (pointers as their addresses). `kind` tells the
/// plan types apart so that one cache holds them all.
struct PlanKey {
  static constexpr int kMax = 24;
  std::array<std::int64_t, kMax> v{};
  int n = 0;

  PlanKey& add(std::int64_t x) {
    if (n == kMax) throw std::logic_error("fp8gemm PlanKey: more than kMax values (a bug)");
    v[std::size_t(n++)] = x;
    return *this;
  }
  PlanKey& add(const void* p) { return add(std::int64_t(reinterpret_cast<std::uintptr_t>(p))); }
  bool operator==(const PlanKey& o) const {
    if (n != o.n) return false;
    for (int i = 0; i < n; ++i)
      if (v[std::size_t(i)] != o.v[std::size_t(i)]) return false;
    return true;
  }
};

struct PlanKeyHash {
  std::size_t operator()(const PlanKey& k) const {
    std::uint64_t h = 1469598103934665603ull;  // FNV-1a over the 64-bit words, then a final mix
    for (int i = 0; i < k.n; ++i) {
      h ^= std::uint64_t(k.v[std::size_t(i)]);
      h *= 1099511628211ull;
    }
    h ^= h >> 33;
    return std::size_t(h);
  }
};

/// Counters for tests and benchmarks (fp8gemm.ops.plan_cache_stats()).
struct PlanCacheStats {
  std::atomic<std::int64_t> hits{0}, misses{0};
};

/// An LRU map from PlanKey to a shared, immutable plan of type P.
template <class P>
class PlanCache {
 public:
  explicit PlanCache(PlanCacheStats& stats) : stats_(stats) {}

  /// The plan for `key`, built by `make()` (which returns std::unique_ptr<P> and may throw) on a
  /// miss. The plan is built outside the lock (it is slow, and may throw): two threads missing on
  /// the same key at once both build one, and the second insert is dropped.
  template <class Make>
  std::shared_ptr<const P> get(const PlanKey& key, Make&& make) {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      auto it = index_.find(key);
      if (it != index_.end()) {
        lru_.splice(lru_.begin(), lru_, it->second);  // most recently used first
        stats_.hits.fetch_add(1, std::memory_order_relaxed);
        return it->second->second;
      }
    }
    stats_.misses.fetch_add(1, std::memory_order_relaxed);
    std::shared_ptr<const P> plan(make());
    std::lock_guard<std::mutex> lock(mutex_);
    if (capacity_ > 0 && index_.find(key) == index_.end()) {
      lru_.emplace_front(key, plan);
      index_.emplace(key, lru_.begin());
      while (index_.size() > capacity_) {
        index_.erase(lru_.back().first);
        lru_.pop_back();  // a plan still running elsewhere stays alive through its shared_ptr
      }
    }
    return plan;
  }

  void clear() {
    std::lock_guard<std::mutex> lock(mutex_);
    index_.clear();
    lru_.clear();
  }
  std::size_t size() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return index_.size();
  }
  /// 0: keep nothing (every call builds its plan; for measuring what the cache saves).
  void set_capacity(std::size_t capacity) {
    std::lock_guard<std::mutex> lock(mutex_);
    capacity_ = capacity;
    while (index_.size() > capacity_) {
      index_.erase(lru_.back().first);
      lru_.pop_back();
    }
  }
  std::size_t capacity() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return capacity_;
  }

 private:
  using Entry = std::pair<PlanKey, std::shared_ptr<const P>>;
  mutable std::mutex mutex_;
  std::list<Entry> lru_;
  std::unordered_map<PlanKey, typename std::list<Entry>::iterator, PlanKeyHash> index_;
  std::size_t capacity_ = 1024;
  PlanCacheStats& stats_;
};

}  // namespace fp8gemm::torch_ops
