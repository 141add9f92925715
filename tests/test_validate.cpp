// CPU tests of common/validate.hpp: one test per rule of validate_gemm. Each checks that the
// violation throws std::invalid_argument and that the message names the caller, the argument,
// the value and the rule. Pointers are fake addresses: validation never dereferences them.
#include <algorithm>
#include <cstdint>
#include <initializer_list>
#include <stdexcept>
#include <cstdlib>
#include <string>
#include <vector>

#include "catch.hpp"
#include "common/scaling.hpp"
#include "common/cublaslt.hpp"
#include "common/engine/plan.hpp"
#include "common/launch.hpp"  // require_same_device, require_plan_device
#include "common/validate.hpp"

namespace {

using fp8gemm::GemmArgs;
using fp8gemm::GemmRequirements;
using fp8gemm::ScaleRecipe;

const void* address(std::uintptr_t a) { return reinterpret_cast<const void*>(a); }

/// A valid call: M x N x K = 256 x 384 x 512, packed, every pointer 256-byte aligned.
GemmArgs valid_args() {
  static const float scale_a = 1.0f, scale_b = 1.0f;  // real objects: aligned, non-null
  GemmArgs a = fp8gemm::packed_per_tensor(256, 384, 512, address(0x100000), address(0x200000),
                                          address(0x300000), &scale_a, &scale_b);
  return a;
}

/// The requirements of an imaginary tiled kernel, so that every optional rule is active.
GemmRequirements strict_requirements() {
  GemmRequirements r;
  r.who = "fp8gemm::test_kernel";
  r.k_multiple = 16;
  r.k_reason = "16-byte vectors along K";
  r.m_multiple = 64;
  r.n_multiple = 128;
  r.mn_reason = "whole tiles only";
  r.operand_alignment = 16;
  r.output_alignment = 16;
  r.scale_alignment = 4;
  return r;
}

/// Requires validate_gemm to throw std::invalid_argument whose message starts with the caller's
/// name and contains every fragment.
void require_rejected(const GemmArgs& args, const GemmRequirements& req,
                      std::initializer_list<std::string> fragments) {
  try {
    fp8gemm::validate_gemm(args, req);
  } catch (const std::invalid_argument& e) {
    const std::string msg = e.what();
    INFO("message: " << msg);
    CHECK(msg.rfind(std::string(req.who) + ": ", 0) == 0);
    for (const std::string& f : fragments) {
      INFO("expected fragment: " << f);
      CHECK(msg.find(f) != std::string::npos);
    }
    return;
  } catch (const std::exception& e) {
    FAIL("validate_gemm threw something other than std::invalid_argument: " << e.what());
  }
  FAIL("validate_gemm accepted arguments it must reject");
}

}  // namespace

TEST_CASE("validate_gemm accepts a valid call", "[validate]") {
  CHECK_NOTHROW(fp8gemm::validate_gemm(valid_args(), strict_requirements()));
  CHECK_NOTHROW(fp8gemm::validate_gemm(valid_args(), GemmRequirements{}));
  GemmArgs a = valid_args();
  a.scale_a_count = a.scale_b_count = -1;  // unknown counts: only the pointers are checked
  CHECK_NOTHROW(fp8gemm::validate_gemm(a, strict_requirements()));
}

TEST_CASE("validate_gemm: M, N, K must be >= 1", "[validate]") {
  const auto req = strict_requirements();
  GemmArgs a = valid_args();
  a.M = 0;
  require_rejected(a, req, {"M = 0", "must be >= 1"});
  a = valid_args();
  a.N = -128;
  require_rejected(a, req, {"N = -128", "must be >= 1"});
  a = valid_args();
  a.K = 0;
  require_rejected(a, req, {"K = 0", "must be >= 1"});
}

TEST_CASE("validate_gemm: dimensions at most max_dim", "[validate]") {
  GemmRequirements req;  // no multiples, so only the size rule can fire
  GemmArgs a = valid_args();
  a.K = a.lda = a.ldb = std::int64_t(1) << 31;
  require_rejected(a, req, {"K = 2147483648", "must be <= 2147483647"});
}

TEST_CASE("validate_gemm: K must be a multiple of k_multiple", "[validate]") {
  GemmArgs a = valid_args();
  a.K = a.lda = a.ldb = 100;
  require_rejected(a, strict_requirements(), {"K = 100", "multiple of 16", "16-byte vectors along K"});
}

TEST_CASE("validate_gemm: M and N must be multiples of the tile", "[validate]") {
  GemmArgs a = valid_args();
  a.M = 200;
  require_rejected(a, strict_requirements(), {"M = 200", "multiple of 64", "whole tiles only"});
  a = valid_args();
  a.N = a.ldd = 264;
  require_rejected(a, strict_requirements(), {"N = 264", "multiple of 128", "whole tiles only"});
}

