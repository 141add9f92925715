// Chapters 1-5 reject bad arguments on the host, before any CUDA call, with a
// std::invalid_argument that names the chapter, the argument and the rule. Runs without a GPU:
// the device pointers below are fake (never dereferenced, because validation fails first).
// Chapter 5 has its own file for its particular rules (test_chapter_05_args.cu); the rules every
// chapter shares (D alignment, overlap, the 64-bit tile grid) are tested here for all five.
#include <climits>
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
#include "chapters/05_wgmma/wgmma.cuh"

namespace {

using fp8gemm::PerTensorGemm;

struct Chapter {
  const char* name;  // as in the messages: fp8gemm::<name>
  std::function<void(const PerTensorGemm&, cudaStream_t)> gemm;
  fp8gemm::GemmRequirements (*requirements)();
  bool k_multiple_of_16;  // chapters 2-5: K % 16 == 0 and 16-byte-aligned A, B
  std::int64_t block_m, block_n;  // the output tile of one thread block
};

/// Chapters 1-4 (the tests below that predate chapter 5 run on these).
const std::vector<Chapter>& chapters() {
  static const std::vector<Chapter> list = {
      {"ch01_naive", fp8gemm::ch01::gemm, fp8gemm::ch01::requirements, false,
       fp8gemm::ch01::kBlockM, fp8gemm::ch01::kBlockN},
      {"ch02_smem_tiling", fp8gemm::ch02::gemm, fp8gemm::ch02::requirements, true,
       fp8gemm::ch02::kBlockM, fp8gemm::ch02::kBlockN},
      {"ch03_mma_sync", fp8gemm::ch03::gemm, fp8gemm::ch03::requirements, true,
       fp8gemm::ch03::Tile::kBlockM, fp8gemm::ch03::Tile::kBlockN},
      {"ch04_tma", fp8gemm::ch04::gemm, fp8gemm::ch04::requirements, true,
       fp8gemm::ch04::Tile::kBlockM, fp8gemm::ch04::Tile::kBlockN},
  };
  return list;
}

/// Chapters 1-5.
const std::vector<Chapter>& all_chapters() {
  static const std::vector<Chapter> list = [] {
    std::vector<Chapter> v = chapters();
    v.push_back({"ch05_wgmma", fp8gemm::ch05::gemm, fp8gemm::ch05::requirements, true,
                 fp8gemm::ch05::kBlockM, fp8gemm::ch05::kBlockN});
    return v;
  }();
  return list;
}

template <class T>
T* fake(std::uintptr_t address) {
  return reinterpret_cast<T*>(address);
}

/// Well-formed arguments with fake, 256-byte-aligned device pointers, 256 MiB apart (so that no
/// shape used here makes D overlap another operand).
PerTensorGemm good_args(std::int64_t M = 256, std::int64_t N = 384, std::int64_t K = 512) {
  return PerTensorGemm{M,
                       N,
                       K,
                       fake<const std::uint8_t>(0x10000000),
                       fake<const std::uint8_t>(0x20000000),
                       fake<std::uint16_t>(0x30000000),
                       fake<const float>(0x40000000),
                       fake<const float>(0x40000100)};
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
      g.A = fake<const std::uint8_t>(0x10000000 + misalign);
      if (c.k_multiple_of_16)
        require_invalid(c, g, {"A = ", "must be 16-byte aligned"});
      else
        CHECK_NOTHROW(fp8gemm::validate_gemm(g.args(), c.requirements()));
      g = good_args();
      g.B = fake<const std::uint8_t>(0x20000000 + misalign);
      if (c.k_multiple_of_16)
        require_invalid(c, g, {"B = ", "must be 16-byte aligned"});
      else
        CHECK_NOTHROW(fp8gemm::validate_gemm(g.args(), c.requirements()));
    }
    // D needs only its natural 2-byte alignment (odd N makes rows 2-byte aligned anyway).
    auto g = good_args(256, 385, 512);
    g.D = fake<std::uint16_t>(0x30000002);
    CHECK_NOTHROW(fp8gemm::validate_gemm(g.args(), c.requirements()));
  }
}

TEST_CASE("chapters 1-5: packed tensors only; a row stride other than the row is refused",
          "[chapters][args]") {
  for (const auto& c : all_chapters()) {
    INFO("chapter " << c.name);
    CHECK(c.requirements().packed_only);
    auto g = good_args();
    g.lda = 528;
    require_invalid(c, g, {"lda = 528 must equal K = 512 (this kernel takes packed tensors)"});
    g = good_args();
    g.ldb = 528;
    require_invalid(c, g, {"ldb = 528 must equal K = 512"});
    g = good_args();
    g.ldd = 392;
    require_invalid(c, g, {"ldd = 392 must equal N = 384"});
    // The packed values given explicitly are the packed call (as 0 is).
    g = good_args();
    g.lda = 512;
    g.ldb = 512;
    g.ldd = 384;
    CHECK_NOTHROW(fp8gemm::validate_gemm(g.args(), c.requirements()));
  }
}

