// CPU tests of common/scaling.hpp: every scale layout's index functions against the layout
// written out from FACTS.md (the forms cuBLASLt, DeepGEMM and tcgen05 read), on odd shapes;
// size()s; every index in range; block_index a bijection onto the non-padding slots.
#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include "catch.hpp"
#include "common/scaling.hpp"

namespace {

using fp8gemm::Block128x128;
using fp8gemm::Group1x128;
using fp8gemm::Mx1x32;
using fp8gemm::PerTensor;
using fp8gemm::Rowwise;
using fp8gemm::ScaleRecipe;

struct Shape {
  std::int64_t rows, K;
};
// Odd shapes: partial blocks in both directions, scale columns that are and are not a multiple
// of 4, a single element, rows not a multiple of 32 or 128.
const std::vector<Shape> kShapes = {{200, 640}, {1, 1}, {129, 4000}, {256, 672}, {37, 129}, {128, 512}};

// ---- The layouts as FACTS.md states them, written as offsets into dense multi-dimensional
// arrays (a different form from scaling.hpp's arithmetic, so a shared slip cannot hide) ---------

std::int64_t cdiv(std::int64_t a, std::int64_t b) { return (a + b - 1) / b; }

/// Offset of index (i0, i1, ..., in) in a dense row-major array of the given extents.
std::int64_t dense(const std::vector<std::int64_t>& extents, const std::vector<std::int64_t>& idx) {
  std::int64_t off = 0;
  for (std::size_t d = 0; d < extents.size(); ++d) {
    REQUIRE(idx[d] >= 0);
    REQUIRE(idx[d] < extents[d]);
    off = off * extents[d] + idx[d];
  }
  return off;
}

// VEC128_32F: float [ceil(K/128)][rows], rows contiguous.
std::int64_t group_offset(Shape s, std::int64_t r, std::int64_t k) {
  return dense({cdiv(s.K, 128), s.rows}, {k / 128, r});
}
// BLK128x128_32F: [ceil(rows/128)][L4], L4 = ceil(K/128) rounded up to a multiple of 4.
std::int64_t block_L4(Shape s) { return cdiv(cdiv(s.K, 128), 4) * 4; }
std::int64_t block_offset(Shape s, std::int64_t r, std::int64_t k) {
  return dense({cdiv(s.rows, 128), block_L4(s)}, {r / 128, k / 128});
}
// MX: tiles of 128 rows x 4 scale columns, tiles row-major; inside a tile
// offset = (row % 32) * 16 + (row / 32) * 4 + col, i.e. a [32][4][4] array indexed
// [row % 32][row / 32][col]. So the whole tensor is [row tiles][column tiles][32][4][4].
std::int64_t mx_offset(Shape s, std::int64_t r, std::int64_t k) {
  const std::int64_t j = k / 32;
  return dense({cdiv(s.rows, 128), cdiv(cdiv(s.K, 32), 4), 32, 4, 4},
               {r / 128, j / 4, r % 32, (r % 128) / 32, j % 4});
}
std::int64_t mx_size(Shape s) { return cdiv(s.rows, 128) * 128 * cdiv(cdiv(s.K, 32), 4) * 4; }

/// Calls visit(r, k) on a set of elements that includes every block's corners and a stride
/// through the interior (all elements for small operands).
template <class F>
void for_sample_elements(Shape s, F visit) {
  auto axis = [](std::int64_t n) {
    std::set<std::int64_t> v;
    for (std::int64_t i = 0; i < n; i += (n > 300 ? 7 : 1)) v.insert(i);
    for (std::int64_t b : {32, 128})
      for (std::int64_t i = 0; i < n; i += b) {
        v.insert(i);
        v.insert(std::min(n - 1, i + b - 1));
      }
    v.insert(n - 1);
    return v;
  };
  const auto rows = axis(s.rows), cols = axis(s.K);
  for (std::int64_t r : rows)
    for (std::int64_t k : cols) visit(r, k);
}

/// Checks a layout's bookkeeping: every block_index in [0, size()), distinct, and the slots it
/// does not reach are exactly the expected padding count; index(r, k) is the block of (r, k).
template <class Layout>
void check_bijection(const Layout& L, std::int64_t expected_padding) {
  REQUIRE(L.scale_rows() >= 1);
  REQUIRE(L.scale_cols() >= 1);
  std::vector<int> hits(static_cast<std::size_t>(L.size()), 0);
  std::int64_t out_of_range = 0, collisions = 0;
  for (std::int64_t i = 0; i < L.scale_rows(); ++i)
    for (std::int64_t j = 0; j < L.scale_cols(); ++j) {
      const std::int64_t o = L.block_index(i, j);
      if (o < 0 || o >= L.size()) {
        ++out_of_range;
        continue;
      }
      collisions += hits[static_cast<std::size_t>(o)]++ > 0;
    }
  CHECK(out_of_range == 0);
  CHECK(collisions == 0);
  std::int64_t unused = 0;
  for (int h : hits) unused += h == 0;
  CHECK(unused == expected_padding);
  CHECK(L.size() == L.scale_rows() * L.scale_cols() + expected_padding);
}

template <class Layout, class Formula>
void check_against_formula(Shape s, Formula formula) {
  const Layout L(s.rows, s.K);
  std::int64_t wrong = 0, out_of_range = 0, checked = 0;
  std::string first;
  for_sample_elements(s, [&](std::int64_t r, std::int64_t k) {
    ++checked;
    const std::int64_t got = L.index(r, k), want = formula(s, r, k);
    out_of_range += got < 0 || got >= L.size();
    const std::int64_t br = Layout::block_rows() == 0 ? s.rows : Layout::block_rows();
    const std::int64_t bc = Layout::block_cols() == 0 ? s.K : Layout::block_cols();
    if ((got != want || L.block_index(r / br, k / bc) != got) && wrong++ == 0)
      first = "(" + std::to_string(r) + ", " + std::to_string(k) + "): index " +
              std::to_string(got) + ", formula " + std::to_string(want);
  });
  INFO("rows " << s.rows << ", K " << s.K << ", " << checked << " elements; first wrong " << first);
  CHECK(wrong == 0);
  CHECK(out_of_range == 0);
}

}  // namespace

