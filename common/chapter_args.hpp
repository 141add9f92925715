// The command line of the engine chapters' executables (chapters 6 and 7 and their tuning tools):
// the shapes to run and the options they share, parsed once here. Header-only, so the CPU tests
// check it without the benchmark library.
//
//   --sizes=1024,2048      square sizes only (replaces the default list, drops the DeepSeek set)
//   --shapes=MxNxK,...     exactly these shapes
//   --no-bench             validate only
//   --kernels=a,b          time these kernels by name instead of the table's choice
//   --json=PATH            the benchmark JSON (default: <executable>.json)
//   --accuracy=PATH        the chapter's accuracy study, as JSON
// Anything else goes to the chapter's own handler (`extra`, returning true when it took the
// argument) or, failing that, to Google Benchmark (`rest`, argv[0] first).
#pragma once

#include <array>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

namespace fp8gemm {

struct Shape {
  std::int64_t M, N, K;
  std::string name() const {
    return std::to_string(M) + "x" + std::to_string(N) + "x" + std::to_string(K);
  }
};

/// The squares `sizes`, then (when `deepseek`) the DeepSeek-V3 shapes: M in {64, 128, 4096} x
/// (N, K) in (2112, 7168), (24576, 1536), (32768, 512), (7168, 16384), (4096, 7168), (7168, 2048).
inline std::vector<Shape> standard_shapes(const std::vector<std::int64_t>& sizes, bool deepseek) {
  std::vector<Shape> v;
  for (auto s : sizes) v.push_back({s, s, s});
  if (!deepseek) return v;
  const std::array<std::array<std::int64_t, 2>, 6> nk = {
      {{2112, 7168}, {24576, 1536}, {32768, 512}, {7168, 16384}, {4096, 7168}, {7168, 2048}}};
  for (std::int64_t m : {64, 128, 4096})
    for (const auto& p : nk) v.push_back({m, p[0], p[1]});
  return v;
}

/// "a,b,,c" -> {"a", "b", "c"}: a comma-separated command-line list, empty items dropped.
inline std::vector<std::string> split_list(const std::string& s) {
  std::vector<std::string> out;
  std::stringstream ss(s);
  for (std::string t; std::getline(ss, t, ',');)
    if (!t.empty()) out.push_back(t);
  return out;
}

/// The number in a numeric argument: parse_count("--reps=7", "--reps=", 1) -> 7. The whole text
/// after `prefix` must be a decimal integer >= `min` (no sign, no trailing characters: std::stoll
/// alone would read "12abc" as 12); throws std::invalid_argument naming the argument otherwise.
inline long long parse_count(const std::string& arg, const std::string& prefix, long long min) {
  const std::string v = arg.substr(prefix.size());
  bool ok = !v.empty() && v.size() <= 18;
  for (char c : v) ok = ok && c >= '0' && c <= '9';
  const long long n = ok ? std::stoll(v) : 0;
  if (!ok || n < min)
    throw std::invalid_argument("bad " + arg + " (want an integer >= " + std::to_string(min) + ")");
  return n;
}

/// How a main reads its arguments, before any GPU work: runs `parse` (which may throw, e.g.
/// parse_count or parse_shape); if it throws, prints "<tool>: <what>" to stderr and returns false,
/// and the main returns 1.
template <class Parse>
bool parse_arguments(const char* tool, Parse&& parse) {
  try {
    parse();
    return true;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s: %s\n", tool, e.what());
    return false;
  }
}

/// "4096x7168x16384" -> {4096, 7168, 16384}; throws std::invalid_argument otherwise.
inline Shape parse_shape(const std::string& s) {
  Shape r{};
  char tail = 0;
  if (std::sscanf(s.c_str(), "%lldx%lldx%lld%c", reinterpret_cast<long long*>(&r.M),
                  reinterpret_cast<long long*>(&r.N), reinterpret_cast<long long*>(&r.K),
                  &tail) != 3 ||
      r.M < 1 || r.N < 1 || r.K < 1)
    throw std::invalid_argument("bad shape '" + s + "' (want MxNxK, each >= 1)");
  return r;
}

struct ChapterArgs {
  std::vector<std::int64_t> sizes;
  bool sizes_given = false;
  std::vector<Shape> custom;         ///< --shapes
  bool bench = true;
  std::vector<std::string> kernels;  ///< --kernels
  std::string json, accuracy_json;
  std::vector<char*> rest;           ///< for Google Benchmark, argv[0] first

  /// --shapes if given, else the squares (plus the DeepSeek set unless --sizes was given).
  std::vector<Shape> shapes() const {
    return custom.empty() ? standard_shapes(sizes, !sizes_given) : custom;
  }
};

inline ChapterArgs parse_chapter_args(int argc, char** argv, std::vector<std::int64_t> sizes,
                                      std::string json,
                                      const std::function<bool(const std::string&)>& extra = {}) {
  ChapterArgs r;
  r.sizes = std::move(sizes);
  r.json = std::move(json);
  if (argc > 0) r.rest.push_back(argv[0]);
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a.rfind("--sizes=", 0) == 0) {
      r.sizes.clear();
      r.sizes_given = true;
      for (const auto& t : split_list(a.substr(8)))
        r.sizes.push_back(parse_count("--sizes=" + t, "--sizes=", 1));
    } else if (a.rfind("--shapes=", 0) == 0) {
      for (const auto& t : split_list(a.substr(9))) r.custom.push_back(parse_shape(t));
    } else if (a == "--no-bench") {
      r.bench = false;
    } else if (a.rfind("--kernels=", 0) == 0) {
      for (const auto& t : split_list(a.substr(10))) r.kernels.push_back(t);
    } else if (a.rfind("--accuracy=", 0) == 0) {
      r.accuracy_json = a.substr(11);
    } else if (a.rfind("--json=", 0) == 0) {
      r.json = a.substr(7);
    } else if (!(extra && extra(a))) {
      r.rest.push_back(argv[i]);
    }
  }
  return r;
}

/// The kernels named in --kernels that write a float D (`writes_float_d(name)`), each once, in the
/// order named. Without --float-d (`float_d` false) the first of them is refused here, before any
/// GPU work (its plan would refuse it only later, on the GPU): std::invalid_argument
/// "--kernels: '<name>' writes a float D: pass --float-d to time it". Chapters 7 and 9.
inline std::vector<std::string> float_d_kernels(
    const std::vector<std::string>& named, bool float_d,
    const std::function<bool(const std::string&)>& writes_float_d) {
  std::vector<std::string> r;
  for (const auto& k : named) {
    if (!writes_float_d(k)) continue;
    if (!float_d)
      throw std::invalid_argument("--kernels: '" + k +
                                  "' writes a float D: pass --float-d to time it");
    bool seen = false;
    for (const auto& x : r) seen = seen || x == k;
    if (!seen) r.push_back(k);
  }
  return r;
}

}  // namespace fp8gemm
