// CPU tests of the library's own layer (chapter 10, fp8gemm/dispatch.hpp and fp8gemm.hpp): the
// architecture rules on made-up devices, the kernel choice in its order (option, environment,
// table, chapter rule; the epilogue rule for D the table cannot serve), the refusals of names
// that do not exist or do not fit, the generated table's rows against the chapters' kernel
// lists, and the plans' refusals of bad calls before any GPU work. No GPU needed.
#include <array>
#include <set>
#include <utility>
#include <vector>
#include <stdexcept>
#include <string>

#include "catch.hpp"
#include "common/cuda.hpp"
#include "fp8gemm/fp8gemm.hpp"
#include "refusal.hpp"

using namespace fp8gemm;
using test::has;

namespace {

DeviceArch gpu(int major, int minor, const char* name) { return {0, major, minor, name}; }

/// The message of the std::runtime_error `call` throws ("none" if none, "OTHER: ..." for others).
template <class F>
std::string runtime_error_of(F&& call) {
  try {
    call();
  } catch (const std::runtime_error& e) {
    return e.what();
  } catch (const std::exception& e) {
    return std::string("OTHER: ") + e.what();
  }
  return "none";
}

}  // namespace

TEST_CASE("library: the engine plans run on compute capability 9.0 only", "[library][arch]") {
  CHECK_NOTHROW(require_hopper(gpu(9, 0, "NVIDIA H200"), "fp8gemm::BlockScaledPlan"));
  CHECK_NOTHROW(require_hopper(DeviceArch{}, "fp8gemm::BlockScaledPlan"));  // no GPU: the plan says
  const std::string b200 = runtime_error_of(
      [] { require_hopper(gpu(10, 0, "NVIDIA B200"), "fp8gemm::BlockScaledPlan"); });
  CHECK(has(b200, "fp8gemm::BlockScaledPlan"));
  CHECK(has(b200, "NVIDIA B200 (compute capability 10.0)"));
  CHECK(has(b200, "only on compute capability 9.0"));
  CHECK(has(b200, "fp8gemm::MxPlan"));  // what does run there
  const std::string ada =
      runtime_error_of([] { require_hopper(gpu(8, 9, "NVIDIA L40S"), "fp8gemm::PerTensorPlan"); });
  CHECK(has(ada, "NVIDIA L40S (compute capability 8.9)"));
  CHECK(has(ada, "sm_90a"));
  CHECK_FALSE(has(ada, "MxPlan"));
  CHECK(runtime_error_of([] { require_hopper(gpu(9, 1, "future"), "x"); }) != "none");
}

TEST_CASE("library: MXFP8 runs the Hopper kernels on 9.0 and the sm_100a kernel on 10.0",
          "[library][arch]") {
  CHECK(mx_kernel_arch(gpu(9, 0, "NVIDIA H200"), false) == MxKernelArch::hopper_sm90a);
  CHECK(mx_kernel_arch(gpu(9, 0, "NVIDIA H200"), true) == MxKernelArch::hopper_sm90a);
  CHECK(mx_kernel_arch(gpu(10, 0, "NVIDIA B200"), true) == MxKernelArch::blackwell_sm100a);
  const std::string not_built =
      runtime_error_of([] { mx_kernel_arch(gpu(10, 0, "NVIDIA B200"), false); });
  CHECK(has(not_built, "NVIDIA B200"));
  CHECK(has(not_built, "FP8GEMM_BUILD_SM100=ON"));
  const std::string b300 =
      runtime_error_of([] { mx_kernel_arch(gpu(10, 3, "NVIDIA B300"), true); });
  CHECK(has(b300, "NVIDIA B300 (compute capability 10.3)"));
  CHECK(has(b300, "10.0 only"));
  const std::string rtx =
      runtime_error_of([] { mx_kernel_arch(gpu(12, 0, "RTX PRO 6000"), true); });
  CHECK(has(rtx, "compute capability 12.0"));
  CHECK(has(rtx, "MXFP8 runs on compute capability 9.0"));
  CHECK(has(runtime_error_of([] { mx_kernel_arch(DeviceArch{}, true); }), "no CUDA GPU"));
  CHECK(has(runtime_error_of([] { mx_kernel_arch(gpu(8, 0, "NVIDIA A100"), true); }),
            "NVIDIA A100 (compute capability 8.0)"));
}

TEST_CASE("library: the environment override's syntax", "[library][dispatch]") {
  const char* v = "FP8GEMM_KERNEL_BLOCK_SCALED";
  CHECK(env_kernel_for(v, nullptr, 1, 2, 3).empty());
  CHECK(env_kernel_for(v, "", 1, 2, 3).empty());
  CHECK(env_kernel_for(v, "abc", 1, 2, 3) == "abc");
  const char* list = "64x7168x2048=k1,4096x7168x2048=k2,*=k3";
  CHECK(env_kernel_for(v, list, 64, 7168, 2048) == "k1");
  CHECK(env_kernel_for(v, list, 4096, 7168, 2048) == "k2");
  CHECK(env_kernel_for(v, list, 128, 7168, 2048) == "k3");
  CHECK(env_kernel_for(v, "64x7168x2048=k1", 128, 7168, 2048).empty());
  for (const char* bad : {"a,b", "64x7168=k1", "=k1", "64x7168x2048=", "*=a,*=b", "x=k"}) {
    const std::string r = test::refusal_of([&] { env_kernel_for(v, bad, 64, 7168, 2048); });
    INFO(bad << ": " << r);
    CHECK(has(r, "FP8GEMM_KERNEL_BLOCK_SCALED='"));
    CHECK(has(r, "want NAME"));
  }
}

