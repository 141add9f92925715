// Chapter 7's CPU argument tests (test_chapter_07_args.cu, test_chapter_07_splitk_args.cu): a
// well-formed call on fake, aligned device addresses (never dereferenced: each case breaks one
// rule that validation catches before any CUDA call), and what a plan built from it says.
#pragma once

#include <cstdint>
#include <string>

#include "bs_gemm.hpp"
#include "refusal.hpp"

namespace fp8gemm::test {

inline ch07::BlockScaledGemm fake_block_scaled_call(std::int64_t M, std::int64_t N,
                                                    std::int64_t K) {
  ch07::BlockScaledGemm g;
  g.M = M;
  g.N = N;
  g.K = K;
  g.A = reinterpret_cast<const std::uint8_t*>(std::uintptr_t(0x10000000));
  g.B = reinterpret_cast<const std::uint8_t*>(std::uintptr_t(0x20000000));
  g.scale_a = reinterpret_cast<const float*>(std::uintptr_t(0x30000000));
  g.scale_b = reinterpret_cast<const float*>(std::uintptr_t(0x40000000));
  g.D = reinterpret_cast<void*>(std::uintptr_t(0x50000000));
  return g;
}

/// The message with which building a ch07::Plan from (g, o) is refused ("accepted" if it is not).
inline std::string plan_refusal(const ch07::BlockScaledGemm& g, const ch07::Options& o = {}) {
  return refusal_of([&] { ch07::Plan p(g, o); });
}

}  // namespace fp8gemm::test