TEST_CASE("validate_gemm: null pointers", "[validate]") {
  const auto req = strict_requirements();
  GemmArgs a = valid_args();
  a.A = nullptr;
  require_rejected(a, req, {": A is a null pointer", "M x K e4m3"});
  a = valid_args();
  a.B = nullptr;
  require_rejected(a, req, {": B is a null pointer", "N x K e4m3"});
  a = valid_args();
  a.D = nullptr;
  require_rejected(a, req, {": D is a null pointer", "M x N bf16"});
  a = valid_args();
  a.scale_a = nullptr;
  require_rejected(a, req, {"scale_a is a null pointer"});
  a = valid_args();
  a.scale_b = nullptr;
  require_rejected(a, req, {"scale_b is a null pointer"});
}

TEST_CASE("validate_gemm: misaligned pointers", "[validate]") {
  const auto req = strict_requirements();
  GemmArgs a = valid_args();
  a.A = address(0x100008);
  require_rejected(a, req, {"A = 0x100008", "must be 16-byte aligned"});
  a = valid_args();
  a.B = address(0x200001);
  require_rejected(a, req, {"B = 0x200001", "must be 16-byte aligned"});
  a = valid_args();
  a.D = address(0x300002);
  require_rejected(a, req, {"D = 0x300002", "must be 16-byte aligned"});
  a = valid_args();
  a.scale_b = address(0x400002);
  require_rejected(a, req, {"scale_b = 0x400002", "must be 4-byte aligned"});
}

TEST_CASE("validate_gemm: D must not alias A or B", "[validate]") {
  GemmArgs a = valid_args();
  a.D = a.A;
  require_rejected(a, strict_requirements(), {"D (bytes [", "overlaps A (bytes [", "must not alias"});
  a = valid_args();
  a.D = a.B;
  require_rejected(a, strict_requirements(), {"overlaps B", "must not alias"});
}

TEST_CASE("validate_gemm: D must not overlap A, B or a scale in part either; adjacent is fine",
          "[validate]") {
  // valid_args(): A [0x100000, 0x120000) (256 x 512), B [0x200000, 0x230000) (384 x 512),
  // D 256 x 384 bf16 = 0x30000 bytes.
  const GemmRequirements req;  // D needs 2-byte alignment only
  struct Case {
    std::uintptr_t d;
    const char* overlaps;  // nullptr: accepted
  };
  const Case cases[] = {
      {0x100000 + 0x1FFFE, "overlaps A"},      // D's first bf16 = A's last two bytes
      {0x100000 - 0x30000 + 2, "overlaps A"},  // D's last bf16 = A's first two bytes
      {0x100000 + 0x10000, "overlaps A"},      // D starts inside A
      {0x100000 - 0x10000, "overlaps A"},      // A starts inside D
      {0x200000 + 0x2FFFE, "overlaps B"},      // D's first bf16 = B's last two bytes
      {0x200000 - 0x30000 + 2, "overlaps B"},  // D's last bf16 = B's first two bytes
      {0x100000 + 0x20000, nullptr},           // D right after A
      {0x100000 - 0x30000, nullptr},           // D right before A
      {0x200000 + 0x30000, nullptr},           // D right after B
      {0x200000 - 0x30000, nullptr},           // D right before B (and after A: 0x1D0000)
  };
  for (const Case& c : cases) {
    GemmArgs a = valid_args();
    a.D = address(c.d);
    INFO("D = 0x" << std::hex << c.d);
    if (c.overlaps)
      require_rejected(a, req, {c.overlaps, "D (bytes ["});
    else
      CHECK_NOTHROW(fp8gemm::validate_gemm(a, req));
  }
  // The scales: a per-tensor scale is 4 bytes; D covering any of them is refused.
  GemmArgs a = valid_args();
  a.scale_a = address(0x500000);
  a.scale_b = address(0x600000);
  a.D = address(0x500000 - 0x30000 + 2);  // D's last bf16 = scale_a's first two bytes
  require_rejected(a, req, {"overlaps scale_a"});
  a.D = address(0x500002);  // D starts in the middle of scale_a
  require_rejected(a, req, {"overlaps scale_a"});
  a.D = address(0x600000 - 0x30000 + 2);
  require_rejected(a, req, {"overlaps scale_b"});
  a.D = address(0x500004);  // right after scale_a
  CHECK_NOTHROW(fp8gemm::validate_gemm(a, req));
  a.D = address(0x500000 - 0x30000);  // right before it
  CHECK_NOTHROW(fp8gemm::validate_gemm(a, req));
  // Extents follow the leading dimensions: a strided A reaches further.
  a = valid_args();
  a.lda = 1024;  // A now spans 255 x 1024 + 512 bytes = [0x100000, 0x13FE00)
  a.D = address(0x13FC00);
  require_rejected(a, req, {"overlaps A"});
  a.D = address(0x13FE00);
  CHECK_NOTHROW(fp8gemm::validate_gemm(a, req));
}

