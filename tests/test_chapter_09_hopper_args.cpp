// CPU tests of chapter 9's Hopper MXFP8 plan: bad calls are refused with std::invalid_argument
// naming the Hopper entry point and the argument, before any CUDA call.
#include <cstdint>
#include <string>
#include <vector>

#include "bs_gemm.hpp"  // ch07::kernels(): the requantize_block_scaled path's names
#include "catch.hpp"
#include "hopper_mx.hpp"
#include "refusal.hpp"

using namespace fp8gemm;
using namespace fp8gemm::ch09;
using test::has;

namespace {
MxGemm good() {
  MxGemm g;
  g.M = 256;
  g.N = 384;
  g.K = 512;
  g.A = reinterpret_cast<const std::uint8_t*>(std::uintptr_t(0x10000000));
  g.B = reinterpret_cast<const std::uint8_t*>(std::uintptr_t(0x20000000));
  g.scale_a = reinterpret_cast<const std::uint8_t*>(std::uintptr_t(0x30000000));
  g.scale_b = reinterpret_cast<const std::uint8_t*>(std::uintptr_t(0x40000000));
  g.D = reinterpret_cast<void*>(std::uintptr_t(0x50000000));
  return g;
}
std::string refusal(const MxGemm& g, const HopperOptions& o = {}) {
  return fp8gemm::test::refusal_of([&] { HopperPlan p(g, o); });
}
}  // namespace

TEST_CASE("ch09 Hopper: bad calls are refused before any CUDA call", "[ch09][hopper][cpu]") {
  auto g = good();
  g.K = 48;
  CHECK(has(refusal(g), "fp8gemm::ch09_hopper_mxfp8"));
  CHECK(has(refusal(g), "K = 48 must be a multiple of 32"));
  g = good();
  g.scale_a = nullptr;
  CHECK(has(refusal(g), "scale_a is a null pointer"));
  g = good();
  g.scale_b_bytes = 100;  // Mx1x32 of 384 x 512: 3 x 4 tiles of 512 bytes
  CHECK(has(refusal(g), "scale_b"));
  g = good();
  g.A = reinterpret_cast<const std::uint8_t*>(std::uintptr_t(0x10000008));
  CHECK(has(refusal(g), "A"));
  CHECK(has(refusal(g), "aligned"));
  HopperOptions o;
  o.kernel = "no_such_kernel";
  CHECK(has(refusal(good(), o), "no_such_kernel"));
  o = {};
  o.max_sms = -1;  // either path, before anything else
  CHECK(has(refusal(good(), o), "max_sms = -1 must be >= 0"));
  o.path = HopperPath::dequantize_bf16;
  CHECK(has(refusal(good(), o), "max_sms = -1 must be >= 0"));
  // The dequantize_bf16 path refuses the same calls the same way (before its workspace exists),
  // and takes only its own kernels by name.
  HopperOptions d;
  d.path = HopperPath::dequantize_bf16;
  g = good();
  g.K = 48;
  CHECK(has(refusal(g, d), "K = 48 must be a multiple of 32"));
  g = good();
  g.scale_b = nullptr;
  CHECK(has(refusal(g, d), "scale_b is a null pointer"));
  d.kernel = hopper_kernels().front().name;  // an MXFP8 kernel is not a bf16 one
  CHECK(has(refusal(good(), d), hopper_kernels().front().name));
  CHECK(has(refusal(good(), d), hopper_bf16_kernels().front().name));  // the list it offers
  // A path that is no HopperPath (it ran the default path before).
  HopperOptions bad_path;
  bad_path.path = HopperPath(9);
  CHECK(has(refusal(good(), bad_path), "HopperOptions::path = 9 is not a HopperPath"));
  // K that the MXFP8 rules accept but the bf16 GEMM's 2 K-byte rows do not: refused by the
  // path's own rule, naming K, before the workspace exists (it reached cudaMalloc before).
  d.kernel.clear();
  g = good();
  g.M = g.N = 32;
  g.K = std::int64_t(1) << 30;
  g.lda = g.ldb = 0;
  g.A = reinterpret_cast<const std::uint8_t*>(std::uintptr_t(1) << 40);
  g.B = reinterpret_cast<const std::uint8_t*>(std::uintptr_t(2) << 40);
  g.scale_a = reinterpret_cast<const std::uint8_t*>(std::uintptr_t(3) << 40);
  g.scale_b = reinterpret_cast<const std::uint8_t*>(std::uintptr_t(4) << 40);
  g.D = reinterpret_cast<void*>(std::uintptr_t(5) << 40);
  g.scale_a_bytes = scale_bytes(g.M, g.K);
  g.scale_b_bytes = scale_bytes(g.N, g.K);
  g.ldd = 0;
  const std::string big_k = refusal(g, d);
  INFO(big_k);
  CHECK(has(big_k, "K = 1073741824 must be <= 1073741312 on the dequantize_bf16 path"));
  CHECK_FALSE(has(refusal(g), "K = 1073741824"));  // the default path's rules take it
}

