#include "common/check.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <random>
#include <stdexcept>
#include <utility>

#include "common/cuda.hpp"
#include "common/quantize.hpp"

namespace fp8gemm {

std::string CheckResult::describe() const {
  char buf[320];
  int n = std::snprintf(buf, sizeof buf, "rel %.2e, worst tile %.2e, diff %.1e, %lld rows%s",
                        error.rel_frobenius, worst_tile_error, error.deepgemm_diff,
                        static_cast<long long>(rows_checked),
                        error.non_finite ? ", NaN/inf present" : "");
  if (guard_bytes_written > 0 && n > 0 && std::size_t(n) < sizeof buf)
    n += std::snprintf(buf + n, sizeof buf - std::size_t(n), ", %lld bytes written outside D",
                       static_cast<long long>(guard_bytes_written));
  if (exact_elements > 0 && n > 0 && std::size_t(n) < sizeof buf)
    std::snprintf(buf + n, sizeof buf - std::size_t(n),
                  ", exact: %lld of %lld representable entries wrong, %lld others off",
                  static_cast<long long>(exact_mismatches),
                  static_cast<long long>(exact_elements),
                  static_cast<long long>(inexact_out_of_tolerance));
  return buf;
}

namespace {

/// Bytes of slack before and after D in its buffer (the guards; also room for d_byte_offset).
constexpr std::size_t kGuardBytes = 16;

/// One allocation in device or managed memory. Move-only.
class Allocation {
 public:
  Allocation() = default;
  Allocation(std::size_t bytes, OperandMemory memory) : bytes_(bytes) {
    if (memory == OperandMemory::managed)
      FP8GEMM_CUDA_CHECK(cudaMallocManaged(&ptr_, bytes_));
    else
      FP8GEMM_CUDA_CHECK(cudaMalloc(&ptr_, bytes_));
  }
  Allocation(const Allocation&) = delete;
  Allocation& operator=(const Allocation&) = delete;
  Allocation(Allocation&& o) noexcept
      : ptr_(std::exchange(o.ptr_, nullptr)), bytes_(std::exchange(o.bytes_, 0)) {}
  Allocation& operator=(Allocation&& o) noexcept {
    std::swap(ptr_, o.ptr_);
    std::swap(bytes_, o.bytes_);
    return *this;
  }
  ~Allocation() {
    if (ptr_) cudaFree(ptr_);  // no throw from a destructor
  }
  template <class T = void>
  T* get() const {
    return static_cast<T*>(ptr_);
  }
  std::size_t bytes() const { return bytes_; }
  void upload(const void* host, std::size_t bytes) const {
    FP8GEMM_CUDA_CHECK(cudaMemcpy(ptr_, host, bytes, cudaMemcpyDefault));
  }

 private:
  void* ptr_ = nullptr;
  std::size_t bytes_ = 0;
};

/// Uniform integers in [-4, 4] as e4m3 (every one exact: 3 mantissa bits hold integers to 16).
std::vector<std::uint8_t> random_small_integers_e4m3(std::size_t count, std::uint64_t seed) {
  std::mt19937_64 gen(seed);
  std::uniform_int_distribution<int> pick(-4, 4);
  std::vector<std::uint8_t> v(count);
  for (auto& x : v) x = e4m3_encode(float(pick(gen)));
  return v;
}

/// The rows of D a check compares: all of them up to full_reference_max_m, else a sorted random
/// sample that always holds the first and the last.
std::vector<std::int64_t> checked_rows(std::int64_t M, const CheckOptions& opt) {
  std::vector<std::int64_t> rows;
  if (M <= opt.full_reference_max_m) {
    for (std::int64_t m = 0; m < M; ++m) rows.push_back(m);
    return rows;
  }
  return sample_rows(M, opt.sample_rows, opt.seed * 7 + 5);
}

/// Exact mode: entry by entry against the integer reference (exact in double).
void compare_exact(const std::vector<std::uint16_t>& d, std::int64_t N,
                   const std::vector<std::int64_t>& rows, const std::vector<double>& ref,
                   CheckResult& r) {
  for (std::size_t i = 0; i < rows.size(); ++i)
    for (std::int64_t n = 0; n < N; ++n) {
      const double want = ref[i * std::size_t(N) + std::size_t(n)];
      const double got = bf16_to_float(d[std::size_t(rows[i] * N + n)]);
      const bool representable = double(bf16_to_float(float_to_bf16(float(want)))) == want;
      if (representable) {
        ++r.exact_elements;
        if (got != want) ++r.exact_mismatches;  // also NaN; +0 == -0
      } else if (!(std::fabs(got - want) <= r.tolerance * std::fabs(want))) {
        ++r.inexact_out_of_tolerance;
      }
    }
}

}  // namespace

struct CheckOperands::Impl {
  std::int64_t M = 0, N = 0, K = 0;
  CheckOptions opt;
  std::vector<std::uint8_t> a, b;  // host copies for the reference
  float scale_a = 1, scale_b = 1;
  Allocation dA, dB, dD, dScaleA, dScaleB;  // dD: D plus kGuardBytes before and after