TEST_CASE("validate_gemm: b_rows, the rows of B the kernel reads (chapter 8's stacked experts)",
          "[validate]") {
  // valid_args(): N = 384 rows of B of 512 bytes from 0x200000. Read as 3 experts' weights
  // stacked, B spans 1152 rows, to 0x290000: every extent rule covers all of them.
  const GemmRequirements req;
  GemmArgs a = valid_args();
  CHECK(fp8gemm::b_rows_of(a) == 384);
  a.b_rows = 3 * 384;
  CHECK(fp8gemm::b_rows_of(a) == 1152);
  CHECK(fp8gemm::gemm_extents(a).b == std::size_t(1151 * 512 + 512));
  CHECK_NOTHROW(fp8gemm::validate_gemm(a, req));
  // D inside the third expert's weights: accepted if only N rows were counted, refused now.
  a.D = address(0x200000 + 2 * 384 * 512);
  require_rejected(a, req, {"overlaps B"});
  a.D = address(0x200000 + 3 * 384 * 512);  // right after the last expert
  CHECK_NOTHROW(fp8gemm::validate_gemm(a, req));
  a = valid_args();
  a.b_rows = 383;
  require_rejected(a, req, {"b_rows = 383 must be -1 (N rows of B) or >= N = 384"});
  a.b_rows = std::int64_t(1) << 31;
  require_rejected(a, req, {"b_rows (the rows of B the kernel reads) = 2147483648",
                            "must be <= 2147483647"});
  // The 64-bit offset rule counts b_rows - 1 strides of ldb.
  a.b_rows = std::int64_t(1) << 30;
  a.ldb = std::int64_t(1) << 34;  // (2^30 - 1) x 2^34 bytes > 2^63
  require_rejected(a, req, {"ldb = 17179869184 is too large: (b_rows - 1) * ldb"});
}

TEST_CASE("validate_gemm: d_rows, the rows of D the kernel writes (chapter 8's dB_g)",
          "[validate]") {
  // valid_args(): D is M = 256 rows of 384 bf16 from 0x300000. Written as 4 groups' matrices one
  // after another, it spans 1024 rows, to 0x3C0000: the extent rules cover all of them.
  const GemmRequirements req;
  GemmArgs a = valid_args();
  CHECK(fp8gemm::d_rows_of(a) == 256);
  a.d_rows = 1024;
  CHECK(fp8gemm::gemm_extents(a).d == std::size_t((1023 * 384 + 384) * 2));
  CHECK_NOTHROW(fp8gemm::validate_gemm(a, req));
  // A inside the last group's rows of D: accepted if only M rows were counted, refused now.
  a.A = address(0x300000 + 3 * 256 * 384 * 2);
  require_rejected(a, req, {"D (bytes [0x300000, 0x3c0000)", "overlaps A"});
  a.A = address(0x300000 + 4 * 256 * 384 * 2);  // right after D's last row
  CHECK_NOTHROW(fp8gemm::validate_gemm(a, req));
  a = valid_args();
  a.d_rows = 255;
  require_rejected(a, req, {"d_rows = 255 must be -1 (M rows of D) or >= M = 256"});
  a.d_rows = std::int64_t(1) << 31;
  require_rejected(a, req, {"d_rows (the rows of D the kernel writes) = 2147483648"});
  a.d_rows = std::int64_t(1) << 30;
  a.ldd = std::int64_t(1) << 33;
  require_rejected(a, req, {"ldd = 8589934592 is too large: (d_rows - 1) * ldd"});
}

TEST_CASE("validate_gemm: D is 2-byte aligned whatever the requirements ask", "[validate]") {
  GemmRequirements req;
  req.output_alignment = 1;  // a kernel that forgot: bf16 still needs 2
  GemmArgs a = valid_args();
  a.D = address(0x300001);
  require_rejected(a, req, {"D = 0x300001", "must be 2-byte aligned"});
  a.D = address(0x300002);
  CHECK_NOTHROW(fp8gemm::validate_gemm(a, req));
  CHECK(GemmRequirements{}.output_alignment == 2);
}

