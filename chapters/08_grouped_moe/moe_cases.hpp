// The workloads of chapter 8's executable and tests: a grouped call's shape (layout, rows of each
// group, N, K) with its name, the standard cases, and the --case=NAME:COUNTS:N:K syntax.
// Header-only (no CUDA), so the CPU tests check it.
//
// Case names are those of bench/peers_moe.py, so that the benchmark names "<implementation>/<case>"
// of our JSON and of the Python peers' JSON line up:
//   bal_g<G>x<rows>_n<N>_k<K>        contiguous, every expert `rows` rows (DESIGN.md's grouped set)
//   skew_g<G>_t<T>_n<N>_k<K>         contiguous, T rows in all, seeded skewed counts (given with
//                                    --case: peers_moe.py --dry-run --groups-out writes them)
//   masked_g<G>x<rows>_n<N>_k<K>     masked, M_max = rows, masked_m[g] = rows
#pragma once

#include <algorithm>
#include <cstdint>
#include <numeric>
#include <sstream>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "grouped_gemm.hpp"

namespace fp8gemm::ch08 {

/// One grouped call's shape. `rows` is what the device description says: rows per group
/// (contiguous) or masked_m (masked; values outside [0, m_max] are allowed here, the kernel
/// clamps them, and the checking mode refuses them).
struct GroupedShape {
  std::string name;
  Layout layout = Layout::contiguous;
  std::vector<int> rows;
  int m_max = 0;  ///< masked: rows reserved per group
  std::int64_t N = 0, K = 0;

