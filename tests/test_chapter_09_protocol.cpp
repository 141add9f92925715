// Chapter 9, Blackwell MXFP8 kernel: its barrier protocol, walked on the CPU under random
// schedules. The kernel (kernel_sm100.cu) has never run (no Blackwell GPU here), and a wrong
// arrival count, parity or missing tail shows on hardware as a hang or a silently wrong tile.
// This test plays one unit of the persistent grid (a CTA alone, or a CTA pair) as the kernel's
// roles do it: the producer(s), the MMA thread, the four epilogue warps of each CTA, with
// mbarriers as the PTX ISA defines them (arrival count, transaction bytes, phase parity;
// try_wait.parity P succeeds once the phase of parity P has completed), TMA loads completing in
// any order, the tensor core finishing its MMA batches in order with each tcgen05.commit's
// arrival after the MMAs before it, and the CTAs' exit after their last barrier. Any schedule
// may happen. It checks:
//   - no deadlock: every role finishes;
//   - the MMA reads a stage only after every CTA's loads of that K block landed in it, and a
//     producer refills a stage only after the MMAs that read its last fill completed;
//   - the MMA overwrites an accumulator only after every epilogue warp of the unit read its last
//     tile, and an epilogue reads an accumulator only after the tile's MMAs completed;
//   - a tcgen05.cp of scales into TMEM never overwrites a scale slot that an earlier MMA batch
//     may still read (the ISA orders cp -> mma of one thread, not mma -> cp);
//   - every (tile, CTA, epilogue warp) stores once;
//   - no arrival or byte reaches a barrier of a CTA that has exited (the tails).
// The protocol's numbers come from sm100_config.hpp (what the kernel initialises). Mutations of
// the protocol (one field each) must each fail under some schedule: the checks can fail.
// This is a model of the kernel's control flow written beside it, not the kernel: it shows the
// protocol is consistent, not that the CUDA code implements it (that needs a B200).
#include <cstdint>
#include <algorithm>
#include <deque>
#include <functional>
#include <random>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "catch.hpp"
#include "sm100_config.hpp"

using namespace fp8gemm::ch09;

namespace {

/// What the kernel does, as data (Protocol::of reads the kernel's constants); the test mutates one
/// field at a time.
struct Protocol {
  int cta_group = 1;
  int stages = 0;
  int accum_stages = kAccumStages;
  std::uint32_t full_arrivals = kFullArrivals;
  std::uint32_t commit_arrivals = kCommitArrivals;
  std::uint32_t tmem_empty_arrivals = 0;
  std::int64_t expect_tx = 0;      ///< bytes the (even CTA's) producer's arrive.expect_tx adds
  std::int64_t cta_tx = 0;         ///< bytes one CTA's loads of a stage complete
  bool loads_to_even = true;       ///< pair: the odd CTA's loads complete on the even CTA's full
  bool multicast_commits = true;   ///< pair: commits arrive on both CTAs' barriers
  bool epilogue_to_even = true;    ///< pair: the odd CTA's epilogue arrives on the even CTA's
  bool tails = true;               ///< producer and accumulator tails before the exit
  bool scale_slot_per_stage = true;  ///< each stage's scales in their own TMEM columns

