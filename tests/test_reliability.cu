// GPU tests of the reliability rule (docs/contract.md) for every chapter 1-5:
//   a call that requirements() accepts runs correctly; a call it refuses throws
//   std::invalid_argument naming the argument before any GPU work; nothing leaves a sticky CUDA
//   error.
// Each test case prints what it checks, then one line per chapter. Tags:
//   [refused]   calls that must be refused without touching the GPU (misaligned D, host memory,
//               pinned memory, short allocations, overlap, another device's memory); each ends
//               with no CUDA error pending and a correct call. scripts/gpu_loop.sh runs these
//               (with [offsets]) under compute-sanitizer memcheck: no access may show.
//   [offsets]   D at every even byte offset 0..14: correct, nothing written outside D.
//   [managed]   cudaMallocManaged operands: correct.
//   [scales]    scales whose FP32 product overflows or is subnormal, zero, negative, Inf, NaN.
//   [stream]    a non-blocking stream: correct, and the kernel really waits for that stream.
//   [exact]     small-integer operands: D is the exact integer product where bf16 holds it.
//   [pending]   an earlier, unrelated CUDA error is reported as such, not as the launch's.
//   [devices]   every GPU of the machine (kernel preparation is per device).
// Two threads making their first calls at once: test_reliability_threads.cu (its own process).
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <limits>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "catch.hpp"
#include "chapters/01_naive/naive.cuh"
#include "chapters/02_smem_tiling/smem_tiling.cuh"
#include "chapters/03_mma_sync/mma_sync.cuh"
#include "chapters/04_tma/tma.cuh"
#include "chapters/05_wgmma/wgmma.cuh"
#include "chapters/06_warp_specialization/ws_gemm.hpp"
#include "common/check.hpp"
#include "common/cuda.hpp"
#include "common/launch.hpp"
#include "pending_error.hpp"