TEST_CASE("library: block-scaled kernel choice, in order", "[library][dispatch]") {
  // The table serves a DeepSeek-V3 shape with its sweep's fastest kernel.
  const DispatchEntry* e = dispatch_table_entry(DispatchFamily::block_scaled, 4096, 7168, 2048);
  REQUIRE(e != nullptr);
  KernelChoice c = choose_block_scaled(4096, 7168, 2048, false, true, "", nullptr);
  CHECK(c.rule == DispatchRule::table);
  CHECK(c.kernel == e->kernel);
  CHECK(has(c.why, "dispatch table: 4096x7168x2048"));
  CHECK(has(c.why, dispatch_sources()[std::size_t(e->source)].path));
  // The environment beats the table, the option beats both.
  const std::string k1 = "128x128_s6_c1x1_promoted_tma_b1", k2 = "128x256_s4_c2x1_promoted_tma_b1";
  c = choose_block_scaled(4096, 7168, 2048, false, true, "", k1.c_str());
  CHECK(c.rule == DispatchRule::environment);
  CHECK(c.kernel == k1);
  c = choose_block_scaled(4096, 7168, 2048, false, true, k2, k1.c_str());
  CHECK(c.rule == DispatchRule::option);
  CHECK(c.kernel == k2);
  // A shape-specific environment entry applies to its shape only.
  const std::string only = "64x64x128=" + k1;
  CHECK(choose_block_scaled(4096, 7168, 2048, false, true, "", only.c_str()).rule ==
        DispatchRule::table);
  // No table entry: chapter 7's own rule.
  c = choose_block_scaled(1000, 3000, 1024, false, true, "", nullptr);
  CHECK(c.rule == DispatchRule::chapter);
  CHECK(c.kernel == ch07::choose_kernel(1000, 3000, 1024, ch07::Output::bf16, true).name);
  // FP32 D or a D that TMA cannot store: the registers epilogues, whatever the table or the
  // environment say (the environment applies to the calls the table serves).
  c = choose_block_scaled(4096, 7168, 2048, true, true, "", k1.c_str());
  CHECK(c.rule == DispatchRule::epilogue);
  CHECK(ch07::kernel_named(c.kernel).epilogue == engine::EpilogueKind::registers_f32);
  CHECK(has(c.why, "FP8GEMM_KERNEL_BLOCK_SCALED applies to bf16 D stored by TMA only"));
  c = choose_block_scaled(4096, 7168, 2048, false, false, "", nullptr);
  CHECK(c.rule == DispatchRule::epilogue);
  CHECK(ch07::kernel_named(c.kernel).epilogue == engine::EpilogueKind::registers);
  // An accumulating FP32 D whose rows TMA can store: the chapter's FP32 kernel by TMA (a
  // reduce-add); where TMA cannot store D, from registers.
  c = choose_block_scaled(4096, 7168, 2048, true, true, "", nullptr, 0, true);
  CHECK(c.rule == DispatchRule::epilogue);
  CHECK(c.kernel == "128x256_s4_c2x1_promoted_f32_tma_b1");
  CHECK(has(c.why, "by TMA"));
  c = choose_block_scaled(64, 7168, 2048, true, true, "", nullptr, 0, true);
  CHECK(c.kernel == "128x128_s5_c1x1_promoted_f32_tma_b2");
  c = choose_block_scaled(4096, 7168, 2048, true, false, "", nullptr, 0, true);
  CHECK(c.kernel == "128x256_s4_c2x1_promoted_f32");
  CHECK(ch07::kernel_named(c.kernel).epilogue == engine::EpilogueKind::registers_f32);
}