TEST_CASE("The example shape: rows 200, K 640 gives L = 5, L4 = 8", "[scaling]") {
  const Group1x128 g(200, 640);
  CHECK(g.scale_rows() == 200);
  CHECK(g.scale_cols() == 5);
  CHECK(g.size() == 1000);
  CHECK(g.index(199, 639) == 4 * 200 + 199);
  CHECK(g.index(3, 128) == 200 + 3);
  const Block128x128 b(200, 640);
  CHECK(b.scale_rows() == 2);
  CHECK(b.scale_cols() == 5);
  CHECK(b.padded_scale_cols() == 8);
  CHECK(b.size() == 16);
  CHECK(b.index(127, 639) == 4);
  CHECK(b.index(128, 0) == 8);  // the second block row starts after the padding
  CHECK(b.index(199, 639) == 12);
  const Mx1x32 m(200, 640);
  CHECK(m.scale_cols() == 20);
  CHECK(m.padded_scale_rows() == 256);
  CHECK(m.padded_scale_cols() == 20);
  CHECK(m.size() == 256 * 20);
  CHECK(m.index(1, 0) == 16);
  CHECK(m.index(32, 0) == 4);
  CHECK(m.index(0, 32 * 4) == 512);      // scale column 4: the second tile of row tile 0
  CHECK(m.index(0, 32 * 5) == 513);
  CHECK(m.index(128, 0) == 5 * 512);     // row tile 1 starts after 5 column tiles
}

TEST_CASE("PerTensor: one float", "[scaling]") {
  for (Shape s : kShapes) {
    const PerTensor L(s.rows, s.K);
    CHECK(L.size() == 1);
    check_against_formula<PerTensor>(s, [](Shape, std::int64_t, std::int64_t) { return 0; });
    check_bijection(L, 0);
  }
}

TEST_CASE("Rowwise: one float per row", "[scaling]") {
  for (Shape s : kShapes) {
    const Rowwise L(s.rows, s.K);
    CHECK(L.size() == s.rows);
    check_against_formula<Rowwise>(s, [](Shape sh, std::int64_t r, std::int64_t) {
      return dense({sh.rows}, {r});
    });
    check_bijection(L, 0);
  }
}