TEST_CASE("validate_disjoint_from_operands: a further output shares no byte with any operand",
          "[validate]") {
  // valid_args(): A [0x100000, 0x120000), B [0x200000, 0x230000), D [0x300000, 0x330000), the
  // scales two floats of this file's statics. An 8-byte buffer the kernel writes (chapter 8's
  // tile counter) inside or straddling any of them is refused, naming it; beside them is fine.
  const GemmRequirements req;
  const GemmArgs a = valid_args();
  struct Case {
    const void* p;
    std::size_t bytes;
    const char* overlaps;  // nullptr: accepted
  };
  // (The two scales are adjacent floats: 4-byte buffers there, so that each meets one of them.)
  const Case cases[] = {{address(0x100000), 8, "overlaps A"},
                        {address(0x11FFFC), 8, "overlaps A"},  // straddles A's end
                        {address(0x1FFFFC), 8, "overlaps B"},  // straddles B's start
                        {address(0x32FFF8), 8, "overlaps D"},  // D's last 8 bytes
                        {a.scale_a, 4, "overlaps scale_a"},
                        {a.scale_b, 4, "overlaps scale_b"},
                        {address(0x120000), 8, nullptr},   // right after A
                        {address(0x2FFFF8), 8, nullptr},   // right before D
                        {address(0x330000), 8, nullptr}};  // right after D
  for (const Case& c : cases) {
    INFO("p = " << c.p);
    std::string message;
    try {
      fp8gemm::validate_disjoint_from_operands(a, c.p, c.bytes, "tile_counter", req);
    } catch (const std::invalid_argument& e) {
      message = e.what();
    }
    INFO("message: " << message);
    if (c.overlaps) {
      CHECK(message.find(std::string("tile_counter (bytes [")) != std::string::npos);
      CHECK(message.find(c.overlaps) != std::string::npos);
    } else {
      CHECK(message.empty());
    }
  }
  // A further input named by the caller (chapter 8's offsets): refused inside it, fine beside it.
  const fp8gemm::NamedBytes offsets{address(0x400000), 20, "offsets"};
  std::string message;
  try {
    fp8gemm::validate_disjoint_from_operands(a, address(0x400010), 8, "tile_counter", req,
                                             {offsets});
  } catch (const std::invalid_argument& e) {
    message = e.what();
  }
  INFO("message: " << message);
  CHECK(message.find("overlaps offsets (bytes [") != std::string::npos);
  CHECK_NOTHROW(fp8gemm::validate_disjoint_from_operands(a, address(0x400014), 8, "tile_counter",
                                                        req, {offsets}));
}

TEST_CASE("gemm_extents: the bytes each operand spans", "[validate]") {
  GemmArgs a = valid_args();
  a.lda = 528;
  a.ldd = 400;
  const fp8gemm::GemmExtents e = fp8gemm::gemm_extents(a);
  CHECK(e.a == std::size_t(255 * 528 + 512));
  CHECK(e.b == std::size_t(383 * 512 + 512));
  CHECK(e.d == std::size_t((255 * 400 + 384) * 2));
  CHECK(e.scale_a == 4);
  CHECK(e.scale_b == 4);
  a.recipe_a = ScaleRecipe::group_1x128;
  CHECK(fp8gemm::gemm_extents(a).scale_a == std::size_t(fp8gemm::scale_count(ScaleRecipe::group_1x128, 256, 512)) * 4);
}

TEST_CASE("validate_gemm: leading dimensions at least the row length", "[validate]") {
  const auto req = strict_requirements();
  GemmArgs a = valid_args();
  a.lda = 496;
  require_rejected(a, req, {"lda = 496", "must be >= K = 512"});
  a = valid_args();
  a.ldb = 511;
  require_rejected(a, req, {"ldb = 511", "must be >= K = 512"});
  a = valid_args();
  a.ldd = 256;
  require_rejected(a, req, {"ldd = 256", "must be >= N = 384"});
}

TEST_CASE("validate_gemm: leading dimensions keep rows aligned", "[validate]") {
  const auto req = strict_requirements();
  GemmArgs a = valid_args();
  a.lda = 520;  // 520 bytes: row 1 of A would start 8 bytes off a 16-byte boundary
  require_rejected(a, req, {"lda = 520 elements (520 bytes)", "multiple of 16 bytes"});
  a = valid_args();
  a.ldd = 388;  // 776 bytes
  require_rejected(a, req, {"ldd = 388 elements (776 bytes)", "multiple of 16 bytes"});
  a = valid_args();
  a.lda = 528;  // 528 bytes: aligned, a valid strided A
  CHECK_NOTHROW(fp8gemm::validate_gemm(a, req));
}