TEST_CASE("chapters 1-5: D must be 2-byte aligned (a bf16 one byte off would fault)",
          "[chapters][args]") {
  for (const auto& c : all_chapters()) {
    INFO("chapter " << c.name);
    CHECK(c.requirements().output_alignment == 2);
    for (std::uintptr_t offset = 0; offset < 16; ++offset) {
      auto g = good_args(130, 258, 160);
      g.D = fake<std::uint16_t>(0x30000000 + offset);
      if (offset % 2 == 1) {
        require_invalid(c, g, {"D = ", "must be 2-byte aligned"});
      } else {
        CHECK_NOTHROW(fp8gemm::validate_gemm(g.args(), c.requirements()));
      }
    }
  }
}

TEST_CASE("chapters 1-5: D must not overlap A, B or the scales, in whole or in part; "
          "scales 4-byte aligned", "[chapters][args]") {
  for (const auto& c : all_chapters()) {
    INFO("chapter " << c.name);
    const auto base = good_args();  // A: 256 x 512 = 0x20000 bytes; D: 256 x 384 x 2 = 0x30000
    auto g = base;
    g.D = fake<std::uint16_t>(0x10000000);  // same address as A
    require_invalid(c, g, {"D (bytes [", "overlaps A (bytes [", "must not alias"});
    g = base;
    g.D = fake<std::uint16_t>(0x10000000 + 0x1FFFE);  // D's first bf16 is A's last 2 bytes
    require_invalid(c, g, {"overlaps A"});
    g = base;
    g.D = fake<std::uint16_t>(0x10000000 - 0x30000 + 16);  // D's last 16 bytes are A's first
    require_invalid(c, g, {"overlaps A"});
    g = base;
    g.D = fake<std::uint16_t>(0x20000000 + 0x100);  // inside B
    require_invalid(c, g, {"overlaps B"});
    g = base;
    g.D = fake<std::uint16_t>(0x40000000 - 0x30000 + 0x100);  // scale_a is inside D
    require_invalid(c, g, {"overlaps scale_a"});
    g = base;
    g.D = fake<std::uint16_t>(0x10000000 + 0x20000);  // right after A: adjacent, no overlap
    CHECK_NOTHROW(fp8gemm::validate_gemm(g.args(), c.requirements()));
    g = base;
    g.D = fake<std::uint16_t>(0x10000000 - 0x30000);  // right before A
    CHECK_NOTHROW(fp8gemm::validate_gemm(g.args(), c.requirements()));
    g = base;
    g.scale_a = fake<const float>(0x40000002);
    require_invalid(c, g, {"scale_a = ", "must be 4-byte aligned"});
  }
}

TEST_CASE("chapters 1-5: the tile grid is 64-bit; M = N = 2^31 - 1 is refused by the grid, "
          "M or N = 2^31 - 1 alone is counted exactly", "[chapters][args]") {
  const std::int64_t big = (std::int64_t(1) << 31) - 1;
  for (const auto& c : all_chapters()) {
    INFO("chapter " << c.name);
    // Far too many blocks for one launch: refused before any CUDA call, naming the grid.
    auto g = good_args(big, big, 16);
    // D spans 2 (2^31 - 1)^2 bytes, almost 2^63: the operands sit far apart so that only the
    // grid rule can fire.
    g.A = fake<const std::uint8_t>(0x1000000000000);
    g.B = fake<const std::uint8_t>(0x2000000000000);
    g.D = fake<std::uint16_t>(0x10000000000000);
    g.scale_a = fake<const float>(0x100);
    g.scale_b = fake<const float>(0x200);
    require_invalid(c, g, {"thread blocks, more than 2^31 - 1"});
    // One long dimension: tiles_m and tiles_n as the kernels receive them, no 32-bit wrap
    // ((2^31 - 1) + block - 1 overflows an int; the 64-bit count does not).
    const auto tall = fp8gemm::tile_grid(big, 1, c.block_m, c.block_n, c.name);
    CHECK(tall.tiles_m == (big + c.block_m - 1) / c.block_m);
    CHECK(tall.tiles_n == 1);
    CHECK(tall.blocks == tall.tiles_m);
    const auto wide = fp8gemm::tile_grid(1, big, c.block_m, c.block_n, c.name);
    CHECK(wide.tiles_n == (big + c.block_n - 1) / c.block_n);
    CHECK(wide.tiles_n > 0);
    CHECK(wide.tiles_n <= INT_MAX);
    // The last tile's origin, as the kernels compute it in 64 bits, is still inside D.
    CHECK((tall.tiles_m - 1) * c.block_m < big);
    CHECK((wide.tiles_n - 1) * c.block_n < big);
  }
}