TEST_CASE("library: the table rescaled to the plan's SMs (rule table_sms)", "[library][dispatch]") {
  // Waves of the engine's grid: units of cluster_m x cluster_n tiles over the clusters that fit.
  CHECK(grid_waves(64, 2112, 64, 16, 132) == 1);  // 132 tiles
  CHECK(grid_waves(64, 2112, 64, 16, 112) == 2);
  CHECK(grid_waves(64, 2112, 64, 32, 112) == 1);  // 66 tiles
  CHECK(grid_waves(4096, 2112, 128, 128, 112, 2, 1) == 5);  // 32 x 17 tiles, 272 units, 56 pairs
  CHECK(grid_waves(1, 1, 64, 64, 1, 2, 1) == 1);            // one pair on one SM's budget
  // Odd tiles along the cluster: M = 64 and 2 x 1 clusters of 128-row tiles leave half of each
  // pair idle, 192 units of 24576 / 128 tiles over 66 pairs: 3 waves (not 192 / 132 = 2).
  CHECK(grid_waves(64, 24576, 128, 128, 132, 2, 1) == 3);
  CHECK(grid_waves(8192, 8192, 192, 128, 131, 2, 1) == grid_waves(8192, 8192, 192, 128, 132, 2, 1));
  CHECK(grid_waves(0, 2112, 64, 16, 132) == 0);
  // The rule on made-up times: 64 x 2112, the 16-wide tile fastest on 132 SMs (132 tiles, one
  // wave) needs two waves on 112, the 32-wide one (66 tiles) one on both.
  const std::vector<std::pair<std::string, double>> cand = {{"n16", 12.6}, {"n32", 13.0}, {"n64", 14.3}};
  const std::vector<TileShape> tiles = {{"n16", 64, 16}, {"n32", 64, 32}, {"n64", 64, 64}};
  // rescaled_choice over rescaled_times, as the library calls them.
  const auto choice = [](const std::vector<std::pair<std::string, double>>& c, std::int64_t M,
                         std::int64_t N, int sweep, int usable, const std::vector<TileShape>& t,
                         const std::string& row, double margin = 0.03) {
    return rescaled_choice(rescaled_times(c, M, N, sweep, usable, t), sweep, usable, row, margin);
  };
  CHECK(choice(cand, 64, 2112, 132, 132, tiles, "n16") == "n16");
  CHECK(choice(cand, 64, 2112, 132, 112, tiles, "n16") == "n32");
  CHECK(choice(cand, 64, 2112, 132, 60, tiles, "n16") == "n64");  // 33 tiles: one wave
  const auto times = rescaled_times(cand, 64, 2112, 132, 112, tiles);
  REQUIRE(times.size() == 3);
  CHECK(times[0].waves_usable == 2);
  CHECK(times[0].waves_sweep == 1);
  CHECK(times[0].predicted == Approx(25.2));
  CHECK(times[1].predicted == Approx(13.0));
  // The row stays where it keeps its waves: n32's 66 tiles are one wave on 100 SMs as on 132.
  CHECK(choice(cand, 64, 2112, 132, 100, tiles, "n32") == "n32");
  // ... and within the 3% margin: n32 at 13.0 against 12.9 predicted for another.
  const std::vector<std::pair<std::string, double>> close = {{"a", 12.9}, {"b", 13.0}};
  const std::vector<TileShape> ab = {{"a", 64, 32}, {"b", 64, 32}};
  CHECK(choice(close, 64, 2112, 132, 140, ab, "b") == "b");
  CHECK(choice(close, 64, 2112, 132, 140, ab, "b", 0.0) == "a");
  // A name without a tile shape is skipped, not guessed.
  CHECK(choice(cand, 64, 2112, 132, 112, {{"n64", 64, 64}}, "n16") == "n64");
  CHECK(choice(cand, 64, 2112, 132, 112, {}, "n16").empty());

  // The library: 64 x 2112 x 7168's row (64x16 on 132 SMs) becomes 64x32 on 112 SMs, the table
  // as it is on 132 or with no count (0), and the option and the environment still win.
  const DispatchEntry* e = dispatch_table_entry(DispatchFamily::block_scaled, 64, 2112, 7168);
  REQUIRE(e != nullptr);
  CHECK(std::string(e->kernel) == "64x16_s16_c1x1_promoted_tma_b1");
  REQUIRE(dispatch_sources()[std::size_t(e->source)].sms == 132);
  KernelChoice c = choose_block_scaled(64, 2112, 7168, false, true, "", nullptr, 112);
  CHECK(c.rule == DispatchRule::table_sms);
  CHECK(c.kernel == "64x32_s14_c1x1_promoted_tma_b1");
  INFO(c.why);
  CHECK(has(c.why, "dispatch table rescaled to 112 SMs: 64x2112x7168's times on 132 SMs"));
  CHECK(has(c.why, "64x32_s14_c1x1_promoted_tma_b1 "));
  CHECK(has(c.why, "x 1/1 waves"));
  CHECK(has(c.why, "the row's 64x16_s16_c1x1_promoted_tma_b1 "));
  CHECK(has(c.why, "x 2/1 waves"));
  CHECK(std::string(to_string(c.rule)) == "table_sms");
  for (int sms : {0, 132}) {
    c = choose_block_scaled(64, 2112, 7168, false, true, "", nullptr, sms);
    CHECK(c.rule == DispatchRule::table);
    CHECK(c.kernel == e->kernel);
  }
  const std::string k1 = "128x128_s6_c1x1_promoted_tma_b1";
  CHECK(choose_block_scaled(64, 2112, 7168, false, true, "", k1.c_str(), 112).rule ==
        DispatchRule::environment);
  CHECK(choose_block_scaled(64, 2112, 7168, false, true, k1, nullptr, 112).rule ==
        DispatchRule::option);
  // A shape with no row keeps the chapter's rule; FP32 D keeps its epilogue rule.
  CHECK(choose_block_scaled(1000, 3000, 1024, false, true, "", nullptr, 112).rule ==
        DispatchRule::chapter);
  // ... whose rules plan for the plan's SMs too (session 47): 64 x 2048 is 128 tiles of 64 x 16,
  // one wave on 132 SMs, two on 112, so 64 x 32 there; the reason names the count.
  c = choose_block_scaled(64, 2048, 7168, false, true, "", nullptr, 112);
  CHECK(c.rule == DispatchRule::chapter);
  CHECK(c.kernel == "64x32_s14_c1x1_promoted_tma_b1");
  CHECK(has(c.why, "on 112 SMs"));
  c = choose_block_scaled(64, 2048, 7168, false, true, "", nullptr, 0);  // no GPU: the 132 of
  CHECK(c.kernel == "64x16_s16_c1x1_promoted_tma_b1");                    // the rules' sweeps
  CHECK(has(c.why, "on 132 SMs"));
  c = choose_per_tensor(64, 2048, 7168, Accumulation::promoted, true, "", nullptr, 112);
  CHECK(c.rule == DispatchRule::chapter);
  CHECK(c.kernel == "64x32_s14_c1x1_promoted_tma_b1");
  CHECK(choose_block_scaled(64, 2112, 7168, true, true, "", nullptr, 112).rule ==
        DispatchRule::epilogue);
  // The other families rescale the same way (their rows have candidates from their sweeps).
  c = choose_per_tensor(64, 2112, 7168, Accumulation::promoted, true, "", nullptr, 112);
  CHECK(c.rule == DispatchRule::table_sms);
  CHECK(ch06::kernel_named(c.kernel).accumulation == Accumulation::promoted);
  c = choose_per_tensor(64, 2112, 7168, Accumulation::fast, true, "", nullptr, 112);
  CHECK(c.rule == DispatchRule::table_sms);
  CHECK(ch06::kernel_named(c.kernel).accumulation == Accumulation::fast);
  // One SM fewer than the sweep's changes no row whose kernel keeps its waves there.
  for (const DispatchEntry& row : dispatch_table()) {
    const std::string f = row.family;
    if (f != "block_scaled" && f != "per_tensor_promoted" && f != "per_tensor_fast") continue;
    const int sweep = dispatch_sources()[std::size_t(row.source)].sms;
    if (sweep != 132) continue;
    const engine::KernelInfo& k =
        f == "block_scaled" ? ch07::kernel_named(row.kernel) : ch06::kernel_named(row.kernel);
    if (grid_waves(row.M, row.N, k.block_m, k.block_n, 131, k.cluster_m, k.cluster_n) !=
        grid_waves(row.M, row.N, k.block_m, k.block_n, 132, k.cluster_m, k.cluster_n))
      continue;
    INFO(f << " " << row.M << "x" << row.N << "x" << row.K << " " << row.kernel);
    const KernelChoice r131 =
        f == "block_scaled"
            ? choose_block_scaled(row.M, row.N, row.K, false, true, "", nullptr, 131)
            : choose_per_tensor(row.M, row.N, row.K,
                                f == "per_tensor_fast" ? Accumulation::fast : Accumulation::promoted,
                                true, "", nullptr, 131);
    CHECK(r131.kernel == row.kernel);
  }
  // Every row's candidates name kernels of its family (else the rescaled rule would skip them).
  for (const DispatchCandidate& cand_row : dispatch_candidates()) {
    INFO(cand_row.family << " " << cand_row.M << "x" << cand_row.N << "x" << cand_row.K << " "
                         << cand_row.kernel);
    const std::string f = cand_row.family;
    bool found = false;
    const auto& list = f == "block_scaled"   ? ch07::kernels()
                       : f == "mxfp8_hopper" ? ch09::hopper_kernels()
                                             : ch06::kernels();
    for (const auto& k : list) found |= k.name == cand_row.kernel;
    CHECK(found);
    CHECK(cand_row.us > 0);
    CHECK(dispatch_table_entry(f == "block_scaled"          ? DispatchFamily::block_scaled
                               : f == "per_tensor_promoted" ? DispatchFamily::per_tensor_promoted
                               : f == "per_tensor_fast"     ? DispatchFamily::per_tensor_fast
                                                            : DispatchFamily::mxfp8_hopper,
                               cand_row.M, cand_row.N, cand_row.K) != nullptr);
  }
}

TEST_CASE("library: names that do not exist or do not fit are refused", "[library][dispatch]") {
  std::string r =
      test::refusal_of([] { choose_block_scaled(64, 64, 128, false, true, "nope", nullptr); });
  CHECK(has(r, "Options::kernel = 'nope'"));
  CHECK(has(r, "no kernel named 'nope'"));
  // A typo in the variable shows even when its entry is for another shape.
  r = test::refusal_of(
      [] { choose_block_scaled(64, 64, 128, false, true, "", "4096x7168x2048=typo"); });
  CHECK(has(r, "FP8GEMM_KERNEL_BLOCK_SCALED = 'typo'"));
  r = test::refusal_of([] {
    choose_block_scaled(64, 64, 128, true, true, "128x128_s6_c1x1_promoted_tma_b1", nullptr);
  });
  CHECK(has(r, "the call asks for FP32 D"));
  r = test::refusal_of([] {
    choose_block_scaled(64, 64, 128, false, false, "128x128_s6_c1x1_promoted_tma_b1", nullptr);
  });
  CHECK(has(r, "stores D with TMA"));
  CHECK(has(r, "ldd a multiple of 8"));
  CHECK(has(r, "name a *_reg kernel"));
  r = test::refusal_of([] {
    choose_block_scaled(64, 64, 128, false, true, "128x128_s6_c1x1_promoted_f32", nullptr);
  });
  CHECK(has(r, "writes FP32 D, the call asks for bf16 D"));
  // Fast accumulation stays opt-in: a fast kernel is refused for a promoted call.
  r = test::refusal_of([] {
    choose_per_tensor(64, 64, 128, Accumulation::promoted, true, "128x256_s4_c2x1_fast_tma_b2",
                      nullptr);
  });
  CHECK(has(r, "accumulates fast, the call asks for Accumulation::promoted"));
  r = test::refusal_of([] {
    choose_per_tensor(64, 64, 128, Accumulation::fast, true, "", "128x256_s4_c2x1_promoted_tma_b2");
  });
  CHECK(has(
      r,
      "FP8GEMM_KERNEL_PER_TENSOR_FAST = '128x256_s4_c2x1_promoted_tma_b2' accumulates promoted"));
  r = test::refusal_of([] { choose_mx_hopper(256, 256, 256, true, "nope", nullptr); });
  CHECK(has(r, "no kernel named 'nope'"));
}

