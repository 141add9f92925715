// Bandwidth of the DeepSeek-V3 quantisers (common/quantize_gpu.hpp) against a device-to-device
// copy of the same number of bytes, timed in the same process and run by the same harness
// (common/bench.hpp: L2 flushed before every launch, CUDA events, median).
//
// Bytes counted (the minimum any implementation must move through device memory):
//   quantize_1x128      M K (2 read + 1 written) + 4 M ceil(K/128) scales
//   quantize_128x128    N K (2 + 1)              + 4 ceil(N/128) ceil(K/128)
//   quantize_128x128_dual N K (2 + 1 + 1)        + 8 ceil(N/128) ceil(K/128)  (W and W^T)
//   quantize_1x128_dual M K (2 + 1 + 1)          + 4 (M ceil(K/128) + K ceil(M/128))
//   quantize_tokens_transposed_1x128 (chapter 8, T tokens x C channels in G = 32 experts, skewed)
//                       2 T C read + C cap written + 4 C ceil(cap/128) scales, cap =
//                       max_padded_tokens(T, G): the call writes every column up to the capacity
//                       (T_pad real and padded columns, zeros after), so all of them are counted.
//   quantize_mx_1x32    M K (2 + 1)              + round_up(M, 128) round_up(K / 32, 4) UE8M0 bytes
//   quantize_mx_1x32_dual M K (2 + 1 + 1)        + the scale bytes of x and of x^T (padded tiles)
//   requantize_mx       A and B of R x K each: 2 R K (1 read + 1 written) + their UE8M0 bytes
//                       + 4 (R ceil(K/128) + ceil(R/128) ceil(K/128)) FP32 scales
//   copy_d2d            cudaMemcpyAsync of B / 2 bytes for an operation of B bytes: it reads
//                       B / 2 and writes B / 2, so both sides move the same bytes.
// Inputs are >= 64 MB of bf16 (well beyond the 60 MB L2, and flushed anyway).
//
// Prediction (before measuring): the H200's D2D copy runs at ~4.3 TB/s read + write (FACTS.md).
// The quantisers read 2 bytes and write 1 per element, a 2:1 mix the copy does not have but
// HBM3e serves about as well; their arithmetic (an IEEE division and half a cvt per element,
// ~15 instructions) is ~50 % of the SM issue rate at that bandwidth, so they should stay
// memory-bound: ~3.8-4.0 TB/s (~90 % of the copy) for quantize_1x128 and quantize_128x128
// (whole 32 KB blocks in registers, plenty in flight). The dual variant adds a shared-memory
// round trip and a transposed store of 32-byte pieces: ~3.5 TB/s (~80-85 %).
// quantize_tokens_transposed_1x128 (prediction of 2026-12, before any run): the dual's transposing
// half plus a binary search per tile, with the next tile's loads in flight during the conversion
// (which the dual lacks): 65-75 % of the copy.
// Measured (H200, 2026-12-01, per-launch median, L2 flushed; copy ~3.9 TB/s in the same run):
// quantize_128x128 3.43 TB/s (87 %); quantize_1x128 2.95-3.03 TB/s (75-77 % mn-major TMA-aligned
// scales, 80 % k-major: the mn-major scale stores are 4-byte scattered writes); pow2 the same;
// quantize_1x128_dual 1.92-1.97 TB/s (48-50 %). The first versions, with __fdiv_rn per element
// and 8 elements per lane, ran at 49 % / 73 % / 30 %: the kernels were instruction-bound, not
// memory-bound, until the division's reciprocal was hoisted out of the element loop.
//
// quantize_mx_1x32 / _dual (prediction, 2027-03, before any run): the 128 x 128 tile kernel's loads
// and arithmetic per element (one Markstein division by 2^e, half a cvt), scales in whole 512-byte
// tiles (16-byte stores): about quantize_128x128's 87 % of the copy; the dual about
// quantize_1x128_dual's 50 % (the same shared-memory round trip, one barrier fewer per tile).
// Kernel variants (2027-03, before any run; each entry is timed beside its own copy):
// quantize_mx_1x32_<v> and _dual_<v> time every MX kernel variant (mx_tuning, described in
// common/src/quantize_mx_gpu.cu) on both shapes. Predicted % of the copy: MX single v1 68-70 (as
// measured), v2 82-87, v3 86-91, v4 85-90; dual v1 53, v2 65-75, v3 75-85, v4 75-85.
// `quantize_bench --benchmark_filter='mx_1x32'` runs only these and their copies.
// 1 x 128 kernel variants (tuning_1x128, 2026-11-30, before any run): quantize_1x128_<v>,
// quantize_1x128_dual_<v> on both shapes, quantize_1x128_kmajor_<v> and quantize_1x128_pow2_<v> at
// 8192 x 7168 (v1_first: the kernels the public functions run; v2_lean: the MX v2 structure, one
// CTA per 128 x 128 tile, FMUL + 2 FFMA per element, ~8 SASS instructions per element, 64 / 80
// registers, no spill). Predicted % of the copy: v1_first as measured (75-80, dual 49); v2_lean
// 88-93 (k-major 85-90: 4-byte scale stores of 8 rows in 8 sectors), dual 80-88.
// quantize_tokens_transposed_1x128_<v> on both token shapes (v2_lean: the v1 walk with the lean
// dual's column pass, each tile loaded then converted, 3 CTAs per SM instead of 2 with the next
// tile in registers): v1_first as measured (62-64), v2_lean 78-86.
// Measured (H200, 3e2acd2, plots/data/h200/ch07/quantize_bench_1x128_3e2acd2.json): v2_lean
// 92.7-93.4 (k-major 86.8, pow2 93.6), dual 85.4-85.5, tokens 73.1-74.7; v1_first 75.2-80.3,
// dual 47.8-49.5, tokens 61.9-64.1. v2_lean is now what the public functions run.
// v3_shared and v4_occ4 (2026-11-30, before any run): v3 is v2 with each pair of groups' scales
// computed once and shared by shuffles (~40 fewer instructions per thread and tile in the dual);
// v4 is v3 with the dual and the token kernel at 4 CTAs per SM instead of 3 (64 registers, no
// spill; the single kernel's v4 is its v3). Predicted % of the copy: quantize_1x128 v3 / v4
// 92.5-94 (as v2: memory-bound already); dual v3 85.5-88, v4 87-92; tokens v3 74-77, v4 78-86.
// `quantize_bench --benchmark_filter='v2_lean|v3_shared|v4_occ4'` times them side by side.
// `quantize_bench --benchmark_filter='1x128'` runs every 1 x 128 entry (public and variants).
// `quantize_bench --benchmark_filter='requantize'` runs the re-quantiser's entries (session 54).
// Output: quantize_bench.json (or --benchmark_out=...), Google Benchmark JSON with the harness's
// context (GPU, clocks, driver, commit); counters GB/s, median_us and pct_of_copy.
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <map>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include "common/bench.hpp"
#include "common/cuda.hpp"
#include "common/quantize_gpu.hpp"

