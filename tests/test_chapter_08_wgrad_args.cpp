// CPU tests of chapter 8's weight-gradient entry point: bad calls are refused with
// std::invalid_argument naming the argument, before any CUDA call.
#include <cstdint>
#include <stdexcept>
#include <string>

#include "catch.hpp"
#include "common/tensor_map.hpp"
#include "refusal.hpp"
#include "wgrad.hpp"

using namespace fp8gemm;

namespace {
ch08::WeightGradGemm good() {
  ch08::WeightGradGemm g;
  g.groups = 8;
  g.N = 512;
  g.K = 384;
  g.token_capacity = 4096;
  g.offsets = reinterpret_cast<const int*>(std::uintptr_t(0x60000000));
  g.dD_t = reinterpret_cast<const std::uint8_t*>(std::uintptr_t(0x10000000));
  g.A_t = reinterpret_cast<const std::uint8_t*>(std::uintptr_t(0x20000000));
  g.scale_dD_t = reinterpret_cast<const float*>(std::uintptr_t(0x30000000));
  g.scale_A_t = reinterpret_cast<const float*>(std::uintptr_t(0x40000000));
  g.dB = reinterpret_cast<float*>(std::uintptr_t(0x50000000));
  return g;
}
std::string refusal(const ch08::WeightGradGemm& g) {
  return test::refusal_of([&] { ch08::WeightGradPlan p(g); });
}
std::string default_name(std::int64_t N, std::int64_t K, int groups, bool tma_ok = true,
                         ch08::WeightGradOutput output = ch08::WeightGradOutput::f32) {
  return ch08::default_wgrad_kernel(N, K, groups, 132, tma_ok, output).name;
}
using test::has;
}  // namespace

TEST_CASE("ch08 wgrad: bad calls are refused before any CUDA call", "[ch08][wgrad][cpu]") {
  auto g = good();
  g.groups = 0;
  CHECK(has(refusal(g), "groups = 0 must be >= 1"));
  g = good();
  g.offsets = nullptr;
  CHECK(has(refusal(g), "offsets is a null pointer"));
  g = good();
  g.token_capacity = 0;
  CHECK(has(refusal(g), "token_capacity = 0 must be >= 1"));
  g = good();
  g.token_capacity = 1000;  // a row of dD_t would not be 16-byte aligned
  CHECK(has(refusal(g), "multiple of 16"));
  g = good();
  g.scale_A_t_layout = GroupScaleLayout::k_major_packed(g.token_capacity);
  CHECK(has(refusal(g), "scale_A_t must be mn-major"));
  // k-major with ld = 0 (the packed default): refused too, not read as mn-major (session 70).
  g = good();
  g.scale_A_t_layout = GroupScaleLayout{ScaleMajor::k, 0};
  CHECK(has(refusal(g), "scale_A_t must be mn-major"));
  g = good();
  g.scale_dD_t_layout = GroupScaleLayout{ScaleMajor::k, 0};
  CHECK(has(refusal(g), "scale_dD_t must be mn-major"));
  // An ld past a tensor map's row stride (2^40 bytes), possible with one token block
  // (token_capacity <= 128): refused by name (session 70; before, by make_tensor_map_2d).
  g = good();
  g.token_capacity = 128;
  g.scale_A_t_layout = GroupScaleLayout{ScaleMajor::mn, std::int64_t(1) << 38};
  CHECK(has(refusal(g), "scale_A_t: ld = 274877906944 must be <= 274877906943"));
  g = good();
  g.scale_dD_t_layout = GroupScaleLayout{ScaleMajor::mn, 256};
  CHECK(has(refusal(g), "scale_dD_t"));
  CHECK(has(refusal(g), "too small for 512 rows"));
  g = good();
  g.dB = nullptr;
  CHECK(has(refusal(g), "D is a null pointer"));
  // The engine's messages name its A, B, D: the refusal says which of this call's tensors they are.
  CHECK(has(refusal(g), "[in the engine's terms: A = dD_t (N x token_capacity), B = A_t"));
  g = good();
  g.dD_t = reinterpret_cast<const std::uint8_t*>(std::uintptr_t(0x10000008));  // 8 bytes off 16
  CHECK(has(refusal(g), "must be 16-byte aligned"));
  CHECK(has(refusal(g), "A = dD_t"));
  // dB of the last group over A_t (dB: 8 groups of 512 x 384 floats = 0x600000 bytes): refused by
  // the engine's rule, which counts G N rows of dB (validate.hpp, d_rows), before any CUDA call.
  g = good();
  g.dB = reinterpret_cast<float*>(std::uintptr_t(0x20000000) - 7 * 512 * 384 * 4);
  const std::string over_b = refusal(g);
  INFO(over_b);
  CHECK(has(over_b, "D (bytes [0x1fac0000, 0x200c0000)) overlaps B (bytes [0x20000000"));
  g = good();
  g.offsets = reinterpret_cast<const int*>(std::uintptr_t(0x50000000) + 7 * 512 * 384 * 4);
  CHECK(has(refusal(g), "overlaps offsets"));
  g = good();
  g.ld_A_t = 100;
  CHECK(has(refusal(g), "ldb"));
  g = good();
  g.dD_t = reinterpret_cast<const std::uint8_t*>(std::uintptr_t(0x10000001));
  CHECK(has(refusal(g), "aligned"));
  ch08::WeightGradOptions o;
  o.kernel = "no_such_kernel";
  try {
    ch08::WeightGradPlan p(good(), o);
    FAIL("accepted an unknown kernel");
  } catch (const std::invalid_argument& e) {
    CHECK(has(e.what(), "no_such_kernel"));
  }
  // Misaligned offsets (int32 loads) and scale tensors (TMA), refused by the constructor.
  g = good();
  g.offsets = reinterpret_cast<const int*>(std::uintptr_t(0x60000002));
  CHECK(has(refusal(g), "offsets must be 4-byte aligned"));
  g = good();
  g.scale_dD_t = reinterpret_cast<const float*>(std::uintptr_t(0x30000004));
  CHECK(has(refusal(g), "scale_dD_t must be 16-byte aligned (the kernel reads it by TMA)"));
  g = good();
  g.scale_A_t = reinterpret_cast<const float*>(std::uintptr_t(0x40000008));
  CHECK(has(refusal(g), "scale_A_t must be 16-byte aligned"));
  // N x G wrapping 64 bits, and a call no kernel's tiles fit: refused before the default
  // kernel's choice asks the GPU for its SM count (it reached that query before).
  g = good();
  g.N = std::int64_t(1) << 62;
  CHECK(has(refusal(g), "N = 4611686018427387904 must be <="));
  g = good();
  g.N = g.K = std::int64_t(1) << 24;
  // (Fake addresses clear of each other: dD_t, A_t 2^36 bytes each, dB 8 x 2^48 floats = 2^53.)
  g.dD_t = reinterpret_cast<const std::uint8_t*>(std::uintptr_t(1) << 40);
  g.A_t = reinterpret_cast<const std::uint8_t*>(std::uintptr_t(2) << 40);
  g.scale_dD_t = reinterpret_cast<const float*>(std::uintptr_t(3) << 40);
  g.scale_A_t = reinterpret_cast<const float*>(std::uintptr_t(4) << 40);
  g.offsets = reinterpret_cast<const int*>(std::uintptr_t(5) << 40);
  g.dB = reinterpret_cast<float*>(std::uintptr_t(1) << 54);
  const std::string tiles = refusal(g);
  INFO(tiles);
  CHECK(has(tiles, "tiles, more than 2^30 (the scheduler's arithmetic)"));
}