namespace {

using fp8gemm::CheckOperands;
using fp8gemm::CheckOptions;
using fp8gemm::CheckResult;
using fp8gemm::PerTensorGemm;

struct Chapter {
  const char* name;
  fp8gemm::PerTensorKernel kernel;
  fp8gemm::GemmRequirements (*requirements)();
};

const std::vector<Chapter>& chapters() {
  static const std::vector<Chapter> list = {
      {"ch01_naive", fp8gemm::ch01::gemm, fp8gemm::ch01::requirements},
      {"ch02_smem_tiling", fp8gemm::ch02::gemm, fp8gemm::ch02::requirements},
      {"ch03_mma_sync", fp8gemm::ch03::gemm, fp8gemm::ch03::requirements},
      {"ch04_tma", fp8gemm::ch04::gemm, fp8gemm::ch04::requirements},
      {"ch05_wgmma", fp8gemm::ch05::gemm, fp8gemm::ch05::requirements},
      // Chapter 6's entry point in both accumulation modes (the plan per call: ch06::gemm).
      {"ch06_warp_specialization", fp8gemm::ch06::gemm, fp8gemm::ch06::requirements},
      {"ch06_warp_specialization", fp8gemm::ch06::gemm_fast, fp8gemm::ch06::requirements},
  };
  return list;
}

// The default shape: tails in M and N for every chapter's tile, K a multiple of 16 (every chapter
// takes it) but not of 128, N even (the case where chapter 5's bf16 pair stores faulted).
constexpr std::int64_t kM = 130, kN = 258, kK = 160;

void say(const char* what) { std::printf("\n== %s\n", what); }

std::string shape(std::int64_t M, std::int64_t N, std::int64_t K) {
  return std::to_string(M) + "x" + std::to_string(N) + "x" + std::to_string(K);
}

/// check_per_tensor, printed and required ok().
CheckResult require_correct(const Chapter& c, std::int64_t M, std::int64_t N, std::int64_t K,
                            const CheckOptions& opt, const std::string& label) {
  const CheckResult r = fp8gemm::check_per_tensor(c.kernel, M, N, K, opt);
  std::printf("  %-17s %-14s %-28s %s  %s\n", c.name, shape(M, N, K).c_str(), label.c_str(),
              r.ok() ? "ok  " : "FAIL", r.describe().c_str());
  INFO(c.name << " " << shape(M, N, K) << " " << label << ": " << r.describe());
  CHECK(r.ok());
  return r;
}

/// The CUDA error state must be clean: nothing pending, nothing sticky.
void require_no_cuda_error(const Chapter& c) {
  const cudaError_t pending = cudaPeekAtLastError();
  INFO(c.name << ": pending CUDA error " << cudaGetErrorName(pending));
  CHECK(pending == cudaSuccess);
  const cudaError_t sync = cudaDeviceSynchronize();
  INFO(c.name << ": cudaDeviceSynchronize " << cudaGetErrorName(sync));
  CHECK(sync == cudaSuccess);
}

/// D's entries that no longer hold CheckOperands' default poison (0xFFFF, NaN): what a launch wrote.
std::int64_t entries_written(const CheckOperands& ops) {
  std::int64_t written = 0;
  for (std::uint16_t v : ops.download_d()) written += v != 0xFFFF;
  return written;
}

/// Memory a refused call must leave as it was: device memory or pinned host memory (read with
/// cudaMemcpyDefault), e.g. the buffer a call's D was pointed at instead of the operands' own.
struct Region {
  const void* ptr = nullptr;
  std::size_t bytes = 0;
};
std::vector<std::uint8_t> read_region(const Region& r) {
  std::vector<std::uint8_t> out(r.bytes);
  FP8GEMM_CUDA_CHECK(cudaMemcpy(out.data(), r.ptr, r.bytes, cudaMemcpyDefault));
  return out;
}

/// `call` must throw std::invalid_argument whose message holds the chapter's name and every one of
/// `parts`, and leave no CUDA error behind. With `untouched` (the operands the call was built
/// from), their D is poisoned first and must still be all poison afterwards; every one of
/// `regions` must hold the same bytes afterwards as before: the refusal came before any launch
/// that could have written them.
void require_refused(const Chapter& c, const std::function<void()>& call,
                     std::vector<std::string> parts, const std::string& label,
                     const CheckOperands* untouched = nullptr,
                     const std::vector<Region>& regions = {}) {
  if (untouched) untouched->poison_d(nullptr);
  FP8GEMM_CUDA_CHECK(cudaDeviceSynchronize());
  std::vector<std::vector<std::uint8_t>> before;
  for (const Region& r : regions) before.push_back(read_region(r));
  parts.push_back(std::string("fp8gemm::") + c.name);
  std::string message, other;
  bool refused = false;
  try {
    call();
  } catch (const std::invalid_argument& e) {
    refused = true;
    message = e.what();
  } catch (const std::exception& e) {
    other = e.what();
  }
  std::printf("  %-17s %-34s %s  %s\n", c.name, label.c_str(), refused ? "refused" : "NOT REFUSED",
              refused ? message.c_str() : other.c_str());
  INFO(c.name << " " << label << ": message '" << message << "', other exception '" << other
              << "'");
  REQUIRE(refused);
  for (const auto& p : parts) {
    // "x|y": either x or y (a call can be refused for more than one good reason).
    INFO("expected in the message: " << p);
    bool found = false;
    for (std::size_t b = 0; b <= p.size();) {
      const std::size_t e = std::min(p.find('|', b), p.size());
      found |= message.find(p.substr(b, e - b)) != std::string::npos;
      b = e + 1;
    }
    CHECK(found);
  }
  require_no_cuda_error(c);
  if (untouched) {
    INFO(c.name << " " << label << ": entries of D written by a refused call");
    CHECK(entries_written(*untouched) == 0);
  }
  for (std::size_t i = 0; i < regions.size(); ++i) {
    INFO(c.name << " " << label << ": region " << i << " (" << regions[i].bytes
                << " bytes) changed by a refused call");
    CHECK(read_region(regions[i]) == before[i]);
  }
}

/// After refused calls: a correct call on fresh operands still works.
void require_still_works(const Chapter& c) {
  CheckOptions opt;
  opt.seed = 7;
  require_correct(c, kM, kN, kK, opt, "correct call afterwards");
  require_no_cuda_error(c);
}

/// One operand of a call, by name, for the tests that swap a single pointer.
enum class Operand { A, B, D, scale_a, scale_b };
const Operand kOperands[] = {Operand::A, Operand::B, Operand::D, Operand::scale_a,
                             Operand::scale_b};
const char* name(Operand o) {
  switch (o) {
    case Operand::A: return "A";
    case Operand::B: return "B";
    case Operand::D: return "D";
    case Operand::scale_a: return "scale_a";
    case Operand::scale_b: return "scale_b";
  }
  return "?";
}
/// Bytes the kernel touches through that operand.
std::size_t bytes_of(Operand o, const PerTensorGemm& g) {
  const fp8gemm::GemmExtents e = fp8gemm::gemm_extents(g.args());
  switch (o) {
    case Operand::A: return e.a;
    case Operand::B: return e.b;
    case Operand::D: return e.d;
    case Operand::scale_a: return e.scale_a;
    case Operand::scale_b: return e.scale_b;
  }
  return 0;
}
PerTensorGemm with(PerTensorGemm g, Operand o, void* p) {
  switch (o) {
    case Operand::A: g.A = static_cast<const std::uint8_t*>(p); break;
    case Operand::B: g.B = static_cast<const std::uint8_t*>(p); break;
    case Operand::D: g.D = static_cast<std::uint16_t*>(p); break;
    case Operand::scale_a: g.scale_a = static_cast<const float*>(p); break;
    case Operand::scale_b: g.scale_b = static_cast<const float*>(p); break;
  }
  return g;
}

/// Host memory of `bytes`, 256-byte aligned (so only its kind can be wrong), zeroed.
struct HostMemory {
  explicit HostMemory(std::size_t bytes) : size((bytes + 255) / 256 * 256) {
    ptr = std::aligned_alloc(256, size);
    REQUIRE(ptr != nullptr);
    std::memset(ptr, 0, size);
  }
  ~HostMemory() { std::free(ptr); }
  HostMemory(const HostMemory&) = delete;
  HostMemory& operator=(const HostMemory&) = delete;
  void* ptr = nullptr;
  std::size_t size = 0;
};

/// Holds a stream back: a host function enqueued on it spins until open() (or 20 s pass).
class StreamGate {
 public:
  explicit StreamGate(cudaStream_t stream) : stream_(stream) {
    FP8GEMM_CUDA_CHECK(cudaLaunchHostFunc(stream, &StreamGate::wait, this));
  }
  ~StreamGate() {  // the host function must be done with *this
    open();
    cudaStreamSynchronize(stream_);
  }
  StreamGate(const StreamGate&) = delete;
  StreamGate& operator=(const StreamGate&) = delete;
  void open() { open_.store(true); }