TEST_CASE("library: the per-tensor FP32-output choice", "[library][dispatch]") {
  // Per accumulation mode: ten cooperative tiles and one ping-pong (128 x 128, 2 x 1 clusters)
  // writing FP32 D from registers, four (128 x 256 c2x1, 128 x 192, 128 x 128, its ping-pong) by
  // TMA.
  // And two promoted comparison kernels by TMA (128 x 256 without the cluster, and with one
  // staging unit), by name only.
  REQUIRE(per_tensor_f32_kernels().size() == 32);
  int tma = 0, comparison = 0;
  for (const engine::KernelInfo& k : per_tensor_f32_kernels()) {
    INFO(k.name);
    CHECK(engine::writes_f32(k.epilogue));
    CHECK(has(k.name, "_tma_b") == (k.epilogue == engine::EpilogueKind::tma_store_f32));
    tma += k.epilogue == engine::EpilogueKind::tma_store_f32;
    const bool comparison_kernel = k.name == "128x256_s4_c1x1_promoted_f32_tma_b2" ||
                                   k.name == "128x256_s4_c2x1_promoted_f32_tma_b1";
    CHECK(k.comparison_only == comparison_kernel);
    comparison += k.comparison_only;
  }
  CHECK(tma == 10);
  CHECK(comparison == 2);
  // The candidates' K band: the ping-pong 128 x 128 for fast accumulation by TMA with 512 < K <=
  // 3072 only; every other candidate at every K, by TMA exactly where D allows it.
  // (name: '%' for the mode.)
  const auto has_candidate = [](std::int64_t K, Accumulation a, bool tma_ok, std::string name) {
    name.replace(name.find('%'), 1, engine::to_string(a));
    for (const PerTensorF32Candidate& k : per_tensor_f32_candidates(K, a, tma_ok))
      if (k.kernel->name == name) return true;
    return false;
  };
  for (std::int64_t K : {512, 513, 3072, 3073, 16384})
    for (Accumulation a : {Accumulation::promoted, Accumulation::fast})
      for (bool tma_ok : {true, false}) {
        INFO("K = " << K << " " << engine::to_string(a) << " TMA-storable D " << tma_ok);
        const bool fast = a == Accumulation::fast;
        const auto list = per_tensor_f32_candidates(K, a, tma_ok);
        for (const PerTensorF32Candidate& k : list) {
          INFO(k.kernel->name);
          CHECK(k.kernel->block_m == 128);
          CHECK(k.kernel->accumulation == a);
          CHECK((k.kernel->epilogue == engine::EpilogueKind::tma_store_f32) == tma_ok);
          CHECK(k.speed > 0.9);
          CHECK(k.speed <= (has(k.kernel->name, "_pp") ? 1.07 : 1.0));
        }
        CHECK(list.size() == (tma_ok && fast && K > 512 && K <= 3072 ? 4u : 3u));
        const std::string by = tma_ok ? "_tma_b2" : "";
        CHECK(has_candidate(K, a, tma_ok, "128x128_s6_c2x1_%_f32_tma_b2_pp") ==
              (tma_ok && fast && K > 512 && K <= 3072));
        CHECK(has_candidate(K, a, tma_ok, "128x256_s4_c2x1_%_f32" + by));
        CHECK(has_candidate(K, a, tma_ok, "128x192_s4_c1x1_%_f32" + by));
        CHECK(has_candidate(K, a, tma_ok, "128x128_s6_c1x1_%_f32" + by));
      }
  // The ping-pong's speed: 1.07 up to K = 2048, 1.02 past it (session 60: +7-9 % at 1024-2048,
  // +2-4 % at 3072).
  for (std::int64_t K : {1024, 2048, 2049, 3072}) {
    double pp = 0;
    for (const PerTensorF32Candidate& k : per_tensor_f32_candidates(K, Accumulation::fast, true))
      if (has(k.kernel->name, "_pp")) pp = k.speed;
    CHECK(pp == (K <= 2048 ? 1.07 : 1.02));
  }
  struct Case {
    std::int64_t M, N, K;
    int sms;
    // The kernel chosen ('%' for the mode) where D is not TMA-storable, and where it is, promoted
    // and fast (nullptr: as the first).
    const char* registers;
    const char* tma_promoted = nullptr;
    const char* tma_fast = nullptr;
  };
  // M <= 128: below (the decode cases). M > 128: wave efficiency x fill x speed: from registers 128 x 256 1, 128 x 192
  // 0.98 promoted / 0.97 fast, 128 x 128 0.93; fast by TMA the same, and with 512 < K <= 3072 the
  // ping-pong 128 x 128 1.07 (1.02 past K = 2048); promoted by TMA 128 x 128 1, 128 x 192 1,
  // 128 x 256 0.95.
  const Case cases[] = {
      // 112 tiles of 128 x 128 fill 85% of a wave, 76 of 128 x 192 58%, 56 of 128 x 256 42%.
      {129, 7168, 7168, 132, "128x128_s6_c1x1_%_f32", "128x128_s6_c1x1_%_f32_tma_b2",
       "128x128_s6_c1x1_%_f32_tma_b2"},
      // 7 or 14 waves, 97% full; 128 x 192 10 waves 92%.
      {4096, 7168, 7168, 132, "128x256_s4_c2x1_%_f32", "128x128_s6_c1x1_%_f32_tma_b2",
       "128x256_s4_c2x1_%_f32_tma_b2"},
      // 24 or 47 waves, 97% / 99%; fast by TMA the ping-pong at K = 1536.
      {4096, 24576, 1536, 132, "128x256_s4_c2x1_%_f32", "128x128_s6_c1x1_%_f32_tma_b2",
       "128x128_s6_c2x1_%_f32_tma_b2_pp"},
      {4096, 7168, 2048, 132, "128x256_s4_c2x1_%_f32", "128x128_s6_c1x1_%_f32_tma_b2",
       "128x128_s6_c2x1_%_f32_tma_b2_pp"},
      {4096, 7168, 3072, 132, "128x256_s4_c2x1_%_f32", "128x128_s6_c1x1_%_f32_tma_b2",
       "128x128_s6_c2x1_%_f32_tma_b2_pp"},  // 1.02 x 97% against 97%
      // K = 512: no ping-pong. 63 waves of 128 x 128 and 42 of 128 x 192 model the same time
      // (63 x 128 = 42 x 192 columns a slot): the earlier candidate, 128 x 128.
      {4096, 32768, 512, 132, "128x256_s4_c2x1_%_f32", "128x128_s6_c1x1_%_f32_tma_b2",
       "128x256_s4_c2x1_%_f32_tma_b2"},
      {4096, 7168, 4096, 132, "128x256_s4_c2x1_%_f32", "128x128_s6_c1x1_%_f32_tma_b2",
       "128x256_s4_c2x1_%_f32_tma_b2"},  // past 3072: no ping-pong either
      {4096, 7168, 16384, 132, "128x256_s4_c2x1_%_f32", "128x128_s6_c1x1_%_f32_tma_b2",
       "128x256_s4_c2x1_%_f32_tma_b2"},
      // 3 waves of 128 x 192 89% full, 5 of 128 x 128 82%, 3 of 128 x 256 73% (their tiles 97%
      // and 92% inside D): 128 x 192 in every mode, at K = 16384 too.
      {4096, 2112, 7168, 132, "128x192_s4_c1x1_%_f32", "128x192_s4_c1x1_%_f32_tma_b2",
       "128x192_s4_c1x1_%_f32_tma_b2"},
      {4096, 2112, 16384, 132, "128x192_s4_c1x1_%_f32", "128x192_s4_c1x1_%_f32_tma_b2",
       "128x192_s4_c1x1_%_f32_tma_b2"},
      // 128 tiles of 128 x 256 fill 97% of a wave but themselves 7/8 (896 = 3.5 x 256), 224 of
      // 128 x 128 2 waves 85%, 160 of 128 x 192 2 waves 61%: promoted by TMA (128 x 256 at 0.95)
      // 128 x 128, 0.848 against 0.806.
      {4096, 896, 7168, 132, "128x256_s4_c2x1_%_f32", "128x128_s6_c1x1_%_f32_tma_b2",
       "128x256_s4_c2x1_%_f32_tma_b2"},
      // 256 x 256: 4 tiles of 128 x 128 or 128 x 192, but half of 128 x 192's second column is
      // outside D; 2 of 128 x 256.
      {256, 256, 512, 132, "128x128_s6_c1x1_%_f32", "128x128_s6_c1x1_%_f32_tma_b2",
       "128x128_s6_c1x1_%_f32_tma_b2"}};
  for (Accumulation a : {Accumulation::promoted, Accumulation::fast}) {
    const std::string mode = engine::to_string(a);
    const bool fast = a == Accumulation::fast;
    for (const Case& x : cases)
      for (bool tma_ok : {true, false}) {
        INFO(x.M << "x" << x.N << "x" << x.K << " on " << x.sms << " SMs, " << mode
                  << ", TMA-storable D " << tma_ok);
        const KernelChoice c = choose_per_tensor_f32(x.M, x.N, x.K, a, tma_ok, "", nullptr, x.sms);
        CHECK(c.rule == DispatchRule::epilogue);
        const char* want = tma_ok && (fast ? x.tma_fast : x.tma_promoted)
                               ? (fast ? x.tma_fast : x.tma_promoted)
                               : x.registers;
        std::string expected = want;
        expected.replace(expected.find('%'), 1, mode);
        CHECK(c.kernel == expected);
        const engine::KernelInfo& k = engine::find_kernel(per_tensor_f32_kernels(), c.kernel, "t");
        CHECK(k.accumulation == a);
        const bool by_tma = has(expected, "_tma_b2");
        CHECK((k.epilogue == engine::EpilogueKind::tma_store_f32) == by_tma);
        CHECK(has(c.why, by_tma ? "tma_store_f32" : "registers_f32"));
        if (x.M > 128) CHECK(has(c.why, "at K = " + std::to_string(x.K)));
      }
    // M <= 128: the FP32 twin (registers) of chapter 6's decode tile for the shape (its hand table,
    // the H200's bf16 sweep, else its rule: the widest of 128, 64, 32, 16 columns giving about
    // 3/4 of the SMs a tile, 100 on 132, else 64 x 16 / 64 x 32), or where the library has no
    // twin, the narrowest with its rows and at least its columns; then half as wide while the
    // tiles still fit one wave (of these cases: fast at 64 x 2112 x 7168, and chapter 6's 64 x 32
    // fallback at small N, 100 x 270 and 1 SM below). D's alignment does not matter.
    struct Decode {
      std::int64_t M, N, K;
      int sms;
      const char* promoted;
      const char* fast;
      bool promoted_has_twin;  // chapter 6's promoted pick has an FP32 kernel of its size
      bool promoted_narrowed = false;  // the pick is narrower than chapter 6's (one wave still)
      bool fast_narrowed = false;
    };
    const Decode decode[] = {
        {1, 9, 16, 132, "64x16_s16", "64x16_s16", true},          // 1 tile: the rule's 64 x 16
        // The twelve DeepSeek-V3 shapes at M = 64 and 128 (chapter 6's hand table).
        // Promoted chapter 6 takes 64 x 16 (132 tiles); fast its 64 x 32 (66 tiles) narrowed.
        {64, 2112, 7168, 132, "64x16_s16", "64x16_s16", true, false, true},
        {64, 24576, 1536, 132, "64x64_s12", "64x64_s12", true},   // (the rule: 64 x 128)
        {64, 32768, 512, 132, "64x128_s8", "64x128_s8", true},
        {64, 7168, 16384, 132, "64x64_s12", "64x64_s12", true},
        {64, 4096, 7168, 132, "64x32_s14", "64x32_s14", true},
        {64, 7168, 2048, 132, "64x64_s12", "64x64_s12", true},
        {128, 2112, 7168, 132, "64x32_s14", "64x32_s14", true},   // 132 tiles, not 66
        {128, 24576, 1536, 132, "128x64_s8", "128x64_s8", true},
        // The fast pick is a ping-pong 128 x 128 (c1x1): the cooperative 128 x 128.
        {128, 32768, 512, 132, "128x128_s6", "128x128_s6", true},
        // The promoted 128 x 56 has no FP32 kernel: widened to 128 x 64 (112 tiles).
        {128, 7168, 16384, 132, "128x64_s8", "128x64_s8", false},
        {128, 4096, 7168, 132, "64x64_s12", "64x64_s12", true},
        {128, 7168, 2048, 132, "128x64_s8", "128x64_s8", true},
        // Chapter 6's rule (no table row): 112 tiles at 64 columns.
        {64, 7168, 7168, 132, "64x64_s12", "64x64_s12", true},
        // 132 tiles of 128 x 16, not more than one wave: 16 columns.
        {128, 2112, 4096, 132, "128x16_s10", "128x16_s10", true},
        // On 112 SMs: one wave.
        {128, 7168, 7168, 112, "128x64_s8", "128x64_s8", true},
        // On 112 SMs the table's 64 x 32 (132 tiles, two waves there) is dropped: the rule's 16
        // columns would give 132 tiles, a thin second wave, so 32 (66 tiles).
        {128, 2112, 7168, 112, "128x32_s10", "128x32_s10", true},
        // Off the table, chapter 6's fallback 64 x 32 (5 tiles) narrowed to 64 x 16 (10 tiles).
        {100, 270, 656, 132, "64x16_s16", "64x16_s16", true, true, true},
        // On one SM chapter 6's rule takes 64 x 128 (one tile); narrowed to 64 x 16, one tile.
        {1, 9, 16, 1, "64x16_s16", "64x16_s16", true, true, true}};
    for (const Decode& x : decode)
      for (bool tma_ok : {true, false}) {
        INFO(x.M << "x" << x.N << "x" << x.K << " on " << x.sms << " SMs, " << mode
                  << ", TMA-storable D " << tma_ok);
        const KernelChoice c = choose_per_tensor_f32(x.M, x.N, x.K, a, tma_ok, "", nullptr, x.sms);
        CHECK(c.rule == DispatchRule::epilogue);
        CHECK(c.kernel == std::string(fast ? x.fast : x.promoted) + "_c1x1_" + mode + "_f32");
        CHECK(has(c.why, "registers_f32"));
        const bool twin = fast || x.promoted_has_twin;
        CHECK(has(c.why, "chapter 6's decode tile"));
        CHECK(has(c.why, "widened to") == !twin);
        CHECK(has(c.why, "narrowed to") == (fast ? x.fast_narrowed : x.promoted_narrowed));
      }
    // An option names a kernel of the FP32 list...
    const KernelChoice c =
        choose_per_tensor_f32(4096, 4096, 7168, a, false, "128x128_s6_c1x1_" + mode + "_f32",
                              nullptr);
    CHECK(c.rule == DispatchRule::option);
    CHECK(c.kernel == "128x128_s6_c1x1_" + mode + "_f32");
    const KernelChoice t = choose_per_tensor_f32(
        4096, 4096, 7168, a, true, "128x128_s6_c2x1_" + mode + "_f32_tma_b2_pp", nullptr);
    CHECK(t.rule == DispatchRule::option);
  }
  // ... and nothing else: not a bf16 kernel of chapter 6, not the other accumulation mode, not a
  // TMA kernel for a D that TMA cannot store.
  std::string r = test::refusal_of([] {
    choose_per_tensor_f32(256, 256, 512, Accumulation::promoted, true,
                          "128x256_s4_c2x1_promoted_tma_b2", nullptr);
  });
  CHECK(has(r, "Options::kernel = '128x256_s4_c2x1_promoted_tma_b2'"));
  CHECK(has(r, "no kernel named"));
  r = test::refusal_of([] {
    choose_per_tensor_f32(256, 256, 512, Accumulation::promoted, true,
                          "128x128_s6_c1x1_fast_f32", nullptr);
  });
  CHECK(has(r, "accumulates fast, the call asks for Accumulation::promoted"));
  r = test::refusal_of([] {
    choose_per_tensor_f32(256, 256, 512, Accumulation::promoted, false,
                          "128x128_s6_c1x1_promoted_f32_tma_b2", nullptr);
  });
  CHECK(has(r, "Options::kernel = '128x128_s6_c1x1_promoted_f32_tma_b2' stores D with TMA"));
  CHECK(has(r, "ldd a multiple of 4"));
  // The bf16 variable does not apply, and says so; a name in it that chapter 6 lacks is refused.
  const KernelChoice c =
      choose_per_tensor_f32(256, 256, 512, Accumulation::fast, true, "",
                            "128x256_s4_c2x1_fast_tma_b2");
  CHECK(c.rule == DispatchRule::epilogue);
  CHECK(c.kernel == "128x128_s6_c1x1_fast_f32_tma_b2");  // 4 tiles against 2
  CHECK(has(c.why, "FP8GEMM_KERNEL_PER_TENSOR_FAST applies to bf16 D only"));
  r = test::refusal_of(
      [] { choose_per_tensor_f32(256, 256, 512, Accumulation::fast, true, "", "typo"); });
  CHECK(has(r, "FP8GEMM_KERNEL_PER_TENSOR_FAST = 'typo'"));
}

