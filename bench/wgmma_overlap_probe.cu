// A probe of how the tensor cores share themselves between two warpgroups, and what that means
// for the promoted loops of chapters 6-8 (docs/engine.md, "Two warpgroups on one tensor core").
//
// The engine's promoted loop (common/engine/kernel.cuh, PerTensorMath::promoted_loop) has two
// consumer warpgroups on one SM. Each, per K block and 64-row slab ("wave"): issue 4 wgmma
// m64n128k32 into a partial sum, wait for them, then add the partial sum into its FP32 totals on
// the CUDA cores (the promotion). While one warpgroup promotes, only the other's wgmma can keep
// the tensor cores busy. Whether they do depends on how the hardware runs the wgmma of two
// warpgroups that are both queued:
//   - in issue order (first come, first served): the first warpgroup's wave finishes after one
//     wave's time T and the second's after 2T; the first promotes while the second's wave runs,
//     and the two fall into a ping-pong by themselves;
//   - shared (both progress at half rate): both waves finish together at 2T, both promote at
//     once, and the tensor cores idle for a promotion every two waves unless something staggers
//     the warpgroups.
//
// This kernel has no loads and no producer: the operands sit in shared memory, written once. All
// of an SM's time goes to wgmma and the promotion, so the cycles per K block against the tensor
// cores' own 4 T (two warpgroups x two waves) measure the overlap alone. Modes:
//   0  the engine's loop: both warpgroups start together, one FFMA per element (chapter 7)
//   1  the same, the second warpgroup held back at the start until the first's first wave is done
//   2  no promotion (the tensor cores' time alone: the floor)
//   3  as 0 with two instructions per element (the weight gradient's FMUL + FFMA)
//   4  as 3, staggered as in 1
//   5  as 0, the warpgroups re-synchronised at every K block (a named barrier: what a late
//      producer's full barrier does)
//   6  as 0, strict alternation: a warpgroup issues a wave only once the other's last wave is done
//   7  as 5, and after each re-synchronisation warpgroup 1 waits for warpgroup 0's first wave
//   8  as 6 with FMUL + FFMA per element
//   9-18 (added after the first runs; kModes below names each): the promotion alone, no wgmma
//      (9, 10); one wave per K block (128 x 128) one-deep and two-deep (11-15); three warpgroups
//      (16-18)
// and it records, for CTA 0, when each warpgroup's first 16 waves were issued and completed.
//
// Prediction, written before the first run (session 19): the wgmma of two warpgroups are shared,
// not run in issue order (the SASS of the engine's loops shows nothing that would serialise
// them), so mode 0 takes 1.15-1.30x mode 2's cycles and mode 1 close to mode 2 (1.00-1.08x); the
// first waves of mode 0 complete together (within ~10% of 2T of each other), mode 1's one T apart.
// If mode 0 is already within 5% of mode 2, the tensor cores run wgmma in issue order and the
// idle tensor pipe that ncu shows in the engine's promoted kernels (71-84%, DeepGEMM 85-92%) has
// another cause.
// Measured (plots/data/h200/probe/, docs/engine.md): mode 2 exactly 1024 cycles per K block, mode
// 0 1.034x, mode 1 1.00-1.03x: the prediction was wrong, the loop overlaps by itself; mode 5
// (re-synchronised) 1.32x, mode 3 (two instructions per element) 1.40x. Chapter 7's timeline
// (ch07_timeline) then looked for the rest inside the real kernel.
//
// Build: part of bench/ (CMake target wgmma_overlap_probe, sm_90a). Run: wgmma_overlap_probe
// [--kblocks=N] [--reps=N] [--json=FILE]; needs an sm_90 GPU (it says so and exits 0 without one).
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <stdexcept>
#include <string>
#include <vector>

#include "common/chapter_args.hpp"
#include "common/cuda.hpp"
#include "common/ptx/wgmma.cuh"

