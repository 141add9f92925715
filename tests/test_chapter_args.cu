// Chapters 1-4 reject bad arguments on the host, before any CUDA call, with a
// std::invalid_argument that names the chapter, the argument and the rule. Runs without a GPU:
// the device pointers below are fake (never dereferenced, because validation fails first).
#include <cstdint>
#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

#include "catch.hpp"
#include "chapters/01_naive/naive.cuh"
#include "chapters/02_smem_tiling/smem_tiling.cuh"
#include "chapters/03_mma_sync/mma_sync.cuh"
#include "chapters/04_tma/tma.cuh"

namespace {

using fp8gemm::PerTensorGemm;

struct Chapter {
  const char* name;  // as in the messages: fp8gemm::<name>
  std::function<void(const PerTensorGemm&, cudaStream_t)> gemm;
  fp8gemm::GemmRequirements (*requirements)();
  bool k_multiple_of_16;  // chapters 2-4: K % 16 == 0 and 16-byte-aligned A, B
};

const std::vector<Chapter>& chapters() {
  static const std::vector<Chapter> list = {
      {"ch01_naive", fp8gemm::ch01::gemm, fp8gemm::ch01::requirements, false},
      {"ch02_smem_tiling", fp8gemm::ch02::gemm, fp8gemm::ch02::requirements, true},
      {"ch03_mma_sync", fp8gemm::ch03::gemm, fp8gemm::ch03::requirements, true},
      {"ch04_tma", fp8gemm::ch04::gemm, fp8gemm::ch04::requirements, true},
  };
  return list;
}

template <class T>
T* fake(std::uintptr_t address) {
  return reinterpret_cast<T*>(address);
}

/// Well-formed arguments with fake, 256-byte-aligned device pointers.
PerTensorGemm good_args(std::int64_t M = 256, std::int64_t N = 384, std::int64_t K = 512) {
  return PerTensorGemm{M,
                       N,
                       K,
                       fake<const std::uint8_t>(0x100000),
                       fake<const std::uint8_t>(0x200000),
                       fake<std::uint16_t>(0x300000),
                       fake<const float>(0x400000),
                       fake<const float>(0x400100)};
}

/// Calls the chapter's gemm and requires std::invalid_argument whose message contains the
/// chapter's name and every one of `parts`.
void require_invalid(const Chapter& c, const PerTensorGemm& g, std::vector<std::string> parts) {
  parts.push_back(std::string("fp8gemm::") + c.name);
  bool threw = false;
  std::string message;
  try {
    c.gemm(g, nullptr);
  } catch (const std::invalid_argument& e) {
    threw = true;
    message = e.what();
  }
  INFO("chapter " << c.name << ", message: " << message);
  REQUIRE(threw);
  for (const auto& p : parts) {
    INFO("expected in the message: " << p);
    CHECK(message.find(p) != std::string::npos);
  }
}

}  // namespace

TEST_CASE("chapters 1-4: null pointers are rejected, naming the argument", "[chapters][args]") {
  for (const auto& c : chapters()) {
    auto g = good_args();
    g.A = nullptr;
    require_invalid(c, g, {"A is a null pointer"});
    g = good_args();
    g.B = nullptr;
    require_invalid(c, g, {"B is a null pointer"});
    g = good_args();
    g.D = nullptr;
    require_invalid(c, g, {"D is a null pointer"});
    g = good_args();
    g.scale_a = nullptr;
    require_invalid(c, g, {"scale_a is a null pointer"});
    g = good_args();
    g.scale_b = nullptr;
    require_invalid(c, g, {"scale_b is a null pointer"});
  }
}

TEST_CASE("chapters 1-4: empty dimensions are rejected", "[chapters][args]") {
  for (const auto& c : chapters()) {
    require_invalid(c, good_args(0, 384, 512), {"M = 0 must be >= 1"});
    require_invalid(c, good_args(256, 0, 512), {"N = 0 must be >= 1"});
    require_invalid(c, good_args(256, 384, 0), {"K = 0 must be >= 1"});
    require_invalid(c, good_args(-5, 384, 512), {"M = -5 must be >= 1"});
  }
}

TEST_CASE("chapters 2-4: K must be a multiple of 16; chapter 1 takes any K", "[chapters][args]") {
  for (const auto& c : chapters()) {
    INFO("chapter " << c.name);
    for (std::int64_t K : {1, 8, 100, 520, 4104}) {
      auto g = good_args(256, 384, K);
      if (c.k_multiple_of_16) {
        require_invalid(c, g, {"K = " + std::to_string(K), "must be a multiple of 16"});
      } else {
        // Chapter 1 must accept it (validation only: launching needs a GPU).
        CHECK_NOTHROW(fp8gemm::validate_gemm(g.args(), c.requirements()));
      }
    }
    // K multiples of 16 that are not multiples of the tiles' K pass validation.
    for (std::int64_t K : {16, 48, 144, 4112}) {
      const auto g = good_args(256, 384, K);
      CHECK_NOTHROW(fp8gemm::validate_gemm(g.args(), c.requirements()));
    }
  }
}

TEST_CASE("chapters 2-4: A and B must be 16-byte aligned", "[chapters][args]") {
  for (const auto& c : chapters()) {
    INFO("chapter " << c.name);
    for (std::uintptr_t misalign : {1, 4, 8}) {
      auto g = good_args();
      g.A = fake<const std::uint8_t>(0x100000 + misalign);
      if (c.k_multiple_of_16)
        require_invalid(c, g, {"A = ", "must be 16-byte aligned"});
      else
        CHECK_NOTHROW(fp8gemm::validate_gemm(g.args(), c.requirements()));
      g = good_args();
      g.B = fake<const std::uint8_t>(0x200000 + misalign);
      if (c.k_multiple_of_16)
        require_invalid(c, g, {"B = ", "must be 16-byte aligned"});
      else
        CHECK_NOTHROW(fp8gemm::validate_gemm(g.args(), c.requirements()));
    }
    // D needs only its natural 2-byte alignment (odd N makes rows 2-byte aligned anyway).
    auto g = good_args(256, 385, 512);
    g.D = fake<std::uint16_t>(0x300002);
    CHECK_NOTHROW(fp8gemm::validate_gemm(g.args(), c.requirements()));
  }
}

TEST_CASE("chapters 1-4: D must not alias A or B; scales 4-byte aligned", "[chapters][args]") {
  for (const auto& c : chapters()) {
    auto g = good_args();
    g.D = fake<std::uint16_t>(0x100000);  // same address as A
    require_invalid(c, g, {"D must not alias A or B"});
    g = good_args();
    g.scale_a = fake<const float>(0x400002);
    require_invalid(c, g, {"scale_a = ", "must be 4-byte aligned"});
  }
}
