#include "ws_gemm.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>
#include <vector>

#include "common/scaling.hpp"  // ceil_div

namespace fp8gemm::ch06 {

GemmRequirements requirements() { return engine::engine_requirements("fp8gemm::ch06_warp_specialization"); }

namespace {

std::string with_mode(const std::string& stem, Accumulation a) {
  // stem: "128x256_s4_c2x1_%_tma_b2" -> the accumulation mode replaces %.
  std::string s = stem;
  const auto at = s.find('%');
  s.replace(at, 1, to_string(a));
  return s;
}

}  // namespace

/// The per-shape table, from sweeps on the H200: the fastest correct kernel per shape and mode. A
/// stem's % is the accumulation mode. 8192^3 and the DeepSeek-V3 shapes (M = 64, 128, 4096): the
/// library's dispatch sweep at 945b0eb (session 26; plots/data/h200/ch10/dispatch_sweep.json:
/// every TMA-store kernel of this chapter, ping-pong ones (_pp) included, then the four fastest
/// and this rule's kernel re-timed interleaved; before it the per-tensor sweep at fe11ef0, now in
/// plots/data/h200/ch10/history/). A copy of the library's table's picks, not derived, so
/// dispatch_table.md's "chapter's rule = fastest" column shows whether the two still agree after
/// a new sweep; rows whose two best kernels are within ~1% may change kernel between sweeps
/// without changing time. Session 43's sweep (18a7ac7, after the producer warp and the cycle loop)
/// moved only the row it put more than 3% behind (the library's rule, tools/check_table.py's
/// tolerance): 128 x 4096 x 7168, 128x32_s10 -> 64x64_s12 (3.9% promoted, 7.1% fast); the rows
/// it puts 0-2% behind stay (dispatch_table.md lists them); 2048^3 and 4096^3: in fast mode every
/// large fast kernel timed interleaved with cuBLASLt by this chapter's --kernels mode
/// (plots/data/h200/ch06/squares_d433170/, twice, in opposite orders: the same winners), in
/// promoted mode chapter 6's own sweep (plots/data/h200/ch06/sweep.json). Ping-pong kernels (_pp)
/// exist in fast mode (and 128 x 128 / 64 x 256 promoted, which never win: a warpgroup's promotion
/// cannot overlap its own tensor-core work); they take 8 of the 9 large fast rows (all but
/// 4096^3). Shapes not in the table get the rule in choose_kernel() below.
namespace {
struct TableEntry {
  std::int64_t M, N, K;
  const char* fast;
  const char* promoted;
};
constexpr TableEntry kTable[] = {
    {2048, 2048, 2048, "128x128_s6_c1x1_%_tma_b2_pp", "128x256_s4_c1x1_%_tma_b2"},
    {4096, 4096, 4096, "128x256_s4_c2x1_%_tma_b2", "128x256_s4_c1x1_%_tma_b2"},
    {8192, 8192, 8192, "128x192_s4_c2x1_%_tma_b2_pp", "256x128_s3_c1x2_%_tma_b4"},
    {4096, 2112, 7168, "128x176_s5_c2x1_%_tma_b4_pp", "128x176_s4_c1x1_%_tma_b11"},
    {4096, 24576, 1536, "128x192_s4_c1x1_%_tma_b2_pp", "256x128_s3_c1x2_%_tma_b4"},
    {4096, 32768, 512, "128x192_s4_c1x1_%_tma_b2_pp", "256x128_s3_c1x2_%_tma_b4"},
    {4096, 7168, 16384, "128x176_s4_c2x1_%_tma_b11_pp", "256x128_s4_c1x1_%_tma_b2"},
    {4096, 4096, 7168, "128x128_s6_c2x1_%_tma_b2_pp", "256x128_s4_c1x2_%_tma_b2"},
    {4096, 7168, 2048, "128x176_s5_c2x1_%_tma_b4_pp", "256x128_s3_c1x2_%_tma_b4"},
    {128, 2112, 7168, "64x32_s14_c1x1_%_tma_b1", "64x32_s14_c1x1_%_tma_b1"},
    {128, 24576, 1536, "128x64_s8_c1x1_%_tma_b1", "128x64_s8_c1x1_%_tma_b1"},
    {128, 32768, 512, "128x128_s6_c1x1_%_tma_b2_pp", "128x128_s6_c1x1_%_tma_b2"},
    {128, 7168, 16384, "128x64_s8_c1x1_%_tma_b1", "128x56_s8_c1x1_%_tma_b1"},
    {128, 4096, 7168, "64x64_s12_c1x1_%_tma_b1", "64x64_s12_c1x1_%_tma_b1"},
    {128, 7168, 2048, "128x64_s8_c1x1_%_tma_b1", "128x64_s8_c1x1_%_tma_b1"},
    {64, 2112, 7168, "64x32_s14_c1x1_%_tma_b1", "64x16_s16_c1x1_%_tma_b1"},
    {64, 24576, 1536, "64x64_s12_c1x1_%_tma_b1", "64x64_s12_c1x1_%_tma_b1"},
    {64, 32768, 512, "64x128_s8_c1x1_%_tma_b2", "64x128_s8_c1x1_%_tma_b2"},
    {64, 7168, 16384, "64x64_s12_c1x1_%_tma_b1", "64x64_s12_c1x1_%_tma_b1"},
    {64, 4096, 7168, "64x32_s14_c1x1_%_tma_b1", "64x32_s14_c1x1_%_tma_b1"},
    {64, 7168, 2048, "64x64_s12_c1x1_%_tma_b1", "64x64_s12_c1x1_%_tma_b1"},
};
}  // namespace

const engine::KernelInfo& choose_kernel(std::int64_t M, std::int64_t N, std::int64_t K,
                                        Accumulation accumulation, bool tma_store_ok, int sms) {
  if (!tma_store_ok)
    return kernel_named(with_mode(M <= 128 ? "128x128_s6_c1x1_%_reg" : "128x256_s4_c2x1_%_reg",
                                  accumulation));
  sms = std::max(sms, 1);
  // The hand table is the H200's 132-SM sweep. On other SM counts a decode row (M <= 128) is kept
  // only where its tiles take as many waves as on 132 SMs, else the decode rule below decides;
  // large-M rows are kept (chapter 10's library rescales its own table's rows by measured times,
  // rule table_sms; these rows have no such times here).
  for (const auto& e : kTable)
    if (e.M == M && e.N == N && e.K == K) {
      const engine::KernelInfo& k = kernel_named(
          with_mode(accumulation == Accumulation::fast ? e.fast : e.promoted, accumulation));
      if (M > 128 || engine::row_keeps_waves(ceil_div(M, k.block_m) * ceil_div(N, k.block_n), sms))
        return k;
      break;
    }
  // The rules below plan for the SMs the grid may use (sms).
  if (M <= 128) {
    // Decode-like, memory-bound: the weights stream from HBM once, so what matters is that
    // enough SMs stream them. The widest tile that still gives about 3/4 of the SMs a tile
    // (100 tiles on 132 SMs), without a thin second wave (engine::decode_tile_width); 64-row
    // tiles when M <= 64, or when 128-row tiles would leave most SMs idle.
    const int bm_rows = M <= 64 ? 64 : 128;
    const int bn = engine::decode_tile_width(M, N, bm_rows, {128, 64, 32, 16}, sms);
    if (bn > 0) {
      static const char* const k64[] = {"64x128_s8_c1x1_%_tma_b2", "64x64_s12_c1x1_%_tma_b1",
                                        "64x32_s14_c1x1_%_tma_b1", "64x16_s16_c1x1_%_tma_b1"};
      static const char* const k128[] = {"128x128_s6_c1x1_%_tma_b2", "128x64_s8_c1x1_%_tma_b1",
                                         "128x32_s10_c1x1_%_tma_b1", "128x16_s10_c1x1_%_tma_b1"};
      const int i = bn == 128 ? 0 : bn == 64 ? 1 : bn == 32 ? 2 : 3;
      return kernel_named(with_mode(bm_rows == 64 ? k64[i] : k128[i], accumulation));
    }
    return kernel_named(with_mode(M <= 64 ? "64x16_s16_c1x1_%_tma_b1" : "64x32_s14_c1x1_%_tma_b1",
                                  accumulation));
  }
  // Large M: the best-measured tile of each family, scored by wave efficiency (the fraction of
  // SM slots of all waves that hold a tile) times its speed relative to the 128 x 256 cluster
  // kernel on whole waves (sweep, both modes).
  struct Candidate {
    const char* stem;
    int bm, bn;
    double speed_fast, speed_promoted;
  };
  static const Candidate large[] = {
      {"128x256_s4_c2x1_%_tma_b2", 128, 256, 1.00, 0.97},
      {"192x128_s4_c2x1_%_tma_b2", 192, 128, 0.95, 1.00},
      {"128x192_s4_c2x1_%_tma_b3", 128, 192, 0.93, 0.95},
      {"128x176_s4_c2x1_%_tma_b11", 128, 176, 0.95, 0.95},
      {"128x128_s6_c2x1_%_tma_b2", 128, 128, 0.90, 0.70},
      // Promoted only: with the 8x-unrolled loop 1.05x of 192 x 128 on whole waves (377d953's
      // comparison: 1.01-1.18x at M = 4096 and 8192^3 where the tile counts fill the waves);
      // fast keeps the sweep's tiles (256 x 128 fast measured 0.97-0.99x of 128 x 256 there).
      {"256x128_s4_c1x2_%_tma_b2", 256, 128, 0.0, 1.05}};
  // Every candidate runs 2-CTA clusters: the grid's CTA slots are whole clusters.
  const std::int64_t slots = engine::cluster_slots(sms, 2);
  const Candidate* best = nullptr;
  double best_score = -1;
  for (const auto& c : large) {
    const std::int64_t tiles = ceil_div(M, c.bm) * ceil_div(N, c.bn);
    const double speed = accumulation == Accumulation::fast ? c.speed_fast : c.speed_promoted;
    const double score = engine::wave_efficiency(tiles, slots) * speed;
    if (score > best_score + 1e-9) {
      best_score = score;
      best = &c;
    }
  }
  return kernel_named(with_mode(best->stem, accumulation));
}

namespace {
engine::EnginePlan make_plan(const PerTensorGemm& g, const Options& o) {
  const GemmArgs args = g.args();
  const GemmRequirements req = requirements();
  // Validate before choosing, so a bad call is named as such rather than as a missing kernel.
  validate_gemm(args, req);
  if (o.accumulation != Accumulation::fast && o.accumulation != Accumulation::promoted)
    throw std::invalid_argument(std::string(req.who) + ": Options::accumulation = " +
                                std::to_string(int(o.accumulation)) +
                                " is not an Accumulation (fast, promoted)");
  const engine::KernelInfo& k =
      o.kernel.empty()
          ? choose_kernel(g.M, g.N, g.K, o.accumulation, engine::tma_store_compatible(args),
                          engine::rule_sms(grid_max_sms(o)))
          : kernel_named(o.kernel);
  return engine::EnginePlan(k, args, req, o.max_sms, o.raster, o.persistent);
}
}  // namespace

Plan::Plan(const PerTensorGemm& gemm, const Options& options) : plan_(make_plan(gemm, options)) {}

void gemm(const PerTensorGemm& g, cudaStream_t stream) { Plan(g).run(stream); }

void gemm_fast(const PerTensorGemm& g, cudaStream_t stream) {
  Options o;
  o.accumulation = Accumulation::fast;
  Plan(g, o).run(stream);
}

}  // namespace fp8gemm::ch06
