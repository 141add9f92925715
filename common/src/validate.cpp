#include "common/validate.hpp"

#include <algorithm>
#include <climits>
#include <limits>
#include <sstream>
#include <stdexcept>
#include <utility>

namespace fp8gemm {

GemmArgs packed_per_tensor(std::int64_t M, std::int64_t N, std::int64_t K, const void* A,
                           const void* B, const void* D, const float* scale_a,
                           const float* scale_b) {
  GemmArgs a;
  a.M = M;
  a.N = N;
  a.K = K;
  a.A = A;
  a.lda = K;
  a.B = B;
  a.ldb = K;
  a.D = D;
  a.ldd = N;
  a.scale_a = scale_a;
  a.scale_b = scale_b;
  a.scale_a_count = 1;
  a.scale_b_count = 1;
  return a;
}

namespace {

[[noreturn]] void fail(const GemmRequirements& req, const std::string& what) {
  throw std::invalid_argument(std::string(req.who) + ": " + what);
}

std::string hex(const void* p) {
  std::ostringstream s;
  s << p;
  return s.str();
}

void check_pointer(const GemmRequirements& req, const void* p, const char* name,
                   std::size_t alignment, const char* what) {
  if (p == nullptr) fail(req, std::string(name) + " is a null pointer (" + what + ")");
  if (alignment > 1 && reinterpret_cast<std::uintptr_t>(p) % alignment != 0)
    fail(req, std::string(name) + " = " + hex(p) + " must be " + std::to_string(alignment) +
                  "-byte aligned (" + what + ")");
}

/// The bytes [begin, begin + bytes) of one operand.
struct ByteRange {
  const void* pointer;
  std::size_t bytes;
  std::uintptr_t begin() const { return reinterpret_cast<std::uintptr_t>(pointer); }
  std::uintptr_t end() const { return begin() + bytes; }  // unsigned: wraps instead of UB
  std::string describe() const { return "[" + hex(pointer) + ", " + hex(reinterpret_cast<const void*>(end())) + ")"; }
};

/// Whether two ranges share a byte (an empty one shares none).
bool overlap(const ByteRange& x, const ByteRange& y) {
  return x.bytes != 0 && y.bytes != 0 && x.begin() < y.end() && y.begin() < x.end();
}

/// Refuses two ranges that share a byte, naming both arguments and both ranges.
void check_disjoint(const GemmRequirements& req, const ByteRange& x, const char* x_name,
                    const ByteRange& y, const char* y_name) {
  if (overlap(x, y))
    fail(req, std::string(x_name) + " (bytes " + x.describe() + ") overlaps " + y_name +
                  " (bytes " + y.describe() + "): " + x_name + " must not alias A, B, scale_a " +
                  "or scale_b, in whole or in part (the kernel writes " + x_name +
                  " while it reads them)");
}

void check_scales(const GemmRequirements& req, const void* p, const char* name,
                  ScaleRecipe given, ScaleRecipe expected, std::int64_t count, std::int64_t rows,
                  std::int64_t K, const char* rows_name) {
  if (given != expected)
    fail(req, std::string(name) + " uses the " + to_string(given) +
                  " recipe but this kernel implements " + to_string(expected));
  check_pointer(req, p, name, req.scale_alignment, "device pointer to the scale tensor");
  if (count >= 0) {
    const std::int64_t need = scale_count(given, rows, K);
    if (count < need)
      fail(req, std::string(name) + " has " + std::to_string(count) + " elements but the " +
                    to_string(given) + " recipe needs " +
                    describe_scale_layout(given, rows, K, rows_name));
  }
}

}  // namespace

void validate_gemm(const GemmArgs& a, const GemmRequirements& req) {
  auto dim = [&](std::int64_t v, const char* name) {
    if (v < 1) fail(req, std::string(name) + " = " + std::to_string(v) + " must be >= 1");
    if (v > req.max_dim)
      fail(req, std::string(name) + " = " + std::to_string(v) + " must be <= " +
                    std::to_string(req.max_dim) + " (32-bit index arithmetic in the kernel)");
  };
  dim(a.M, "M");
  dim(a.N, "N");
  dim(a.K, "K");
  if (a.b_rows != -1) {
    if (a.b_rows < a.N)
      fail(req, "b_rows = " + std::to_string(a.b_rows) + " must be -1 (N rows of B) or >= N = " +
                    std::to_string(a.N));
    dim(a.b_rows, "b_rows (the rows of B the kernel reads)");
  }
  if (a.d_rows != -1) {
    if (a.d_rows < a.M)
      fail(req, "d_rows = " + std::to_string(a.d_rows) + " must be -1 (M rows of D) or >= M = " +
                    std::to_string(a.M));
    dim(a.d_rows, "d_rows (the rows of D the kernel writes)");
  }
  if (req.k_multiple > 1 && a.K % req.k_multiple != 0)
    fail(req, "K = " + std::to_string(a.K) + " must be a multiple of " +
                  std::to_string(req.k_multiple) + " (" + req.k_reason + ")");
  if (req.m_multiple > 1 && a.M % req.m_multiple != 0)
    fail(req, "M = " + std::to_string(a.M) + " must be a multiple of " +
                  std::to_string(req.m_multiple) + " (" + req.mn_reason + ")");
  if (req.n_multiple > 1 && a.N % req.n_multiple != 0)
    fail(req, "N = " + std::to_string(a.N) + " must be a multiple of " +
                  std::to_string(req.n_multiple) + " (" + req.mn_reason + ")");

  check_pointer(req, a.A, "A", req.operand_alignment, "device pointer to M x K e4m3, row-major");
  check_pointer(req, a.B, "B", req.operand_alignment, "device pointer to N x K e4m3, row-major");
  // D's element stores need its alignment whatever the kernel asks for (2 bytes for bf16, 4 for
  // float): a D one byte off would fault on the first store (cudaErrorMisalignedAddress, which is
  // sticky).
  if (a.d_element_bytes != 2 && a.d_element_bytes != 4)
    fail(req, "d_element_bytes = " + std::to_string(a.d_element_bytes) +
                  " must be 2 (bf16 D) or 4 (float D)");
  const std::size_t d_alignment =
      std::max<std::size_t>(req.output_alignment, std::size_t(a.d_element_bytes));
  check_pointer(req, a.D, "D", d_alignment,
                a.d_element_bytes == 2 ? "device pointer to M x N bf16, row-major"
                                       : "device pointer to M x N float, row-major");

  auto ld = [&](std::int64_t v, const char* name, std::int64_t row_length, const char* row_name,
                std::size_t elem_bytes, std::size_t alignment, std::int64_t rows,
                const char* rows_name) {
    if (v < row_length)
      fail(req, std::string(name) + " = " + std::to_string(v) + " must be >= " + row_name +
                    " = " + std::to_string(row_length) + " (row-major leading dimension)");
    // The last byte is at ((rows - 1) * v + row_length) * elem_bytes - 1; rows and row_length
    // are <= max_dim (checked above), so only v can push it past 64 bits.
    std::int64_t last = 0;
    if (!strided_bytes(rows, v, row_length, std::int64_t(elem_bytes), last))
      fail(req, std::string(name) + " = " + std::to_string(v) + " is too large: (" + rows_name +
                    " - 1) * " + name + " + " + row_name +
                    " elements overflow 64-bit byte offsets");
    if (req.packed_only && v != row_length)
      fail(req, std::string(name) + " = " + std::to_string(v) + " must equal " + row_name +
                    " = " + std::to_string(row_length) + " (this kernel takes packed tensors)");
    if (alignment > 1 && (std::size_t(v) * elem_bytes) % alignment != 0)
      fail(req, std::string(name) + " = " + std::to_string(v) + " elements (" +
                    std::to_string(std::size_t(v) * elem_bytes) + " bytes) must be a multiple of " +
                    std::to_string(alignment) + " bytes so every row stays aligned");
  };
  // A's and B's rows are read by TMA where the requirements say so (D's stride is the epilogue's
  // question: engine::tma_store_compatible() sends a D TMA cannot store to a registers kernel).
  auto tma_stride = [&](std::int64_t v, const char* name) {
    const std::int64_t limit = req.operand_stride_limit_bytes;
    if (limit > 0 && v >= limit)  // e4m3: v elements are v bytes
      fail(req, std::string(name) + " = " + std::to_string(v) + " bytes must be < " +
                    std::to_string(limit) +
                    " (TMA reads the rows: its global stride limit, 2^40 bytes)");
  };
  ld(a.lda, "lda", a.K, "K", 1, req.operand_alignment, a.M, "M");
  ld(a.ldb, "ldb", a.K, "K", 1, req.operand_alignment, b_rows_of(a),
     a.b_rows >= 0 ? "b_rows" : "N");
  tma_stride(a.lda, "lda");
  tma_stride(a.ldb, "ldb");
  ld(a.ldd, "ldd", a.N, "N", std::size_t(a.d_element_bytes), d_alignment, d_rows_of(a),
     a.d_rows >= 0 ? "d_rows" : "M");

  check_scales(req, a.scale_a, "scale_a", a.recipe_a, req.recipe_a, a.scale_a_count, a.M, a.K,
               "M");
  check_scales(req, a.scale_b, "scale_b", a.recipe_b, req.recipe_b, a.scale_b_count, a.N, a.K,
               "N");

  for (const auto& [extent, name] : {std::pair{a.scale_a_extent, "scale_a"},
                                     std::pair{a.scale_b_extent, "scale_b"}})
    if (extent < -1)
      fail(req, std::string(name) + ": the layout's ld is too large: its last scale lies past "
                    "64-bit byte offsets (scale_layout.hpp, scale_extent)");

  // The kernel writes D while it reads the others: no byte of D may be one of theirs (the extents
  // cannot overflow: the leading dimensions and the scale layouts were checked above).
  const GemmExtents e = gemm_extents(a);
  const ByteRange d{a.D, e.d};
  check_disjoint(req, d, "D", ByteRange{a.A, e.a}, "A");
  check_disjoint(req, d, "D", ByteRange{a.B, e.b}, "B");
  check_disjoint(req, d, "D", ByteRange{a.scale_a, e.scale_a}, "scale_a");
  check_disjoint(req, d, "D", ByteRange{a.scale_b, e.scale_b}, "scale_b");
}

void validate_disjoint_from_d(const GemmArgs& a, const void* p, std::size_t bytes,
                              const char* name, const GemmRequirements& req) {
  check_disjoint(req, ByteRange{a.D, gemm_extents(a).d}, "D", ByteRange{p, bytes}, name);
}

void validate_disjoint_from_operands(const GemmArgs& a, const void* p, std::size_t bytes,
                                     const char* name, const GemmRequirements& req,
                                     std::initializer_list<NamedBytes> also) {
  const GemmExtents e = gemm_extents(a);
  const ByteRange x{p, bytes};
  auto refuse_overlap = [&](const ByteRange& r, const char* other) {
    if (overlap(x, r))
      fail(req, std::string(name) + " (bytes " + x.describe() + ") overlaps " + other +
                    " (bytes " + r.describe() + "): the kernel writes " + name +
                    " while it reads the call's inputs and writes D, so it must share no byte "
                    "with any of them");
  };
  refuse_overlap({a.A, e.a}, "A");
  refuse_overlap({a.B, e.b}, "B");
  refuse_overlap({a.D, e.d}, "D");
  refuse_overlap({a.scale_a, e.scale_a}, "scale_a");
  refuse_overlap({a.scale_b, e.scale_b}, "scale_b");
  for (const NamedBytes& o : also) refuse_overlap({o.pointer, o.bytes}, o.name);
}

GemmExtents gemm_extents(const GemmArgs& a) {
  GemmExtents e;
  e.a = std::size_t((a.M - 1) * a.lda + a.K);
  e.b = std::size_t((b_rows_of(a) - 1) * a.ldb + a.K);
  e.d = std::size_t((d_rows_of(a) - 1) * a.ldd + a.N) * std::size_t(a.d_element_bytes);
  e.scale_a = std::size_t(a.scale_a_extent >= 0 ? a.scale_a_extent
                                                : scale_count(a.recipe_a, a.M, a.K)) * 4;
  e.scale_b = std::size_t(a.scale_b_extent >= 0 ? a.scale_b_extent
                                                : scale_count(a.recipe_b, a.N, a.K)) * 4;
  return e;
}

TileGrid tile_grid(std::int64_t M, std::int64_t N, std::int64_t block_m, std::int64_t block_n,
                   const char* who) {
  // 64-bit throughout (the callers pass M, N <= 2^31 - 1, validate_gemm's max_dim, so the sums
  // cannot overflow); the product is formed only when each factor fits in 31 bits.
  TileGrid g;
  g.tiles_m = (M + block_m - 1) / block_m;
  g.tiles_n = (N + block_n - 1) / block_n;
  const bool fits = g.tiles_m <= INT_MAX && g.tiles_n <= INT_MAX;
  g.blocks = fits ? g.tiles_m * g.tiles_n : std::numeric_limits<std::int64_t>::max();
  if (g.blocks > std::int64_t(INT_MAX))
    throw std::invalid_argument(std::string(who) + ": M x N = " + std::to_string(M) + " x " +
                                std::to_string(N) + " needs " + std::to_string(g.tiles_m) +
                                " x " + std::to_string(g.tiles_n) +
                                " thread blocks, more than 2^31 - 1 (one launch)");
  return g;
}

std::int64_t grid_tiles(std::int64_t M, std::int64_t N, std::int64_t block_m,
                        std::int64_t block_n, const char* who) {
  return tile_grid(M, N, block_m, block_n, who).blocks;
}

}  // namespace fp8gemm
