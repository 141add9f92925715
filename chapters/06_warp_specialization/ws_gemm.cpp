#include "ws_gemm.hpp"

#include <algorithm>
#include <string>

namespace fp8gemm::ch06 {

GemmRequirements requirements() { return engine::engine_requirements("fp8gemm::ch06_warp_specialization"); }

namespace {

std::int64_t ceil_div(std::int64_t a, std::int64_t b) { return (a + b - 1) / b; }

/// Fraction of the SM-slots of the last wave that do useful work, over all waves.
double wave_efficiency(std::int64_t tiles, std::int64_t slots) {
  const std::int64_t waves = ceil_div(tiles, slots);
  return double(tiles) / double(waves * slots);
}

std::string with_mode(const std::string& stem, Accumulation a) {
  // stem: "128x256_s4_c2x1_%_tma_b2" -> the accumulation mode replaces %.
  std::string s = stem;
  const auto at = s.find('%');
  s.replace(at, 1, to_string(a));
  return s;
}

}  // namespace

const engine::KernelInfo& choose_kernel(std::int64_t M, std::int64_t N, std::int64_t K,
                                        Accumulation accumulation, bool tma_store_ok) {
  (void)K;
  if (!tma_store_ok)
    return kernel_named(with_mode(M <= 128 ? "128x128_s6_c1x1_%_reg" : "128x256_s4_c2x1_%_reg",
                                  accumulation));
  constexpr std::int64_t kSlots = 132;
  struct Candidate {
    const char* stem;
    int bm, bn;
    double speed;  // relative speed of a full wave of this tile (bigger tiles: fewer bytes/FLOP)
  };
  if (M <= 128) {
    // Decode-like: every SM should get a tile; narrower tiles cost little when B streams from
    // HBM anyway.
    static const Candidate small[] = {
        {"128x256_s4_c2x1_%_tma_b2", 128, 256, 1.0}, {"128x192_s4_c2x1_%_tma_b3", 128, 192, 1.0},
        {"128x128_s6_c2x1_%_tma_b2", 128, 128, 1.0}, {"128x64_s8_c1x1_%_tma_b1", 128, 64, 1.0},
        {"128x56_s8_c1x1_%_tma_b1", 128, 56, 0.98},   {"128x32_s10_c1x1_%_tma_b1", 128, 32, 0.9},
        {"128x16_s10_c1x1_%_tma_b1", 128, 16, 0.8}};
    const Candidate* best = nullptr;
    double best_score = -1;
    for (const auto& c : small) {
      const std::int64_t tiles = ceil_div(M, c.bm) * ceil_div(N, c.bn);
      // Memory-bound: the score is the share of SMs streaming B.
      const double busy = std::min(1.0, double(tiles) / double(kSlots)) * c.speed;
      if (busy > best_score + 1e-9) {
        best_score = busy;
        best = &c;
      }
    }
    return kernel_named(with_mode(best->stem, accumulation));
  }
  static const Candidate large[] = {
      {"128x256_s4_c2x1_%_tma_b2", 128, 256, 1.0}, {"256x128_s4_c1x2_%_tma_b2", 256, 128, 1.0},
      {"128x192_s4_c2x1_%_tma_b3", 128, 192, 0.97}, {"128x176_s4_c2x1_%_tma_b11", 128, 176, 0.96},
      {"128x160_s4_c2x1_%_tma_b5", 128, 160, 0.95}, {"128x128_s6_c2x1_%_tma_b2", 128, 128, 0.9}};
  const Candidate* best = nullptr;
  double best_score = -1;
  for (const auto& c : large) {
    const std::int64_t tiles = ceil_div(M, c.bm) * ceil_div(N, c.bn);
    const double score = wave_efficiency(tiles, kSlots) * c.speed;
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
  const engine::KernelInfo& k =
      o.kernel.empty()
          ? choose_kernel(g.M, g.N, g.K, o.accumulation, engine::tma_store_compatible(args))
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
