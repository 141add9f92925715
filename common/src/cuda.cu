#include <cstdio>
#include <sstream>

#include "common/cuda.hpp"
#include "common/fp8.hpp"

namespace fp8gemm {

void throw_cuda_error(cudaError_t err, const char* call, const char* file, int line) {
  // The error is reported by this exception: take it out of the runtime's last-error slot, so
  // that a later, unrelated call does not find it pending and refuse as if an earlier call had
  // failed (docs/contract.md). Until session 70 a plan whose own workspace allocation failed
  // (cudaErrorMemoryAllocation, not sticky) left it there. A sticky error (illegal address,
  // launch failure) cannot be cleared and stays: CUDA reports it to every later call.
  (void)cudaGetLastError();
  std::ostringstream s;
  s << call << " failed: " << cudaGetErrorName(err) << " (" << cudaGetErrorString(err) << ") at "
    << file << ":" << line;
  throw std::runtime_error(s.str());
}

int cuda_device_count() {
  int n = 0;
  if (cudaGetDeviceCount(&n) != cudaSuccess) {
    cudaGetLastError();  // clear the sticky "no device" error
    return 0;
  }
  return n;
}

int current_device_sm_count() {
  int device = 0, sms = 0;
  FP8GEMM_CUDA_CHECK(cudaGetDevice(&device));
  FP8GEMM_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
  return sms;
}

std::string describe_device(int device) {
  cudaDeviceProp p{};
  FP8GEMM_CUDA_CHECK(cudaGetDeviceProperties(&p, device));
  int sm_clock_khz = 0, mem_clock_khz = 0;
  FP8GEMM_CUDA_CHECK(cudaDeviceGetAttribute(&sm_clock_khz, cudaDevAttrClockRate, device));
  FP8GEMM_CUDA_CHECK(cudaDeviceGetAttribute(&mem_clock_khz, cudaDevAttrMemoryClockRate, device));
  std::ostringstream s;
  s << p.name << ", sm_" << p.major << p.minor << ", " << p.multiProcessorCount << " SMs, max SM "
    << sm_clock_khz / 1000 << " MHz, memory " << mem_clock_khz / 1000 << " MHz, L2 "
    << p.l2CacheSize / (1024 * 1024) << " MiB";
  return s.str();
}

void require_kernel_image(const void* kernel, const char* kernel_name, const char* built_for) {
  cudaFuncAttributes attr{};
  const cudaError_t err = cudaFuncGetAttributes(&attr, kernel);
  if (err == cudaSuccess) return;
  cudaGetLastError();
  int device = 0, major = 0, minor = 0;
  cudaGetDevice(&device);
  cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device);
  cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, device);
  cudaDeviceProp p{};
  cudaGetDeviceProperties(&p, device);
  std::ostringstream s;
  s << kernel_name << " was built for " << built_for << " only, but GPU " << device << " is "
    << p.name << " (sm_" << major << minor << "): " << cudaGetErrorName(err)
    << ". Run it on a GPU of that architecture, or rebuild for this one.";
  throw std::runtime_error(s.str());
}

namespace {

__device__ __forceinline__ std::uint64_t splitmix64(std::uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

__global__ void fill_random_e4m3_kernel(std::uint8_t* data, std::size_t count, std::uint64_t seed,
                                        float stddev) {
  for (std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; i < count;
       i += std::size_t(gridDim.x) * blockDim.x) {
    const std::uint64_t h = splitmix64(seed * 0x100000001B3ull ^ i);
    // Box-Muller from two 24-bit uniforms in (0, 1].
    const float u1 = (float((h >> 40) & 0xFFFFFF) + 1.0f) * (1.0f / 16777216.0f);
    const float u2 = float((h >> 8) & 0xFFFFFF) * (1.0f / 16777216.0f);
    const float z = sqrtf(-2.0f * logf(u1)) * cospif(2.0f * u2);
    data[i] = fp8_encode(z * stddev, Fp8Format::e4m3, Saturation::finite);
  }
}

__global__ void encode_kernel(const float* in, std::uint8_t* out, std::size_t count, int format,
                              int saturation) {
  const std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x;
  if (i < count)
    out[i] = fp8_encode(in[i], static_cast<Fp8Format>(format), static_cast<Saturation>(saturation));
}

__global__ void decode_kernel(const std::uint8_t* in, float* out, std::size_t count, int format) {
  const std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x;
  if (i < count) out[i] = fp8_decode(in[i], static_cast<Fp8Format>(format));
}

unsigned blocks_for(std::size_t count, unsigned threads, unsigned cap = 65535) {
  const std::size_t b = (count + threads - 1) / threads;
  return static_cast<unsigned>(b < cap ? (b == 0 ? 1 : b) : cap);
}

}  // namespace

void fill_random_e4m3(std::uint8_t* data, std::size_t count, std::uint64_t seed, float stddev,
                      cudaStream_t stream) {
  if (count == 0) return;
  fill_random_e4m3_kernel<<<blocks_for(count, 256, 8192), 256, 0, stream>>>(data, count, seed,
                                                                            stddev);
  FP8GEMM_CUDA_CHECK(cudaGetLastError());
}

namespace {
__global__ void spin_kernel(unsigned long long nanoseconds) {
  unsigned long long start, now;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(start));
  do {
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
  } while (now - start < nanoseconds);
}
}  // namespace