  int groups() const { return int(rows.size()); }
  /// Rows of A and D: the sum of the rows (contiguous) or G x M_max (masked).
  std::int64_t all_rows() const {
    return layout == Layout::contiguous ? std::accumulate(rows.begin(), rows.end(), std::int64_t(0))
                                        : std::int64_t(groups()) * m_max;
  }
  /// Rows [begin, end) of A and D that group g owns (masked_m clamped to [0, M_max], as the
  /// kernel does).
  std::pair<std::int64_t, std::int64_t> group_rows(int g) const {
    if (layout == Layout::masked) {
      const std::int64_t begin = std::int64_t(g) * m_max;
      return {begin, begin + std::clamp(rows[std::size_t(g)], 0, m_max)};
    }
    const std::int64_t begin =
        std::accumulate(rows.begin(), rows.begin() + g, std::int64_t(0));
    return {begin, begin + rows[std::size_t(g)]};
  }
  /// Rows that belong to some group: the rows the GEMM computes.
  std::int64_t real_rows() const {
    std::int64_t r = 0;
    for (int g = 0; g < groups(); ++g) r += group_rows(g).second - group_rows(g).first;
    return r;
  }
  int non_empty_groups() const {
    int n = 0;
    for (int g = 0; g < groups(); ++g) n += group_rows(g).second > group_rows(g).first;
    return n;
  }
  /// The description the device holds: G + 1 offsets (0, then the running sums) or masked_m.
  std::vector<int> device_description() const {
    if (layout == Layout::masked) return rows;
    std::vector<int> off(rows.size() + 1, 0);
    for (std::size_t g = 0; g < rows.size(); ++g) off[g + 1] = off[g] + rows[g];
    return off;
  }
};

inline std::string shape_suffix(std::int64_t N, std::int64_t K) {
  return "_n" + std::to_string(N) + "_k" + std::to_string(K);
}

/// Contiguous, G experts of `rows` rows each: bal_g<G>x<rows>_n<N>_k<K>.
inline GroupedShape balanced_case(int G, int rows, std::int64_t N, std::int64_t K) {
  return {"bal_g" + std::to_string(G) + "x" + std::to_string(rows) + shape_suffix(N, K),
          Layout::contiguous, std::vector<int>(std::size_t(G), rows), 0, N, K};
}

/// Masked, G groups of M_max = rows with masked_m[g] = rows: masked_g<G>x<rows>_n<N>_k<K>.
inline GroupedShape masked_case(int G, int rows, std::int64_t N, std::int64_t K) {
  return {"masked_g" + std::to_string(G) + "x" + std::to_string(rows) + shape_suffix(N, K),
          Layout::masked, std::vector<int>(std::size_t(G), rows), rows, N, K};
}

/// The standard cases (DESIGN.md, "Grouped"; bench/peers_moe.py's BALANCED and MASKED): balanced
/// (4 x 8192, N 4096, K 7168) and (8 x 4096, N 7168, K 2048); masked (G, rows) in (1, 1024),
/// (2, 512), (4, 256) with (N, K) in (4096, 7168), (7168, 2048).
inline std::vector<GroupedShape> standard_cases() {
  std::vector<GroupedShape> v = {balanced_case(4, 8192, 4096, 7168),
                                 balanced_case(8, 4096, 7168, 2048)};
  for (const auto& [G, rows] : {std::pair{1, 1024}, std::pair{2, 512}, std::pair{4, 256}})
    for (const auto& [N, K] : {std::pair{4096, 7168}, std::pair{7168, 2048}})
      v.push_back(masked_case(G, rows, N, K));
  return v;
}

/// Small validation cases of side S (the executable's --sizes=S, which the sanitizer step of
/// scripts/gpu_loop.sh passes): contiguous groups of 0, 1, 127, 128, 129, 0 and S rows, masked
/// groups with masked_m 0, S / 2 + 1 and S of M_max = S, and contiguous groups of 33793, 0 and
/// 33791 rows (many tiles per CTA); N = K = S.
inline std::vector<GroupedShape> small_cases(std::int64_t S) {
  const int s = int(S);
  return {{"edge_g7_n" + std::to_string(S) + "_k" + std::to_string(S), Layout::contiguous,
           {0, 1, 127, 128, 129, 0, s}, 0, S, S},
          {"edge_masked_g3x" + std::to_string(S) + "_n" + std::to_string(S) + "_k" + std::to_string(S),
           Layout::masked, {0, s / 2 + 1, s}, s, S, S},
          // Many tiles per CTA: at S = 256 every grouped kernel gives each CTA of a 132-SM grid at
          // least 4 tiles (529 tiles of 128 x 256, 265 pairs of 256 x 128 tiles in 1 x 2 clusters),
          // so the ring's tile records are rewritten and the end mark lands on a stage whose
          // record was read (compute-sanitizer's racecheck, the sanitize step, sees both).
          {"ring_g3_n" + std::to_string(S) + "_k" + std::to_string(S), Layout::contiguous,
           {33793, 0, 33791}, 0, S, S}};
}

/// "--case" syntax: NAME:COUNTS:N:K, COUNTS the rows of each expert, comma-separated (a
/// contiguous case), or masked=GxM_MAX (a masked case of G groups with masked_m = M_MAX each, as
/// masked_case). Throws std::invalid_argument naming the text and the rule.
inline GroupedShape parse_case(const std::string& text) {
  auto bad = [&](const std::string& why) {
    return std::invalid_argument("bad case '" + text + "' (want NAME:COUNTS:N:K, COUNTS the rows "
                                 "of each expert, comma-separated, or masked=GxM_MAX): " + why);
  };
  std::vector<std::string> part;
  std::stringstream ss(text);
  for (std::string p; std::getline(ss, p, ':');) part.push_back(p);
  if (part.size() != 4) throw bad("4 fields separated by ':' needed");
  GroupedShape c;
  c.name = part[0];
  if (c.name.empty() || c.name.find_first_of("/ \t") != std::string::npos)
    throw bad("NAME must be non-empty without '/' or blanks (it is the benchmark's case name)");
  auto number = [&](const std::string& s, const char* what) -> long long {
    std::size_t used = 0;
    long long v = 0;
    try {
      v = std::stoll(s, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (used == 0 || used != s.size()) throw bad(std::string(what) + " '" + s + "' is not an integer");
    return v;
  };
  if (part[1].rfind("masked=", 0) == 0) {
    const std::string gm = part[1].substr(7);
    const std::size_t x = gm.find('x');
    if (x == std::string::npos) throw bad("masked= wants GxM_MAX, e.g. masked=8x128");
    const long long G = number(gm.substr(0, x), "G"), m = number(gm.substr(x + 1), "M_MAX");
    if (G < 1 || m < 1) throw bad("G and M_MAX must be >= 1");
    if (G > 65536) throw bad("G must be <= 65536");
    if (G * m > 0x7FFFFC00ll) throw bad("G x M_MAX is more than 2^31 - 1024 rows");
    c.layout = Layout::masked;
    c.m_max = int(m);
    c.rows.assign(std::size_t(G), int(m));
  }
  std::stringstream cs(c.layout == Layout::masked ? std::string() : part[1]);
  long long total = c.layout == Layout::masked ? 1 : 0;
  for (std::string t; std::getline(cs, t, ',');) {
    const long long n = number(t, "count");
    if (n < 0) throw bad("count " + t + " is negative");
    total += n;
    if (total > 0x7FFFFC00ll) throw bad("the counts add up to more than 2^31 - 1024 rows");
    c.rows.push_back(int(n));
  }
  if (c.rows.empty()) throw bad("no counts");
  if (total == 0) throw bad("every expert is empty (no rows at all)");
  c.N = number(part[2], "N");
  c.K = number(part[3], "K");
  if (c.N < 1 || c.K < 1) throw bad("N and K must be >= 1");
  return c;
}

}  // namespace fp8gemm::ch08