TEST_CASE("validate_gemm: leading dimensions whose byte offsets overflow", "[validate]") {
  GemmArgs a = valid_args();
  a.lda = std::int64_t(1) << 60;  // (M - 1) * lda bytes does not fit in 64 bits
  require_rejected(a, GemmRequirements{}, {"lda = 1152921504606846976", "64-bit"});
  a = valid_args();
  a.ldd = std::int64_t(1) << 59;  // 2 bytes per element
  require_rejected(a, GemmRequirements{}, {"ldd = 576460752303423488", "64-bit"});
}

TEST_CASE("validate_gemm: A's and B's row strides within TMA's 2^40 bytes (the engine's rule)",
          "[validate]") {
  // One row of A and of B: any stride spans K bytes, so only the stride rule can refuse it.
  const auto req = fp8gemm::engine::engine_requirements("fp8gemm::engine_test");
  CHECK(req.operand_stride_limit_bytes == (std::int64_t(1) << 40));
  GemmArgs a = valid_args();
  a.M = 1;
  a.N = 1;
  a.ldd = 1;
  a.lda = (std::int64_t(1) << 40) - 16;  // the largest multiple of 16 below the limit
  a.ldb = a.lda;
  CHECK_NOTHROW(fp8gemm::validate_gemm(a, req));
  a.lda = std::int64_t(1) << 40;
  require_rejected(a, req, {"lda = 1099511627776 bytes must be < 1099511627776", "TMA"});
  a.lda = 512;
  a.ldb = std::int64_t(1) << 41;
  require_rejected(a, req, {"ldb = 2199023255552 bytes must be < 1099511627776", "TMA"});
  // Requirements without the rule (chapters 1-5 read A and B without TMA) take it.
  CHECK_NOTHROW(fp8gemm::validate_gemm(a, GemmRequirements{}));
  // D: a stride TMA cannot store is no refusal, the registers epilogue's question instead.
  a = valid_args();
  CHECK(fp8gemm::engine::tma_store_compatible(a));
  a.M = 1;
  a.ldd = std::int64_t(1) << 39;  // bf16: 2^40 bytes
  CHECK_FALSE(fp8gemm::engine::tma_store_compatible(a));
  a.ldd = (std::int64_t(1) << 39) - 8;
  CHECK(fp8gemm::engine::tma_store_compatible(a));
  // A one-row D may have any ldd: no product of it may wrap (2^62 x 2 bytes would).
  a.ldd = std::int64_t(1) << 62;
  CHECK_FALSE(fp8gemm::engine::tma_store_compatible(a));
  a.d_element_bytes = 4;
  a.ldd = std::int64_t(1) << 61;
  CHECK_FALSE(fp8gemm::engine::tma_store_compatible(a));
  a.ldd = (std::int64_t(1) << 38) - 4;  // float: just below 2^40 bytes
  CHECK(fp8gemm::engine::tma_store_compatible(a));
  a.ldd = (std::int64_t(1) << 38) - 2;  // rows 8 bytes off a multiple of 16
  CHECK_FALSE(fp8gemm::engine::tma_store_compatible(a));
}

TEST_CASE("validate_gemm: packed_only", "[validate]") {
  auto req = strict_requirements();
  req.packed_only = true;
  CHECK_NOTHROW(fp8gemm::validate_gemm(valid_args(), req));
  GemmArgs a = valid_args();
  a.lda = 528;
  require_rejected(a, req, {"lda = 528", "must equal K = 512", "packed"});
  a = valid_args();
  a.ldb = 528;
  require_rejected(a, req, {"ldb = 528", "must equal K = 512", "packed"});
  a = valid_args();
  a.ldd = 512;
  require_rejected(a, req, {"ldd = 512", "must equal N = 384", "packed"});
}

TEST_CASE("validate_gemm: the recipe must be the kernel's", "[validate]") {
  GemmArgs a = valid_args();
  a.recipe_a = ScaleRecipe::rowwise;
  require_rejected(a, strict_requirements(),
                   {"scale_a uses the rowwise recipe but this kernel implements per-tensor"});
  a = valid_args();
  auto req = strict_requirements();
  req.recipe_a = ScaleRecipe::group_1x128;
  req.recipe_b = ScaleRecipe::block_128x128;
  a.recipe_a = ScaleRecipe::group_1x128;
  a.recipe_b = ScaleRecipe::mx_1x32;
  a.scale_a_count = a.scale_b_count = -1;
  require_rejected(a, req, {"scale_b uses the MX 1x32 recipe but this kernel implements 128x128"});
}