void gpu_delay(double microseconds, cudaStream_t stream) {
  if (microseconds <= 0) return;
  spin_kernel<<<1, 1, 0, stream>>>(static_cast<unsigned long long>(microseconds * 1e3));
  FP8GEMM_CUDA_CHECK(cudaGetLastError());
}

void poison_bf16(void* data, std::size_t count, cudaStream_t stream) {
  FP8GEMM_CUDA_CHECK(cudaMemsetAsync(data, 0xFF, count * 2, stream));
}

void device_fp8_encode(const float* in, std::uint8_t* out, std::size_t count, int format,
                       int saturation, cudaStream_t stream) {
  if (count == 0) return;
  encode_kernel<<<static_cast<unsigned>((count + 255) / 256), 256, 0, stream>>>(in, out, count,
                                                                                format, saturation);
  FP8GEMM_CUDA_CHECK(cudaGetLastError());
}

void device_fp8_decode(const std::uint8_t* in, float* out, std::size_t count, int format,
                       cudaStream_t stream) {
  if (count == 0) return;
  decode_kernel<<<static_cast<unsigned>((count + 255) / 256), 256, 0, stream>>>(in, out, count,
                                                                                format);
  FP8GEMM_CUDA_CHECK(cudaGetLastError());
}

EventTimer::EventTimer() {
  FP8GEMM_CUDA_CHECK(cudaEventCreate(&start_));
  FP8GEMM_CUDA_CHECK(cudaEventCreate(&stop_));
}
EventTimer::~EventTimer() {
  cudaEventDestroy(start_);
  cudaEventDestroy(stop_);
}
void EventTimer::start(cudaStream_t stream) { FP8GEMM_CUDA_CHECK(cudaEventRecord(start_, stream)); }
void EventTimer::stop(cudaStream_t stream) { FP8GEMM_CUDA_CHECK(cudaEventRecord(stop_, stream)); }
float EventTimer::elapsed_ms() {
  FP8GEMM_CUDA_CHECK(cudaEventSynchronize(stop_));
  float ms = 0;
  FP8GEMM_CUDA_CHECK(cudaEventElapsedTime(&ms, start_, stop_));
  return ms;
}

namespace {
/// Reads `n` 16-byte words (grid-stride) so that they pass through L2; the zeros read never
/// match the sentinel, and the conditional store keeps the loads from being removed.
__global__ void read_through_kernel(const uint4* __restrict__ p, std::size_t n,
                                    unsigned* __restrict__ sink) {
  unsigned x = 0;
  for (std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; i < n;
       i += std::size_t(gridDim.x) * blockDim.x) {
    const uint4 v = p[i];
    x ^= v.x ^ v.y ^ v.z ^ v.w;
  }
  if (x == 0x9e3779b9u) *sink = x;
}
}  // namespace

L2Flush::L2Flush() {
  int device = 0, l2 = 0;
  FP8GEMM_CUDA_CHECK(cudaGetDevice(&device));
  FP8GEMM_CUDA_CHECK(cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, device));
  buffer_ = DeviceBuffer<std::uint8_t>(std::size_t(l2) * 2);
  clean_ = DeviceBuffer<std::uint8_t>(std::size_t(l2) * 2);
  FP8GEMM_CUDA_CHECK(cudaMemset(clean_.data(), 0, clean_.bytes()));
  FP8GEMM_CUDA_CHECK(cudaDeviceSynchronize());
  read_blocks_ = unsigned(current_device_sm_count()) * 4;
}
void L2Flush::flush(cudaStream_t stream) {
  FP8GEMM_CUDA_CHECK(cudaMemsetAsync(buffer_.data(), 0, buffer_.bytes(), stream));
}
void L2Flush::flush_clean(cudaStream_t stream) {
  flush(stream);
  read_through_kernel<<<read_blocks_, 512, 0, stream>>>(
      reinterpret_cast<const uint4*>(clean_.data()), clean_.bytes() / 16,
      reinterpret_cast<unsigned*>(buffer_.data()));
  FP8GEMM_CUDA_CHECK(cudaGetLastError());
}

}  // namespace fp8gemm