TEST_CASE("library: per-tensor and MXFP8 choice", "[library][dispatch]") {
  for (Accumulation a : {Accumulation::promoted, Accumulation::fast}) {
    const DispatchFamily f = a == Accumulation::fast ? DispatchFamily::per_tensor_fast
                                                     : DispatchFamily::per_tensor_promoted;
    const DispatchEntry* e = dispatch_table_entry(f, 4096, 7168, 16384);
    REQUIRE(e != nullptr);
    KernelChoice c = choose_per_tensor(4096, 7168, 16384, a, true, "", nullptr);
    CHECK(c.rule == DispatchRule::table);
    CHECK(c.kernel == e->kernel);
    CHECK(ch06::kernel_named(c.kernel).accumulation == a);
    c = choose_per_tensor(1000, 3000, 1024, a, true, "", nullptr);
    CHECK(c.rule == DispatchRule::chapter);
    CHECK(c.kernel == ch06::choose_kernel(1000, 3000, 1024, a, true).name);
    c = choose_per_tensor(4096, 7168, 16384, a, false, "", nullptr);
    CHECK(c.rule == DispatchRule::epilogue);
    CHECK(ch06::kernel_named(c.kernel).epilogue == engine::EpilogueKind::registers);
  }
  KernelChoice c = choose_mx_hopper(1000, 3000, 1024, true, "", nullptr);
  CHECK(c.rule == DispatchRule::chapter);
  CHECK(engine::find_kernel(ch09::hopper_kernels(), c.kernel, "t").epilogue ==
        engine::EpilogueKind::tma_store);
  c = choose_mx_hopper(1000, 3000, 1024, false, "", nullptr);
  CHECK(c.rule == DispatchRule::epilogue);
  CHECK(engine::find_kernel(ch09::hopper_kernels(), c.kernel, "t").epilogue ==
        engine::EpilogueKind::registers);
  const std::string other = ch09::hopper_kernels().back().name;
  if (ch09::hopper_kernels().back().epilogue == engine::EpilogueKind::tma_store) {
    c = choose_mx_hopper(1000, 3000, 1024, true, other, nullptr);
    CHECK(c.rule == DispatchRule::option);
    CHECK(c.kernel == other);
  }
}

