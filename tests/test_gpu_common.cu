// GPU tests of common/cuda.hpp: the device FP8 conversions agree bit for bit with the host ones
// (one implementation, two compilers), the random fill is deterministic and plausibly normal,
// poisoning makes NaNs, and the timer, L2 flush and architecture check work.
// Without a GPU, gpu_main.cpp exits 77 (skipped).
#include <cuda_runtime.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "catch.hpp"
#include "common/cuda.hpp"
#include "common/fp8.hpp"
#include "common/reference.hpp"

#if defined(FP8GEMM_CATCH2_V3)
using Catch::Approx;  // Catch2 3 keeps it in the namespace; 2 exports it globally
#endif

namespace {

using namespace fp8gemm;

constexpr Fp8Format kFormats[] = {Fp8Format::e4m3, Fp8Format::e5m2};
constexpr Saturation kSaturations[] = {Saturation::finite, Saturation::none};

const char* name(Fp8Format f) { return f == Fp8Format::e4m3 ? "e4m3" : "e5m2"; }
const char* name(Saturation s) { return s == Saturation::finite ? "finite" : "none"; }

std::string hex(std::uint32_t v) {
  std::ostringstream s;
  s << "0x" << std::hex << v;
  return s.str();
}

/// Bit-identical, or both NaN.
bool same(float a, float b) {
  if (std::isnan(a) || std::isnan(b)) return std::isnan(a) && std::isnan(b);
  return std::bit_cast<std::uint32_t>(a) == std::bit_cast<std::uint32_t>(b);
}

/// Inputs for the encode comparison: the finite values of both formats, the midpoints between
/// neighbours and the floats just beside each (where rounding decides), the overflow
/// thresholds, specials; then 2^20 uniformly random bit patterns (all exponents, NaNs,
/// subnormals) and 2^20 random values spread over the formats' ranges.
std::vector<float> encode_inputs() {
  std::vector<float> in;
  const float inf = std::numeric_limits<float>::infinity();
  for (Fp8Format f : kFormats) {
    std::vector<float> v;
    for (unsigned c = 0; c < 256; ++c) {
      const float x = fp8_decode(std::uint8_t(c), f);
      if (std::isfinite(x) && x >= 0) v.push_back(x);
    }
    std::sort(v.begin(), v.end());
    v.erase(std::unique(v.begin(), v.end()), v.end());
    v.push_back(2 * v.back() - v[v.size() - 2]);  // one ulp past max: beyond the threshold
    for (std::size_t i = 0; i + 1 < v.size(); ++i) {
      const float mid = (v[i] + v[i + 1]) / 2;
      for (float x : {v[i], mid, std::nextafter(mid, 0.0f), std::nextafter(mid, inf)}) {
        in.push_back(x);
        in.push_back(-x);
      }
    }
  }
  for (float x : {0.0f, -0.0f, inf, -inf, std::numeric_limits<float>::quiet_NaN(),
                  -std::numeric_limits<float>::quiet_NaN(), std::numeric_limits<float>::max(),
                  std::numeric_limits<float>::denorm_min(), std::numeric_limits<float>::min(),
                  464.0f, 480.0f, 61440.0f, 65536.0f})
    in.push_back(x);
  std::mt19937_64 gen(20261129);
  for (int i = 0; i < (1 << 20); ++i) in.push_back(std::bit_cast<float>(std::uint32_t(gen())));
  std::uniform_real_distribution<float> mantissa(1.0f, 2.0f);
  std::uniform_int_distribution<int> exponent(-20, 17);
  for (int i = 0; i < (1 << 20); ++i) {
    const float x = std::ldexp(mantissa(gen), exponent(gen));
    in.push_back(gen() & 1 ? -x : x);
  }
  return in;
}

/// A kernel of this executable, compiled like every chapter's kernels (sm_90a machine code
/// only): the subject of require_kernel_image. common's own kernels live in an anonymous
/// namespace of common/src/cuda.cu and cannot be named here.
__global__ void sm90a_only_kernel(int* out) {
  if (out) *out = 1;
}

std::pair<int, int> compute_capability() {
  int device = 0, major = 0, minor = 0;
  FP8GEMM_CUDA_CHECK(cudaGetDevice(&device));
  FP8GEMM_CUDA_CHECK(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device));
  FP8GEMM_CUDA_CHECK(cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, device));
  return {major, minor};
}

std::vector<std::uint8_t> fill_on_device(std::size_t count, std::uint64_t seed, float stddev) {
  DeviceBuffer<std::uint8_t> buf(count);
  fill_random_e4m3(buf.data(), count, seed, stddev);
  FP8GEMM_CUDA_CHECK(cudaDeviceSynchronize());
  return buf.download();
}

}  // namespace

