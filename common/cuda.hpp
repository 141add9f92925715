// CUDA helpers shared by every chapter: error checks that throw, RAII device buffers, random fill
// and NaN poisoning on the device, an event timer, an L2 flush and an architecture check.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace fp8gemm {

/// Throws std::runtime_error("<call> failed: <error name> (<message>) at <file>:<line>"), after
/// clearing the runtime's last error (cudaGetLastError): the exception reports it, so it is not
/// left pending for a later call to take for an earlier one's (a sticky error stays: CUDA keeps
/// it).
[[noreturn]] void throw_cuda_error(cudaError_t err, const char* call, const char* file, int line);

/// Checks a CUDA runtime call; throws std::runtime_error naming the call, file and line.
#define FP8GEMM_CUDA_CHECK(call)                                                      \
  do {                                                                                \
    const cudaError_t fp8gemm_err_ = (call);                                          \
    if (fp8gemm_err_ != cudaSuccess)                                                  \
      ::fp8gemm::throw_cuda_error(fp8gemm_err_, #call, __FILE__, __LINE__);           \
  } while (0)

/// Number of CUDA devices, 0 when there is no GPU or no driver (never throws).
int cuda_device_count();

/// SMs of the current device (cudaGetDevice, then its multiprocessor count); throws on a CUDA
/// error. What persistent grids and the plans' per-shape choices are sized by.
int current_device_sm_count();

/// A one-line description of device 0: name, SM count, compute capability, clocks.
std::string describe_device(int device = 0);

/// Throws std::runtime_error with a clear message unless `kernel` has machine code for the
/// current device (e.g. an sm_90a kernel on a non-Hopper GPU): names the kernel, the target it
/// was built for and the GPU found. `built_for` is e.g. "sm_90a".
void require_kernel_image(const void* kernel, const char* kernel_name, const char* built_for);

/// Owning device allocation of `count` elements of T. Move-only.
template <class T>
class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  explicit DeviceBuffer(std::size_t count) : count_(count) {
    if (count_ > 0) FP8GEMM_CUDA_CHECK(cudaMalloc(reinterpret_cast<void**>(&ptr_), bytes()));
  }
  explicit DeviceBuffer(const std::vector<T>& host) : DeviceBuffer(host.size()) { upload(host); }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  DeviceBuffer(DeviceBuffer&& o) noexcept
      : ptr_(std::exchange(o.ptr_, nullptr)), count_(std::exchange(o.count_, 0)) {}
  DeviceBuffer& operator=(DeviceBuffer&& o) noexcept {
    if (this != &o) {
      reset();
      ptr_ = std::exchange(o.ptr_, nullptr);
      count_ = std::exchange(o.count_, 0);
    }
    return *this;
  }
  ~DeviceBuffer() { reset(); }

  T* data() const { return ptr_; }
  std::size_t size() const { return count_; }
  std::size_t bytes() const { return count_ * sizeof(T); }

  void upload(const std::vector<T>& host) {
    if (host.size() != count_)
      throw std::invalid_argument("DeviceBuffer::upload: host vector has " +
                                  std::to_string(host.size()) + " elements, buffer " +
                                  std::to_string(count_));
    if (count_ > 0)
      FP8GEMM_CUDA_CHECK(cudaMemcpy(ptr_, host.data(), bytes(), cudaMemcpyHostToDevice));
  }
  std::vector<T> download() const {
    std::vector<T> host(count_);
    if (count_ > 0)
      FP8GEMM_CUDA_CHECK(cudaMemcpy(host.data(), ptr_, bytes(), cudaMemcpyDeviceToHost));
    return host;
  }

 private:
  void reset() noexcept {
    if (ptr_) cudaFree(ptr_);  // no throw from a destructor; a failed free is not recoverable
    ptr_ = nullptr;
    count_ = 0;
  }
  T* ptr_ = nullptr;
  std::size_t count_ = 0;
};

/// Fills `count` bytes with random e4m3 values (N(0, stddev) encoded with saturation) from a
/// counter-based hash of (seed, index): the same seed gives the same data on any GPU. Never zeros
/// throughout; individual zero entries are rare but possible.
void fill_random_e4m3(std::uint8_t* data, std::size_t count, std::uint64_t seed, float stddev,
                      cudaStream_t stream = nullptr);

/// Sets every bf16 of `count` to NaN (0xFFFF), so unwritten outputs show up as NaN.
void poison_bf16(void* data, std::size_t count, cudaStream_t stream = nullptr);

/// Keeps the GPU busy on `stream` for `microseconds` (one thread spinning on the global timer):
/// the benchmark harness's --gpu_delay_us, so that host work after it (a Python peer's call
/// overhead) cannot land between the timing events. Throws std::runtime_error if the launch fails.
void gpu_delay(double microseconds, cudaStream_t stream = nullptr);

/// Device-side conversions with the common/fp8.hpp code (for testing host/device agreement):
/// out[i] = fp8_encode(in[i], format, saturation).
void device_fp8_encode(const float* in, std::uint8_t* out, std::size_t count, int format,
                       int saturation, cudaStream_t stream = nullptr);
/// out[i] = fp8_decode(in[i], format).
void device_fp8_decode(const std::uint8_t* in, float* out, std::size_t count, int format,
                       cudaStream_t stream = nullptr);

/// CUDA-event timer for one region on one stream.
class EventTimer {
 public:
  EventTimer();
  ~EventTimer();
  EventTimer(const EventTimer&) = delete;
  EventTimer& operator=(const EventTimer&) = delete;
  void start(cudaStream_t stream = nullptr);
  void stop(cudaStream_t stream = nullptr);
  /// Milliseconds between start and stop (synchronises on the stop event).
  float elapsed_ms();

 private:
  cudaEvent_t start_ = nullptr, stop_ = nullptr;
};

/// Evicts the L2 cache between timed runs by writing a buffer twice its size.
class L2Flush {
 public:
  L2Flush();
  /// cudaMemsetAsync over the buffer: L2 is left full of the buffer's dirty lines, which the next
  /// kernel's misses write back to DRAM as they evict them (~L2 size of extra DRAM writes inside
  /// a memory-bound kernel's timed region: docs/measuring.md, "The flush's dirty lines").
  void flush(cudaStream_t stream = nullptr);
  /// flush(), then a read of a second buffer of twice the L2 size: the dirty lines are written
  /// back here, outside the timed region, and L2 is left holding clean lines that the next kernel
  /// evicts for free. Cold L2 either way.
  void flush_clean(cudaStream_t stream = nullptr);
  std::size_t bytes() const { return buffer_.bytes(); }

 private:
  DeviceBuffer<std::uint8_t> buffer_;
  DeviceBuffer<std::uint8_t> clean_;  ///< read by flush_clean (zeros)
  unsigned read_blocks_ = 0;          ///< flush_clean's grid: 4 blocks per SM
};

}  // namespace fp8gemm