TEST_CASE("library: every table row names a kernel of its family that the table may serve",
          "[library][dispatch]") {
  REQUIRE(!dispatch_table().empty());
  std::set<std::string> seen;
  for (const DispatchEntry& e : dispatch_table()) {
    const std::string f = e.family;
    INFO(f << " " << e.M << "x" << e.N << "x" << e.K << " " << e.kernel);
    CHECK(
        seen.insert(f + std::to_string(e.M) + "x" + std::to_string(e.N) + "x" + std::to_string(e.K))
            .second);  // one row per (family, shape)
    REQUIRE(e.source >= 0);
    REQUIRE(std::size_t(e.source) < dispatch_sources().size());
    CHECK(e.us > 0);
    CHECK((*e.runner_up == '\0' || e.runner_up_us >= e.us));
    const engine::KernelInfo* k = nullptr;
    if (f == "block_scaled")
      k = &ch07::kernel_named(e.kernel);
    else if (f == "per_tensor_promoted" || f == "per_tensor_fast")
      k = &ch06::kernel_named(e.kernel);
    else if (f == "mxfp8_hopper")
      k = &engine::find_kernel(ch09::hopper_kernels(), e.kernel, "t");
    REQUIRE(k != nullptr);  // a family the library knows
    CHECK(k->epilogue == engine::EpilogueKind::tma_store);
    CHECK_FALSE(k->comparison_only);  // a loop comparison's instance never serves a call
    if (f == "per_tensor_fast")
      CHECK(k->accumulation == Accumulation::fast);
    else
      CHECK(k->accumulation == Accumulation::promoted);
  }
  // dispatch_table_entry finds exactly the rows.
  for (const DispatchEntry& e : dispatch_table())
    for (DispatchFamily f : {DispatchFamily::block_scaled, DispatchFamily::per_tensor_promoted,
                             DispatchFamily::per_tensor_fast, DispatchFamily::mxfp8_hopper})
      if (std::string(to_string(f)) == e.family)
        CHECK(dispatch_table_entry(f, e.M, e.N, e.K) == &e);
  CHECK(dispatch_table_entry(DispatchFamily::block_scaled, 4096, 7168, 2047) == nullptr);
}

