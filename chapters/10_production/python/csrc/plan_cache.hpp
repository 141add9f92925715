// A small LRU cache of fp8gemm plans for the PyTorch ops.
//
// Why: a plan (fp8gemm::PerTensorPlan, BlockScaledPlan, GroupedPlan, WeightGradPlan) validates the
// call, queries every pointer, chooses its kernel, sizes the persistent grid (an occupancy query)
// and encodes the TMA tensor maps: several microseconds of host work. Its run() only launches.
//
// Keys: everything a plan is built from except the buffers: the device, the shapes, the leading
// dimensions and scale layouts (the tensors' strides), the output dtype and the options, and the
// alignment facts about the buffers that change the plan's kernel (whether D is 16-byte aligned:
// TMA can store it). A PyTorch op gets new tensors on most calls, and an op that allocates its
// output gets a new D whenever the caching allocator hands out another block, so the buffers are
// not part of the key: a cached plan is re-pointed at the call's buffers when they are not the
// ones it points at (the plan's rebind(): the new pointers checked, the tensor maps' addresses
// rewritten; no validation of the shape, no kernel choice, no occupancy query, no encoding), and
// costs nothing more when they are (the steady state of a training step, a benchmark loop, a
// CUDA-graph warm-up with the same allocations).
//
// Concurrency: rebind() changes the plan, so each cached plan has a lock held across rebind() and
// run() (a launch copies the parameters when it is enqueued: once run() returns, the plan may be
// re-pointed for the next call while that launch is still pending or being captured). Calls with
// different keys do not wait for each other; calls of one key from several threads take turns
// for the few microseconds of the launch. The plans the public ops build own no device memory
// (the ops always hand chapter 7 a TMA-readable scale_a layout, so its plan allocates no
// conversion workspace), so a plan dropped from the cache while a launch of it is pending is
// harmless. Two exceptions own a workspace: gemm_mx with dequantize_bf16=True (its bf16 operands)
// or requantize_block_scaled=True (its re-quantised operands), and the private
// _gemm_grouped_kernel given a stream-K (_sk, _skr) or counter (_dyn) comparison kernel by name
// (partial tiles, flags, a counter). Those ops key such a plan by the stream too
// (one plan per stream: two streams never share the workspace), and gemm_mx refuses to be
// captured on those paths (a graph would outlive the cache's hold on the workspace). Dropping such
// a plan while a launch of it is pending relies on cudaFree waiting for the device's pending
// work, which the runtime does in practice but does not promise.
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

/// A list of integers (addresses as integers): a plan's key (everything it is built from but its
/// buffers; a kind number first tells the plan types apart), or the buffers a plan points at.
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
  /// hits: the key was cached; misses: a plan was built; rebinds: a cached plan was re-pointed
  /// at other buffers (a hit whose buffers differed from the last call's); tile_counter_runs:
  /// grouped launches of a counter-schedule kernel given the op's per-stream counter
  /// (GroupedPlan::takes_tile_counter()), so a test can see which schedule the default chose.
  std::atomic<std::int64_t> hits{0}, misses{0}, rebinds{0}, tile_counter_runs{0};
};

/// A cached plan, the buffers it points at now (as a PlanKey of addresses) and its lock.
template <class P>
struct CachedPlan {
  std::mutex mutex;
  std::unique_ptr<P> plan;
  PlanKey bound;
};

/// An LRU map from PlanKey to a cached plan of type P.
template <class P>
class PlanCache {
 public:
  explicit PlanCache(PlanCacheStats& stats) : stats_(stats) {}

  /// The call: the plan for `key` (built by `make()`, which returns std::unique_ptr<P> on the
  /// call's buffers and may throw, on a miss), re-pointed by `rebind(P&)` when the buffers it
  /// points at are not `buffers`, then `use(P&)`; rebind and use under the plan's lock. If
  /// rebind throws (a buffer the plan refuses) the plan is unchanged and still cached.
  template <class Make, class Rebind, class Use>
  void run(const PlanKey& key, const PlanKey& buffers, Make&& make, Rebind&& rebind, Use&& use) {
    const std::shared_ptr<CachedPlan<P>> entry = get(key, buffers, make);
    std::lock_guard<std::mutex> lock(entry->mutex);
    if (!(entry->bound == buffers)) {
      rebind(*entry->plan);
      entry->bound = buffers;
      stats_.rebinds.fetch_add(1, std::memory_order_relaxed);
    }
    use(*entry->plan);
  }

  /// The entry for `key`; on a miss a new one whose plan `make()` builds on `buffers`. The plan is
  /// built outside the cache's lock (it is slow, and may throw): two threads missing on the same
  /// key at once both build one, and the second insert is dropped (its caller still uses its own).
  template <class Make>
  std::shared_ptr<CachedPlan<P>> get(const PlanKey& key, const PlanKey& buffers, Make&& make) {
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
    auto entry = std::make_shared<CachedPlan<P>>();
    entry->plan = make();
    entry->bound = buffers;
    std::lock_guard<std::mutex> lock(mutex_);
    if (capacity_ > 0 && index_.find(key) == index_.end()) {
      lru_.emplace_front(key, entry);
      index_.emplace(key, lru_.begin());
      while (index_.size() > capacity_) {
        index_.erase(lru_.back().first);
        lru_.pop_back();  // a plan in use elsewhere stays alive through its shared_ptr
      }
    }
    return entry;
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
  using Entry = std::pair<PlanKey, std::shared_ptr<CachedPlan<P>>>;
  mutable std::mutex mutex_;
  std::list<Entry> lru_;
  std::unordered_map<PlanKey, typename std::list<Entry>::iterator, PlanKeyHash> index_;
  std::size_t capacity_ = 1024;
  PlanCacheStats& stats_;
};

}  // namespace fp8gemm::torch_ops