using namespace fp8gemm;

namespace {

// Deterministic bf16 test data on the device: uniform in (-1, 1) times 2^e, e in [-10, 9]
// varying per 128-element group (so scales differ), from a hash of the index.
__device__ std::uint32_t hash32(std::uint64_t v) {
  v ^= v >> 33;
  v *= 0xff51afd7ed558ccdull;
  v ^= v >> 33;
  v *= 0xc4ceb9fe1a85ec53ull;
  v ^= v >> 33;
  return std::uint32_t(v);
}
__global__ void fill_bf16_kernel(std::uint16_t* x, std::uint64_t n, std::uint64_t seed) {
  for (std::uint64_t i = blockIdx.x * std::uint64_t(blockDim.x) + threadIdx.x; i < n;
       i += std::uint64_t(gridDim.x) * blockDim.x) {
    const float u = (float(hash32(seed ^ (i * 0x9E3779B97F4A7C15ull)) >> 8) + 0.5f) / 16777216.0f;
    const int e = int(hash32(seed + (i >> 7)) % 20) - 10;
    const float v = ldexpf(2.0f * u - 1.0f, e);
    x[i] = std::uint16_t(__float_as_uint(v) >> 16);  // truncation is fine for test data
  }
}

enum class Op {
  q1x128, q1x128_kmajor, q1x128_pow2, q128x128, q128x128_dual, dual, tokens, mx, mx_dual, requant
};
const char* op_name(Op op) {
  switch (op) {
    case Op::q1x128: return "quantize_1x128";
    case Op::q1x128_kmajor: return "quantize_1x128_kmajor";
    case Op::q1x128_pow2: return "quantize_1x128_pow2";
    case Op::q128x128: return "quantize_128x128";
    case Op::q128x128_dual: return "quantize_128x128_dual";
    case Op::dual: return "quantize_1x128_dual";
    case Op::tokens: return "quantize_tokens_transposed_1x128";
    case Op::mx: return "quantize_mx_1x32";
    case Op::mx_dual: return "quantize_mx_1x32_dual";
    case Op::requant: return "requantize_mx";
  }
  return "?";
}

constexpr int kTokenExperts = 32;  // G of the token quantiser's cases

double op_bytes(Op op, std::int64_t R, std::int64_t K) {
  const double e = double(R) * double(K);
  const std::int64_t cap = max_padded_tokens(R, kTokenExperts);
  switch (op) {
    case Op::tokens: return 2 * e + double(K) * double(cap) + 4.0 * double(K * ceil_div(cap, 128));
    case Op::q128x128: return 3 * e + 4.0 * double(ceil_div(R, 128) * ceil_div(K, 128));
    case Op::q128x128_dual: return 4 * e + 8.0 * double(ceil_div(R, 128) * ceil_div(K, 128));
    case Op::dual: return 4 * e + 4.0 * double(R * ceil_div(K, 128) + K * ceil_div(R, 128));
    case Op::mx: return 3 * e + double(mx_1x32_scale_bytes(R, K));
    case Op::mx_dual: return 4 * e + double(mx_1x32_scale_bytes(R, K) + mx_1x32_scale_bytes(K, R));
    case Op::requant:  // A and B, both R x K: codes read and written, UE8M0 in, FP32 out
      return 4 * e + 2.0 * double(mx_1x32_scale_bytes(R, K)) +
             4.0 * double(R * ceil_div(K, 128) + ceil_div(R, 128) * ceil_div(K, 128));
    default: return 3 * e + 4.0 * double(R * ceil_div(K, 128));
  }
}

/// Tokens per expert, skewed (bench/peers_moe.py's recipe, not its numbers): lognormal(0, 1)
/// weights from a seeded generator, experts 3 and 17 empty, the shares of T by largest remainders,
/// then, while some non-zero count is a multiple of 128, one of its tokens moves to the largest
/// other expert (so every non-empty expert has padding).
std::vector<int> skewed_counts(std::int64_t T, int G, std::uint64_t seed) {
  std::mt19937_64 gen(seed);
  std::lognormal_distribution<double> lognormal(0.0, 1.0);
  std::vector<double> w(static_cast<std::size_t>(G));
  for (int g = 0; g < G; ++g) w[std::size_t(g)] = g == 3 || g == 17 ? 0.0 : lognormal(gen);
  const double sum = std::accumulate(w.begin(), w.end(), 0.0);
  std::vector<int> c(static_cast<std::size_t>(G));
  std::vector<std::pair<double, int>> rest;  // (remainder, expert)
  std::int64_t given = 0;
  for (int g = 0; g < G; ++g) {
    const double share = double(T) * w[std::size_t(g)] / sum;
    c[std::size_t(g)] = int(share);
    given += c[std::size_t(g)];
    rest.push_back({share - c[std::size_t(g)], g});
  }
  std::sort(rest.rbegin(), rest.rend());
  for (std::int64_t i = 0; i < T - given; ++i) ++c[std::size_t(rest[std::size_t(i)].second)];
  for (int round = 0; round < 4 * G; ++round) {
    const auto bad = std::find_if(c.begin(), c.end(), [](int n) { return n > 0 && n % 128 == 0; });
    if (bad == c.end()) break;
    auto to = c.end();  // the largest other non-empty expert
    for (auto it = c.begin(); it != c.end(); ++it)
      if (it != bad && *it > 0 && (to == c.end() || *it > *to)) to = it;
    if (to == c.end()) break;  // a single non-empty expert: nowhere to move a token
    --*bad;
    ++*to;
  }
  return c;
}

/// The op's name; kernel variants (variant >= 0: mx_tuning for the MX ops, tuning_1x128 for the
/// others) get the variant's name appended, and a capped grid (max_ctas > 0) "_ctas<max_ctas>".
std::string item_name(Op op, int variant, int max_ctas = 0) {
  std::string n = op_name(op);
  if (variant >= 0)
    n += std::string("_") + (op == Op::requant ? requant_tuning::variant_name(variant)
                             : op == Op::mx || op == Op::mx_dual
                                 ? mx_tuning::variant_name(variant, op == Op::mx_dual)
                             : op == Op::q128x128_dual ? tuning_128x128::variant_name(variant)
                                                       : tuning_1x128::variant_name(variant));
  if (max_ctas > 0) n += "_ctas" + std::to_string(max_ctas);
  return n;
}

std::string shape_name(std::int64_t R, std::int64_t K) {
  return std::to_string(R) + "x" + std::to_string(K);
}

std::map<std::string, double> g_copy_gbs;  // "<op>/<shape>" -> copy GB/s for the same bytes
std::map<std::string, double> g_op_gbs;

double median_gbs(benchmark::State& state) {
  const auto it = state.counters.find("GB/s");
  return it == state.counters.end() ? 0.0 : double(it->second);
}

void bench_copy(benchmark::State& state, Op op, int variant, int max_ctas, std::int64_t R,
                std::int64_t K) {
  try {
    const std::size_t half = std::size_t(op_bytes(op, R, K) / 2);
    DeviceBuffer<std::uint8_t> src(half), dst(half);
    FP8GEMM_CUDA_CHECK(cudaMemset(src.data(), 1, half));
    time_gpu(state, [&](cudaStream_t s) {
      FP8GEMM_CUDA_CHECK(cudaMemcpyAsync(dst.data(), src.data(), half, cudaMemcpyDeviceToDevice, s));
    }, GemmCost{0.0, 2.0 * double(half)});
    g_copy_gbs[item_name(op, variant, max_ctas) + "/" + shape_name(R, K)] = median_gbs(state);
  } catch (const std::exception& e) {
    state.SkipWithError(e.what());
  }
}

void bench_op(benchmark::State& state, Op op, int variant, int max_ctas, std::int64_t R,
              std::int64_t K) {
  try {
    DeviceBuffer<std::uint16_t> x(std::size_t(R * K));
    fill_bf16_kernel<<<4096, 256>>>(x.data(), x.size(), std::uint64_t(R * 131 + K));
    FP8GEMM_CUDA_CHECK(cudaGetLastError());
    DeviceBuffer<std::uint8_t> q(op == Op::tokens ? 0 : std::size_t(R * K));  // tokens: q_t only
    std::function<void(cudaStream_t)> launch;
    DeviceBuffer<std::uint8_t> qt;
    DeviceBuffer<float> s, st;
    DeviceBuffer<std::uint8_t> s8, st8;  // UE8M0 scales of the MX quantisers
    DeviceBuffer<int> offs;
    const QuantizeOptions opt{op == Op::q1x128_pow2};
    DeviceBuffer<std::uint8_t> bq, bout, bs8;  // requant: B's codes, its output, its UE8M0 scales
    DeviceBuffer<float> bs;                     // requant: B's FP32 scales
    MxRequantOperand ra, rb;
    if (op == Op::requant) {
      // A and B, R x K each, as chapter 9's requantize_block_scaled path gives them to
      // requantize_mx: random codes (no NaN), UE8M0 codes 127 +- 8 per block, chapter 7's default
      // scale layouts. The arithmetic does not depend on the values (no data-dependent branch
      // but the shift-0 and NaN cases), so random data times the common case.
      const auto L = GroupScaleLayout::mn_major_tma_aligned(R);
      const auto Lb = BlockScaleLayout::padded(K);
      std::mt19937 gen(std::uint32_t(R * 31 + K));
      std::vector<std::uint8_t> codes(std::size_t(mx_1x32_scale_bytes(R, K)));
      for (auto& c : codes) c = std::uint8_t(119 + gen() % 17);
      q = DeviceBuffer<std::uint8_t>(std::size_t(R * K));
      bq = DeviceBuffer<std::uint8_t>(std::size_t(R * K));
      fill_random_e4m3(q.data(), q.size(), std::uint64_t(R * 7 + K), 64.0f);
      fill_random_e4m3(bq.data(), bq.size(), std::uint64_t(R * 11 + K), 64.0f);
      s8 = DeviceBuffer<std::uint8_t>(codes);
      bs8 = DeviceBuffer<std::uint8_t>(codes);
      qt = DeviceBuffer<std::uint8_t>(std::size_t(R * K));  // A's output
      bout = DeviceBuffer<std::uint8_t>(std::size_t(R * K));
      s = DeviceBuffer<float>(std::size_t(L.required_elements(R, K)));
      bs = DeviceBuffer<float>(std::size_t(Lb.required_elements(R, K)));
      ra = {q.data(), R, K, K, s8.data(), qt.data(), K, s.data()};
      rb = {bq.data(), R, K, K, bs8.data(), bout.data(), K, bs.data()};
      launch = [&, L, Lb, variant](cudaStream_t st_) {
        if (variant < 0)
          requantize_mx(&ra, L, &rb, Lb, st_);
        else
          requant_tuning::requantize_mx(variant, 0, &ra, L, &rb, Lb, st_);
      };
    } else if (op == Op::q128x128) {
      const auto L = BlockScaleLayout::padded(K);
      s = DeviceBuffer<float>(std::size_t(L.required_elements(R, K)));
      launch = [&, L](cudaStream_t st_) {
        quantize_128x128(x.data(), R, K, K, q.data(), K, s.data(), L, opt, st_);
      };
    } else if (op == Op::q128x128_dual) {  // W and W^T, packed grids (what Fp8Linear asks for)
      const auto L = BlockScaleLayout::packed(K), Lt = BlockScaleLayout::packed(R);
      s = DeviceBuffer<float>(std::size_t(L.required_elements(R, K)));
      st = DeviceBuffer<float>(std::size_t(Lt.required_elements(K, R)));
      qt = DeviceBuffer<std::uint8_t>(std::size_t(R * K));
      launch = [&, L, Lt, variant](cudaStream_t st_) {
        if (variant < 0)
          quantize_128x128_dual(x.data(), R, K, K, q.data(), K, s.data(), L, qt.data(), R,
                                st.data(), Lt, opt, st_);
        else
          tuning_128x128::quantize_128x128_dual(variant, 0, x.data(), R, K, K, q.data(), K,
                                                s.data(), L, qt.data(), R, st.data(), Lt, opt,
                                                st_);
      };
    } else if (op == Op::tokens) {
      // R = T tokens of K = C channels in kTokenExperts experts (skewed), transposed and padded.
      const auto counts = skewed_counts(R, kTokenExperts, std::uint64_t(R * 7 + K));
      std::vector<int> offsets(counts.size() + 1, 0);
      std::partial_sum(counts.begin(), counts.end(), offsets.begin() + 1);
      const std::int64_t cap = max_padded_tokens(R, kTokenExperts);
      const auto Lt = GroupScaleLayout::mn_major_tma_aligned(K);
      offs = DeviceBuffer<int>(offsets);
      qt = DeviceBuffer<std::uint8_t>(std::size_t(K * cap));
      st = DeviceBuffer<float>(std::size_t(Lt.required_elements(K, cap)));
      const auto padded = padded_token_offsets_cpu(offsets.data(), kTokenExperts, R);
      state.counters["t_pad"] = double(padded.back());
      state.counters["capacity"] = double(cap);
      launch = [&, cap, Lt, variant](cudaStream_t st_) {
        if (variant < 0)
          quantize_tokens_transposed_1x128(x.data(), R, K, K, offs.data(), kTokenExperts, qt.data(),
                                           cap, cap, st.data(), Lt, nullptr, opt, st_);
        else
          tuning_1x128::quantize_tokens_transposed_1x128(variant, 0, x.data(), R, K, K, offs.data(),
                                                         kTokenExperts, qt.data(), cap, cap,
                                                         st.data(), Lt, nullptr, opt, st_);
      };
    } else if (op == Op::mx || op == Op::mx_dual) {
      // floor_ocp (the rules cost the same: a few integer operations per 32-element block).
      s8 = DeviceBuffer<std::uint8_t>(std::size_t(mx_1x32_scale_bytes(R, K)));
      if (op == Op::mx_dual) {
        qt = DeviceBuffer<std::uint8_t>(std::size_t(R * K));
        st8 = DeviceBuffer<std::uint8_t>(std::size_t(mx_1x32_scale_bytes(K, R)));
      }
      // variant < 0: the public function; else that kernel variant (same checks, same bytes).
      launch = [&, op, variant](cudaStream_t st_) {
        constexpr auto rule = MxExponentRule::floor_ocp;
        if (op == Op::mx && variant < 0)
          quantize_mx_1x32(x.data(), R, K, K, q.data(), K, s8.data(), rule, st_);
        else if (op == Op::mx)
          mx_tuning::quantize_mx_1x32(variant, 0, x.data(), R, K, K, q.data(), K, s8.data(), rule,
                                      st_);
        else if (variant < 0)
          quantize_mx_1x32_dual(x.data(), R, K, K, q.data(), K, s8.data(), qt.data(), R, st8.data(),
                                rule, st_);
        else
          mx_tuning::quantize_mx_1x32_dual(variant, 0, x.data(), R, K, K, q.data(), K, s8.data(),
                                           qt.data(), R, st8.data(), rule, st_);
      };
    } else if (op == Op::dual) {
      const auto L = GroupScaleLayout::mn_major_tma_aligned(R);
      const auto Lt = GroupScaleLayout::mn_major_tma_aligned(K);
      s = DeviceBuffer<float>(std::size_t(L.required_elements(R, K)));
      st = DeviceBuffer<float>(std::size_t(Lt.required_elements(K, R)));
      qt = DeviceBuffer<std::uint8_t>(std::size_t(R * K));
      // variant < 0: the public function; else that kernel variant (same checks, same bytes).
      launch = [&, L, Lt, variant, max_ctas](cudaStream_t st_) {
        if (variant < 0)
          quantize_1x128_dual(x.data(), R, K, K, q.data(), K, s.data(), L, qt.data(), R, st.data(),
                              Lt, opt, st_);
        else
          tuning_1x128::quantize_1x128_dual(variant, max_ctas, x.data(), R, K, K, q.data(), K,
                                            s.data(), L, qt.data(), R, st.data(), Lt, opt, st_);
      };
    } else {
      const auto L = op == Op::q1x128_kmajor ? GroupScaleLayout::k_major_packed(K)
                                             : GroupScaleLayout::mn_major_tma_aligned(R);
      s = DeviceBuffer<float>(std::size_t(L.required_elements(R, K)));
      launch = [&, L, variant](cudaStream_t st_) {
        if (variant < 0)
          quantize_1x128(x.data(), R, K, K, q.data(), K, s.data(), L, opt, st_);
        else
          tuning_1x128::quantize_1x128(variant, 0, x.data(), R, K, K, q.data(), K, s.data(), L, opt,
                                       st_);
      };
    }
    time_gpu(state, launch, GemmCost{0.0, op_bytes(op, R, K)});
    const std::string key = item_name(op, variant, max_ctas) + "/" + shape_name(R, K);
    const double gbs = median_gbs(state);
    g_op_gbs[key] = gbs;
    const auto c = g_copy_gbs.find(key);
    if (c != g_copy_gbs.end() && c->second > 0) state.counters["pct_of_copy"] = 100.0 * gbs / c->second;
  } catch (const std::exception& e) {
    state.SkipWithError(e.what());
  }
}

}  // namespace