namespace {

constexpr int kN = 128;      // columns of a wave (one wgmma m64n128k32 chain)
constexpr int kSteps = 4;    // wgmma k32 steps per 128-deep K block
constexpr int kStamps = 16;  // waves recorded per warpgroup (CTA 0)
constexpr int kMaxWGs = 3;
// A: up to 256 rows x 128 e4m3 (K-major, 128B swizzle); B: 128 rows x 128 e4m3.
constexpr std::uint32_t kABytes = 256 * 128;
constexpr std::uint32_t kBBytes = 128 * 128;
constexpr std::uint32_t kSmemBytes = kABytes + kBBytes + 1024;  // + alignment slack

__device__ __forceinline__ long long clock_now() {
  long long t;
  asm volatile("mov.u64 %0, %%clock64;" : "=l"(t)::"memory");
  return t;
}

/// Named barriers over all consumer threads (PTX ISA §9.7.13.1 bar.sync / bar.arrive): barrier
/// 1 re-synchronises everyone; 2 and 3 pass a token from one warpgroup to the other.
template <int kId, int kThreads>
__device__ __forceinline__ void bar_sync() {
  asm volatile("bar.sync %0, %1;" ::"n"(kId), "n"(kThreads) : "memory");
}
template <int kId, int kThreads>
__device__ __forceinline__ void bar_arrive() {
  asm volatile("bar.arrive %0, %1;" ::"n"(kId), "n"(kThreads) : "memory");
}

/// How the warpgroups are ordered against each other.
enum Sync : int {
  kFree = 0,         ///< nothing: they start together and drift as they will
  kStaggerOnce = 1,  ///< warpgroups 1.. held at the start until warpgroup 0's first wave is done
  kResync = 2,       ///< all re-synchronised at every K block (what a late full barrier does)
  kAlternate = 3,    ///< a token passed at every wave: one warpgroup's wave in flight at a time
  kResyncWg0 = 4,    ///< kResync, then the others wait for warpgroup 0's first wave
};

/// One configuration: kWGs consumer warpgroups, each with kWaves 64-row slabs per K block (one
/// wave = 4 wgmma m64n128k32 into a partial sum), promoted with kOps CUDA-core instructions per
/// element (0: none, the partial sum kept alive by one FADD per wave; 1: FFMA, chapters 6-8's
/// forward; 2: FMUL + FFMA, the weight gradient's two scales), ordered by kSync; kTwoDeep (one
/// wave per K block only): the next K block's wave is issued before this one is promoted, into a
/// second partial sum (the engine's two-deep loops); kMma false: the promotion alone, no wgmma.
template <int kWGs, int kWaves, int kOps, int kSync, bool kTwoDeep, bool kMma>
__global__ void __launch_bounds__(128 * kWGs, 1)
    probe(int kblocks, float s0, float s1, long long* cycles, long long* stamps, float* sink) {
  static_assert(!kTwoDeep || (kWaves == 1 && kSync == kFree && kMma), "two-deep: one wave, free");
  constexpr int kThreads = 128 * kWGs;
  extern __shared__ std::uint8_t smem_raw[];
  const std::uint32_t raw = static_cast<std::uint32_t>(__cvta_generic_to_shared(smem_raw));
  const std::uint32_t base = (raw + 1023u) & ~1023u;
  std::uint8_t* smem = smem_raw + (base - raw);
  // Operands: e4m3 0x30 (0.5) and 0x38 (1.0); the values do not change the tensor cores' time.
  for (std::uint32_t i = threadIdx.x; i < (kABytes + kBBytes) / 4; i += kThreads)
    reinterpret_cast<std::uint32_t*>(smem)[i] = i < kABytes / 4 ? 0x30303030u : 0x38383838u;
  asm volatile("fence.proxy.async.shared::cta;" ::: "memory");  // generic writes -> wgmma's reads
  __syncthreads();

  const int wg = __shfl_sync(0xffffffffu, int(threadIdx.x) / 128, 0);
  const bool recorder = blockIdx.x == 0 && threadIdx.x % 128 == 0;
  // Warpgroup g's slab w: rows 64 (kWGs w + g) of A (a multiple of 8 rows: 1024-byte aligned).
  const std::uint64_t desc_b = fp8gemm::ptx::make_desc_k_major_sw128(base + kABytes);
  std::uint64_t desc_a[kWaves];
#pragma unroll
  for (int w = 0; w < kWaves; ++w)
    desc_a[w] =
        fp8gemm::ptx::make_desc_k_major_sw128(base + std::uint32_t(64 * (kWGs * w + wg)) * 128u);

  float acc[kWaves][kN / 2];
  float part[kN / 2], part2[kTwoDeep ? kN / 2 : 1];
#pragma unroll
  for (int w = 0; w < kWaves; ++w)
#pragma unroll
    for (int i = 0; i < kN / 2; ++i) acc[w][i] = 0.0f;
#pragma unroll
  for (int i = 0; i < kN / 2; ++i) part[i] = float(threadIdx.x + i);  // read only without wgmma

  auto issue = [&](float(&p)[kN / 2], int w) {
    fp8gemm::ptx::wgmma_fence();
#pragma unroll
    for (int ks = 0; ks < kSteps; ++ks)
      fp8gemm::ptx::wgmma_m64nNk32_e4m3<kN>(
          p, fp8gemm::ptx::advance_desc(desc_a[w], std::uint32_t(32 * ks)),
          fp8gemm::ptx::advance_desc(desc_b, std::uint32_t(32 * ks)), ks > 0 ? 1u : 0u);
    fp8gemm::ptx::wgmma_commit_group();
  };
  auto promote = [&](const float(&p)[kN / 2], int w, float s) {
    if constexpr (kOps == 0) {
      acc[w][0] += p[0];  // keeps the partial sum alive: ptxas drops wgmma whose results are unread
    } else {
#pragma unroll
      for (int i = 0; i < kN / 2; ++i) {
        if constexpr (kOps == 2)
          acc[w][i] = __fmaf_rn(s * p[i], s1, acc[w][i]);
        else
          acc[w][i] = __fmaf_rn(s, p[i], acc[w][i]);
      }
    }
  };
  auto stamp = [&](int wave, long long t_issue, long long t0) {
    if (recorder && wave < kStamps) {
      long long* out = stamps + (wg * kStamps + wave) * 2;
      out[0] = t_issue - t0;
      out[1] = clock_now() - t0;
    }
  };

  __syncthreads();
  const long long t0 = clock_now();
  if constexpr (kTwoDeep) {
    // Block kb goes into P[kb % 2]; it is issued once block kb - 1 (in the other buffer) is
    // complete and before that one is promoted.
    issue(part, 0);
    int kb = 1;
    for (; kb + 1 < kblocks; kb += 2) {
      fp8gemm::ptx::wgmma_wait_group<0>();
      fp8gemm::ptx::wgmma_fence_operands(part);
      issue(part2, 0);
      promote(part, 0, s0);
      fp8gemm::ptx::wgmma_wait_group<0>();
      fp8gemm::ptx::wgmma_fence_operands(part2);
      issue(part, 0);
      promote(part2, 0, s1);
    }
    fp8gemm::ptx::wgmma_wait_group<0>();
    fp8gemm::ptx::wgmma_fence_operands(part);
    promote(part, 0, s0);
    for (; kb < kblocks; ++kb) {  // an even count: one block left
      issue(part2, 0);
      fp8gemm::ptx::wgmma_wait_group<0>();
      fp8gemm::ptx::wgmma_fence_operands(part2);
      promote(part2, 0, s1);
    }
  } else {
    if (kSync == kStaggerOnce && wg > 0) bar_sync<2, kThreads>();
    int wave = 0;
    for (int kb = 0; kb < kblocks; ++kb) {
      if (kSync == kResync || kSync == kResyncWg0) bar_sync<1, kThreads>();
      if (kSync == kResyncWg0 && wg > 0) bar_sync<2, kThreads>();
      const float s = kb & 1 ? s1 : s0;
#pragma unroll
      for (int w = 0; w < kWaves; ++w, ++wave) {
        if (kSync == kAlternate) {
          if (wg == 1)
            bar_sync<2, kThreads>();  // warpgroup 0's wave is done
          else if (wave > 0)
            bar_sync<3, kThreads>();  // warpgroup 1's last wave is done
        }
        const long long t_issue = clock_now();
        if constexpr (kMma) {
          issue(part, w);
          fp8gemm::ptx::wgmma_wait_group<0>();
        }
        fp8gemm::ptx::wgmma_fence_operands(part);
        stamp(wave, t_issue, t0);
        if (wg == 0 && w == 0 && ((kSync == kStaggerOnce && wave == 0) || kSync == kResyncWg0))
          bar_arrive<2, kThreads>();
        if (kSync == kAlternate) {
          if (wg == 0)
            bar_arrive<2, kThreads>();
          else
            bar_arrive<3, kThreads>();
        }
        promote(part, w, s);
      }
    }
    if (kSync == kAlternate && wg == 0) bar_sync<3, kThreads>();  // warpgroup 1's last token
  }
  const long long t1 = clock_now();
  if (threadIdx.x % 128 == 0) cycles[blockIdx.x * kMaxWGs + wg] = t1 - t0;
  float sum = 0.0f;
#pragma unroll
  for (int w = 0; w < kWaves; ++w)
#pragma unroll
    for (int i = 0; i < kN / 2; ++i) sum += acc[w][i];
  sink[blockIdx.x * 128 * kMaxWGs + threadIdx.x] = sum;
}

using Kernel = void (*)(int, float, float, long long*, long long*, float*);
struct Mode {
  int id;
  int wgs, waves;
  bool mma;
  const char* name;
  Kernel kernel;
  /// The tensor cores' own cycles per K block at 4096 e4m3 MACs per cycle and SM (1979 dense
  /// TFLOPS at 1830 MHz over 132 SMs): a wave of 4 m64n128k32 is 256 cycles.
  double tensor_cycles() const { return mma ? 256.0 * wgs * waves : 0.0; }
};
const Mode kModes[] = {
    {0, 2, 2, true, "256x128, FFMA, free (the engine's loop)", probe<2, 2, 1, kFree, false, true>},
    {1, 2, 2, true, "256x128, FFMA, warpgroup 1 one wave late at the start",
     probe<2, 2, 1, kStaggerOnce, false, true>},
    {2, 2, 2, true, "256x128, no promotion (the tensor cores alone)",
     probe<2, 2, 0, kFree, false, true>},
    {3, 2, 2, true, "256x128, FMUL + FFMA, free (the weight gradient's promotion)",
     probe<2, 2, 2, kFree, false, true>},
    {4, 2, 2, true, "256x128, FMUL + FFMA, one wave late at the start",
     probe<2, 2, 2, kStaggerOnce, false, true>},
    {5, 2, 2, true, "256x128, FFMA, re-synchronised every K block",
     probe<2, 2, 1, kResync, false, true>},
    {6, 2, 2, true, "256x128, FFMA, strict alternation (a token every wave)",
     probe<2, 2, 1, kAlternate, false, true>},
    {7, 2, 2, true, "256x128, FFMA, re-synchronised every K block, then warpgroup 0 first",
     probe<2, 2, 1, kResyncWg0, false, true>},
    {8, 2, 2, true, "256x128, FMUL + FFMA, strict alternation",
     probe<2, 2, 2, kAlternate, false, true>},
    {9, 2, 2, false, "256x128, FFMA promotion alone (no wgmma)",
     probe<2, 2, 1, kFree, false, false>},
    {10, 2, 2, false, "256x128, FMUL + FFMA promotion alone (no wgmma)",
     probe<2, 2, 2, kFree, false, false>},
    {11, 2, 1, true, "128x128, no promotion", probe<2, 1, 0, kFree, false, true>},
    {12, 2, 1, true, "128x128, FFMA, free", probe<2, 1, 1, kFree, false, true>},
    {13, 2, 1, true, "128x128, FFMA, two-deep", probe<2, 1, 1, kFree, true, true>},
    {14, 2, 1, true, "128x128, FMUL + FFMA, free", probe<2, 1, 2, kFree, false, true>},
    {15, 2, 1, true, "128x128, FMUL + FFMA, two-deep", probe<2, 1, 2, kFree, true, true>},
    {16, 3, 1, true, "192x128 (3 warpgroups), no promotion", probe<3, 1, 0, kFree, false, true>},
    {17, 3, 1, true, "192x128 (3 warpgroups), FFMA, free", probe<3, 1, 1, kFree, false, true>},
    {18, 3, 1, true, "192x128 (3 warpgroups), FMUL + FFMA, free",
     probe<3, 1, 2, kFree, false, true>},
};

/// The probe's arguments, all checked before any GPU work: --kblocks=N (>= 1), --reps=N (>= 1),
/// --json=PATH; anything else is refused.
struct ProbeArgs {
  int kblocks = 2048;
  int reps = 7;
  std::string json;
};
ProbeArgs parse_probe_args(int argc, char** argv) {
  ProbeArgs r;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a.rfind("--kblocks=", 0) == 0)
      r.kblocks = int(fp8gemm::parse_count(a, "--kblocks=", 1));
    else if (a.rfind("--reps=", 0) == 0)
      r.reps = int(fp8gemm::parse_count(a, "--reps=", 1));
    else if (a.rfind("--json=", 0) == 0 && a.size() > 7)
      r.json = a.substr(7);
    else
      throw std::invalid_argument("unknown argument " + a +
                                  " (want --kblocks=N, --reps=N, --json=PATH)");
  }
  return r;
}

}  // namespace