TEST_CASE("Group1x128: [ceil(K/128)][rows], rows contiguous (VEC128_32F)", "[scaling]") {
  for (Shape s : kShapes) {
    const Group1x128 L(s.rows, s.K);
    CHECK(L.size() == cdiv(s.K, 128) * s.rows);
    check_against_formula<Group1x128>(s, group_offset);
    check_bijection(L, 0);
  }
}

TEST_CASE("Block128x128: [ceil(rows/128)][L4], L4 = ceil(K/128) rounded up to 4", "[scaling]") {
  for (Shape s : kShapes) {
    const Block128x128 L(s.rows, s.K);
    CHECK(L.padded_scale_cols() == block_L4(s));
    CHECK(L.padded_scale_cols() % 4 == 0);
    CHECK(L.size() == cdiv(s.rows, 128) * block_L4(s));
    check_against_formula<Block128x128>(s, block_offset);
    check_bijection(L, cdiv(s.rows, 128) * (block_L4(s) - cdiv(s.K, 128)));
  }
}

TEST_CASE("Mx1x32: 128 x 4 tiles of 512 bytes, tiles row-major", "[scaling]") {
  for (Shape s : kShapes) {
    const Mx1x32 L(s.rows, s.K);
    CHECK(L.size() == mx_size(s));
    CHECK(L.size() % 512 == 0);
    check_against_formula<Mx1x32>(s, mx_offset);
    check_bijection(L, mx_size(s) - s.rows * cdiv(s.K, 32));
  }
}

TEST_CASE("scale_count and describe_scale_layout agree with the layouts", "[scaling]") {
  for (Shape s : kShapes) {
    INFO("rows " << s.rows << ", K " << s.K);
    CHECK(fp8gemm::scale_count(ScaleRecipe::per_tensor, s.rows, s.K) == 1);
    CHECK(fp8gemm::scale_count(ScaleRecipe::rowwise, s.rows, s.K) == Rowwise(s.rows, s.K).size());
    CHECK(fp8gemm::scale_count(ScaleRecipe::group_1x128, s.rows, s.K) == Group1x128(s.rows, s.K).size());
    CHECK(fp8gemm::scale_count(ScaleRecipe::block_128x128, s.rows, s.K) ==
          Block128x128(s.rows, s.K).size());
    CHECK(fp8gemm::scale_count(ScaleRecipe::mx_1x32, s.rows, s.K) == Mx1x32(s.rows, s.K).size());
  }
  auto described = [](ScaleRecipe r, const char* rows_name) {
    return fp8gemm::describe_scale_layout(r, 200, 640, rows_name);
  };
  auto has = [](const std::string& text, const char* fragment) {
    INFO("\"" << text << "\" should contain \"" << fragment << "\"");
    CHECK(text.find(fragment) != std::string::npos);
  };
  has(described(ScaleRecipe::group_1x128, "M"), "5 x 200 = 1000 floats, M contiguous");
  has(described(ScaleRecipe::block_128x128, "N"), "2 x 8 = 16 floats");
  has(described(ScaleRecipe::mx_1x32, "M"), "256 x 20 = 5120 UE8M0 bytes");
  has(described(ScaleRecipe::rowwise, "N"), "N = 200 floats");
  CHECK(std::string(fp8gemm::to_string(ScaleRecipe::per_tensor)) == "per-tensor");
  CHECK(std::string(fp8gemm::to_string(ScaleRecipe::rowwise)) == "rowwise");
  CHECK(std::string(fp8gemm::to_string(ScaleRecipe::group_1x128)) == "1x128");
  CHECK(std::string(fp8gemm::to_string(ScaleRecipe::block_128x128)) == "128x128");
  CHECK(std::string(fp8gemm::to_string(ScaleRecipe::mx_1x32)) == "MX 1x32");
}

TEST_CASE("Layouts are usable in constant expressions (device code relies on it)", "[scaling]") {
  static_assert(Block128x128(200, 640).size() == 16);
  static_assert(Mx1x32(200, 640).index(32, 0) == 4);
  static_assert(fp8gemm::ceil_div(641, 128) == 6 && fp8gemm::round_up(5, 4) == 8);
  SUCCEED();
}