TEST_CASE("ch09 Hopper: the requantize_block_scaled path refuses the same calls",
          "[ch09][hopper][cpu]") {
  // The MXFP8 rules, before its workspace exists, and only chapter 7's kernels by name.
  HopperOptions r;
  r.path = HopperPath::requantize_block_scaled;
  auto g = good();
  g.K = 48;
  CHECK(has(refusal(g, r), "fp8gemm::ch09_hopper_mxfp8"));
  CHECK(has(refusal(g, r), "K = 48 must be a multiple of 32"));
  g = good();
  g.scale_a = nullptr;
  CHECK(has(refusal(g, r), "scale_a is a null pointer"));
  g = good();
  g.B = reinterpret_cast<const std::uint8_t*>(std::uintptr_t(0x20000008));
  CHECK(has(refusal(g, r), "aligned"));
  r.max_sms = -1;
  CHECK(has(refusal(good(), r), "max_sms = -1 must be >= 0"));
  r.max_sms = 0;
  r.kernel = hopper_kernels().front().name;  // an MXFP8 kernel is not one of chapter 7's
  const std::string named = refusal(good(), r);
  INFO(named);
  CHECK(has(named, hopper_kernels().front().name));
  CHECK(has(named, ch07::kernels().front().name));  // the list it offers
  // One of chapter 7's kernels that does not fit the call (an FP32 kernel, a bf16 D): refused by
  // name before the workspace exists and before the buffers are looked at (session 70: it was
  // refused by chapter 7's plan, after the workspace's allocation; here the buffers' fake
  // addresses would have been refused first).
  r.kernel = "128x128_s6_c1x1_promoted_f32";
  const std::string unfit = refusal(good(), r);
  INFO(unfit);
  CHECK(has(unfit, "kernel 128x128_s6_c1x1_promoted_f32 writes float D, the call passes bf16 D"));
  CHECK(has(unfit, "fp8gemm::ch09_hopper_mxfp8"));
}

TEST_CASE("ch09 Hopper: the dequantize_bf16 path's kernels", "[ch09][hopper][cpu]") {
  int tma = 0, reg = 0;
  for (const auto& k : hopper_bf16_kernels()) {
    CHECK(k.name.ends_with("_bf16"));
    CHECK(k.accumulation == engine::Accumulation::fast);  // the tensor cores' FP32 sums
    tma += k.epilogue == engine::EpilogueKind::tma_store;
    reg += k.epilogue == engine::EpilogueKind::registers;
    for (const auto& c : hopper_kernels()) CHECK(c.name != k.name);
  }
  CHECK(tma >= 1);
  CHECK(reg >= 1);
  // The three that the path's rule names (hopper_mx.cpp) exist.
  for (const char* rule : {"128x256_s4_c2x1_fast_tma_b2_bf16", "128x192_s4_c2x1_fast_tma_b2_pp_bf16",
                           "128x256_s4_c1x1_fast_reg_bf16"}) {
    bool found = false;
    for (const auto& k : hopper_bf16_kernels()) found = found || k.name == rule;
    CHECK(found);
  }
}

TEST_CASE("ch09 Hopper: the compiled kernels", "[ch09][hopper][cpu]") {
  int tma = 0, reg = 0;
  for (const auto& k : hopper_kernels()) {
    CHECK(k.cluster_size() == 1);
    CHECK(k.accumulation == engine::Accumulation::promoted);
    tma += k.epilogue == engine::EpilogueKind::tma_store;
    reg += k.epilogue == engine::EpilogueKind::registers;
  }
  CHECK(tma >= 1);  // the default where D allows a TMA store
  CHECK(reg >= 1);  // and a kernel for any D
  // The earlier versions are kept apart (the library never offers them) and named as such;
  // a plan still takes them by name, for the chapter's comparison.
  for (const auto& k : hopper_earlier_kernels()) {
    CHECK((k.name.ends_with("_v1") || k.name.ends_with("_v2")));
    for (const auto& c : hopper_kernels()) CHECK(c.name != k.name);
  }
  for (const auto& c : hopper_kernels()) CHECK(!c.name.ends_with("_v1"));
}