TEST_CASE("device_fp8_decode matches fp8_decode on all 256 codes", "[gpu][fp8]") {
  std::vector<std::uint8_t> codes(256);
  for (unsigned c = 0; c < 256; ++c) codes[c] = std::uint8_t(c);
  const DeviceBuffer<std::uint8_t> d_codes(codes);
  DeviceBuffer<float> d_out(codes.size());
  for (Fp8Format f : kFormats) {
    device_fp8_decode(d_codes.data(), d_out.data(), codes.size(), int(f));
    FP8GEMM_CUDA_CHECK(cudaDeviceSynchronize());
    const std::vector<float> got = d_out.download();
    for (unsigned c = 0; c < 256; ++c) {
      INFO(name(f) << " code " << hex(c) << ": device " << got[c] << ", host "
                   << fp8_decode(std::uint8_t(c), f));
      CHECK(same(got[c], fp8_decode(std::uint8_t(c), f)));
    }
  }
}

TEST_CASE("device_fp8_encode matches fp8_encode on every code and >= 2M random floats",
          "[gpu][fp8]") {
  const std::vector<float> in = encode_inputs();
  REQUIRE(in.size() >= (std::size_t(1) << 21));
  const DeviceBuffer<float> d_in(in);
  DeviceBuffer<std::uint8_t> d_out(in.size());
  for (Fp8Format f : kFormats) {
    for (Saturation s : kSaturations) {
      device_fp8_encode(d_in.data(), d_out.data(), in.size(), int(f), int(s));
      FP8GEMM_CUDA_CHECK(cudaDeviceSynchronize());
      const std::vector<std::uint8_t> got = d_out.download();
      std::size_t mismatches = 0, first = 0;
      for (std::size_t i = 0; i < in.size(); ++i)
        if (got[i] != fp8_encode(in[i], f, s) && mismatches++ == 0) first = i;
      INFO(name(f) << " saturation " << name(s) << ": " << mismatches << " of " << in.size()
                   << " differ; first: input " << in[first] << " (bits "
                   << hex(std::bit_cast<std::uint32_t>(in[first])) << ") device "
                   << hex(got[first]) << " host " << hex(fp8_encode(in[first], f, s)));
      CHECK(mismatches == 0);
    }
  }
}

TEST_CASE("fill_random_e4m3: same seed, same bytes; plausibly N(0, stddev)", "[gpu][random]") {
  // More than the kernel's grid (8192 x 256 threads) covers in one pass, and not a multiple of
  // the block size, so the grid-stride loop and the tail both run.
  const std::size_t count = (std::size_t(1) << 22) + 3;
  const std::vector<std::uint8_t> a = fill_on_device(count, 42, 1.0f);
  CHECK(a == fill_on_device(count, 42, 1.0f));
  CHECK(a != fill_on_device(count, 43, 1.0f));
  // Counter-based: element i depends on (seed, i) only, so a shorter fill is a prefix.
  const std::vector<std::uint8_t> prefix = fill_on_device(1000, 42, 1.0f);
  CHECK(std::equal(prefix.begin(), prefix.end(), a.begin()));

  double sum = 0, sum2 = 0, max_abs = 0;
  std::size_t nan_codes = 0, zeros = 0, positive = 0, negative = 0;
  for (std::uint8_t v : a) {
    if ((v & 0x7F) == 0x7F) {
      ++nan_codes;
      continue;
    }
    const double x = e4m3_decode(v);
    sum += x;
    sum2 += x * x;
    max_abs = std::max(max_abs, std::fabs(x));
    zeros += x == 0;
    positive += x > 0;
    negative += x < 0;
  }
  const double n = double(count), mean = sum / n, var = sum2 / n - mean * mean;
  INFO("mean " << mean << ", variance " << var << ", max |x| " << max_abs << ", zeros " << zeros);
  CHECK(nan_codes == 0);
  CHECK(zeros < count / 50);  // |z| < 2^-10 (rounds to 0): probability ~8e-4
  // Standard error of the mean 1/sqrt(n) = 5e-4; e4m3 rounding (<= 1/16 relative) is symmetric.
  CHECK(std::fabs(mean) < 5e-3);
  // Rounding to e4m3 changes the variance by well under 1%.
  CHECK(std::fabs(var - 1.0) < 0.02);
  CHECK(std::fabs(double(positive) - double(negative)) < 0.01 * n);
  // Box-Muller from 24-bit uniforms cannot exceed sqrt(2 ln 2^24) = 5.77.
  CHECK(max_abs <= 6.0);
  CHECK(max_abs >= 4.0);  // and with 4M samples does reach the far tail (P(|z| > 4) = 6e-5)

  // stddev scales; values beyond 448 saturate instead of becoming NaN.
  const std::vector<std::uint8_t> wide = fill_on_device(1 << 20, 7, 200.0f);
  double wide2 = 0;
  std::size_t wide_nan = 0, saturated = 0;
  for (std::uint8_t v : wide) {
    wide_nan += (v & 0x7F) == 0x7F;
    saturated += (v & 0x7F) == 0x7E;
    const double x = e4m3_decode(v);
    wide2 += std::isnan(x) ? 0 : x * x;
  }
  CHECK(wide_nan == 0);
  // 0x7E (448) takes every |z| above the 416/448 midpoint: P(|z| > 432/200) = 3.1%.
  CHECK(saturated > wide.size() / 50);
  CHECK(saturated < wide.size() / 25);
  // Saturation at c = 448/200 = 2.24 sigma clips the tails: E[min(z^2, c^2)] =
  // P(|z| < c) - 2 c phi(c) + c^2 P(|z| > c) = 0.955. Sampling error ~0.1%, e4m3 rounding less.
  CHECK(std::sqrt(wide2 / double(wide.size())) == Approx(200.0 * std::sqrt(0.955)).epsilon(0.01));
}

