// The library's kernel choice (dispatch.hpp): option, environment, the table learned from the
// committed sweep, then the chapter's own rule. Pure C++ (the chapters' kernel lists are host
// data), so tests/test_library_cpu.cpp runs it all without a GPU.
#include "fp8gemm/dispatch.hpp"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "bs_gemm.hpp"              // ch07::kernels, ch07::choose_kernel
#include "common/chapter_args.hpp"  // parse_shape, Shape::name
#include "common/engine/plan.hpp"   // engine::persistent_grid_clusters
#include "common/scaling.hpp"       // ceil_div
#include "hopper_mx.hpp"            // ch09::hopper_kernels
#include "ws_gemm.hpp"              // ch06::kernels, ch06::choose_kernel

namespace fp8gemm {

namespace detail {
// The generated table: kDispatchSources[], kDispatchTable[] and kDispatchCandidates[]
// (DispatchSource / DispatchEntry / DispatchCandidate aggregates).
#include "dispatch_table.inc"
}  // namespace detail

namespace {

std::string us(double v) {
  char b[32];
  std::snprintf(b, sizeof b, "%.1f us", v);
  return b;
}

/// The table row `e` rescaled to `usable_sms` (rule table_sms), or false when the row's sweep
/// ran on that many SMs (or says not how many) or timed no candidates for the shape.
bool rescaled_row(const DispatchEntry& e, const std::vector<engine::KernelInfo>& list,
                  int usable_sms, KernelChoice& out) {
  const DispatchSource& table_source = dispatch_sources()[std::size_t(e.source)];
  // The common case first, without a scan: a plan on as many SMs as the row's sweep had.
  if (usable_sms <= 0 || usable_sms == table_source.sms) return false;
  std::vector<std::pair<std::string, double>> candidates;
  int sweep_sms = 0;
  const char* path = "";
  for (const DispatchCandidate& c : dispatch_candidates())
    if (c.M == e.M && c.N == e.N && c.K == e.K && std::strcmp(c.family, e.family) == 0) {
      candidates.emplace_back(c.kernel, c.us);
      sweep_sms = dispatch_sources()[std::size_t(c.source)].sms;
      path = dispatch_sources()[std::size_t(c.source)].path;
    }
  // (A row corrected by a bench log has that log as its source, of 0 SMs: its candidates' sweep
  // decides; on the sweep's count the row stays as it is.)
  if (candidates.empty() || sweep_sms <= 0 || usable_sms == sweep_sms) return false;
  std::vector<TileShape> tiles;
  for (const auto& c : candidates)
    for (const engine::KernelInfo& k : list)
      if (k.name == c.first) tiles.push_back({k.name, k.block_m, k.block_n, k.cluster_m, k.cluster_n});
  const std::vector<RescaledTime> times =
      rescaled_times(candidates, e.M, e.N, sweep_sms, usable_sms, tiles);
  const std::string pick = rescaled_choice(times, sweep_sms, usable_sms, e.kernel);
  if (pick.empty()) return false;
  const auto show = [&](const std::string& name) {
    for (const RescaledTime& t : times)
      if (t.name == name) {
        char b[200];
        std::snprintf(b, sizeof b, "%s %.1f us x %lld/%lld waves = %.1f us", name.c_str(), t.us,
                      (long long)t.waves_usable, (long long)t.waves_sweep, t.predicted);
        return std::string(b);
      }
    return name + " (not among the sweep's candidates)";
  };
  std::string why = "dispatch table rescaled to " + std::to_string(usable_sms) + " SMs: " +
                    Shape{e.M, e.N, e.K}.name() + "'s times on " + std::to_string(sweep_sms) +
                    " SMs in " + path + ", each times its waves on " + std::to_string(usable_sms) +
                    " SMs over those on " + std::to_string(sweep_sms) + ": " + show(pick);
  if (pick != e.kernel) why += "; the row's " + show(e.kernel);
  why += " (" + std::to_string(times.size()) + " kernels)";
  out = {pick, DispatchRule::table_sms, why};
  return true;
}

/// The kernel `name` of `list`; std::invalid_argument naming where the name came from (the
/// engine's message lists the names there are).
const engine::KernelInfo& named(const std::vector<engine::KernelInfo>& list,
                                const std::string& name, const std::string& source,
                                const char* chapter) {
  try {
    return engine::find_kernel(list, name, chapter);
  } catch (const std::invalid_argument& e) {
    throw std::invalid_argument("fp8gemm: " + source + " = '" + name + "': " + e.what());
  }
}

/// Throws std::invalid_argument when kernel `k`, named by `source`, cannot write the call's D.
void require_epilogue(const engine::KernelInfo& k, const std::string& source, bool f32_output,
                      bool tma_store_ok) {
  using engine::EpilogueKind;
  const auto fail = [&](const std::string& why) {
    throw std::invalid_argument("fp8gemm: " + source + " = '" + k.name + "' " + why);
  };
  if (f32_output && !engine::writes_f32(k.epilogue))
    fail("writes bf16 D, the call asks for FP32 D (Output::f32): name a *_f32 kernel");
  if (!f32_output && engine::writes_f32(k.epilogue))
    fail("writes FP32 D, the call asks for bf16 D");
  // A TMA store needs 16-byte rows: ldd a multiple of 8 bf16 or 4 floats.
  const bool f32_tma = k.epilogue == EpilogueKind::tma_store_f32;
  if ((k.epilogue == EpilogueKind::tma_store || f32_tma) && !tma_store_ok)
    fail(std::string("stores D with TMA, which needs D 16-byte aligned and ldd a multiple of ") +
         (f32_tma ? "4" : "8") + "; this D is not: name a " +
         (f32_tma ? "*_f32 kernel without _tma" : "*_reg kernel"));
}

/// Throws std::invalid_argument when kernel `k`, named by `source`, accumulates otherwise than the
/// call asks (fast accumulation stays opt-in).
void require_accumulation(const engine::KernelInfo& k, const std::string& source,
                          engine::Accumulation accumulation) {
  if (k.accumulation != accumulation)
    throw std::invalid_argument("fp8gemm: " + source + " = '" + k.name + "' accumulates " +
                                engine::to_string(k.accumulation) +
                                ", the call asks for Accumulation::" +
                                engine::to_string(accumulation) +
                                " (fast accumulation is opt-in: set Options::accumulation)");
}

struct Family {
  DispatchFamily family;
  const std::vector<engine::KernelInfo>& list;
  const char* chapter;  // for find_kernel's message
};

/// The family's variable's kernel for the shape ("" if none), after checking every name in it,
/// whatever the shape: a typo shows on the first call, also on calls the variable does not serve.
std::string check_env(const Family& f, std::int64_t M, std::int64_t N, std::int64_t K,
                      const char* env) {
  const char* var = dispatch_env_var(f.family);
  const std::string env_kernel = env_kernel_for(var, env, M, N, K);
  if (env && *env) {
    std::stringstream ss(env);
    for (std::string item; std::getline(ss, item, ',');) {
      const auto eq = item.find('=');
      named(f.list, eq == std::string::npos ? item : item.substr(eq + 1), var, f.chapter);
    }
  }
  return env_kernel;
}

/// Steps 1-3 of the rule (dispatch.hpp); `fits` checks a named kernel against the call. Returns
/// false (choice untouched) when the chapter's rule must decide.
template <class Fits>
bool choose_named(const Family& f, std::int64_t M, std::int64_t N, std::int64_t K,
                  bool table_serves, const std::string& option, const char* env, Fits fits,
                  int usable_sms, KernelChoice& out) {
  if (!option.empty()) {
    fits(named(f.list, option, "Options::kernel", f.chapter), "Options::kernel");
    out = {option, DispatchRule::option, "Options::kernel"};
    return true;
  }
  const char* var = dispatch_env_var(f.family);
  const std::string env_kernel = check_env(f, M, N, K, env);
  if (table_serves && !env_kernel.empty()) {
    fits(named(f.list, env_kernel, var, f.chapter), var);
    out = {env_kernel, DispatchRule::environment, std::string(var) + "=" + env};
    return true;
  }
  if (table_serves) {
    if (const DispatchEntry* e = dispatch_table_entry(f.family, M, N, K)) {
      if (rescaled_row(*e, f.list, usable_sms, out)) return true;
      const DispatchSource& s = dispatch_sources()[std::size_t(e->source)];
      std::string why = std::string("dispatch table: ") + Shape{M, N, K}.name() + " ran " +
                        us(e->us) + " in " + s.path;
      if (*e->runner_up)
        why += " (runner-up " + std::string(e->runner_up) + " " + us(e->runner_up_us) + ", " +
               std::to_string(e->candidates) + " kernels timed)";
      out = {e->kernel, DispatchRule::table, why};
      return true;
    }
  }
  return false;
}

}  // namespace

const char* to_string(DispatchFamily f) {
  switch (f) {
    case DispatchFamily::block_scaled:
      return "block_scaled";
    case DispatchFamily::per_tensor_promoted:
      return "per_tensor_promoted";
    case DispatchFamily::per_tensor_fast:
      return "per_tensor_fast";
    case DispatchFamily::mxfp8_hopper:
      return "mxfp8_hopper";
  }
  return "?";
}

const char* dispatch_env_var(DispatchFamily f) {
  switch (f) {
    case DispatchFamily::block_scaled:
      return "FP8GEMM_KERNEL_BLOCK_SCALED";
    case DispatchFamily::per_tensor_promoted:
      return "FP8GEMM_KERNEL_PER_TENSOR_PROMOTED";
    case DispatchFamily::per_tensor_fast:
      return "FP8GEMM_KERNEL_PER_TENSOR_FAST";
    case DispatchFamily::mxfp8_hopper:
      return "FP8GEMM_KERNEL_MXFP8_HOPPER";
  }
  return "?";
}

const char* to_string(DispatchRule r) {
  switch (r) {
    case DispatchRule::option:
      return "option";
    case DispatchRule::environment:
      return "environment";
    case DispatchRule::table:
      return "table";
    case DispatchRule::chapter:
      return "chapter";
    case DispatchRule::epilogue:
      return "epilogue";
    case DispatchRule::single:
      return "single";
    case DispatchRule::table_sms:
      return "table_sms";
  }
  return "?";
}

const std::vector<DispatchEntry>& dispatch_table() {
  static const std::vector<DispatchEntry> rows(std::begin(detail::kDispatchTable),
                                               std::end(detail::kDispatchTable));
  return rows;
}

const std::vector<DispatchSource>& dispatch_sources() {
  static const std::vector<DispatchSource> rows(std::begin(detail::kDispatchSources),
                                                std::end(detail::kDispatchSources));
  return rows;
}

const std::vector<DispatchCandidate>& dispatch_candidates() {
  static const std::vector<DispatchCandidate> rows(std::begin(detail::kDispatchCandidates),
                                                   std::end(detail::kDispatchCandidates));
  return rows;
}

std::int64_t grid_waves(std::int64_t M, std::int64_t N, int block_m, int block_n, int sms,
                        int cluster_m, int cluster_n) {
  return engine::grid_waves(M, N, block_m, block_n, sms, cluster_m, cluster_n);
}

std::vector<RescaledTime> rescaled_times(
    const std::vector<std::pair<std::string, double>>& candidates, std::int64_t M,
    std::int64_t N, int sweep_sms, int usable_sms, const std::vector<TileShape>& tiles) {
  std::vector<RescaledTime> out;
  for (const auto& [name, t] : candidates) {
    const TileShape* shape = nullptr;
    for (const TileShape& s : tiles)
      if (s.name == name) shape = &s;
    if (shape == nullptr) continue;  // a bad tile shape gives 0 waves: skipped below
    const auto waves = [&](int sms) {
      return grid_waves(M, N, shape->block_m, shape->block_n, sms, shape->cluster_m,
                        shape->cluster_n);
    };
    RescaledTime r{name, t, waves(usable_sms), waves(sweep_sms), 0};
    if (r.waves_sweep <= 0) continue;
    r.predicted = t * double(r.waves_usable) / double(r.waves_sweep);
    out.push_back(r);
  }
  return out;
}

std::string rescaled_choice(const std::vector<RescaledTime>& times, int sweep_sms, int usable_sms,
                            const std::string& row, double margin) {
  const RescaledTime* best = nullptr;
  const RescaledTime* mine = nullptr;
  for (const RescaledTime& t : times) {
    if (best == nullptr || t.predicted < best->predicted) best = &t;
    if (t.name == row) mine = &t;
  }
  if (best == nullptr) return std::string();
  if (mine != nullptr) {
    if (usable_sms < sweep_sms && mine->waves_usable == mine->waves_sweep) return row;
    if (mine->predicted <= best->predicted * (1 + margin)) return row;
  }
  return best->name;
}

const DispatchEntry* dispatch_table_entry(DispatchFamily f, std::int64_t M, std::int64_t N,
                                          std::int64_t K) {
  const std::string name = to_string(f);
  for (const DispatchEntry& e : dispatch_table())
    if (e.M == M && e.N == N && e.K == K && name == e.family) return &e;
  return nullptr;
}

std::string env_kernel_for(const char* variable, const char* value, std::int64_t M, std::int64_t N,
                           std::int64_t K) {
  if (value == nullptr || *value == '\0') return "";
  const std::string v = value;
  const auto fail = [&](const std::string& why) {
    throw std::invalid_argument(std::string("fp8gemm: ") + variable + "='" + v + "': " + why +
                                " (want NAME, or MxNxK=NAME,...[,*=NAME])");
  };
  if (v.find('=') == std::string::npos) {
    if (v.find(',') != std::string::npos) fail("a list needs MxNxK=NAME entries");
    return v;
  }
  std::string match, rest;
  bool have_rest = false;
  std::stringstream ss(v);
  for (std::string item; std::getline(ss, item, ',');) {
    const auto eq = item.find('=');
    if (eq == std::string::npos || eq == 0 || eq + 1 == item.size())
      fail("'" + item + "' is not MxNxK=NAME");
    const std::string key = item.substr(0, eq), name = item.substr(eq + 1);
    if (key == "*") {
      if (have_rest) fail("'*' appears twice");
      have_rest = true;
      rest = name;
      continue;
    }
    Shape s{};
    try {
      s = parse_shape(key);
    } catch (const std::invalid_argument&) {
      fail("'" + key + "' is not a shape MxNxK");
    }
    if (s.M == M && s.N == N && s.K == K && match.empty()) match = name;
  }
  return match.empty() ? rest : match;
}

KernelChoice choose_block_scaled(std::int64_t M, std::int64_t N, std::int64_t K, bool f32_output,
                                 bool tma_store_ok, const std::string& option, const char* env,
                                 int usable_sms, bool accumulate) {
  const Family f{DispatchFamily::block_scaled, ch07::kernels(), "fp8gemm::ch07"};
  const bool serves = !f32_output && tma_store_ok;  // the table holds TMA-store bf16 kernels
  KernelChoice c;
  const auto fits = [&](const engine::KernelInfo& k, const std::string& source) {
    require_epilogue(k, source, f32_output, tma_store_ok);
  };
  if (choose_named(f, M, N, K, serves, option, env, fits, usable_sms, c)) return c;
  const ch07::Output out = f32_output ? ch07::Output::f32 : ch07::Output::bf16;
  const int rule_sms = engine::sms_or_reference(usable_sms);
  const engine::KernelInfo& k =
      ch07::choose_kernel(M, N, K, out, tma_store_ok, rule_sms, accumulate);
  c.kernel = k.name;
  if (serves) {
    c.rule = DispatchRule::chapter;
    c.why = "no table entry for " + Shape{M, N, K}.name() +
            ": chapter 7's choose_kernel (its hand table, else its rules on " +
            std::to_string(rule_sms) + " SMs)";
  } else {
    c.rule = DispatchRule::epilogue;
    // The reason follows the kernel chapter 7's rule chose (not a second copy of that rule).
    c.why = f32_output ? (k.epilogue == engine::EpilogueKind::tma_store_f32
                              ? "FP32 D with accumulate, 16-byte aligned with ldd % 4 == 0: "
                                "chapter 7's FP32 kernel by TMA (a reduce-add)"
                              : "FP32 D: chapter 7's FP32 kernel from registers")
                       : "D is not TMA-storable (16-byte aligned, ldd % 8 == 0): chapter 7's "
                         "registers-epilogue kernel";
  }
  if (!serves && env && *env)
    c.why +=
        std::string(" (") + dispatch_env_var(f.family) + " applies to bf16 D stored by TMA only)";
  return c;
}

KernelChoice choose_per_tensor(std::int64_t M, std::int64_t N, std::int64_t K,
                               engine::Accumulation accumulation, bool tma_store_ok,
                               const std::string& option, const char* env, int usable_sms) {
  const bool fast = accumulation == engine::Accumulation::fast;
  const Family f{fast ? DispatchFamily::per_tensor_fast : DispatchFamily::per_tensor_promoted,
                 ch06::kernels(), "fp8gemm::ch06"};
  KernelChoice c;
  const auto fits = [&](const engine::KernelInfo& k, const std::string& source) {
    require_accumulation(k, source, accumulation);
    require_epilogue(k, source, false, tma_store_ok);
  };
  if (choose_named(f, M, N, K, tma_store_ok, option, env, fits, usable_sms, c)) return c;
  const int rule_sms = engine::sms_or_reference(usable_sms);
  c.kernel = ch06::choose_kernel(M, N, K, accumulation, tma_store_ok, rule_sms).name;
  c.rule = tma_store_ok ? DispatchRule::chapter : DispatchRule::epilogue;
  c.why = tma_store_ok ? "no table entry for " + Shape{M, N, K}.name() +
                             ": chapter 6's choose_kernel (its hand table, else its rules on " +
                             std::to_string(rule_sms) + " SMs)"
                       : std::string(
                             "D is not TMA-storable (16-byte aligned, N % 8 == 0): "
                             "chapter 6's registers-epilogue kernel");
  return c;
}

KernelChoice choose_per_tensor_f32(std::int64_t M, std::int64_t N, std::int64_t K,
                                   engine::Accumulation accumulation, bool tma_store_ok,
                                   const std::string& option, const char* env, int usable_sms) {
  const bool fast = accumulation == engine::Accumulation::fast;
  if (!option.empty()) {
    const engine::KernelInfo& k =
        named(per_tensor_f32_kernels(), option, "Options::kernel", "fp8gemm (per-tensor FP32 D)");
    require_accumulation(k, "Options::kernel", accumulation);
    require_epilogue(k, "Options::kernel", true, tma_store_ok);
    return {option, DispatchRule::option, "Options::kernel"};
  }
  // The bf16 family's variable serves bf16 D only; its names are still checked (against chapter
  // 6's list, which it names), the shape itself does not matter for that.
  const Family f{fast ? DispatchFamily::per_tensor_fast : DispatchFamily::per_tensor_promoted,
                 ch06::kernels(), "fp8gemm::ch06"};
  check_env(f, M, N, 0, env);
  KernelChoice c;
  const int rule_sms = engine::sms_or_reference(usable_sms);
  // The tiles a kernel cuts D into (both halves of the rule count them).
  const auto tiles = [&](const engine::KernelInfo& t) {
    return ceil_div(M, std::int64_t(t.block_m)) * ceil_div(N, std::int64_t(t.block_n));
  };
  if (M <= 128) {
    // Chapter 6's decode tile: its pick for this shape (its hand table, the H200's bf16 sweep,
    // else its decode rule: 64-row tiles for M <= 64, the widest of 128, 64, 32, 16 columns that
    // gives about three quarters of the SMs a tile without a thin second wave, else 64 x 16 or
    // 64 x 32), as the FP32 kernel of that tile (block_m x block_n) from registers: a ping-pong
    // pick (chapter 6's fast 128 x 128 at 128 x 32768 x 512) gets the cooperative tile of its
    // size; where the library has no kernel of that size (chapter 6's 128 x 56 at 128 x 7168 x
    // 16384 promoted), the narrowest of its tiles with as many rows and at least as many columns
    // (128 x 64: the tile count no larger than chapter 6's); then half as wide while the tiles
    // still fit one wave (below). At M <= 128 the call streams B once and D is small beside it
    // (64 x 2112 x 7168: 0.5 MB of FP32 D, 15 MB of B), so what decides is how many SMs stream
    // B: until session 62 the FP32 rule stopped at 32 columns and kept 128-row tiles for M > 64,
    // giving 128 x 2112 x 7168 and (promoted) 64 x 2112 x 7168 66 tiles for 132 SMs (0.880x and
    // 0.901x torch's float32 D on the H200, session 60) where chapter 6 takes 132; with this rule
    // (session 63, an H100, three runs) 1.006-1.014x and 1.036-1.043x, 11-15 % and 5 % faster
    // than those picks by name in the same runs.
    const engine::KernelInfo& ch06_pick =
        ch06::choose_kernel(M, N, K, accumulation, true, rule_sms);
    // The decode tiles (cooperative, one CTA a cluster, from registers) of this mode with
    // ch06_pick's rows, the narrowest at least as wide as ch06_pick (every chapter 6 decode tile
    // is at most 128 wide, and the library has 128 x 128 and 64 x 128).
    const auto decode_tile = [&](const engine::KernelInfo& t) {
      return t.cluster_size() == 1 && !t.comparison_only && t.accumulation == accumulation &&
             t.epilogue == engine::EpilogueKind::registers_f32 && !t.name.ends_with("_pp");
    };
    const engine::KernelInfo* k = nullptr;
    for (const engine::KernelInfo& t : per_tensor_f32_kernels())
      if (decode_tile(t) && t.block_m == ch06_pick.block_m && t.block_n >= ch06_pick.block_n &&
          (!k || t.block_n < k->block_n))
        k = &t;
    if (!k)  // not reached: chapter 6's decode tiles are 64 or 128 rows, at most 128 columns
      throw std::logic_error("fp8gemm (per-tensor FP32 D): no FP32 decode tile for chapter 6's " +
                             ch06_pick.name);
    const int twin_block_n = k->block_n;
    // Then half as wide while the tiles still fit one wave: chapter 6's hand table comes from
    // bf16 sweeps, and where it leaves half the SMs without a tile (fast 64 x 32 at 64 x 2112 x
    // 7168: 66 tiles) the FP32 64 x 16 (132 tiles) timed 3-4 % faster on an H100 (session 63,
    // two runs; promoted, chapter 6 itself takes 64 x 16 there). No other of the twelve
    // DeepSeek-V3 decode shapes has a tile count that doubles within one wave. It applies to
    // chapter 6's rule too, off its table: where its fallback is 64 x 32 for a small N (M = 100,
    // N = 270: 5 tiles) the FP32 D gets 64 x 16 (10), a pick no run has timed against the other.
    const std::int64_t slots = engine::cluster_slots(rule_sms, 1);
    for (bool narrowed = true; narrowed;) {
      narrowed = false;
      for (const engine::KernelInfo& t : per_tensor_f32_kernels())
        if (decode_tile(t) && t.block_m == k->block_m && 2 * t.block_n == k->block_n &&
            tiles(t) <= slots) {
          k = &t;
          narrowed = true;
          break;
        }
    }
    c.kernel = k->name;
    c.why = "FP32 D: the library's registers_f32 per-tensor kernels, chapter 6's decode tile (" +
            ch06_pick.name +
            (twin_block_n == ch06_pick.block_n
                 ? ")"
                 : ", widened to " + std::to_string(twin_block_n) + " columns)") +
            (k->block_n == twin_block_n ? ""
                                        : ", narrowed to " + std::to_string(k->block_n) +
                                              " columns (" + std::to_string(tiles(*k)) +
                                              " tiles, one wave)") +
            " on " + std::to_string(rule_sms) + " SMs";
  } else {
    // Chapter 6's large-tile rule, wave efficiency x speed on whole waves, with each tile's fill
    // (the part of its tiles inside D: 2112 columns fill 17 tiles of 128 97 %, 11 of 192 100 %,
    // 9 of 256 92 %) as a factor too, so that the score is the inverse of the modelled time
    // (waves x a tile's time) whatever the tile's size, over per_tensor_f32_candidates' kernels
    // for this K (their speeds: by-name timings at M = 4096 on an H100 and the H200). M and N are
    // positive here (the plans validate them first; a direct call with N <= 0 gets the first
    // candidate, its score not a number).
    const std::vector<PerTensorF32Candidate> large =
        per_tensor_f32_candidates(K, accumulation, tma_store_ok);
    const PerTensorF32Candidate* best = &large.front();
    double best_score = -1;
    for (const PerTensorF32Candidate& k : large) {
      // wave efficiency x fill = M N / (waves x slots x block_m x block_n), the denominator an
      // exact integer: two tiles whose modelled times are equal (4096 x 32768: 63 waves of
      // 128 x 128 and 42 of 128 x 192) tie exactly, and the earlier wins.
      const engine::KernelInfo& t = *k.kernel;
      const std::int64_t slots = engine::cluster_slots(rule_sms, t.cluster_size());
      const std::int64_t slot_area =
          ceil_div(tiles(t), slots) * slots * std::int64_t(t.block_m) * t.block_n;
      const double score = k.speed * (double(M) * double(N) / double(slot_area));
      if (score > best_score) {
        best_score = score;
        best = &k;
      }
    }
    c.kernel = best->kernel->name;
    std::string names;
    for (const PerTensorF32Candidate& k : large)
      names += (names.empty() ? "" : ", ") + k.kernel->name;
    c.why = std::string("FP32 D: the library's ") +
            (best->kernel->epilogue == engine::EpilogueKind::tma_store_f32 ? "tma_store_f32"
                          : "registers_f32 (D not TMA-storable: 16-byte aligned, ldd % 4 == 0)") +
            " per-tensor kernels, the best wave efficiency x fill x speed at K = " +
            std::to_string(K) + " on " + std::to_string(rule_sms) + " SMs; candidates: " + names;
  }
  c.rule = DispatchRule::epilogue;
  if (env && *env)
    c.why += std::string(" (") + dispatch_env_var(f.family) + " applies to bf16 D only)";
  return c;
}

std::vector<PerTensorF32Candidate> per_tensor_f32_candidates(std::int64_t K,
                                                             engine::Accumulation accumulation,
                                                             bool tma_store_ok) {
  // Speeds on whole waves relative to the fastest tile there, from by-name timings at M = 4096
  // against torch's float32 D (bench_torch.py --only per_tensor_f32_kernels): session 58's call 4
  // (registers) and session 59's calls 3 and 4 on an H100; session 60's call 1 on an H100 and
  // call 2 on the H200 (every kernel, the six shapes and K from 1024 to 16384 at N = 7168, 2048
  // and 16384 at N = 2112; plots/data/h200/session60/), the model's wave and fill factors
  // divided out:
  //  - from registers: 128 x 256 in 2 x 1 clusters fastest; 128 x 128 0.93 (0.83-0.97); 128 x 192
  //    0.98 promoted, 0.97 fast (0.93-1.02 over the shapes);
  //  - fast by TMA the same order (128 x 192 0.93-1.01), and with 512 < K <= 3072 the ping-pong
  //    128 x 128 (2 x 1 clusters) ahead of 128 x 256: +6.6, +8.7, +7.4, +2.2 % at K = 1024, 1536,
  //    2048, 3072 on the H100 (+9.5, +7.2, +7.1, +4.1 % on the H200),
  //    behind at 512 on both; at 4096 -2.7 % on the H100, +2.4 % on the H200 (left out);
  //  - promoted by TMA the other way round: 128 x 128 fastest, 128 x 192 as fast (1.00-1.04),
  //    128 x 256 0.95 (0.91x its registers twin at 4096 x 7168 x 16384 in every run: its L2 hit
  //    rate is 65 % against 79 %, ncu, session 60). At K >= 12288 the H100 ran the registers
  //    128 x 256 level with or up to 4 % ahead of the TMA 128 x 128; the H200 4 % behind it
  //    (0.957x / 0.965x torch against 0.995x / 0.999x at K = 12288 / 16384): no K band.
  const bool fast = accumulation == engine::Accumulation::fast;
  // A kernel of per_tensor_f32_kernels() by its tile's stem, in this mode, by TMA where D allows
  // (the names kernel_info gives: "128x256_s4_c2x1_fast_f32_tma_b2", "..._pp").
  const auto kernel = [&](const char* stem, double speed, bool pingpong = false) {
    const std::string name = std::string(stem) + "_" + engine::to_string(accumulation) + "_f32" +
                             (tma_store_ok ? "_tma_b2" : "") + (pingpong ? "_pp" : "");
    return PerTensorF32Candidate{
        &engine::find_kernel(per_tensor_f32_kernels(), name, "fp8gemm (per-tensor FP32 D)"), speed};
  };
  if (!tma_store_ok)
    return {kernel("128x256_s4_c2x1", 1.0), kernel("128x192_s4_c1x1", fast ? 0.97 : 0.98),
            kernel("128x128_s6_c1x1", 0.93)};
  if (fast) {
    std::vector<PerTensorF32Candidate> out = {kernel("128x256_s4_c2x1", 1.0),
                                              kernel("128x192_s4_c1x1", 0.97),
                                              kernel("128x128_s6_c1x1", 0.93)};
    if (K > 512 && K <= 3072)
      out.push_back(kernel("128x128_s6_c2x1", K <= 2048 ? 1.07 : 1.02, true));
    return out;
  }
  return {kernel("128x128_s6_c1x1", 1.0), kernel("128x192_s4_c1x1", 1.0),
          kernel("128x256_s4_c2x1", 0.95)};
}

KernelChoice choose_mx_hopper(std::int64_t M, std::int64_t N, std::int64_t K, bool tma_store_ok,
                              const std::string& option, const char* env, int usable_sms) {
  const Family f{DispatchFamily::mxfp8_hopper, ch09::hopper_kernels(), "fp8gemm::ch09_hopper"};
  KernelChoice c;
  const auto fits = [&](const engine::KernelInfo& k, const std::string& source) {
    require_epilogue(k, source, false, tma_store_ok);
  };
  if (choose_named(f, M, N, K, tma_store_ok, option, env, fits, usable_sms, c)) return c;
  // Chapter 9's default (hopper_mx.cpp): the first kernel of the list whose epilogue fits D.
  for (const auto& k : ch09::hopper_kernels())
    if ((k.epilogue == engine::EpilogueKind::tma_store) == tma_store_ok) {
      c.kernel = k.name;
      break;
    }
  if (c.kernel.empty()) c.kernel = ch09::hopper_kernels().front().name;
  c.rule = tma_store_ok ? DispatchRule::chapter : DispatchRule::epilogue;
  c.why = tma_store_ok
              ? "no table entry for " + Shape{M, N, K}.name() +
                    ": chapter 9's default Hopper kernel"
              : std::string(
                    "D is not TMA-storable (16-byte aligned, ldd % 8 == 0): "
                    "chapter 9's registers-epilogue kernel");
  return c;
}

}  // namespace fp8gemm
