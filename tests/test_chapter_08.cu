// GPU tests of chapter 8 (grouped block-scaled GEMM for MoE). Written with the first version of
// the kernels and not yet run on a GPU (the session that wrote them had no device time left):
// the next GPU run decides.
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <random>
#include <vector>

#include "catch.hpp"
#include "common/check.hpp"
#include "common/cuda.hpp"
#include "common/fp8.hpp"
#include "common/quantize.hpp"
#include "common/reference.hpp"
#include "grouped_gemm.hpp"

using namespace fp8gemm;

namespace {

struct GroupedCase {
  ch08::Layout layout;
  std::vector<int> rows;  // per group (masked: masked_m, may exceed m_max or be 0)
  int m_max = 0;          // masked only
  std::int64_t N, K;
};

/// Runs one grouped call on fresh random data and compares every row of D with a float64
/// reference per group; rows that belong to no group must keep the poison.
bool run_case(const GroupedCase& c, std::uint64_t seed, const ch08::Options& o = {}) {
  const int G = int(c.rows.size());
  std::vector<int> begin(G), end(G);
  std::int64_t all_rows = 0;
  std::vector<int> offsets(G + 1, 0);
  for (int g = 0; g < G; ++g) {
    if (c.layout == ch08::Layout::contiguous) {
      offsets[g + 1] = offsets[g] + c.rows[g];
      begin[g] = offsets[g];
      end[g] = offsets[g + 1];
    } else {
      begin[g] = g * c.m_max;
      end[g] = begin[g] + std::max(0, std::min(c.rows[g], c.m_max));
    }
  }
  all_rows = c.layout == ch08::Layout::contiguous ? offsets[G] : std::int64_t(G) * c.m_max;
  const std::int64_t N = c.N, K = c.K, kg = ceil_div(K, 128);
  const auto a = random_e4m3(std::size_t(all_rows * K), seed);
  const auto b = random_e4m3(std::size_t(G * N * K), seed + 1);
  const GroupScaleLayout la = GroupScaleLayout::mn_major_tma_aligned(all_rows);
  const BlockScaleLayout lb = BlockScaleLayout::padded(K);
  const std::int64_t stride = ceil_div(N, 128) * lb.ld;
  std::mt19937_64 gen(seed + 2);
  std::uniform_real_distribution<float> e(-3, 3);
  std::vector<float> sa(std::size_t(la.required_elements(all_rows, K))), sb(std::size_t(stride * G));
  for (auto& v : sa) v = std::exp2(e(gen));
  for (auto& v : sb) v = std::exp2(e(gen));
  DeviceBuffer<std::uint8_t> dA(a), dB(b);
  DeviceBuffer<float> dsa(sa), dsb(sb);
  DeviceBuffer<std::uint16_t> dD(std::size_t(all_rows * N));
  poison_bf16(dD.data(), dD.size());
  DeviceBuffer<int> doff(c.layout == ch08::Layout::contiguous ? offsets : c.rows);
  ch08::GroupedGemm g;
  g.layout = c.layout;
  g.groups = G;
  g.rows = c.layout == ch08::Layout::contiguous ? all_rows : c.m_max;
  g.N = N;
  g.K = K;
  (c.layout == ch08::Layout::contiguous ? g.offsets : g.masked_m) = doff.data();
  g.A = dA.data();
  g.B = dB.data();
  g.scale_a = dsa.data();
  g.scale_a_layout = la;
  g.scale_b = dsb.data();
  g.scale_b_layout = lb;
  g.D = dD.data();
  ch08::Plan plan(g, o);
  plan.run(nullptr);
  FP8GEMM_CUDA_CHECK(cudaDeviceSynchronize());
  const auto d = dD.download();
  double worst = 0;
  bool ok = true;
  for (int grp = 0; grp < G; ++grp) {
    const int rows = end[grp] - begin[grp];
    if (rows == 0) continue;
    std::vector<double> da(std::size_t(rows * K)), db(std::size_t(N * K));
    for (int r = 0; r < rows; ++r)
      for (std::int64_t k = 0; k < K; ++k)
        da[std::size_t(r * K + k)] = double(e4m3_decode(a[std::size_t((begin[grp] + r) * K + k)])) *
                                     sa[std::size_t(la.offset(begin[grp] + r, k / 128))];
    for (std::int64_t n = 0; n < N; ++n)
      for (std::int64_t k = 0; k < K; ++k)
        db[std::size_t(n * K + k)] = double(e4m3_decode(b[std::size_t((grp * N + n) * K + k)])) *
                                     sb[std::size_t(grp * stride + lb.offset(n / 128, k / 128))];
    const auto ref = reference_gemm(rows, N, K, da.data(), db.data());
    const ErrorStats s = compare_bf16(d.data() + std::size_t(begin[grp]) * N, ref.data(),
                                      std::int64_t(ref.size()));
    worst = std::max(worst, s.rel_frobenius);
    ok &= s.ok(per_tensor_tolerance(K));
  }
  // Rows of no group (a masked group's padding) keep the poison (0xFFFF).
  std::int64_t touched = 0;
  for (int grp = 0; grp < G && c.layout == ch08::Layout::masked; ++grp)
    for (std::int64_t r = end[grp]; r < std::int64_t(grp + 1) * c.m_max; ++r)
      for (std::int64_t n = 0; n < N; ++n) touched += d[std::size_t(r * N + n)] != 0xFFFF;
  std::printf("  %s G=%d N=%lld K=%lld: worst group rel %.2e, padding rows written %lld  [%s]\n",
              c.layout == ch08::Layout::contiguous ? "contiguous" : "masked", G,
              static_cast<long long>(N), static_cast<long long>(K), worst,
              static_cast<long long>(touched), plan.describe().c_str());
  return ok && touched == 0;
}

}  // namespace

TEST_CASE("ch08: contiguous groups of 0, 1, 127, 128, 129 rows, every kernel", "[ch08][gpu]") {
  for (const auto& k : ch08::kernels()) {
    ch08::Options o;
    o.kernel = k.name;
    CHECK(run_case({ch08::Layout::contiguous, {0, 1, 127, 128, 129, 0, 300}, 0, 264, 656}, 10, o));
  }
  CHECK(run_case({ch08::Layout::contiguous, {1000}, 0, 512, 1024}, 11));       // G = 1
  CHECK(run_case({ch08::Layout::contiguous, {0, 0, 777, 0}, 0, 384, 512}, 12));  // one group
}

TEST_CASE("ch08: masked groups, masked_m from 0 to M_max", "[ch08][gpu]") {
  CHECK(run_case({ch08::Layout::masked, {0, 1, 256, 129, 300}, 256, 264, 656}, 20));
}