TEST_CASE("poison_bf16 makes NaNs, and nothing beyond count", "[gpu][poison]") {
  DeviceBuffer<std::uint16_t> d(std::vector<std::uint16_t>(1001, 0x3F80));
  poison_bf16(d.data(), 1000);
  FP8GEMM_CUDA_CHECK(cudaDeviceSynchronize());
  const std::vector<std::uint16_t> h = d.download();
  std::size_t not_nan = 0;
  for (std::size_t i = 0; i < 1000; ++i) not_nan += !std::isnan(bf16_to_float(h[i]));
  CHECK(not_nan == 0);
  CHECK(h[1000] == 0x3F80);
}

TEST_CASE("EventTimer measures a positive time", "[gpu][timer]") {
  DeviceBuffer<std::uint8_t> buf(std::size_t(64) << 20);
  EventTimer timer;
  timer.start();
  fill_random_e4m3(buf.data(), buf.size(), 1, 1.0f);
  timer.stop();
  const float ms = timer.elapsed_ms();
  CHECK(ms > 0.0f);
  CHECK(ms < 10000.0f);
}

TEST_CASE("L2Flush allocates twice the L2 and runs", "[gpu][l2]") {
  int device = 0, l2 = 0;
  FP8GEMM_CUDA_CHECK(cudaGetDevice(&device));
  FP8GEMM_CUDA_CHECK(cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, device));
  L2Flush flush;
  CHECK(flush.bytes() == 2 * std::size_t(l2));
  CHECK(flush.bytes() > 0);
  flush.flush();
  flush.flush();
  flush.flush_clean();  // the memset, then the read pass over the second buffer
  flush.flush_clean(nullptr);
  CHECK(cudaDeviceSynchronize() == cudaSuccess);
  CHECK(cudaGetLastError() == cudaSuccess);
}

TEST_CASE("require_kernel_image", "[gpu][arch]") {
  const auto [major, minor] = compute_capability();
  INFO("device sm_" << major << minor << ": " << describe_device());
  if (major == 9 && minor == 0) {
    CHECK_NOTHROW(require_kernel_image(reinterpret_cast<const void*>(&sm90a_only_kernel),
                                       "sm90a_only_kernel", "sm_90a"));
  } else {
    // sm_90a machine code runs on sm_90 only: elsewhere the check must say so.
    CHECK_THROWS_AS(require_kernel_image(reinterpret_cast<const void*>(&sm90a_only_kernel),
                                         "sm90a_only_kernel", "sm_90a"),
                    std::runtime_error);
  }
  // Not a kernel at all: a clear std::runtime_error naming it, and no sticky error after.
  try {
    require_kernel_image(reinterpret_cast<const void*>(&compute_capability), "not_a_kernel",
                         "sm_90a");
    FAIL("require_kernel_image accepted a host function");
  } catch (const std::runtime_error& e) {
    const std::string msg = e.what();
    INFO(msg);
    CHECK(msg.find("not_a_kernel") != std::string::npos);
    CHECK(msg.find("sm_90a") != std::string::npos);
  }
  CHECK(cudaGetLastError() == cudaSuccess);
}

TEST_CASE("CUDA errors and DeviceBuffer misuse throw with a clear message", "[gpu][errors]") {
  try {
    FP8GEMM_CUDA_CHECK(cudaSetDevice(1 << 20));
    FAIL("cudaSetDevice(1 << 20) succeeded");
  } catch (const std::runtime_error& e) {
    const std::string msg = e.what();
    INFO(msg);
    CHECK(msg.find("cudaSetDevice") != std::string::npos);
    CHECK(msg.find("cudaErrorInvalidDevice") != std::string::npos);
    CHECK(msg.find("test_gpu_common.cu") != std::string::npos);
  }
  cudaGetLastError();
  DeviceBuffer<float> d(4);
  CHECK_THROWS_AS(d.upload(std::vector<float>(5)), std::invalid_argument);
  DeviceBuffer<float> moved(std::move(d));
  CHECK(moved.size() == 4);
  CHECK(d.data() == nullptr);
  CHECK(d.size() == 0);
  CHECK(cuda_device_count() >= 1);
}