int main(int argc, char** argv) {
  ProbeArgs args;
  const bool args_ok = fp8gemm::parse_arguments("wgmma_overlap_probe", [&] {
    args = parse_probe_args(argc, argv);
  });
  if (!args_ok) return 1;
  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
    std::printf("wgmma_overlap_probe: no CUDA GPU here; nothing measured.\n");
    return 0;
  }
  cudaDeviceProp prop{};
  FP8GEMM_CUDA_CHECK(cudaGetDeviceProperties(&prop, 0));
  if (prop.major != 9) {
    std::printf("wgmma_overlap_probe: needs sm_90 (wgmma); this GPU is sm_%d%d.\n", prop.major,
                prop.minor);
    return 0;
  }
  const int kblocks = args.kblocks;
  const int reps = args.reps;
  const std::string& json = args.json;
  const int ctas = prop.multiProcessorCount;

  long long *d_cycles, *d_stamps;
  float* d_sink;
  FP8GEMM_CUDA_CHECK(cudaMalloc(&d_cycles, sizeof(long long) * ctas * kMaxWGs));
  FP8GEMM_CUDA_CHECK(cudaMalloc(&d_stamps, sizeof(long long) * kMaxWGs * kStamps * 2));
  FP8GEMM_CUDA_CHECK(cudaMalloc(&d_sink, sizeof(float) * ctas * 128 * kMaxWGs));
  for (const Mode& m : kModes)
    FP8GEMM_CUDA_CHECK(cudaFuncSetAttribute(m.kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                            int(kSmemBytes)));

  std::FILE* out = json.empty() ? nullptr : std::fopen(json.c_str(), "w");
  if (json.size() && !out) {
    std::fprintf(stderr, "cannot write %s\n", json.c_str());
    return 1;
  }
  int clock_khz = 0;
  FP8GEMM_CUDA_CHECK(cudaDeviceGetAttribute(&clock_khz, cudaDevAttrClockRate, 0));
  if (out)
    std::fprintf(out,
                 "{\"gpu\": \"%s\", \"sms\": %d, \"max_sm_clock_khz\": %d, \"kblocks\": %d, "
                 "\"reps\": %d, \"cuda_runtime\": %d, \"modes\": [\n",
                 prop.name, ctas, clock_khz, kblocks, reps, CUDART_VERSION);
  std::printf(
      "%s, %d SMs, one CTA per SM; %d K blocks per CTA; %d reps (the modes interleaved "
      "rep by rep); per rep the median over CTAs of the slowest warpgroup's cycles; the "
      "median over reps. 'x tensor': over the tensor cores' own cycles (256 per wave)\n",
      prop.name, ctas, kblocks, reps);
  std::vector<std::vector<double>> per_mode(std::size(kModes));
  std::vector<std::vector<long long>> first_stamps(std::size(kModes));
  std::vector<float> host_ms(std::size(kModes), 0.0f);
  cudaEvent_t e0, e1;
  FP8GEMM_CUDA_CHECK(cudaEventCreate(&e0));
  FP8GEMM_CUDA_CHECK(cudaEventCreate(&e1));
  for (int r = 0; r < reps + 1; ++r) {
    for (std::size_t mi = 0; mi < std::size(kModes); ++mi) {
      const Mode& m = kModes[mi];
      FP8GEMM_CUDA_CHECK(cudaMemset(d_stamps, 0, sizeof(long long) * kMaxWGs * kStamps * 2));
      FP8GEMM_CUDA_CHECK(cudaMemset(d_cycles, 0, sizeof(long long) * ctas * kMaxWGs));
      FP8GEMM_CUDA_CHECK(cudaEventRecord(e0));
      m.kernel<<<ctas, 128 * m.wgs, kSmemBytes>>>(kblocks, 1.0f, 0.5f, d_cycles, d_stamps, d_sink);
      FP8GEMM_CUDA_CHECK(cudaGetLastError());
      FP8GEMM_CUDA_CHECK(cudaEventRecord(e1));
      FP8GEMM_CUDA_CHECK(cudaEventSynchronize(e1));
      float ms = 0;
      FP8GEMM_CUDA_CHECK(cudaEventElapsedTime(&ms, e0, e1));
      std::vector<long long> cyc(ctas * kMaxWGs);
      FP8GEMM_CUDA_CHECK(
          cudaMemcpy(cyc.data(), d_cycles, sizeof(long long) * cyc.size(), cudaMemcpyDeviceToHost));
      if (r == 0) continue;  // warm-up
      std::vector<long long> per_cta(ctas);
      for (int c = 0; c < ctas; ++c) {
        per_cta[c] = 0;
        for (int g = 0; g < m.wgs; ++g) {
          if (cyc[c * kMaxWGs + g] <= 0) {
            std::fprintf(stderr, "mode %d: CTA %d warpgroup %d recorded no cycles\n", m.id, c, g);
            return 1;
          }
          per_cta[c] = std::max(per_cta[c], cyc[c * kMaxWGs + g]);
        }
      }
      std::nth_element(per_cta.begin(), per_cta.begin() + ctas / 2, per_cta.end());
      per_mode[mi].push_back(double(per_cta[ctas / 2]) / kblocks);
      host_ms[mi] += ms / reps;
      if (r == 1) {
        first_stamps[mi].resize(kMaxWGs * kStamps * 2);
        FP8GEMM_CUDA_CHECK(cudaMemcpy(first_stamps[mi].data(), d_stamps,
                                      sizeof(long long) * first_stamps[mi].size(),
                                      cudaMemcpyDeviceToHost));
      }
    }
  }
  auto median = [](std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
  };
  for (std::size_t mi = 0; mi < std::size(kModes); ++mi) {
    const Mode& m = kModes[mi];
    const double c = median(per_mode[mi]);
    const double t = m.tensor_cycles();
    if (t > 0)
      std::printf("mode %2d: %7.1f cycles per K block, %.3fx tensor, %.3f ms per launch  -- %s\n",
                  m.id, c, c / t, host_ms[mi], m.name);
    else
      std::printf("mode %2d: %7.1f cycles per K block, no wgmma,    %.3f ms per launch  -- %s\n",
                  m.id, c, host_ms[mi], m.name);
    std::printf("   CTA 0, first waves (issue..done, cycles from the start):\n");
    for (int g = 0; g < m.wgs; ++g) {
      std::printf("   wg%d:", g);
      for (int w = 0; w < 8; ++w)
        std::printf(" %lld..%lld", first_stamps[mi][(g * kStamps + w) * 2],
                    first_stamps[mi][(g * kStamps + w) * 2 + 1]);
      std::printf("\n");
    }
    if (out) {
      std::fprintf(out,
                   "  {\"mode\": %d, \"name\": \"%s\", \"warpgroups\": %d, \"waves\": %d, "
                   "\"tensor_cycles_per_kblock\": %.1f, \"cycles_per_kblock\": %.2f, \"ms\": %.4f, "
                   "\"reps_cycles\": [",
                   m.id, m.name, m.wgs, m.waves, t, c, host_ms[mi]);
      for (std::size_t i = 0; i < per_mode[mi].size(); ++i)
        std::fprintf(out, "%s%.2f", i ? ", " : "", per_mode[mi][i]);
      std::fprintf(out, "], \"stamps\": [");
      for (std::size_t i = 0; i < first_stamps[mi].size(); ++i)
        std::fprintf(out, "%s%lld", i ? ", " : "", first_stamps[mi][i]);
      std::fprintf(out, "]}%s\n", mi + 1 < std::size(kModes) ? "," : "");
    }
  }
  if (out) {
    std::fprintf(out, "]}\n");
    std::fclose(out);
  }
  FP8GEMM_CUDA_CHECK(cudaFree(d_cycles));
  FP8GEMM_CUDA_CHECK(cudaFree(d_stamps));
  FP8GEMM_CUDA_CHECK(cudaFree(d_sink));
  return 0;
}