TEST_CASE("ch09: a float D's rules, on both halves, before any CUDA call", "[ch09][hopper][cpu]") {
  // Output::f32 (session 64): accumulate only with it; a bad output; a kernel of the other D type
  // by name, on each engine path; a float D 2-byte aligned; the sm_100a Plan refuses it outright.
  auto g = good();
  g.accumulate = true;  // bf16 D
  CHECK(has(refusal(g), "accumulate = true needs Output::f32"));
  g = good();
  g.output = static_cast<Output>(5);
  CHECK(has(refusal(g), "output = 5 is neither bf16 nor f32"));
  std::vector<std::string> f32_kernels;
  std::vector<std::string> bf16_f32_kernels;
  for (const auto& k : hopper_kernels())
    if (engine::writes_f32(k.epilogue)) f32_kernels.push_back(k.name);
  for (const auto& k : hopper_bf16_kernels())
    if (engine::writes_f32(k.epilogue)) bf16_f32_kernels.push_back(k.name);
  // By TMA (session 66) and from registers (session 64).
  CHECK(f32_kernels == std::vector<std::string>{"128x128_s5_c1x1_promoted_f32_tma_b2",
                                                "128x128_s5_c1x1_promoted_f32"});
  REQUIRE(!f32_kernels.empty());
  const std::string f32_kernel = f32_kernels.back();
  // From registers (session 64; the path's float D default where TMA cannot store D) and by TMA
  // (session 67; the default where it can since session 69).
  CHECK(bf16_f32_kernels == std::vector<std::string>{"128x256_s4_c1x1_fast_f32_bf16",
                                                     "128x256_s4_c2x1_fast_f32_tma_b2_bf16",
                                                     "128x192_s4_c1x1_fast_f32_tma_b2_bf16"});
  HopperOptions o;
  o.kernel = f32_kernel;  // a float D's kernel for a bf16 D
  CHECK(has(refusal(good(), o), "writes float D, the call passes bf16 D"));
  o.kernel = hopper_kernels().front().name;  // a bf16 kernel for a float D
  g = good();
  g.output = Output::f32;
  CHECK(has(refusal(g, o), "writes bf16 D, the call passes float D"));
  HopperOptions d;
  d.path = HopperPath::dequantize_bf16;
  d.kernel = bf16_f32_kernels.front();
  CHECK(has(refusal(good(), d), "writes float D, the call passes bf16 D"));
  d.kernel = "128x256_s4_c1x1_fast_reg_bf16";
  CHECK(has(refusal(g, d), "writes bf16 D, the call passes float D"));
  g.D = reinterpret_cast<void*>(std::uintptr_t(0x50000002));
  CHECK(has(refusal(g), "must be 4-byte aligned (device pointer to M x N float, row-major)"));
  // The TMA FP32 kernel by name for a float D whose rows are not 16-byte aligned: refused (the
  // default takes the registers kernel there; test_chapter_09_hopper).
  HopperOptions t;
  t.kernel = f32_kernels.front();
  MxGemm odd = good();
  odd.output = Output::f32;
  odd.ldd = odd.N + 3;
  CHECK(has(refusal(odd, t), "stores D with TMA"));
  CHECK(has(refusal(odd, t), "ldd = 387"));  // the stride refused (D itself is 16-byte aligned)
  for (std::size_t i = 1; i < bf16_f32_kernels.size(); ++i) {  // the bf16 path's, by TMA
    HopperOptions tb;
    tb.path = HopperPath::dequantize_bf16;
    tb.kernel = bf16_f32_kernels[i];
    INFO(tb.kernel);
    CHECK(has(refusal(odd, tb), "stores D with TMA"));
    CHECK(has(refusal(odd, tb), "ldd = 387"));
  }
  // The Blackwell plan takes a float D too (session 65): validation passes it, and accumulate
  // without it is refused by name there as well (test_chapter_09_host: a valid float D call is
  // refused only for want of an sm_100 GPU).
  g = good();
  g.output = Output::f32;
  g.accumulate = true;
  CHECK_NOTHROW(validate(g));
  g.output = Output::bf16;
  const std::string r = fp8gemm::test::refusal_of([&] { Plan p(g); });
  CHECK(has(r, "fp8gemm::ch09_blackwell_mxfp8"));
  CHECK(has(r, "accumulate = true needs Output::f32"));
}
