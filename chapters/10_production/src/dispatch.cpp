// The library's kernel choice (dispatch.hpp): option, environment, the table learned from the
// committed sweep, then the chapter's own rule. Pure C++ (the chapters' kernel lists are host
// data), so tests/test_library_cpu.cpp runs it all without a GPU.
#include "fp8gemm/dispatch.hpp"

#include <cstdio>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "bs_gemm.hpp"              // ch07::kernels, ch07::choose_kernel
#include "common/chapter_args.hpp"  // parse_shape, Shape::name
#include "hopper_mx.hpp"            // ch09::hopper_kernels
#include "ws_gemm.hpp"              // ch06::kernels, ch06::choose_kernel

namespace fp8gemm {

namespace detail {
// The generated table: kDispatchSources[] and kDispatchTable[] (DispatchSource / DispatchEntry
// aggregates).
#include "dispatch_table.inc"
}  // namespace detail

namespace {

std::string us(double v) {
  char b[32];
  std::snprintf(b, sizeof b, "%.1f us", v);
  return b;
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
  if (f32_output && k.epilogue != EpilogueKind::registers_f32)
    fail("writes bf16 D, the call asks for FP32 D (Output::f32): name a *_f32 kernel");
  if (!f32_output && k.epilogue == EpilogueKind::registers_f32)
    fail("writes FP32 D, the call asks for bf16 D");
  if (k.epilogue == EpilogueKind::tma_store && !tma_store_ok)
    fail(
        "stores D with TMA, which needs D 16-byte aligned and ldd a multiple of 8; this D is "
        "not: name a *_reg kernel");
}

struct Family {
  DispatchFamily family;
  const std::vector<engine::KernelInfo>& list;
  const char* chapter;  // for find_kernel's message
};

/// Steps 1-3 of the rule (dispatch.hpp); `fits` checks a named kernel against the call. Returns
/// false (choice untouched) when the chapter's rule must decide.
template <class Fits>
bool choose_named(const Family& f, std::int64_t M, std::int64_t N, std::int64_t K,
                  bool table_serves, const std::string& option, const char* env, Fits fits,
                  KernelChoice& out) {
  if (!option.empty()) {
    fits(named(f.list, option, "Options::kernel", f.chapter), "Options::kernel");
    out = {option, DispatchRule::option, "Options::kernel"};
    return true;
  }
  const char* var = dispatch_env_var(f.family);
  // Every name in the variable is checked, whatever the shape: a typo shows on the first call.
  const std::string env_kernel = env_kernel_for(var, env, M, N, K);
  if (env && *env) {
    std::stringstream ss(env);
    for (std::string item; std::getline(ss, item, ',');) {
      const auto eq = item.find('=');
      named(f.list, eq == std::string::npos ? item : item.substr(eq + 1), var, f.chapter);
    }
  }
  if (table_serves && !env_kernel.empty()) {
    fits(named(f.list, env_kernel, var, f.chapter), var);
    out = {env_kernel, DispatchRule::environment, std::string(var) + "=" + env};
    return true;
  }
  if (table_serves) {
    if (const DispatchEntry* e = dispatch_table_entry(f.family, M, N, K)) {
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
                                 bool tma_store_ok, const std::string& option, const char* env) {
  const Family f{DispatchFamily::block_scaled, ch07::kernels(), "fp8gemm::ch07"};
  const bool serves = !f32_output && tma_store_ok;  // the table holds TMA-store bf16 kernels
  KernelChoice c;
  const auto fits = [&](const engine::KernelInfo& k, const std::string& source) {
    require_epilogue(k, source, f32_output, tma_store_ok);
  };
  if (choose_named(f, M, N, K, serves, option, env, fits, c)) return c;
  const ch07::Output out = f32_output ? ch07::Output::f32 : ch07::Output::bf16;
  c.kernel = ch07::choose_kernel(M, N, K, out, tma_store_ok).name;
  if (serves) {
    c.rule = DispatchRule::chapter;
    c.why = "no table entry for " + Shape{M, N, K}.name() +
            ": chapter 7's choose_kernel (its hand table, else wave efficiency)";
  } else {
    c.rule = DispatchRule::epilogue;
    c.why = f32_output ? "FP32 D: chapter 7's registers_f32 kernel"
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
                               const std::string& option, const char* env) {
  const bool fast = accumulation == engine::Accumulation::fast;
  const Family f{fast ? DispatchFamily::per_tensor_fast : DispatchFamily::per_tensor_promoted,
                 ch06::kernels(), "fp8gemm::ch06"};
  KernelChoice c;
  const auto fits = [&](const engine::KernelInfo& k, const std::string& source) {
    if (k.accumulation != accumulation)
      throw std::invalid_argument(
          "fp8gemm: " + source + " = '" + k.name + "' accumulates " +
          engine::to_string(k.accumulation) +
          ", the call asks for Accumulation::" + engine::to_string(accumulation) +
          " (fast accumulation is opt-in: set Options::accumulation)");
    require_epilogue(k, source, false, tma_store_ok);
  };
  if (choose_named(f, M, N, K, tma_store_ok, option, env, fits, c)) return c;
  c.kernel = ch06::choose_kernel(M, N, K, accumulation, tma_store_ok).name;
  c.rule = tma_store_ok ? DispatchRule::chapter : DispatchRule::epilogue;
  c.why = tma_store_ok ? "no table entry for " + Shape{M, N, K}.name() +
                             ": chapter 6's choose_kernel (its hand table, else wave efficiency)"
                       : std::string(
                             "D is not TMA-storable (16-byte aligned, N % 8 == 0): "
                             "chapter 6's registers-epilogue kernel");
  return c;
}

KernelChoice choose_mx_hopper(std::int64_t M, std::int64_t N, std::int64_t K, bool tma_store_ok,
                              const std::string& option, const char* env) {
  const Family f{DispatchFamily::mxfp8_hopper, ch09::hopper_kernels(), "fp8gemm::ch09_hopper"};
  KernelChoice c;
  const auto fits = [&](const engine::KernelInfo& k, const std::string& source) {
    require_epilogue(k, source, false, tma_store_ok);
  };
  if (choose_named(f, M, N, K, tma_store_ok, option, env, fits, c)) return c;
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