int main(int argc, char** argv) {
  std::printf("fp8gemm quantisers (DeepSeek-V3 1x128 / 128x128 / dual / expert tokens, MXFP8 1x32 "
              "/ dual) vs a D2D copy of the same bytes\n");
  if (cuda_device_count() == 0) {
    std::printf("No CUDA GPU found: this benchmark needs an NVIDIA Hopper GPU (sm_90a).\n");
    return 2;
  }
  std::printf("GPU: %s\ncommit: %s\n", describe_device().c_str(), git_commit());
  struct Item {
    Op op;
    std::int64_t R, K;
    int variant = -1;  // >= 0 times that kernel variant (mx_tuning, tuning_1x128), not the default
    int max_ctas = 0;  // > 0 caps the grid (the 1 x 128 dual's variants only): CTAs walk tiles
  };
  // >= 64 MB of bf16 input each: 8192 x 7168 = 117 MB, 4096 x 16384 = 134 MB,
  // 7168 x 16384 = 235 MB, 16384 x 7168 = 235 MB.
  std::vector<Item> items = {
      {Op::q1x128, 8192, 7168},      {Op::q1x128, 4096, 16384},   {Op::q1x128_kmajor, 8192, 7168},
      {Op::q1x128_pow2, 8192, 7168}, {Op::q128x128, 7168, 16384}, {Op::q128x128, 16384, 7168},
      {Op::q128x128_dual, 7168, 16384}, {Op::q128x128_dual, 16384, 7168},
      {Op::dual, 8192, 7168},        {Op::dual, 4096, 16384},     {Op::tokens, 65536, 7168},
      {Op::tokens, 65536, 4096},  // 940 MB and 537 MB of bf16
      {Op::mx, 8192, 7168},          {Op::mx, 4096, 16384},       {Op::mx_dual, 8192, 7168},
      {Op::mx_dual, 4096, 16384},
  };
  // Every quantize_128x128_dual kernel variant (tuning_128x128; the public entry runs
  // kDefaultVariant, lean_async).
  for (int v = 0; v < tuning_128x128::kVariants; ++v) {
    items.push_back({Op::q128x128_dual, 7168, 16384, v});
    items.push_back({Op::q128x128_dual, 16384, 7168, v});
  }
  // Every MX kernel variant side by side (the public entries above run the default one).
  for (const Op op : {Op::mx, Op::mx_dual})
    for (int v = 0; v < mx_tuning::kVariants; ++v) {
      items.push_back({op, 8192, 7168, v});
      items.push_back({op, 4096, 16384, v});
    }
  // Every 1 x 128 kernel variant side by side (tuning_1x128: v1_first the first kernels, v2_lean
  // the lean rewrite the public entries above run, v3_shared v2 with shared scales, v4_occ4 v3 at
  // 4 CTAs per SM), the layouts and the pow2 option at one shape.
  for (int v = 0; v < tuning_1x128::kVariants; ++v) {
    for (const Op op : {Op::q1x128, Op::dual}) {
      items.push_back({op, 8192, 7168, v});
      items.push_back({op, 4096, 16384, v});
    }
    items.push_back({Op::q1x128_kmajor, 8192, 7168, v});
    items.push_back({Op::q1x128_pow2, 8192, 7168, v});
    items.push_back({Op::tokens, 65536, 7168, v});
    items.push_back({Op::tokens, 65536, 4096, v});
  }
  // The 1 x 128 dual at 8192 x 7168 is at the 85 % line (issue 9), 4096 x 16384 above it. Two
  // explanations measured side by side (session 28, before any run): (a) the partial last wave:
  // 3584 tiles on 132 x 3 CTA slots are 9.05 waves, 4096 x 16384 10.34; if the tail costs,
  // % of the copy varies with the wave count at a fixed K: v2_lean at M = 7936 (8.77 waves),
  // 8448 (9.33), 8704 (9.62) beside 8192; (b) one tile per CTA, so a CTA's loads and its
  // arithmetic never overlap: v5_async with the grid capped (each CTA walks 2, 4 or 9-10 tiles,
  // the next one's copies in flight while it converts this one).
  for (const std::int64_t M : {7936, 8448, 8704}) items.push_back({Op::dual, M, 7168, 1});
  for (const int ctas : {1792, 896, 392}) items.push_back({Op::dual, 8192, 7168, 4, ctas});
  // v6_interior (session 28): v2 with whole tiles' bound tests and 64-bit row addressing gone,
  // 1435 instead of 1584 SASS instructions per warp and tile on the common path; also with two
  // tiles per CTA (its set-up, ~170 of them, paid once for two).
  items.push_back({Op::dual, 8192, 7168, 5, 1792});
  // requantize_mx (chapter 9's requantize_block_scaled path, session 54, before any run): the
  // public function and every kernel variant on A and B of R x K each (8192 x 8192: the path at
  // 8192^3; 4096 x 7168 and 2048 x 7168: fewer tiles, more of a tail). v1_tiles is what session
  // 53 measured (ncu at 8192^3 on an H100: 73.9 % of DRAM peak). Predicted % of the copy: v1 78-82,
  // v2_pipe2 86-91, v3_pipe3 86-91, v4_pipe4 84-90 (2 CTAs per SM: a tile's finishing work is
  // less hidden). Measured (H100, 20a486b, plots/data/h200/session54/call2_20a486b/; 8192 / 4096 /
  // 2048): v1 86.0 / 92.0 / 96.3, v2 83.7 / 88.4 / 88.6, v3 83.6 / 86.0 / 90.3, v4 83.3 / 86.9 /
  // 91.2: v1 fastest everywhere (ncu: v1 and v2 at the same 74-75 % of DRAM peak; the copy's rate
  // also falls at the small shapes, 2.13 TB/s at 2048 x 7168 against 2.89 at 8192 x 8192).
  for (const std::int64_t R : {8192, 4096, 2048}) {
    const std::int64_t K = R == 8192 ? 8192 : 7168;
    items.push_back({Op::requant, R, K});
    for (int v = 0; v < requant_tuning::kVariants; ++v) items.push_back({Op::requant, R, K, v});
  }
  for (const auto& it : items) {
    const std::string shape = shape_name(it.R, it.K);
    // The copy first: bench_op reads its result for pct_of_copy.
    const std::string name = item_name(it.op, it.variant, it.max_ctas);
    benchmark::RegisterBenchmark(
        ("copy_d2d_as_" + name + "/" + shape).c_str(),
        [it](benchmark::State& st) { bench_copy(st, it.op, it.variant, it.max_ctas, it.R, it.K); })
        ->UseManualTime()
        ->Iterations(1)
        ->Unit(benchmark::kMicrosecond);
    benchmark::RegisterBenchmark(
        (name + "/" + shape).c_str(),
        [it](benchmark::State& st) { bench_op(st, it.op, it.variant, it.max_ctas, it.R, it.K); })
        ->UseManualTime()
        ->Iterations(1)
        ->Unit(benchmark::kMicrosecond);
  }
  run_benchmarks(argc, argv, "quantize_bench.json");
  std::printf("\n%-34s %-12s %10s %10s %9s\n", "quantiser", "shape", "GB/s", "copy GB/s", "% copy");
  for (const auto& [key, gbs] : g_op_gbs) {
    const auto c = g_copy_gbs.find(key);
    const double copy = c == g_copy_gbs.end() ? 0.0 : c->second;
    const auto slash = key.find('/');
    std::printf("%-34s %-12s %10.0f %10.0f %8.1f%%\n", key.substr(0, slash).c_str(),
                key.substr(slash + 1).c_str(), gbs, copy, copy > 0 ? 100.0 * gbs / copy : 0.0);
  }
  return 0;
}