TEST_CASE("ch08 wgrad: a negative max_sms is refused before any CUDA call", "[ch08][wgrad][cpu]") {
  ch08::WeightGradOptions o;
  o.max_sms = -1;
  const std::string r = test::refusal_of([&] { ch08::WeightGradPlan p(good(), o); });
  CHECK(has(r, "fp8gemm::ch08_weight_grad"));
  CHECK(has(r, "max_sms = -1 must be >= 0"));
}

TEST_CASE("ch08 wgrad: the default kernel per shape", "[ch08][wgrad][cpu]") {
  // One group of FP32 dB (Fp8Linear's dW for FP32 weights, 4096 tokens): the two-staging-unit
  // kernels since session 31 (0.94-0.97x the time of the one-unit ones in
  // plots/data/h200/session31/call1_d00cfce/), 128 x 192 counted 4 % cheaper per covered element.
  const std::string wide = "128x256_s3_c1x1_promoted_f32_tma_b2";
  const std::string narrow = "128x192_s4_c1x1_promoted_f32_tma_b2";
  CHECK(default_name(2112, 7168, 1) == narrow);   // 476 wide tiles: 3.6 waves
  CHECK(default_name(24576, 1536, 1) == narrow);  // 0.970 of dB covered by either
  CHECK(default_name(32768, 512, 1) == wide);     // 192 columns waste 11% of K = 512
  CHECK(default_name(7168, 16384, 1) == narrow);  // 0.978 against 0.970
  CHECK(default_name(4096, 7168, 1) == wide);     // 0.905 against 0.970
  CHECK(default_name(7168, 2048, 1) == narrow);   // 448 wide tiles: 3.4 waves
  // 32 experts: thousands of tiles, no quantisation to speak of; 128 x 192 with 4 stages and two
  // staging units (the early wave's FP32 kernel, session 30).
  CHECK(default_name(4096, 7168, 32) == narrow);
  CHECK(default_name(7168, 2048, 32) == narrow);
  // A dB that TMA cannot store: the registers epilogue.
  CHECK(default_name(4096, 7168, 1, false) == "128x192_s5_c1x1_promoted_f32");
}