TEST_CASE("validate_gemm: too few scale elements, for each recipe", "[validate]") {
  // M = 200, N = 264, K = 640: the example with L = 5, L4 = 8.
  const std::int64_t M = 200, N = 264, K = 640;
  const ScaleRecipe recipes[] = {ScaleRecipe::per_tensor, ScaleRecipe::rowwise,
                                 ScaleRecipe::group_1x128, ScaleRecipe::block_128x128,
                                 ScaleRecipe::mx_1x32};
  for (ScaleRecipe recipe : recipes) {
    INFO("recipe " << fp8gemm::to_string(recipe));
    GemmRequirements req;
    req.recipe_a = req.recipe_b = recipe;
    GemmArgs a = valid_args();
    a.M = M;
    a.N = a.ldd = N;
    a.K = a.lda = a.ldb = K;
    a.recipe_a = a.recipe_b = recipe;
    const std::int64_t need_a = fp8gemm::scale_count(recipe, M, K);
    const std::int64_t need_b = fp8gemm::scale_count(recipe, N, K);
    a.scale_a_count = need_a;
    a.scale_b_count = need_b;
    CHECK_NOTHROW(fp8gemm::validate_gemm(a, req));

    a.scale_a_count = need_a - 1;
    require_rejected(a, req, {"scale_a has " + std::to_string(need_a - 1) + " elements",
                              std::string("the ") + fp8gemm::to_string(recipe) + " recipe needs",
                              fp8gemm::describe_scale_layout(recipe, M, K, "M")});
    a.scale_a_count = need_a;
    a.scale_b_count = need_b - 1;
    require_rejected(a, req, {"scale_b has " + std::to_string(need_b - 1) + " elements",
                              fp8gemm::describe_scale_layout(recipe, N, K, "N")});
  }
  // The padded 128x128 count in words: 3 x 8 = 24, not the unpadded 3 x 5 = 15.
  GemmRequirements req;
  req.recipe_b = ScaleRecipe::block_128x128;
  GemmArgs a = valid_args();
  a.N = a.ldd = N;
  a.K = a.lda = a.ldb = K;
  a.recipe_b = ScaleRecipe::block_128x128;
  a.scale_b_count = 15;
  require_rejected(a, req, {"scale_b has 15 elements", "= 3 x 8 = 24 floats"});
}

TEST_CASE("tile_grid counts in 64 bits: 2^31 - 1 rows or columns do not wrap", "[cpu][validate]") {
  const std::int64_t big = (std::int64_t(1) << 31) - 1;
  const fp8gemm::TileGrid g = fp8gemm::tile_grid(big, 300, 128, 256, "t");
  CHECK(g.tiles_m == 16777216);  // (2^31 - 1 + 127) / 128 = 2^24
  CHECK(g.tiles_n == 2);
  CHECK(g.blocks == 2 * 16777216);
  CHECK_THROWS_AS(fp8gemm::tile_grid(big, big, 128, 256, "t"), std::invalid_argument);
  CHECK_THROWS_AS(fp8gemm::tile_grid(std::int64_t(1) << 62, std::int64_t(1) << 62, 1, 1, "t"),
                  std::invalid_argument);  // the factors alone exceed 2^31: no product formed
}

TEST_CASE("grid_tiles counts output tiles and refuses grids past 2^31 - 1 blocks", "[cpu][validate]") {
  CHECK(fp8gemm::grid_tiles(1, 1, 128, 256, "t") == 1);
  CHECK(fp8gemm::grid_tiles(129, 257, 128, 256, "t") == 4);
  CHECK(fp8gemm::grid_tiles(8192, 8192, 128, 256, "t") == 64 * 32);
  try {
    fp8gemm::grid_tiles(std::int64_t(1) << 40, std::int64_t(1) << 20, 8, 32, "fp8gemm::ch01_naive");
    FAIL("expected std::invalid_argument");
  } catch (const std::invalid_argument& e) {
    const std::string what = e.what();
    CHECK(what.find("fp8gemm::ch01_naive") != std::string::npos);
    CHECK(what.find("2^31 - 1") != std::string::npos);
  }
}

TEST_CASE("FP8GEMM_CUBLASLT_ALGO selects a cuBLASLt heuristic candidate or names the rule",
          "[cpu][validate]") {
  unsetenv("FP8GEMM_CUBLASLT_ALGO");
  CHECK(fp8gemm::CublasLtGemm::algo_index() == 0);
  setenv("FP8GEMM_CUBLASLT_ALGO", "3", 1);
  CHECK(fp8gemm::CublasLtGemm::algo_index() == 3);
  for (const char* bad : {"-1", "x", "2x", "64"}) {
    setenv("FP8GEMM_CUBLASLT_ALGO", bad, 1);
    try {
      fp8gemm::CublasLtGemm::algo_index();
      FAIL("expected std::invalid_argument for " << bad);
    } catch (const std::invalid_argument& e) {
      CHECK(std::string(e.what()).find("FP8GEMM_CUBLASLT_ALGO") != std::string::npos);
    }
  }
  unsetenv("FP8GEMM_CUBLASLT_ALGO");
}