TEST_CASE("library: the chapters' own rules never choose a loop comparison's kernel",
          "[library][dispatch]") {
  // The flag marks exactly the kernels whose name carries a loop suffix ("_loopN", "_2deep",
  // "_cyc" / "_cycl": the two-deep loop over a ring cycle, always or on long tiles, "_ewN": the
  // early first wave where it is not the default), "_spin" (the re-trying barrier wait),
  // "_timeline" (clock stamps, common/engine/timeline.cuh) or "_lho" (ping-pong's hand-over after
  // the last wgmma completed, the order until session 23), and chapters 6 and 7 have such kernels
  // (else the checks below could not fail).
  int flagged = 0;
  const auto numbered = [](const std::string& name, const char* tag) {
    const auto p = name.rfind(tag);
    const std::size_t n = std::char_traits<char>::length(tag);
    return p != std::string::npos && p + n < name.size() &&
           name.find_first_not_of("0123456789", p + n) == std::string::npos;
  };
  for (const auto* list : {&ch06::kernels(), &ch07::kernels()})
    for (const auto& k : *list) {
      const bool suffix = (k.name.size() > 6 && k.name.ends_with("_2deep")) ||
                          k.name.ends_with("_cyc") || k.name.ends_with("_cycl") ||
                          k.name.ends_with("_spin") || k.name.ends_with("_timeline") ||
                          k.name.ends_with("_lho") || numbered(k.name, "_loop") ||
                          numbered(k.name, "_ew");
      INFO(k.name);
      CHECK(k.comparison_only == suffix);
      flagged += k.comparison_only;
    }
  CHECK(flagged > 0);
  // Shapes the rules branch on: the DeepSeek-V3 set, 8192^3 and odd ones, both epilogues.
  std::vector<std::array<std::int64_t, 3>> shapes = {{8192, 8192, 8192}, {1, 8, 16},
                                                     {1000, 3000, 1024}, {300, 264, 656}};
  for (std::int64_t m : {64, 128, 4096})
    for (auto [n, k] : {std::pair<std::int64_t, std::int64_t>{2112, 7168}, {24576, 1536},
                        {32768, 512}, {7168, 16384}, {4096, 7168}, {7168, 2048}})
      shapes.push_back({m, n, k});
  for (const auto& [M, N, K] : shapes)
    for (bool tma : {true, false}) {
      INFO(M << "x" << N << "x" << K << (tma ? " tma" : " registers"));
      for (Accumulation a : {Accumulation::promoted, Accumulation::fast})
        CHECK_FALSE(ch06::choose_kernel(M, N, K, a, tma).comparison_only);
      CHECK_FALSE(ch07::choose_kernel(M, N, K, ch07::Output::bf16, tma).comparison_only);
    }
}