  static Protocol of(int cta_group) {
    const Sm100Layout l = sm100_layout(cta_group);
    Protocol p;
    p.cta_group = cta_group;
    p.stages = l.stages;
    p.tmem_empty_arrivals = fp8gemm::ch09::tmem_empty_arrivals(cta_group);
    p.expect_tx = l.stage_tx_bytes;
    p.cta_tx = l.cta_tx_bytes;
    return p;
  }
};

struct Failure : std::runtime_error {
  using std::runtime_error::runtime_error;
};
void require(bool ok, const std::string& what) {
  if (!ok) throw Failure(what);
}

struct Barrier {
  std::uint32_t count = 0, pending = 0;
  std::int64_t tx = 0;
  int phase = 0;  ///< parity of the phase in progress
  int cta = 0;
  const bool* exited = nullptr;
  void init(std::uint32_t n) { count = pending = n; }
  void complete_if_done() {
    if (pending == 0 && tx == 0) {
      phase ^= 1;
      pending = count;
    }
  }
  void arrive(std::uint32_t n, const char* what) {
    require(!*exited, std::string(what) + ": arrival on a barrier of an exited CTA");
    require(pending >= n, std::string(what) + ": more arrivals than the barrier's count");
    pending -= n;
    complete_if_done();
  }
  void expect(std::int64_t bytes) { tx += bytes; }
  void complete_tx(std::int64_t bytes) {
    require(!*exited, "TMA bytes completing on a barrier of an exited CTA");
    tx -= bytes;
    complete_if_done();
  }
  bool ready(int parity) const { return phase != parity; }  // mbarrier.try_wait.parity
};

struct Stage {
  std::int64_t tag = -1;  ///< which (tile, K block) the last fill holds: tile * 1000 + kb
  bool landed = true, consumed = true;
  int reading = 0;  ///< MMA batches in flight that read it
};
struct Accum {
  std::int64_t tile = -1;
  bool complete = true;  ///< the tile's MMAs finished
  int reads = 0;         ///< epilogue warps of the unit that read the current tile
};
struct Cta {
  std::vector<Barrier> full, empty, tmem_full, tmem_empty;
  std::vector<Stage> stage;
  std::vector<int> slot_reading;  ///< per TMEM scale slot: MMA batches in flight that read it
  std::vector<Accum> acc;  ///< this CTA's TMEM accumulators
  bool exited = false;
};

/// One unit running `tiles` tiles of `k_blocks` K blocks under the schedule drawn from `seed`.
/// Throws Failure on a violated check.
void play(const Protocol& P, int tiles, int k_blocks, std::uint64_t seed) {
  const int G = P.cta_group, S = P.stages, A = P.accum_stages, kWarps = kEpilogueWarps;
  std::vector<Cta> cta(static_cast<std::size_t>(G));
  for (int r = 0; r < G; ++r) {
    Cta& c = cta[std::size_t(r)];
    c.full.resize(std::size_t(S));
    c.empty.resize(std::size_t(S));
    c.tmem_full.resize(std::size_t(A));
    c.tmem_empty.resize(std::size_t(A));
    c.stage.resize(std::size_t(S));
    c.acc.resize(std::size_t(A));
    c.slot_reading.assign(P.scale_slot_per_stage ? std::size_t(S) : 1u, 0);
    for (auto* v : {&c.full, &c.empty, &c.tmem_full, &c.tmem_empty})
      for (Barrier& b : *v) {
        b.cta = r;
        b.exited = &c.exited;
      }
    for (Barrier& b : c.full) b.init(P.full_arrivals);
    for (Barrier& b : c.empty) b.init(P.commit_arrivals);
    for (Barrier& b : c.tmem_full) b.init(P.commit_arrivals);
    for (Barrier& b : c.tmem_empty) b.init(P.tmem_empty_arrivals);
  }
  auto commit_targets = [&](std::vector<Barrier> Cta::*set, int index) {
    std::vector<Barrier*> t{&(cta[0].*set)[std::size_t(index)]};
    if (G == 2 && P.multicast_commits) t.push_back(&(cta[1].*set)[std::size_t(index)]);
    return t;
  };

  // In flight, landing in any order: TMA bytes, tcgen05.commit arrivals (each commit's after the
  // MMAs before it completed), the odd CTA's remote arrivals.
  std::vector<std::function<void()>> async;
  struct Batch {                           // MMAs of one K block, complete in issue order
    int stage, acc, slot;
    bool last;  ///< the tile's last K block: tcgen05.commit -> tmem_full too
  };
  std::deque<Batch> mma;
  std::vector<int> stores(static_cast<std::size_t>(tiles * G * kWarps), 0);

  // ---- the roles: each step() does one wait and what follows it up to the next wait; returns
  // false when blocked ----
  struct Producer {
    int r, t = 0, kb = 0, stage = 0, phase = 0, tail = -1;
    bool done = false;
  };
  std::vector<Producer> producer;
  for (int r = 0; r < G; ++r) producer.push_back(Producer{r});
  auto advance = [&](int& stage, int& phase) {
    if (++stage == S) {
      stage = 0;
      phase ^= 1;
    }
  };
  auto producer_step = [&](Producer& p) {
    Cta& own = cta[std::size_t(p.r)];
    if (p.t < tiles) {
      if (!own.empty[std::size_t(p.stage)].ready(p.phase ^ 1)) return false;
      Stage& st = own.stage[std::size_t(p.stage)];
      require(st.consumed && st.reading == 0,
              "producer refills a stage whose MMAs have not completed");
      Barrier& full = (G == 2 && P.loads_to_even) ? cta[0].full[std::size_t(p.stage)]
                                                  : own.full[std::size_t(p.stage)];
      if (p.r == 0 || !P.loads_to_even) {  // the arming producer
        full.expect(P.expect_tx);
        full.arrive(1, "producer arrive.expect_tx");
      }
      st.tag = std::int64_t(p.t) * 1000 + p.kb;
      st.landed = st.consumed = false;
      Stage* s = &st;
      Barrier* f = &full;
      const std::int64_t bytes = P.cta_tx;
      async.push_back([s, f, bytes] {
        s->landed = true;
        f->complete_tx(bytes);
      });
      advance(p.stage, p.phase);
      if (++p.kb == k_blocks) {
        p.kb = 0;
        ++p.t;
      }
      return true;
    }
    if (P.tails) {
      if (p.tail < 0) p.tail = S;
      if (p.tail > 0) {
        if (!own.empty[std::size_t(p.stage)].ready(p.phase ^ 1)) return false;
        --p.tail;
        advance(p.stage, p.phase);
        return true;
      }
    }
    p.done = true;
    return true;
  };

  struct Mma {
    int t = 0, kb = 0, stage = 0, phase = 0, iter = 0, tail = -1;
    bool waiting_acc = true, done = false;
  } m;
  auto mma_step = [&]() {
    if (m.t < tiles) {
      const int acc = m.iter % A, acc_phase = (m.iter / A) & 1;
      if (m.waiting_acc) {
        if (!cta[0].tmem_empty[std::size_t(acc)].ready(acc_phase ^ 1)) return false;
        for (Cta& c : cta) {
          Accum& a = c.acc[std::size_t(acc)];
          require(a.tile < 0 || (a.complete && a.reads == kWarps * G),
                  "MMA overwrites an accumulator an epilogue warp has not read");
          a.tile = m.t;
          a.complete = false;
          a.reads = 0;
        }
        m.waiting_acc = false;
        return true;
      }
      if (!cta[0].full[std::size_t(m.stage)].ready(m.phase)) return false;
      const std::size_t slot = P.scale_slot_per_stage ? std::size_t(m.stage) : 0u;
      for (Cta& c : cta) {
        Stage& st = c.stage[std::size_t(m.stage)];
        require(st.tag == std::int64_t(m.t) * 1000 + m.kb && st.landed,
                "MMA reads a stage before every CTA's loads of its K block landed");
        ++st.reading;
        // tcgen05.cp of this K block's scales into the slot: ordered before this batch's MMAs
        // (cp -> mma is a tcgen05 pipeline), not after earlier batches (mma -> cp is not).
        require(c.slot_reading[slot] == 0,
                "tcgen05.cp overwrites scales an earlier MMA batch may still read");
        ++c.slot_reading[slot];
      }
      const bool last = m.kb == k_blocks - 1;
      mma.push_back(Batch{m.stage, acc, int(slot), last});
      advance(m.stage, m.phase);
      if (last) {
        m.kb = 0;
        ++m.t;
        ++m.iter;
        m.waiting_acc = true;
      } else {
        ++m.kb;
      }
      return true;
    }
    if (P.tails) {
      if (m.tail < 0) m.tail = A;
      if (m.tail > 0) {
        const int acc = m.iter % A, acc_phase = (m.iter / A) & 1;
        if (!cta[0].tmem_empty[std::size_t(acc)].ready(acc_phase ^ 1)) return false;
        --m.tail;
        ++m.iter;
        return true;
      }
    }
    m.done = true;
    return true;
  };
  auto mma_complete_front = [&]() {
    const Batch b = mma.front();
    mma.pop_front();
    for (Cta& c : cta) {
      Stage& st = c.stage[std::size_t(b.stage)];
      --st.reading;
      st.consumed = true;
      --c.slot_reading[std::size_t(b.slot)];
      if (b.last) c.acc[std::size_t(b.acc)].complete = true;
    }
    // The tcgen05.commits after this batch: their arrivals are on their way once it completed.
    for (Barrier* e : commit_targets(&Cta::empty, b.stage))
      async.push_back([e] { e->arrive(1, "commit -> empty"); });
    if (b.last)
      for (Barrier* f : commit_targets(&Cta::tmem_full, b.acc))
        async.push_back([f] { f->arrive(1, "commit -> tmem_full"); });
  };

  struct Epilogue {
    int r, q, t = 0;
    bool done = false;
  };
  std::vector<Epilogue> epilogue;
  for (int r = 0; r < G; ++r)
    for (int q = 0; q < kWarps; ++q) epilogue.push_back(Epilogue{r, q});
  auto epilogue_step = [&](Epilogue& e) {
    if (e.t == tiles) {
      e.done = true;
      return true;
    }
    const int acc = e.t % A, acc_phase = (e.t / A) & 1;
    Cta& own = cta[std::size_t(e.r)];
    if (!own.tmem_full[std::size_t(acc)].ready(acc_phase)) return false;
    Accum& a = own.acc[std::size_t(acc)];
    require(a.tile == e.t && a.complete, "epilogue reads an accumulator before its MMAs completed");
    ++stores[std::size_t((e.t * G + e.r) * kWarps + e.q)];
    for (Cta& c : cta) ++c.acc[std::size_t(acc)].reads;  // counted per unit
    Barrier* te = (G == 2 && P.epilogue_to_even) ? &cta[0].tmem_empty[std::size_t(acc)]
                                                 : &own.tmem_empty[std::size_t(acc)];
    if (te->cta == e.r)
      te->arrive(32, "epilogue -> tmem_empty");  // the warp's 32 threads
    else  // mbarrier.arrive.shared::cluster onto the peer: on its way
      async.push_back([te] { te->arrive(32, "remote epilogue -> tmem_empty"); });
    ++e.t;
    return true;
  };

  // ---- the scheduler: any enabled step, any TMA completion, the oldest MMA batch ----
  std::mt19937_64 rng(seed);
  for (std::int64_t steps = 0;; ++steps) {
    require(steps < 1000000, "schedule does not terminate");
    std::vector<std::function<bool()>> options;
    bool all_done = true;
    for (Producer& p : producer)
      if (!p.done) {
        all_done = false;
        options.push_back([&] { return producer_step(p); });
      }
    if (!m.done) {
      all_done = false;
      options.push_back([&] { return mma_step(); });
    }
    for (Epilogue& e : epilogue)
      if (!e.done) {
        all_done = false;
        options.push_back([&] { return epilogue_step(e); });
      }
    for (std::size_t i = 0; i < async.size(); ++i)
      options.push_back([&, i] {
        auto f = async[i];
        async.erase(async.begin() + std::ptrdiff_t(i));
        f();
        return true;
      });
    if (!mma.empty()) options.push_back([&] {
        mma_complete_front();
        return true;
      });
    // The exit: a CTA passes its last barrier (__syncthreads, or with its peer the cluster
    // barrier) once its roles are done; after that nothing may reach its barriers.
    bool roles_done = all_done;
    if (roles_done && !cta[0].exited)
      for (Cta& c : cta) c.exited = true;
    if (options.empty()) {
      require(all_done, "deadlock: every role waits");
      break;
    }
    // Try the options in a random order until one makes progress.
    std::shuffle(options.begin(), options.end(), rng);
    bool progressed = false;
    for (auto& o : options)
      if (o()) {
        progressed = true;
        break;
      }
    require(progressed, "deadlock: every role waits, nothing in flight can complete");
  }
  for (int s : stores) require(s == 1, "a (tile, CTA, epilogue warp) did not store exactly once");
}

/// Whether `P` passes `seeds` random schedules on the given work; the first failure's message in
/// `why`.
bool passes(const Protocol& P, int tiles, int k_blocks, int seeds, std::string& why) {
  for (int s = 0; s < seeds; ++s) try {
      play(P, tiles, k_blocks, std::uint64_t(s) * 7919 + std::uint64_t(tiles * 131 + k_blocks));
    } catch (const Failure& f) {
      why = f.what();
      return false;
    }
  return true;
}

}  // namespace