TEST_CASE("the persistent grid's clusters: what fits, max_sms, at least one, at most the work",
          "[validate][engine]") {
  using fp8gemm::engine::persistent_grid_clusters;
  CHECK(fp8gemm::engine::usable_sms(0, 132) == 132);
  CHECK(fp8gemm::engine::usable_sms(16, 132) == 16);
  CHECK(fp8gemm::engine::usable_sms(1000, 132) == 132);
  constexpr std::int64_t kMany = std::int64_t(1) << 40;
  // All SMs (max_sms 0), what the occupancy query allows: 132 one-CTA clusters on the H200,
  // 66 two-CTA ones, or fewer where some SMs do not pair up in a GPC (the query's 64).
  CHECK(persistent_grid_clusters(132, 132, 0, 1, kMany) == 132);
  CHECK(persistent_grid_clusters(66, 132, 0, 2, kMany) == 66);
  CHECK(persistent_grid_clusters(64, 132, 0, 2, kMany) == 64);
  // max_sms: the clusters of max_sms / cluster_size CTAs, rounded down, at least one.
  CHECK(persistent_grid_clusters(132, 132, 16, 1, kMany) == 16);
  CHECK(persistent_grid_clusters(66, 132, 16, 2, kMany) == 8);
  CHECK(persistent_grid_clusters(66, 132, 15, 2, kMany) == 7);
  CHECK(persistent_grid_clusters(132, 132, 1, 1, kMany) == 1);
  CHECK(persistent_grid_clusters(66, 132, 1, 2, kMany) == 1);  // 2 CTAs for max_sms = 1
  // A count above the GPU's is the GPU's; the occupancy query still bounds it.
  CHECK(persistent_grid_clusters(132, 132, 1000, 1, kMany) == 132);
  CHECK(persistent_grid_clusters(64, 132, 132, 2, kMany) == 64);
  // Never more clusters than there is work for.
  CHECK(persistent_grid_clusters(132, 132, 0, 1, 5) == 5);
  CHECK(persistent_grid_clusters(132, 132, 16, 1, 5) == 5);
  CHECK(persistent_grid_clusters(132, 132, 4, 1, 5) == 4);
}