TEST_CASE("library: plans refuse bad calls before any GPU work", "[library][refusal]") {
  const auto* p = reinterpret_cast<const std::uint8_t*>(std::uintptr_t(0x10000000));
  const auto* s = reinterpret_cast<const float*>(std::uintptr_t(0x20000000));
  auto* d = reinterpret_cast<std::uint16_t*>(std::uintptr_t(0x30000000));
  // On a GPU other than compute capability 9.0 the engine plans refuse with runtime_error
  // first; these checks are the refusal of the call, which needs no GPU or a Hopper one.
  const DeviceArch a = current_device_arch();
  const bool hopper_or_none = a.device < 0 || (a.major == 9 && a.minor == 0);
  if (hopper_or_none) {
    std::string r = test::refusal_of([&] {
      BlockScaledPlan plan(BlockScaledGemm{
          .M = 128, .N = 128, .K = 100, .A = p, .B = p, .scale_a = s, .scale_b = s, .D = d});
    });
    CHECK(has(r, "K = 100"));
    r = test::refusal_of([&] {
      BlockScaledPlan plan(
          BlockScaledGemm{
              .M = 128, .N = 128, .K = 128, .A = p, .B = p, .scale_a = s, .scale_b = s, .D = d},
          BlockScaledOptions{.kernel = "no_such_kernel"});
    });
    CHECK(has(r, "no kernel named 'no_such_kernel'"));
    // Split-K (opt-in) runs chapter 7's split-K kernels: the dispatched whole-K name used to be
    // handed to it and refused ("split-K: no kernel named ..."); its options are checked first.
    const BlockScaledGemm small{.M = 64, .N = 2112, .K = 7168, .A = p,
                                .B = reinterpret_cast<const std::uint8_t*>(std::uintptr_t(0x40000000)),
                                .scale_a = s,
                                .scale_b = reinterpret_cast<const float*>(std::uintptr_t(0x50000000)),
                                .D = d};
    r = test::refusal_of([&] { BlockScaledPlan plan(small, BlockScaledOptions{.splits = 2}); });
    INFO(r);
    CHECK_FALSE(has(r, "no kernel named"));
    if (a.device < 0) CHECK(has(r, "OTHER"));  // past every check: no GPU to run it on
    r = test::refusal_of([&] {
      BlockScaledPlan plan(small, BlockScaledOptions{.max_sms = -1, .splits = 2});
    });
    CHECK(has(r, "max_sms = -1 must be >= 0"));
    // Every plan type takes max_sms and refuses a negative one the same way.
    r = test::refusal_of([&] {
      GroupedPlan plan(GroupedGemm{.groups = 2, .rows = 128, .N = 128, .K = 128},
                       GroupedOptions{.max_sms = -2});
    });
    CHECK(has(r, "max_sms = -2 must be >= 0"));
    r = test::refusal_of([&] {
      WeightGradPlan plan(WeightGradGemm{}, WeightGradOptions{.max_sms = -3});
    });
    CHECK(has(r, "max_sms = -3 must be >= 0"));
    r = test::refusal_of([&] { MxPlan plan(MxGemm{}, MxOptions{.max_sms = -4}); });
    CHECK(has(r, "max_sms = -4 must be >= 0"));
    // The two converting Hopper paths are one or the other, refused before anything else.
    r = test::refusal_of([&] {
      MxPlan plan(MxGemm{}, MxOptions{.hopper_dequantize_bf16 = true,
                                      .hopper_requantize_block_scaled = true});
    });
    CHECK(has(r, "hopper_dequantize_bf16 and hopper_requantize_block_scaled are two different "
                 "Hopper paths"));
    r = test::refusal_of([&] {
      PerTensorPlan plan(PerTensorGemm{
          .M = 0, .N = 128, .K = 128, .A = p, .B = p, .D = d, .scale_a = s, .scale_b = s});
    });
    CHECK(has(r, "M = 0"));
    // FP32 D: chapter 6's rules, named for the library's plan, and D's 4-byte elements.
    auto* f = reinterpret_cast<float*>(std::uintptr_t(0x30000000));
    r = test::refusal_of([&] {
      PerTensorPlan plan(PerTensorGemmF32{
          .M = 128, .N = 128, .K = 100, .A = p, .B = p, .D = f, .scale_a = s, .scale_b = s});
    });
    CHECK(has(r, "fp8gemm::PerTensorPlan (FP32 D)"));
    CHECK(has(r, "K = 100"));
    r = test::refusal_of([&] {
      PerTensorPlan plan(PerTensorGemmF32{.M = 128, .N = 128, .K = 128, .A = p, .B = p,
                                          .D = f + 1, .scale_a = s, .scale_b = s, .ldd = 127});
    });
    CHECK(has(r, "ldd = 127"));
    r = test::refusal_of([&] {
      PerTensorPlan plan(PerTensorGemmF32{
          .M = 128, .N = 128, .K = 128, .A = p, .B = p,
          .D = reinterpret_cast<float*>(reinterpret_cast<char*>(f) + 2), .scale_a = s,
          .scale_b = s});
    });
    CHECK(has(r, "D = 0x30000002 must be 4-byte aligned"));
    r = test::refusal_of([&] {
      PerTensorPlan plan(PerTensorGemmF32{
          .M = 128, .N = 128, .K = 128, .A = p, .B = p, .D = f, .scale_a = s, .scale_b = s},
          PerTensorOptions{.kernel = "128x256_s4_c2x1_promoted_tma_b2"});
    });
    CHECK(has(r, "no kernel named '128x256_s4_c2x1_promoted_tma_b2'"));
    // D overlapping A (D starts inside A's 128 x 128 bytes).
    r = test::refusal_of([&] {
      PerTensorPlan plan(PerTensorGemmF32{.M = 128,
                                          .N = 128,
                                          .K = 128,
                                          .A = p,
                                          .B = p + (1 << 20),
                                          .D = reinterpret_cast<float*>(
                                              const_cast<std::uint8_t*>(p) + 128 * 64),
                                          .scale_a = s,
                                          .scale_b = s});
    });
    CHECK(has(r, "overlap"));
    if (a.device < 0) {
      // A good call: past every check, the CUDA failure of no GPU (std::runtime_error).
      r = runtime_error_of([&] {
        PerTensorPlan plan(PerTensorGemmF32{.M = 128, .N = 128, .K = 128, .A = p,
                                            .B = p + (1 << 20), .D = f, .scale_a = s,
                                            .scale_b = s + 1});
      });
      INFO(r);
      CHECK(r != "none");
      CHECK_FALSE(has(r, "OTHER"));
    }
    r = test::refusal_of(
        [&] { GroupedPlan plan(GroupedGemm{.groups = 0, .rows = 128, .N = 128, .K = 128}); });
    CHECK(has(r, "groups"));
  }
  // MXFP8 validates the call first wherever there is no GPU, and on Hopper through chapter 9's
  // plan: K must be a multiple of 32.
  if (a.device < 0 || (a.major == 9 && a.minor == 0)) {
    MxGemm g;
    g.M = 256;
    g.N = 256;
    g.K = 48;
    g.A = p;
    g.B = p;
    g.scale_a = p;
    g.scale_b = p;
    g.D = d;
    const std::string r = test::refusal_of([&] { MxPlan plan(g); });
    CHECK(has(r, "K = 48 must be a multiple of 32"));
    if (a.device < 0) {
      g.K = 64;  // a good call: without a GPU there is nothing to run it on
      CHECK(has(runtime_error_of([&] { MxPlan plan(g); }), "no CUDA GPU present"));
    }
  }
}

TEST_CASE("library: rebind's rule, the same call in everything but its buffers",
          "[library][rebind]") {
  // engine::require_same_call_but_pointers is what every plan's rebind() checks first (pure C++).
  const auto* p = reinterpret_cast<const std::uint8_t*>(std::uintptr_t(0x10000000));
  const auto* q = reinterpret_cast<const std::uint8_t*>(std::uintptr_t(0x50000000));
  GemmArgs built;
  built.M = 256;
  built.N = 512;
  built.K = 1024;
  built.A = p;
  built.lda = 1024;
  built.B = p + (1 << 20);
  built.ldb = 1024;
  built.D = p + (2 << 20);
  built.ldd = 512;
  built.scale_a = p + (3 << 20);
  built.scale_b = p + (4 << 20);
  built.recipe_a = ScaleRecipe::group_1x128;
  built.recipe_b = ScaleRecipe::block_128x128;
  built.scale_a_extent = 8 * 256;
  built.scale_b_extent = 4 * 8;
  constexpr const char* kWho = "fp8gemm::test";
  // Other buffers (and other allocated scale sizes) are what rebind is for.
  GemmArgs next = built;
  next.A = q;
  next.B = q + 16;
  next.D = q + 32;
  next.scale_a = q + 48;
  next.scale_b = q + 64;
  next.scale_a_count = 1 << 20;
  next.scale_b_count = 1 << 20;
  CHECK(test::refusal_of([&] { engine::require_same_call_but_pointers(built, next, kWho); }) ==
        "accepted");
  // Anything else is another call, named with both values.
  struct Change {
    const char* field;
    void (*apply)(GemmArgs&);
  };
  const Change changes[] = {
      {"M = 257", [](GemmArgs& g) { g.M = 257; }},
      {"N = 513", [](GemmArgs& g) { g.N = 513; }},
      {"K = 1040", [](GemmArgs& g) { g.K = 1040; }},
      {"lda = 2048", [](GemmArgs& g) { g.lda = 2048; }},
      {"ldb = 2048", [](GemmArgs& g) { g.ldb = 2048; }},
      {"b_rows = 2048", [](GemmArgs& g) { g.b_rows = 2048; }},
      {"ldd = 520", [](GemmArgs& g) { g.ldd = 520; }},
      {"d_rows = 1024", [](GemmArgs& g) { g.d_rows = 1024; }},
      {"d_element_bytes = 4", [](GemmArgs& g) { g.d_element_bytes = 4; }},
      {"recipe_a", [](GemmArgs& g) { g.recipe_a = ScaleRecipe::per_tensor; }},
      {"recipe_b", [](GemmArgs& g) { g.recipe_b = ScaleRecipe::group_1x128; }},
      {"scale_a_extent = 2052", [](GemmArgs& g) { g.scale_a_extent = 2052; }},
      {"scale_b_extent = 36", [](GemmArgs& g) { g.scale_b_extent = 36; }},
  };
  for (const Change& c : changes) {
    GemmArgs g = next;
    c.apply(g);
    const std::string r =
        test::refusal_of([&] { engine::require_same_call_but_pointers(built, g, kWho); });
    INFO(r);
    CHECK(has(r, std::string("fp8gemm::test: rebind: ") + c.field));
    CHECK(has(r, "differs from the plan's"));
    CHECK(has(r, "build a new plan"));
  }
}
