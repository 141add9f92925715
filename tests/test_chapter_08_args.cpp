// CPU tests of chapter 8's entry point: bad grouped calls are refused with std::invalid_argument
// naming the argument, before any CUDA call.
#include <cstdint>
#include <stdexcept>
#include <string>

#include "catch.hpp"
#include "grouped_gemm.hpp"

using namespace fp8gemm;

namespace {
ch08::GroupedGemm good() {
  ch08::GroupedGemm g;
  g.groups = 4;
  g.rows = 1000;
  g.N = 512;
  g.K = 1024;
  g.offsets = reinterpret_cast<const int*>(std::uintptr_t(0x60000000));
  g.A = reinterpret_cast<const std::uint8_t*>(std::uintptr_t(0x10000000));
  g.B = reinterpret_cast<const std::uint8_t*>(std::uintptr_t(0x20000000));
  g.scale_a = reinterpret_cast<const float*>(std::uintptr_t(0x30000000));
  g.scale_b = reinterpret_cast<const float*>(std::uintptr_t(0x40000000));
  g.D = reinterpret_cast<std::uint16_t*>(std::uintptr_t(0x50000000));
  return g;
}
std::string refusal(const ch08::GroupedGemm& g) {
  try {
    ch08::Plan p(g);
  } catch (const std::invalid_argument& e) {
    return e.what();
  } catch (const std::exception& e) {
    return std::string("OTHER: ") + e.what();
  }
  return "accepted";
}
bool has(const std::string& s, const std::string& w) { return s.find(w) != std::string::npos; }
}  // namespace

TEST_CASE("ch08: bad grouped calls are refused before any CUDA call", "[ch08][cpu]") {
  auto g = good();
  g.groups = 0;
  CHECK(has(refusal(g), "groups = 0 must be >= 1"));
  g = good();
  g.offsets = nullptr;
  CHECK(has(refusal(g), "offsets is a null pointer"));
  g = good();
  g.layout = ch08::Layout::masked;
  CHECK(has(refusal(g), "masked_m is a null pointer"));
  g = good();
  g.K = 100;
  CHECK(has(refusal(g), "K = 100 must be a multiple of 16"));
  g = good();
  g.scale_a_layout = GroupScaleLayout::k_major_packed(g.K);
  CHECK(has(refusal(g), "scale_a must be mn-major"));
  g = good();
  g.scale_b_layout = BlockScaleLayout{3};
  CHECK(has(refusal(g), "scale_b: ld = 3 must be >= ceil(K / 128) = 8"));
  g = good();
  g.rows = 0;
  CHECK(has(refusal(g), "M = 0"));
}

TEST_CASE("ch08: the compiled grouped kernels", "[ch08][cpu]") {
  REQUIRE(!ch08::kernels().empty());
  for (const auto& k : ch08::kernels()) {
    CHECK(k.cluster_size() == 1);
    CHECK(k.epilogue == engine::EpilogueKind::registers);
  }
}