TEST_CASE("the chapters' tile rules on the SMs a grid may use: wave efficiency, the decode width",
          "[validate][engine]") {
  using fp8gemm::engine::decode_tile_width;
  using fp8gemm::engine::wave_efficiency;
  CHECK(wave_efficiency(132, 132) == 1.0);
  CHECK(wave_efficiency(264, 132) == 1.0);
  CHECK(wave_efficiency(133, 132) == 133.0 / 264.0);  // the same division: exact
  CHECK(wave_efficiency(66, 112) == 66.0 / 112.0);
  CHECK(wave_efficiency(0, 132) == 0.0);
  CHECK(wave_efficiency(5, 0) == 0.0);
  // The large-tile rules' slots: whole 2-CTA clusters, at least one.
  using fp8gemm::engine::cluster_slots;
  CHECK(cluster_slots(132, 2) == 132);
  CHECK(cluster_slots(113, 2) == 112);  // the odd SM takes no tile
  CHECK(cluster_slots(1, 2) == 2);      // a grid of one cluster at least
  CHECK(cluster_slots(0, 2) == 2);
  CHECK(cluster_slots(7, 1) == 7);
  CHECK(cluster_slots(7, 0) == 7);      // a size below 1 counts as 1
  const std::vector<int> w64 = {128, 64, 32, 16};
  // On 132 SMs: the widest width with >= 100 tiles (the rule before the SM count was a parameter).
  CHECK(decode_tile_width(64, 2112, 64, w64, 132) == 16);   // 132 tiles: one wave
  CHECK(decode_tile_width(64, 4096, 64, w64, 132) == 32);   // 128 tiles
  CHECK(decode_tile_width(64, 1600, 64, w64, 132) == 16);   // 100 tiles: the threshold
  CHECK(decode_tile_width(64, 1584, 64, w64, 132) == 0);    // 99: none reaches it
  CHECK(decode_tile_width(64, 32768, 64, w64, 132) == 128); // 256 tiles: the widest
  // On 112 SMs the threshold is ceil(100 x 112 / 132) = 85 tiles, and a count that would spill a
  // thin second wave (112 < count < 168) gives way to the next wider width when that fits one
  // wave: 64 x 2112 and 64 x 4096 (the session-46 sweep on 112 SMs: 64x16 1.54x and 64x32 1.39x
  // the time of the fastest, which were 64x32 and 64x64).
  CHECK(decode_tile_width(64, 2112, 64, w64, 112) == 32);   // 66 tiles, not 132
  CHECK(decode_tile_width(64, 4096, 64, w64, 112) == 64);   // 64 tiles, not 128
  CHECK(decode_tile_width(64, 1360, 64, w64, 112) == 16);   // 85 tiles: the threshold, one wave
  CHECK(decode_tile_width(64, 1344, 64, w64, 112) == 0);    // 84
  CHECK(decode_tile_width(64, 32768, 64, w64, 112) == 128); // 256 tiles: 3 waves whatever
  CHECK(decode_tile_width(128, 4096, 128, {64, 32}, 112) == 64);  // 128 tiles of 32 spill
  CHECK(decode_tile_width(128, 4096, 128, {64, 32}, 132) == 32);
  // A count at 1.5 x sms or more is kept: the second wave is at least half full.
  CHECK(decode_tile_width(64, 168 * 16, 64, w64, 112) == 16);
  CHECK(decode_tile_width(64, 167 * 16, 64, w64, 112) == 32);
  // Against the rule before (>= 100 tiles, 132 SMs): the same width wherever the chosen count
  // does not spill a thin second wave on 132 SMs.
  for (std::int64_t N = 16; N <= 65536; N += 16) {
    int before = 0;
    for (int w : w64)
      if ((N + w - 1) / w >= 100) {
        before = w;
        break;
      }
    const std::int64_t count = before ? (N + before - 1) / before : 0;
    INFO("N = " << N);
    if (count <= 132 || 2 * count >= 3 * 132 || before == 128)  // 128: no wider width
      CHECK(decode_tile_width(64, N, 64, w64, 132) == before);
    else
      CHECK(decode_tile_width(64, N, 64, w64, 132) == before * 2);
  }
  CHECK(decode_tile_width(0, 2112, 64, w64, 132) == 0);
  CHECK(decode_tile_width(64, 2112, 64, w64, 0) == 0);
  // A hand-table row learned on 132 SMs keeps its waves on another count, or not.
  using fp8gemm::engine::row_keeps_waves;
  CHECK(row_keeps_waves(66, 112));
  CHECK(row_keeps_waves(112, 112));
  CHECK_FALSE(row_keeps_waves(132, 112));   // one wave on 132, two on 112
  CHECK_FALSE(row_keeps_waves(256, 112));   // two, three
  CHECK(row_keeps_waves(250, 125));         // two, two
  CHECK(row_keeps_waves(132, 132));
  CHECK_FALSE(row_keeps_waves(133, 140));   // two on 132, one on 140
  // The SMs a rule plans for: max_sms, at most the device's count (132 where no GPU answers).
  using fp8gemm::engine::rule_sms;
  const int all = rule_sms(0);
  CHECK(all > 0);
  CHECK(rule_sms(-1) == all);
  CHECK(rule_sms(16) == std::min(16, all));
  CHECK(rule_sms(100000) == all);
}

TEST_CASE("require_same_device: a plan runs only with its own device current", "[validate]") {
  // run()'s device check (common/launch.hpp) with both numbers given: the rule and its message.
  // The check as run() makes it, with another device really current, needs two GPUs
  // (test_library_other_device).
  using fp8gemm::require_same_device;
  CHECK_NOTHROW(require_same_device(0, 0, "who"));
  CHECK_NOTHROW(require_same_device(3, 3, "who"));
  try {
    require_same_device(0, 1, "fp8gemm::ch07_block_scaled");
    FAIL("accepted device 1 for a plan of device 0");
  } catch (const std::invalid_argument& e) {
    const std::string m = e.what();
    INFO(m);
    CHECK(m.starts_with("fp8gemm::ch07_block_scaled: this plan was built on device 0, but device 1 "
                        "is current"));
    CHECK(m.find("make device 0 current (cudaSetDevice)") != std::string::npos);
    CHECK(m.find("build a plan on device 1") != std::string::npos);
  }
  CHECK_THROWS_AS(require_same_device(1, 0, "who"), std::invalid_argument);
  // Without a GPU, or with one, run()'s own form checks nothing when the plan's device is
  // current, and refuses a device number that cannot be current.
  int current = -1;
  if (cudaGetDevice(&current) == cudaSuccess) {
    CHECK_NOTHROW(fp8gemm::require_plan_device(current, "who"));
    CHECK_THROWS_AS(fp8gemm::require_plan_device(current + 1000, "who"), std::invalid_argument);
  } else {
    (void)cudaGetLastError();
  }
}
