// CPU tests of chapter 5's host side: every bad argument of ch05::gemm and of
// make_tensor_map_2d throws std::invalid_argument before any CUDA call, so these run (and must
// pass) on a machine without a GPU. The pointers are never dereferenced.
#include <cuda.h>

#include <cstdint>
#include <stdexcept>
#include <string>

#include "catch.hpp"
#include "chapters/05_wgmma/wgmma.cuh"
#include "common/tensor_map.hpp"

namespace {

/// Fake, 256-byte-aligned "device" addresses: validation only looks at them.
template <class T>
T* fake(std::uintptr_t address) {
  return reinterpret_cast<T*>(address);
}

fp8gemm::PerTensorGemm valid_call() {
  fp8gemm::PerTensorGemm g;
  g.M = 200;
  g.N = 264;
  g.K = 656;
  g.A = fake<const std::uint8_t>(0x1000000);  // 16 MiB apart: no operand overlaps another
  g.B = fake<const std::uint8_t>(0x2000000);
  g.D = fake<std::uint16_t>(0x3000000);
  g.scale_a = fake<const float>(0x4000000);
  g.scale_b = fake<const float>(0x4000100);
  return g;
}

/// Runs ch05::gemm and returns the std::invalid_argument message ("" if none was thrown).
std::string rejection(const fp8gemm::PerTensorGemm& g) {
  try {
    fp8gemm::ch05::gemm(g, nullptr);
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST_CASE("ch05 requirements: K multiple of 16, 16-byte aligned operands, packed",
          "[ch05][cpu]") {
  const fp8gemm::GemmRequirements r = fp8gemm::ch05::requirements();
  CHECK(r.k_multiple == 16);
  CHECK(r.operand_alignment == 16);
  CHECK(r.packed_only);
  CHECK(r.output_alignment == 2);  // bf16 pairs only where D is 4-byte aligned (in the kernel)
  CHECK(r.m_multiple == 1);
  CHECK(r.n_multiple == 1);
}

TEST_CASE("ch05 gemm rejects bad arguments without a GPU", "[ch05][cpu]") {
  SECTION("K not a multiple of 16") {
    auto g = valid_call();
    g.K = 100;
    const std::string msg = rejection(g);
    CHECK(msg.find("ch05_wgmma") != std::string::npos);
    CHECK(msg.find("K = 100") != std::string::npos);
    CHECK(msg.find("multiple of 16") != std::string::npos);
  }
  SECTION("K = 8") {
    auto g = valid_call();
    g.K = 8;
    CHECK_THROWS_AS(fp8gemm::ch05::gemm(g, nullptr), std::invalid_argument);
  }
  SECTION("null A") {
    auto g = valid_call();
    g.A = nullptr;
    CHECK(rejection(g).find("A is a null pointer") != std::string::npos);
  }
  SECTION("null B") {
    auto g = valid_call();
    g.B = nullptr;
    CHECK(rejection(g).find("B is a null pointer") != std::string::npos);
  }
  SECTION("null D") {
    auto g = valid_call();
    g.D = nullptr;
    CHECK(rejection(g).find("D is a null pointer") != std::string::npos);
  }
  SECTION("null scales") {
    auto g = valid_call();
    g.scale_a = nullptr;
    CHECK_THROWS_AS(fp8gemm::ch05::gemm(g, nullptr), std::invalid_argument);
    g = valid_call();
    g.scale_b = nullptr;
    CHECK_THROWS_AS(fp8gemm::ch05::gemm(g, nullptr), std::invalid_argument);
  }
  SECTION("A not 16-byte aligned") {
    auto g = valid_call();
    g.A = fake<const std::uint8_t>(0x1000008);
    CHECK(rejection(g).find("16-byte aligned") != std::string::npos);
  }
  SECTION("empty and negative dimensions") {
    auto g = valid_call();
    g.M = 0;
    CHECK_THROWS_AS(fp8gemm::ch05::gemm(g, nullptr), std::invalid_argument);
    g = valid_call();
    g.N = -3;
    CHECK_THROWS_AS(fp8gemm::ch05::gemm(g, nullptr), std::invalid_argument);
  }
  SECTION("D aliasing A") {
    auto g = valid_call();
    g.D = fake<std::uint16_t>(0x1000000);
    CHECK(rejection(g).find("overlaps A") != std::string::npos);
  }
  SECTION("D partly overlapping A") {
    auto g = valid_call();
    g.D = fake<std::uint16_t>(0x1000000 + 200 * 656 - 2);  // D's first bf16 = A's last 2 bytes
    CHECK(rejection(g).find("overlaps A") != std::string::npos);
  }
  SECTION("D one byte off") {
    auto g = valid_call();
    g.D = fake<std::uint16_t>(0x3000001);
    const std::string msg = rejection(g);
    CHECK(msg.find("D = ") != std::string::npos);
    CHECK(msg.find("2-byte aligned") != std::string::npos);
  }
}

TEST_CASE("make_tensor_map_2d rejects what TMA cannot describe, without a GPU", "[ch05][cpu]") {
  const void* base = fake<const void>(0x10000);
  constexpr auto kU8 = CU_TENSOR_MAP_DATA_TYPE_UINT8;
  constexpr auto kSw128 = CU_TENSOR_MAP_SWIZZLE_128B;
  auto map = [&](const void* p, std::size_t elem, std::uint64_t rows, std::uint64_t cols,
                 std::uint64_t stride, std::uint32_t box_rows, std::uint32_t box_cols,
                 CUtensorMapSwizzle sw) {
    return fp8gemm::make_tensor_map_2d(p, kU8, elem, rows, cols, stride, box_rows, box_cols, sw);
  };
  CHECK_THROWS_AS(map(nullptr, 1, 64, 64, 64, 64, 64, kSw128), std::invalid_argument);
  CHECK_THROWS_AS(map(fake<const void>(0x10004), 1, 64, 64, 64, 64, 64, kSw128),
                  std::invalid_argument);  // base not 16-byte aligned
  CHECK_THROWS_AS(map(base, 2, 64, 64, 64, 64, 64, kSw128),
                  std::invalid_argument);  // element size does not match UINT8
  CHECK_THROWS_AS(map(base, 1, 64, 100, 100, 64, 64, kSw128),
                  std::invalid_argument);  // 100-byte rows: stride not a multiple of 16
  CHECK_THROWS_AS(map(base, 1, 64, 64, 32, 64, 64, kSw128),
                  std::invalid_argument);  // stride shorter than a row
  CHECK_THROWS_AS(map(base, 1, 0, 64, 64, 64, 64, kSw128), std::invalid_argument);  // no rows
  CHECK_THROWS_AS(map(base, 1, 512, 512, 512, 257, 64, kSw128),
                  std::invalid_argument);  // box side > 256
  CHECK_THROWS_AS(map(base, 1, 512, 512, 512, 0, 64, kSw128), std::invalid_argument);
  CHECK_THROWS_AS(map(base, 1, 512, 512, 512, 128, 256, kSw128),
                  std::invalid_argument);  // 256-byte box rows > the 128-byte swizzle span
  CHECK_THROWS_AS(map(base, 1, 512, 512, 512, 128, 128, CU_TENSOR_MAP_SWIZZLE_64B),
                  std::invalid_argument);  // 128-byte box rows > the 64-byte span
  CHECK_THROWS_AS(map(base, 1, 512, 512, 512, 128, 8, CU_TENSOR_MAP_SWIZZLE_NONE),
                  std::invalid_argument);  // 8-byte box rows: not a multiple of 16 bytes
  const std::string msg = [&] {
    try {
      map(base, 1, 64, 100, 100, 64, 64, kSw128);
    } catch (const std::invalid_argument& e) {
      return std::string(e.what());
    }
    return std::string();
  }();
  CHECK(msg.find("make_tensor_map_2d") != std::string::npos);
  CHECK(msg.find("multiple of 16") != std::string::npos);
}