TEST_CASE("ch08 wgrad: a TMA kernel named for a dB that TMA cannot store is refused, without a GPU",
          "[ch08][wgrad][cpu]") {
  ch08::WeightGradOptions o;
  o.kernel = "128x192_s5_c1x1_promoted_f32_tma_b1";
  ch08::WeightGradGemm g = good();
  g.lddb = g.K + 1;  // rows 4 (K + 1) bytes apart: not a multiple of 16
  CHECK(test::has(test::refusal_of([&] { ch08::WeightGradPlan p(g, o); }), "stores dB with TMA"));
  g = good();
  g.dB = reinterpret_cast<float*>(std::uintptr_t(0x50000004));  // 4-byte, not 16-byte aligned
  CHECK(test::has(test::refusal_of([&] { ch08::WeightGradPlan p(g, o); }), "lddb a multiple of 4"));
}

TEST_CASE("make_tensor_map_3d rejects what TMA cannot describe, without a GPU", "[ch08][wgrad][cpu]") {
  float* base = reinterpret_cast<float*>(std::uintptr_t(0x50000000));
  constexpr auto kF32 = CU_TENSOR_MAP_DATA_TYPE_FLOAT32;
  constexpr auto kSw128 = CU_TENSOR_MAP_SWIZZLE_128B;
  auto refusal3d = [&](std::uint64_t planes, std::uint64_t rows, std::uint64_t cols,
                       std::uint64_t ld, std::uint64_t plane_ld) {
    return test::refusal_of([&] {
      make_tensor_map_3d(base, kF32, 4, planes, rows, cols, ld, plane_ld, 64, 32, kSw128);
    });
  };
  CHECK(test::has(refusal3d(0, 64, 64, 64, 64 * 64), "planes = 0"));
  CHECK(test::has(refusal3d(4, 64, 64, 64, 63 * 64), "plane_stride_elements"));  // planes overlap
  CHECK(test::has(refusal3d(4, 64, 64, 64, 64 * 64 + 1), "multiple of 16"));     // 4-byte offset
  CHECK(test::has(refusal3d(4, 64, 64, 65, 65 * 64), "row stride"));
  CHECK(test::has(refusal3d(4, 64, 64, 64, 64 * 64 + 1), "make_tensor_map_3d"));
}

TEST_CASE("ch08 wgrad: bf16 dB: its own kernels, no accumulate, refused mismatches, without a GPU",
          "[ch08][wgrad][cpu]") {
  constexpr auto kBf16 = ch08::WeightGradOutput::bf16;
  // The default: the FP32 rule's tiles and 4 % premium for 128 x 192 (session 30: with the early
  // first wave 128 x 192 ran 1.04-1.07x 128 x 256 per covered element; the faster of the two at
  // five shapes in both runs, 4096 x 7168 level; 24576 x 1536, both tiles covering 97 %, takes
  // 128 x 192: 1.02x and 1.05x), as bf16 kernels with two staging units since session 31.
  const std::string wide = "128x256_s3_c1x1_promoted_tma_b2";
  const std::string narrow = "128x192_s4_c1x1_promoted_tma_b2";
  CHECK(default_name(2112, 7168, 1, true, kBf16) == narrow);
  CHECK(default_name(24576, 1536, 1, true, kBf16) == narrow);
  CHECK(default_name(32768, 512, 1, true, kBf16) == wide);
  CHECK(default_name(7168, 16384, 1, true, kBf16) == narrow);
  CHECK(default_name(4096, 7168, 1, true, kBf16) == wide);
  CHECK(default_name(7168, 2048, 1, true, kBf16) == narrow);
  CHECK(default_name(7168, 16384, 1, false, kBf16) == "128x192_s5_c1x1_promoted_reg");
  for (const auto& name : {"128x192_s5_c1x1_promoted_tma_b1", "128x256_s4_c1x1_promoted_tma_b1",
                           "128x192_s4_c1x1_promoted_tma_b2", "128x256_s3_c1x1_promoted_tma_b2",
                           "128x192_s5_c1x1_promoted_reg"})
    CHECK(!engine::writes_f32(engine::find_kernel(ch08::wgrad_kernels(), name, "test").epilogue));
  auto g = good();
  g.output = kBf16;
  g.accumulate = true;
  CHECK(has(refusal(g), "accumulate needs FP32 dB"));
  g = good();
  g.output = static_cast<ch08::WeightGradOutput>(7);
  CHECK(has(refusal(g), "output = 7 is not a WeightGradOutput"));
  // A kernel of the other type: refused, naming both.
  ch08::WeightGradOptions o;
  o.kernel = "128x192_s5_c1x1_promoted_f32_tma_b1";
  g = good();
  g.output = kBf16;
  CHECK(has(test::refusal_of([&] { ch08::WeightGradPlan p(g, o); }),
            "writes FP32 dB, the call's output is bf16"));
  o.kernel = "128x192_s5_c1x1_promoted_tma_b1";
  CHECK(has(test::refusal_of([&] { ch08::WeightGradPlan p(good(), o); }),
            "writes bf16 dB, the call's output is f32"));
  // bf16 rows 2 (K + 4) bytes apart (K = 384: 776, not a multiple of 16): no TMA kernel.
  g = good();
  g.output = kBf16;
  g.lddb = g.K + 4;
  CHECK(has(test::refusal_of([&] { ch08::WeightGradPlan p(g, o); }), "lddb a multiple of 8"));
}