 private:
  static void CUDART_CB wait(void* self) {
    auto* gate = static_cast<StreamGate*>(self);
    const auto start = std::chrono::steady_clock::now();
    while (!gate->open_.load() && std::chrono::steady_clock::now() - start < std::chrono::seconds(20))
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  cudaStream_t stream_;
  std::atomic<bool> open_{false};
};

bool is_nan(std::uint16_t v) { return (v & 0x7FFF) > 0x7F80; }
bool is_zero(std::uint16_t v) { return (v & 0x7FFF) == 0; }

}  // namespace

// ================================ refused calls =====================================================

TEST_CASE("D at an odd byte offset is refused by every chapter, naming D, with no CUDA error left",
          "[gpu][refused][misaligned]") {
  say("D at byte offsets 1, 3, ..., 15 (not 2-byte aligned): std::invalid_argument naming D, "
      "before any GPU work; no sticky error (a bf16 store there would fault)");
  for (const Chapter& c : chapters()) {
    for (std::int64_t N : {kN, kN - 1}) {
      for (std::size_t offset = 1; offset < 16; offset += 2) {
        CheckOptions opt;
        opt.d_byte_offset = offset;
        require_refused(
            c, [&] { fp8gemm::check_per_tensor(c.kernel, kM, N, kK, opt); },
            {"D = ", "must be 2-byte aligned"},
            "N = " + std::to_string(N) + ", D offset " + std::to_string(offset));
      }
    }
    require_still_works(c);
  }
}

TEST_CASE("host memory (malloc) for A, B, D, scale_a or scale_b is refused, naming the argument",
          "[gpu][refused][host]") {
  say("each operand in turn replaced by malloc memory (256-byte aligned, large enough): "
      "std::invalid_argument naming it; the GPU would fault on it (cudaErrorIllegalAddress)");
  for (const Chapter& c : chapters()) {
    const CheckOperands ops(kM, kN, kK, CheckOptions{});
    for (Operand o : kOperands) {
      HostMemory host(bytes_of(o, ops.gemm()));
      const PerTensorGemm g = with(ops.gemm(), o, host.ptr);
      require_refused(c, [&] { c.kernel(g, nullptr); },
                      {std::string(name(o)) + " = ", "is host memory"},
                      std::string(name(o)) + " from malloc", &ops);
    }
    require_still_works(c);
  }
}

TEST_CASE("pinned host memory (cudaMallocHost, cudaHostRegister) is refused, naming the argument",
          "[gpu][refused][pinned]") {
  say("each operand in turn replaced by cudaMallocHost memory, then A by cudaHostRegister'ed "
      "malloc memory: std::invalid_argument naming it (kernels would read it over PCIe; TMA over "
      "host memory is not supported here: copy it to the device)");
  for (const Chapter& c : chapters()) {
    const CheckOperands ops(kM, kN, kK, CheckOptions{});
    for (Operand o : kOperands) {
      void* pinned = nullptr;
      const std::size_t bytes = bytes_of(o, ops.gemm());
      FP8GEMM_CUDA_CHECK(cudaMallocHost(&pinned, bytes));
      // Pinned memory is what a kernel could write without faulting: for D it must stay as it
      // was (poison); for the inputs, the operands' own D must.
      std::memset(pinned, 0xFF, bytes);
      const PerTensorGemm g = with(ops.gemm(), o, pinned);
      require_refused(c, [&] { c.kernel(g, nullptr); },
                      {std::string(name(o)) + " = ", "pinned host memory"},
                      std::string(name(o)) + " from cudaMallocHost", &ops, {{pinned, bytes}});
      FP8GEMM_CUDA_CHECK(cudaFreeHost(pinned));
    }
    HostMemory host(bytes_of(Operand::A, ops.gemm()));
    FP8GEMM_CUDA_CHECK(cudaHostRegister(host.ptr, host.size, cudaHostRegisterDefault));
    const PerTensorGemm g = with(ops.gemm(), Operand::A, host.ptr);
    require_refused(c, [&] { c.kernel(g, nullptr); }, {"A = ", "pinned host memory"},
                    "A from cudaHostRegister", &ops);
    FP8GEMM_CUDA_CHECK(cudaHostUnregister(host.ptr));
    require_still_works(c);
  }
}

TEST_CASE("allocations shorter than the operand are refused, naming the argument",
          "[gpu][refused][extent]") {
  say("2048^3: A, B (4 MiB each) and D (8 MiB) in turn pointed at a 1 MiB allocation, and at the "
      "last half of a right-sized one: std::invalid_argument naming it (the kernel would read or "
      "write past the allocation)");
  const std::int64_t M = 2048, N = 2048, K = 2048;
  const fp8gemm::DeviceBuffer<std::uint8_t> short_buffer(std::size_t(1) << 20);
  const fp8gemm::PointerInfo info = fp8gemm::query_pointer(short_buffer.data());
  std::printf("  the driver reports a 1 MiB cudaMalloc as %zu bytes at offset %lld\n",
              info.alloc_bytes,
              static_cast<long long>(reinterpret_cast<std::uintptr_t>(short_buffer.data()) -
                                     info.alloc_begin));
  for (const Chapter& c : chapters()) {
    const CheckOperands ops(M, N, K, CheckOptions{});
    for (Operand o : {Operand::A, Operand::B, Operand::D}) {
      // The operands' D (A, B) or the buffer D was pointed at must be as it was afterwards.
      FP8GEMM_CUDA_CHECK(cudaMemset(short_buffer.data(), 0xFF, short_buffer.size()));
      const PerTensorGemm g = with(ops.gemm(), o, short_buffer.data());
      // D (8 MiB) reaching past a 1 MiB allocation may run over another operand's allocation:
      // then the overlap check (pure validation, first) refuses it, also naming D.
      require_refused(c, [&] { c.kernel(g, nullptr); },
                      {std::string(name(o)) + " = |" + name(o) + " (bytes",
                       o == Operand::D ? "bytes left in its allocation|overlaps"
                                       : "bytes left in its allocation"},
                      std::string(name(o)) + " in a 1 MiB allocation", &ops,
                      {{short_buffer.data(), short_buffer.size()}});
      const std::size_t need = bytes_of(o, ops.gemm());
      const fp8gemm::DeviceBuffer<std::uint8_t> right(need);
      FP8GEMM_CUDA_CHECK(cudaMemset(right.data(), 0xFF, need));
      const PerTensorGemm tail = with(ops.gemm(), o, right.data() + need / 2);
      require_refused(c, [&] { c.kernel(tail, nullptr); },
                      {std::string(name(o)) + " = ", "bytes left in its allocation"},
                      std::string(name(o)) + " at the middle of its allocation", &ops,
                      {{right.data(), need}});
    }
    require_still_works(c);
  }
}

TEST_CASE("D overlapping A, B or a scale in part is refused, naming both", "[gpu][refused][overlap]") {
  say("D placed so that its bytes partly overlap A (both ends), B, scale_a: std::invalid_argument "
      "naming D and the other operand");
  for (const Chapter& c : chapters()) {
    const CheckOperands ops(kM, kN, kK, CheckOptions{});
    const PerTensorGemm base = ops.gemm();
    const fp8gemm::GemmExtents e = fp8gemm::gemm_extents(base.args());
    // One allocation holding A and, overlapping its second half, D.
    const fp8gemm::DeviceBuffer<std::uint8_t> shared(e.a + e.d + 64);
    fp8gemm::fill_random_e4m3(shared.data(), shared.size(), 4242, 1.0f);  // a launch changes them
    // Whatever D pointed at must be as it was: the shared allocation, B (and past it).
    const Region all_shared{shared.data(), shared.size()};
    PerTensorGemm g = base;
    g.A = shared.data();
    g.D = reinterpret_cast<std::uint16_t*>(shared.data() + (e.a / 2) / 16 * 16);
    require_refused(c, [&] { c.kernel(g, nullptr); }, {"D (bytes [", "overlaps A"},
                    "D starting inside A", nullptr, {all_shared});
    g.A = shared.data() + (e.d - 16) / 16 * 16;  // A starts 16 to 31 bytes before D ends
    g.D = reinterpret_cast<std::uint16_t*>(shared.data());
    require_refused(c, [&] { c.kernel(g, nullptr); }, {"overlaps A"}, "D ending inside A",
                    nullptr, {all_shared});
    g = base;
    g.D = reinterpret_cast<std::uint16_t*>(const_cast<std::uint8_t*>(base.B) + 64);
    require_refused(c, [&] { c.kernel(g, nullptr); }, {"overlaps B"}, "D inside B", &ops,
                    {{base.B, e.b}});
    // scale_a inside D's range (in D's own allocation, at its last 4 bytes).
    g = base;
    g.scale_a = reinterpret_cast<const float*>(reinterpret_cast<const std::uint8_t*>(base.D) +
                                               (e.d - 4) / 4 * 4);
    require_refused(c, [&] { c.kernel(g, nullptr); }, {"overlaps scale_a"}, "scale_a inside D",
                    &ops);
    require_still_works(c);
  }
}

TEST_CASE("memory of another device is refused", "[gpu][refused][other-device]") {
  say("A allocated on device 1, the call made on device 0: std::invalid_argument naming A "
      "(needs two GPUs; skipped with one)");
  const int devices = fp8gemm::cuda_device_count();
  if (devices < 2) {
    std::printf("  only %d GPU: nothing to check\n", devices);
    return;
  }
  for (const Chapter& c : chapters()) {
    FP8GEMM_CUDA_CHECK(cudaSetDevice(0));
    const CheckOperands ops(kM, kN, kK, CheckOptions{});
    {
      FP8GEMM_CUDA_CHECK(cudaSetDevice(1));
      fp8gemm::DeviceBuffer<std::uint8_t> elsewhere(bytes_of(Operand::A, ops.gemm()));
      FP8GEMM_CUDA_CHECK(cudaSetDevice(0));
      const PerTensorGemm g = with(ops.gemm(), Operand::A, elsewhere.data());
      require_refused(c, [&] { c.kernel(g, nullptr); }, {"A = ", "memory of device 1"},
                      "A on device 1", &ops);
      FP8GEMM_CUDA_CHECK(cudaSetDevice(1));  // freed by its own device
    }
    FP8GEMM_CUDA_CHECK(cudaSetDevice(0));
    require_still_works(c);
  }
}

// ================================ accepted calls ====================================================

TEST_CASE("D at every even byte offset 0..14 gives a correct D and writes nothing outside it",
          "[gpu][offsets]") {
  say("D 2-byte aligned but at offsets 0, 2, ..., 14 into its buffer, N even and odd: correct "
      "against the float64 reference (global and per-tile), the 16 guard bytes on each side "
      "untouched");
  for (const Chapter& c : chapters()) {
    for (std::int64_t N : {kN, kN - 1}) {
      for (std::size_t offset = 0; offset < 16; offset += 2) {
        CheckOptions opt;
        opt.seed = 100 + offset;
        opt.d_byte_offset = offset;
        require_correct(c, kM, N, kK, opt, "D offset " + std::to_string(offset));
      }
    }
    // A whole-tile shape too, where chapter 5 takes its interior (unchecked) store path.
    for (std::size_t offset : {0, 2, 4, 6}) {
      CheckOptions opt;
      opt.seed = 200 + offset;
      opt.d_byte_offset = offset;
      require_correct(c, 256, 512, 256, opt, "D offset " + std::to_string(offset));
    }
  }
}

TEST_CASE("managed memory (cudaMallocManaged) for every operand gives a correct D",
          "[gpu][managed]") {
  say("A, B, D and both scales in cudaMallocManaged memory: accepted (the driver migrates it) "
      "and correct");
  for (const Chapter& c : chapters()) {
    CheckOptions opt;
    opt.seed = 31;
    opt.memory = fp8gemm::OperandMemory::managed;
    require_correct(c, kM, kN, kK, opt, "managed");
    opt.d_byte_offset = 2;
    require_correct(c, 300, 512, 256, opt, "managed, D offset 2");
  }
}

TEST_CASE("scales whose FP32 product overflows or is subnormal; zero and negative scales",
          "[gpu][scales]") {
  say("scale_a = 1e30, scale_b = 1e10 (product 1e40 overflows FP32) with row 5 of A all zeros and "
      "small operands (|D| < 1e38): row 5 exactly 0, every other entry the float64 product times "
      "the exact 1e40; scale_a = 3e-30, scale_b = 7e-11 (product subnormal in FP32) on large "
      "operands; scale_a = -1.5; scale_a = 0 (D all zeros)");
  for (const Chapter& c : chapters()) {
    CheckOptions opt;
    opt.seed = 41;
    opt.scale_a = 1e30f;
    opt.scale_b = 1e10f;
    opt.stddev = 0.01f;  // |acc| ~ 1e-3: |D| ~ 1e37, finite in bf16 (max 3.4e38)
    opt.zero_row_a = 5;
    const CheckResult big = require_correct(c, kM, kN, kK, opt, "1e30 x 1e10, zero row 5");
    std::int64_t row5_nonzero = 0;
    for (std::int64_t n = 0; n < kN; ++n) row5_nonzero += !is_zero(big.d[std::size_t(5 * kN + n)]);
    INFO(c.name << ": entries of row 5 that are not 0: " << row5_nonzero);
    CHECK(row5_nonzero == 0);

    opt = CheckOptions{};
    opt.seed = 42;
    opt.scale_a = 3e-30f;
    opt.scale_b = 7e-11f;  // 2.1e-40: an FP32 subnormal
    opt.stddev = 64.0f;    // |acc| ~ 5e4: |D| ~ 1e-35, a normal float
    require_correct(c, kM, kN, kK, opt, "3e-30 x 7e-11");

    opt = CheckOptions{};
    opt.seed = 43;
    opt.scale_a = -1.5f;
    require_correct(c, kM, kN, kK, opt, "scale_a = -1.5");

    opt.scale_a = 0.0f;
    const CheckResult zero = require_correct(c, kM, kN, kK, opt, "scale_a = 0");
    std::int64_t nonzero = 0;
    for (std::uint16_t v : zero.d) nonzero += !is_zero(v);
    CHECK(nonzero == 0);
  }
}

TEST_CASE("Inf and NaN scales propagate as IEEE arithmetic on the exact product would",
          "[gpu][scales]") {
  say("docs/fp8_numerics.md, Scales: a NaN scale gives NaN everywhere; an Inf scale gives "
      "+-Inf (sign of acc * scale) where acc != 0 and NaN where acc == 0 (row 3 of A is zero); "
      "Inf x 0 is NaN everywhere. acc's sign and zeros come from the same kernel with scales 1");
  const float inf = std::numeric_limits<float>::infinity();
  const float nan = std::numeric_limits<float>::quiet_NaN();
  for (const Chapter& c : chapters()) {
    CheckOptions opt;
    opt.seed = 51;
    opt.zero_row_a = 3;
    opt.scale_a = 1.0f;
    opt.scale_b = 1.0f;
    const CheckResult one = require_correct(c, kM, kN, kK, opt, "scales 1 (the signs)");
    struct Case {
      float sa, sb;
      const char* label;
    };
    const Case cases[] = {{nan, 1.0f, "scale_a = NaN"}, {1.0f, nan, "scale_b = NaN"},
                          {inf, 1.0f, "scale_a = +Inf"}, {1.0f, -inf, "scale_b = -Inf"},
                          {inf, 0.0f, "Inf x 0"}};
    for (const Case& k : cases) {
      opt.scale_a = k.sa;
      opt.scale_b = k.sb;
      // The expected entries are NaN or +-Inf: D starts finite (bf16 0x3F3F), not NaN, so a call
      // that writes nothing (an early exit on a non-finite scale) fails.
      opt.d_poison_byte = 0x3F;
      const CheckResult r = fp8gemm::check_per_tensor(c.kernel, kM, kN, kK, opt);
      const double s = double(k.sa) * double(k.sb);  // NaN, +-Inf
      std::int64_t wrong = 0;
      for (std::size_t i = 0; i < r.d.size(); ++i) {
        const double acc_sign = is_zero(one.d[i]) ? 0.0 : (one.d[i] & 0x8000 ? -1.0 : 1.0);
        const double want = acc_sign * s;  // 0 * Inf = NaN, as IEEE says
        const std::uint16_t got = r.d[i];
        if (std::isnan(want)) wrong += !is_nan(got);
        else wrong += got != (want > 0 ? 0x7F80 : 0xFF80);
      }
      std::printf("  %-17s %-16s %lld of %zu entries not as IEEE says, %lld guard bytes written\n",
                  c.name, k.label, static_cast<long long>(wrong), r.d.size(),
                  static_cast<long long>(r.guard_bytes_written));
      INFO(c.name << " " << k.label);
      CHECK(wrong == 0);
      CHECK(r.guard_bytes_written == 0);
    }
    require_no_cuda_error(c);
  }
}

TEST_CASE("a non-blocking stream: correct, and the kernel runs on that stream",
          "[gpu][stream]") {
  say("cudaStreamNonBlocking stream: check_per_tensor on it is correct; with the stream held back "
      "by a host function, D is still untouched 50 ms after the call (so the kernel was queued on "
      "that stream, not elsewhere), then correct once released");
  cudaStream_t stream = nullptr;
  FP8GEMM_CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  for (const Chapter& c : chapters()) {
    CheckOptions opt;
    opt.seed = 61;
    opt.stream = stream;
    require_correct(c, kM, kN, kK, opt, "non-blocking stream");
    require_correct(c, 1000, 600, 512, opt, "non-blocking stream");

    const CheckOperands ops(kM, kN, kK, opt);
    FP8GEMM_CUDA_CHECK(cudaDeviceSynchronize());
    ops.poison_d(stream);
    StreamGate gate(stream);
    c.kernel(ops.gemm(), stream);
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    const std::int64_t written = entries_written(ops);  // legacy stream: does not wait
    const bool still_queued = cudaStreamQuery(stream) == cudaErrorNotReady;
    gate.open();
    FP8GEMM_CUDA_CHECK(cudaStreamSynchronize(stream));
    const CheckResult r = ops.result();
    std::printf("  %-17s held stream: %lld entries written before release, stream %s; after: %s\n",
                c.name, static_cast<long long>(written), still_queued ? "busy" : "IDLE",
                r.describe().c_str());
    INFO(c.name << ": " << written << " entries of D written while the stream was held");
    CHECK(written == 0);
    CHECK(still_queued);
    CHECK(r.ok());
    require_no_cuda_error(c);
  }
  FP8GEMM_CUDA_CHECK(cudaStreamDestroy(stream));
}

TEST_CASE("exact mode: small-integer operands give the exact integer product",
          "[gpu][exact]") {
  say("A, B uniform integers in [-4, 4], scales 1: every product and partial sum is an integer "
      "far below 2^24, so D must equal the exact dot product wherever bf16 represents it, entry "
      "by entry, and be within the tolerance elsewhere");
  struct Shape {
    std::int64_t M, N, K;
  };
  const Shape shapes[] = {{kM, kN, kK}, {1, 1, 16}, {257, 131, 1040}, {64, 300, 2048}};
  for (const Chapter& c : chapters()) {
    std::uint64_t seed = 71;
    for (const Shape& s : shapes) {
      CheckOptions opt;
      opt.seed = seed++;
      const CheckResult r = fp8gemm::check_per_tensor_exact(c.kernel, s.M, s.N, s.K, opt);
      std::printf("  %-17s %-14s %s  %s\n", c.name, shape(s.M, s.N, s.K).c_str(),
                  r.ok() ? "ok  " : "FAIL", r.describe().c_str());
      INFO(c.name << " " << shape(s.M, s.N, s.K) << ": " << r.describe());
      CHECK(r.exact_elements > 0);
      CHECK(r.ok());
    }
  }
}

TEST_CASE("an earlier, unrelated CUDA error is reported as such, not as this launch's",
          "[gpu][pending]") {
  say("a failed cudaMalloc (non-sticky cudaErrorMemoryAllocation) left pending: the call throws "
      "std::runtime_error saying the error comes from an earlier call, launches nothing; cleared, "
      "the next call works");
  for (const Chapter& c : chapters()) {
    const CheckOperands ops(kM, kN, kK, CheckOptions{});
    ops.poison_d(nullptr);
    FP8GEMM_CUDA_CHECK(cudaDeviceSynchronize());
    const fp8gemm::gpu_test::PendingErrorRun r =
        fp8gemm::gpu_test::run_with_pending_error([&] { c.kernel(ops.gemm(), nullptr); });
    REQUIRE(r.error != cudaSuccess);
    std::printf("  %-17s %s\n", c.name, r.message.c_str());
    INFO(c.name << ": " << r.message);
    CHECK(r.message.find("from an earlier call") != std::string::npos);
    CHECK(r.message.find(cudaGetErrorName(r.error)) != std::string::npos);
    CHECK(cudaGetLastError() == r.error);  // still there for its owner; now cleared
    CHECK(entries_written(ops) == 0);  // and nothing was launched: D still holds the poison
    require_still_works(c);
  }
}

TEST_CASE("every chapter is correct on every GPU of the machine", "[gpu][devices]") {
  say("for each device: cudaSetDevice, then each chapter on fresh operands (the shared-memory "
      "opt-in and the architecture check are per device)");
  for (int d = 0; d < fp8gemm::cuda_device_count(); ++d) {
    FP8GEMM_CUDA_CHECK(cudaSetDevice(d));
    std::printf("  device %d: %s\n", d, fp8gemm::describe_device(d).c_str());
    for (const Chapter& c : chapters()) {
      CheckOptions opt;
      opt.seed = 81 + std::uint64_t(d);
      require_correct(c, kM, kN, kK, opt, "device " + std::to_string(d));
    }
  }
  FP8GEMM_CUDA_CHECK(cudaSetDevice(0));
}