  std::uint16_t* d_pointer() const {
    return reinterpret_cast<std::uint16_t*>(dD.get<std::uint8_t>() + opt.d_byte_offset);
  }
  std::size_t d_bytes() const { return std::size_t(M * N) * 2; }
};

CheckOperands::CheckOperands(std::int64_t M, std::int64_t N, std::int64_t K,
                             const CheckOptions& opt)
    : impl_(std::make_unique<Impl>()) {
  if (opt.d_byte_offset >= kGuardBytes)
    throw std::invalid_argument("CheckOperands: d_byte_offset = " +
                                std::to_string(opt.d_byte_offset) + " must be < 16");
  Impl& x = *impl_;
  x.M = M;
  x.N = N;
  x.K = K;
  x.opt = opt;
  if (opt.integer_values) {
    x.a = random_small_integers_e4m3(std::size_t(M * K), opt.seed * 4 + 1);
    x.b = random_small_integers_e4m3(std::size_t(N * K), opt.seed * 4 + 2);
  } else {
    x.a = random_e4m3(std::size_t(M * K), opt.seed * 4 + 1, opt.stddev);
    x.b = random_e4m3(std::size_t(N * K), opt.seed * 4 + 2, opt.stddev);
  }
  if (opt.zero_row_a >= 0 && opt.zero_row_a < M)
    std::fill_n(x.a.begin() + opt.zero_row_a * K, K, std::uint8_t(0));
  std::mt19937_64 gen(opt.seed * 4 + 3);
  std::uniform_real_distribution<float> dist(0.25f, 2.0f);
  x.scale_a = dist(gen);
  x.scale_b = dist(gen);
  if (opt.scale_a) x.scale_a = *opt.scale_a;
  if (opt.scale_b) x.scale_b = *opt.scale_b;

  x.dA = Allocation(x.a.size(), opt.memory);
  x.dB = Allocation(x.b.size(), opt.memory);
  x.dD = Allocation(x.d_bytes() + 2 * kGuardBytes, opt.memory);
  x.dScaleA = Allocation(sizeof(float), opt.memory);
  x.dScaleB = Allocation(sizeof(float), opt.memory);
  x.dA.upload(x.a.data(), x.a.size());
  x.dB.upload(x.b.data(), x.b.size());
  x.dScaleA.upload(&x.scale_a, sizeof(float));
  x.dScaleB.upload(&x.scale_b, sizeof(float));
}

CheckOperands::~CheckOperands() = default;
CheckOperands::CheckOperands(CheckOperands&&) noexcept = default;
CheckOperands& CheckOperands::operator=(CheckOperands&&) noexcept = default;

float CheckOperands::scale_a() const { return impl_->scale_a; }
float CheckOperands::scale_b() const { return impl_->scale_b; }

PerTensorGemm CheckOperands::gemm() const {
  const Impl& x = *impl_;
  return PerTensorGemm{x.M,
                       x.N,
                       x.K,
                       x.dA.get<const std::uint8_t>(),
                       x.dB.get<const std::uint8_t>(),
                       x.d_pointer(),
                       x.dScaleA.get<const float>(),
                       x.dScaleB.get<const float>()};
}

void CheckOperands::poison_d(cudaStream_t stream) const {
  FP8GEMM_CUDA_CHECK(
      cudaMemsetAsync(impl_->dD.get(), impl_->opt.d_poison_byte, impl_->dD.bytes(), stream));
}

std::vector<std::uint16_t> CheckOperands::download_d() const {
  std::vector<std::uint16_t> d(std::size_t(impl_->M * impl_->N));
  FP8GEMM_CUDA_CHECK(
      cudaMemcpy(d.data(), impl_->d_pointer(), impl_->d_bytes(), cudaMemcpyDefault));
  return d;
}

CheckResult CheckOperands::result() const {
  const Impl& x = *impl_;
  const std::int64_t N = x.N, K = x.K;
  CheckResult r;
  // The whole buffer: D, then the guards on both sides must still hold the poison.
  std::vector<std::uint8_t> buffer(x.dD.bytes());
  FP8GEMM_CUDA_CHECK(cudaMemcpy(buffer.data(), x.dD.get(), buffer.size(), cudaMemcpyDefault));
  const std::size_t begin = x.opt.d_byte_offset, end = begin + x.d_bytes();
  for (std::size_t i = 0; i < buffer.size(); ++i)
    if ((i < begin || i >= end) && buffer[i] != x.opt.d_poison_byte) ++r.guard_bytes_written;
  r.d.resize(std::size_t(x.M * N));
  std::copy_n(buffer.data() + begin, x.d_bytes(), reinterpret_cast<std::uint8_t*>(r.d.data()));
  r.scale_a = x.scale_a;
  r.scale_b = x.scale_b;
  r.tolerance = per_tensor_tolerance(K);

  const std::vector<std::int64_t> rows = checked_rows(x.M, x.opt);
  // Dequantise only the rows of A we need; B whole. The scales are applied in float64, so no
  // product overflows where the true result is finite.
  std::vector<double> a_rows(rows.size() * std::size_t(K));
  for (std::size_t i = 0; i < rows.size(); ++i)
    for (std::int64_t k = 0; k < K; ++k)
      a_rows[i * K + k] = double(e4m3_decode(x.a[rows[i] * K + k])) * x.scale_a;
  const std::vector<double> b = dequantize_e4m3(x.b, x.scale_b);
  std::vector<std::int64_t> local(rows.size());
  for (std::size_t i = 0; i < rows.size(); ++i) local[i] = std::int64_t(i);
  const std::vector<double> ref =
      reference_gemm_rows(std::int64_t(rows.size()), N, K, a_rows.data(), b.data(), local);
  r.error = compare_bf16_rows(r.d.data(), N, rows, ref.data());
  r.worst_tile_error = worst_tile_error(r.d.data(), N, rows, ref.data());
  if (x.opt.integer_values) compare_exact(r.d, N, rows, ref, r);
  // Unwritten entries outside the sampled rows must still be caught: count NaNs over all of D.
  std::int64_t nan_all = 0;
  for (std::uint16_t v : r.d) nan_all += ((v & 0x7F80) == 0x7F80) ? 1 : 0;
  if (nan_all > 0) {
    r.error.non_finite = std::max(r.error.non_finite, nan_all);
    r.error.rel_frobenius = INFINITY;
  }
  r.rows_checked = std::int64_t(rows.size());
  return r;
}

CheckResult check_per_tensor(const PerTensorKernel& kernel, std::int64_t M, std::int64_t N,
                             std::int64_t K, const CheckOptions& opt) {
  CheckOperands ops(M, N, K, opt);
  // The uploads ran on the legacy default stream, which a non-blocking opt.stream does not wait
  // for: finish them first.
  FP8GEMM_CUDA_CHECK(cudaDeviceSynchronize());
  ops.poison_d(opt.stream);
  kernel(ops.gemm(), opt.stream);
  FP8GEMM_CUDA_CHECK(cudaStreamSynchronize(opt.stream));
  return ops.result();
}

CheckResult check_per_tensor_exact(const PerTensorKernel& kernel, std::int64_t M, std::int64_t N,
                                   std::int64_t K, const CheckOptions& opt) {
  CheckOptions exact = opt;
  exact.integer_values = true;
  exact.scale_a = 1.0f;
  exact.scale_b = 1.0f;
  return check_per_tensor(kernel, M, N, K, exact);
}

bool check_deterministic(const PerTensorKernel& kernel, std::int64_t M, std::int64_t N,
                         std::int64_t K, int runs, std::uint64_t seed) {
  CheckOptions opt;
  opt.seed = seed;
  const CheckOperands ops(M, N, K, opt);
  std::vector<std::uint16_t> first;
  for (int i = 0; i < runs; ++i) {
    ops.poison_d(nullptr);
    kernel(ops.gemm(), nullptr);
    FP8GEMM_CUDA_CHECK(cudaDeviceSynchronize());
    // The first run must be right (ten unwritten, all-NaN outputs would compare equal).
    if (i == 0 && !ops.result().ok()) return false;
    std::vector<std::uint16_t> d = ops.download_d();
    if (i == 0) first = std::move(d);
    else if (d != first) return false;
  }
  return true;
}

FloatDCheck check_float_d_rows(float* D, std::int64_t M, std::int64_t N,
                               const std::vector<std::int64_t>& rows, std::vector<double> want,
                               bool accumulate, double tolerance, std::uint64_t seed,
                               const std::function<void()>& run) {
  std::vector<float> before(std::size_t(M * N), std::nanf(""));
  EarlierShare share;
  if (accumulate) {
    std::mt19937_64 gen(seed);
    std::normal_distribution<float> nd(0.0f, float(rms(want)));
    for (float& x : before) x = nd(gen);
    for (std::size_t r = 0; r < rows.size(); ++r)
      for (std::int64_t n = 0; n < N; ++n)
        share.add_to(want[r * std::size_t(N) + std::size_t(n)],
                     double(before[std::size_t(rows[r] * N + n)]));
  }
  FP8GEMM_CUDA_CHECK(
      cudaMemcpy(D, before.data(), before.size() * sizeof(float), cudaMemcpyHostToDevice));
  run();
  FP8GEMM_CUDA_CHECK(cudaDeviceSynchronize());
  std::vector<float> got(before.size());
  FP8GEMM_CUDA_CHECK(
      cudaMemcpy(got.data(), D, got.size() * sizeof(float), cudaMemcpyDeviceToHost));
  const ErrorStats e = compare_f32_rows(got.data(), N, rows, want.data());
  const bool blind = accumulate && !share.visible(0.1);
  FloatDCheck r;
  r.ok = e.ok(tolerance) && !blind;
  r.stats = e;
  r.blind = blind;
  char buf[200];
  std::snprintf(buf, sizeof buf, "rel %.2e, %lld rows, %lld non-finite%s", e.rel_frobenius,
                static_cast<long long>(rows.size()), static_cast<long long>(e.non_finite),
                blind ? ", BLIND (earlier D too small)" : "");
  r.describe = buf;
  return r;
}

}  // namespace fp8gemm