TEST_CASE("ch09 barrier protocol: the kernel's holds under random schedules", "[ch09][protocol]") {
  for (const int g : {1, 2})
    for (const auto [tiles, k_blocks] :
         {std::pair{1, 1}, {1, 3}, {2, 1}, {3, 7}, {5, 2}, {4, 13}, {9, 17}, {2, 6}, {3, 8}}) {
      std::string why;
      const bool ok = passes(Protocol::of(g), tiles, k_blocks, 400, why);
      INFO("cta_group " << g << ", " << tiles << " tiles x " << k_blocks << " K blocks: " << why);
      CHECK(ok);
    }
}

TEST_CASE("ch09 barrier protocol: each broken variant fails", "[ch09][protocol]") {
  // One field changed at a time; each must fail under some schedule of some work.
  struct Mutation {
    const char* name;
    int cta_group;
    std::function<void(Protocol&)> apply;
    const char* expect;  ///< a piece of the failure message
  };
  const std::vector<Mutation> mutations = {
      {"pair: tmem_empty counts one CTA's epilogue", 2,
       [](Protocol& p) { p.tmem_empty_arrivals = kEpilogueThreads; }, ""},
      {"pair: the even producer expects one CTA's bytes", 2,
       [](Protocol& p) { p.expect_tx = p.cta_tx; }, ""},
      {"pair: no tails", 2, [](Protocol& p) { p.tails = false; }, "exited CTA"},
      {"pair: commits to the even CTA only", 2, [](Protocol& p) { p.multicast_commits = false; },
       "deadlock"},
      {"pair: odd epilogue arrives on its own barrier", 2,
       [](Protocol& p) { p.epilogue_to_even = false; }, "deadlock"},
      {"pair: odd loads complete on the odd CTA's barrier", 2,
       [](Protocol& p) { p.loads_to_even = false; }, ""},
      {"alone: tmem_empty counts two warps", 1,
       [](Protocol& p) { p.tmem_empty_arrivals = 64; }, ""},
      {"alone: one accumulator stage counted as two", 1,
       [](Protocol& p) { p.tmem_empty_arrivals = 2 * kEpilogueThreads; }, "deadlock"},
      {"alone: no tails", 1, [](Protocol& p) { p.tails = false; }, "exited CTA"},
      {"alone: one TMEM scale slot for every stage", 1,
       [](Protocol& p) { p.scale_slot_per_stage = false; }, "tcgen05.cp overwrites"},
      {"pair: one TMEM scale slot for every stage", 2,
       [](Protocol& p) { p.scale_slot_per_stage = false; }, "tcgen05.cp overwrites"},
  };
  for (const Mutation& mu : mutations) {
    Protocol p = Protocol::of(mu.cta_group);
    mu.apply(p);
    bool failed = false;
    std::string why;
    for (const auto [tiles, k_blocks] : {std::pair{3, 7}, {4, 13}, {5, 2}, {2, 1}})
      if (!passes(p, tiles, k_blocks, 150, why)) {
        failed = true;
        break;
      }
    INFO(mu.name << ": " << why);
    CHECK(failed);
    CHECK(why.find(mu.expect) != std::string::npos);
  }
}
