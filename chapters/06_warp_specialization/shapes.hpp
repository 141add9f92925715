// The problem shapes chapter 6's executable and its tuning sweep run: the square ladder and the
// DeepSeek-V3 set (M in {64, 128, 4096} x six weight shapes), and "MxNxK" parsing.
#pragma once

#include <array>
#include <cstdint>
#include <cstdio>
#include <stdexcept>
#include <string>
#include <vector>

namespace fp8gemm::ch06 {

struct Shape {
  std::int64_t M, N, K;
  std::string name() const {
    return std::to_string(M) + "x" + std::to_string(N) + "x" + std::to_string(K);
  }
};

/// The squares of `sizes`, then (if `deepseek`) the DeepSeek-V3 set.
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

/// "4096x7168x16384" -> {4096, 7168, 16384}; throws std::invalid_argument otherwise.
inline Shape parse_shape(const std::string& s) {
  Shape r{};
  if (std::sscanf(s.c_str(), "%lldx%lldx%lld", reinterpret_cast<long long*>(&r.M),
                  reinterpret_cast<long long*>(&r.N), reinterpret_cast<long long*>(&r.K)) != 3)
    throw std::invalid_argument("bad shape '" + s + "' (want MxNxK)");
  return r;
}

}  // namespace fp8gemm::ch06
