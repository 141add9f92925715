#include "common/cublaslt.hpp"

#include <array>
#include <cstdlib>
#include <map>
#include <vector>
#include <memory>
#include <mutex>
#include <sstream>
#include <stdexcept>
#include <tuple>

#include "common/cuda.hpp"
#include "common/launch.hpp"
#include "common/scaling.hpp"

namespace fp8gemm {

void throw_cublas_error(cublasStatus_t status, const char* call, const char* file, int line) {
  std::ostringstream s;
  s << call << " failed: " << cublasLtGetStatusName(status) << " (" << cublasLtGetStatusString(status)
    << ") at " << file << ":" << line;
  throw std::runtime_error(s.str());
}

namespace {

// One cached plan per (mode, M, N, K): descriptors and the heuristic's algorithm, so the timed
// region holds only cublasLtMatmul (the heuristic query costs tens of microseconds of CPU time).
struct Plan {
  cublasLtMatmulDesc_t desc = nullptr;
  cublasLtMatrixLayout_t a = nullptr, b = nullptr, d = nullptr;
  cublasLtMatmulAlgo_t algo{};
  /// A, B, D, scale_a, scale_b of the last call whose memory was checked (run()).
  std::array<const void*, 5> checked{};
  ~Plan() {
    if (desc) cublasLtMatmulDescDestroy(desc);
    if (a) cublasLtMatrixLayoutDestroy(a);
    if (b) cublasLtMatrixLayoutDestroy(b);
    if (d) cublasLtMatrixLayoutDestroy(d);
  }
};
using PlanKey = std::tuple<int, std::int64_t, std::int64_t, std::int64_t>;
// Plans live per handle; keyed by the handle pointer so several CublasLtGemm objects coexist.
// One process-wide map, so every access holds plan_mutex(): the lookup and insertion, the
// per-call scale pointers written into a plan's descriptor and the cublasLtMatmul that reads
// them (two threads running the same shape share the plan), and the erasure in the destructor.
std::map<std::pair<cublasLtHandle_t, PlanKey>, std::unique_ptr<Plan>>& plan_cache() {
  static std::map<std::pair<cublasLtHandle_t, PlanKey>, std::unique_ptr<Plan>> cache;
  return cache;
}
std::mutex& plan_mutex() {
  static std::mutex mutex;
  return mutex;
}

[[noreturn]] void bad(const std::string& what) {
  throw std::invalid_argument("fp8gemm::CublasLtGemm: " + what);
}

}  // namespace

CublasLtGemm::CublasLtGemm(std::size_t workspace_bytes) : workspace_bytes_(workspace_bytes) {
  FP8GEMM_CUBLAS_CHECK(cublasLtCreate(&handle_));
  if (workspace_bytes_ > 0) FP8GEMM_CUDA_CHECK(cudaMalloc(&workspace_, workspace_bytes_));
}

CublasLtGemm::~CublasLtGemm() {
  std::lock_guard<std::mutex> lock(plan_mutex());
  auto& cache = plan_cache();
  for (auto it = cache.begin(); it != cache.end();) {
    if (it->first.first == handle_) it = cache.erase(it);
    else ++it;
  }
  if (workspace_) cudaFree(workspace_);
  if (handle_) cublasLtDestroy(handle_);
}

std::size_t CublasLtGemm::version() { return cublasLtGetVersion(); }

int CublasLtGemm::algo_index() {
  const char* env = std::getenv("FP8GEMM_CUBLASLT_ALGO");
  if (env == nullptr || *env == '\0') return 0;
  char* end = nullptr;
  const long v = std::strtol(env, &end, 10);
  if (*end != '\0' || v < 0 || v > 63)
    throw std::invalid_argument(std::string("FP8GEMM_CUBLASLT_ALGO = '") + env +
                                "' must be an integer from 0 to 63 (0 = the heuristic's first choice)");
  return int(v);
}

void CublasLtGemm::per_tensor(std::int64_t M, std::int64_t N, std::int64_t K,
                              const std::uint8_t* A, const std::uint8_t* B, std::uint16_t* D,
                              const float* scale_a, const float* scale_b, bool fast_accum,
                              cudaStream_t stream) {
  run(fast_accum ? Mode::per_tensor_fast : Mode::per_tensor, M, N, K, A, B, D, scale_a, scale_b,
      stream);
}

void CublasLtGemm::block_scaled(std::int64_t M, std::int64_t N, std::int64_t K,
                                const std::uint8_t* A, const std::uint8_t* B, std::uint16_t* D,
                                const float* scale_a, const float* scale_b, cudaStream_t stream) {
  if (M % 4 != 0) bad("block-scaled cuBLASLt needs M % 4 == 0, got M = " + std::to_string(M));
  if (reinterpret_cast<std::uintptr_t>(scale_a) % 16 != 0 ||
      reinterpret_cast<std::uintptr_t>(scale_b) % 16 != 0)
    bad("block-scaled cuBLASLt needs 16-byte aligned scale_a and scale_b");
  run(Mode::block_scaled, M, N, K, A, B, D, scale_a, scale_b, stream);
}

void CublasLtGemm::bf16(std::int64_t M, std::int64_t N, std::int64_t K, const std::uint16_t* A,
                        const std::uint16_t* B, std::uint16_t* D, cudaStream_t stream) {
  run(Mode::bf16, M, N, K, reinterpret_cast<const std::uint8_t*>(A),
      reinterpret_cast<const std::uint8_t*>(B), D, nullptr, nullptr, stream);
}

void CublasLtGemm::run(Mode mode, std::int64_t M, std::int64_t N, std::int64_t K,
                       const std::uint8_t* A, const std::uint8_t* B, std::uint16_t* D,
                       const float* scale_a, const float* scale_b, cudaStream_t stream) {
  if (M < 1 || N < 1 || K < 1)
    bad("M, N, K must be >= 1, got " + std::to_string(M) + " x " + std::to_string(N) + " x " +
        std::to_string(K));
  if (N % 8 != 0)
    bad("N = " + std::to_string(N) +
        " must be a multiple of 8 (cuBLASLt FP8 with bf16 D needs 16-byte aligned rows of D)");
  if (K % 16 != 0)
    bad("K = " + std::to_string(K) + " must be a multiple of 16 (FP8 operands need 16-byte rows)");
  const bool scaled = mode != Mode::bf16;  // bf16: no scale pointers at all
  if (!A || !B || !D || (scaled && (!scale_a || !scale_b)))
    bad("null pointer among A, B, D, scale_a, scale_b");

  // The same launch path as the chapters (launch.hpp): an earlier error is reported as such,
  // and a failed launch names cuBLASLt.
  constexpr const char* kWho = "fp8gemm::CublasLtGemm";
  // cuBLASLt reads the scales through pointers in the matmul descriptor and refuses
  // (CUBLAS_STATUS_NOT_SUPPORTED) ones that are not 16-byte aligned: seen on the H200 with
  // scale_b one float after scale_a. Say so instead.
  if (scaled && (reinterpret_cast<std::uintptr_t>(scale_a) % 16 != 0 ||
                 reinterpret_cast<std::uintptr_t>(scale_b) % 16 != 0))
    bad("scale_a and scale_b must be 16-byte aligned (cuBLASLt's scale pointers)");
  // A worker thread may call us first: make the runtime's context current before cuBLASLt
  // launches anything (CUBLAS_STATUS_EXECUTION_FAILED was seen from fresh threads otherwise).
  ensure_context_current();
  require_no_pending_error(kWho);
  // The same memory rule as the chapters' entry points (launch.hpp): every buffer is memory of
  // the current device, large enough, and D shares no byte with what it is computed from (a
  // host pointer or an overlap would fault, or be silently wrong, inside cuBLASLt).
  const std::size_t element = mode == Mode::bf16 ? 2 : 1;
  const std::size_t a_bytes = std::size_t(M) * std::size_t(K) * element;
  const std::size_t b_bytes = std::size_t(N) * std::size_t(K) * element;
  const std::size_t d_bytes = std::size_t(M) * std::size_t(N) * 2;
  const bool block = mode == Mode::block_scaled;
  const std::size_t sa_bytes =
      4 * std::size_t(block ? scale_count(ScaleRecipe::group_1x128, M, K) : 1);
  const std::size_t sb_bytes =
      4 * std::size_t(block ? scale_count(ScaleRecipe::block_128x128, N, K) : 1);
  const auto overlaps = [&](const void* p, std::size_t bytes) {
    const auto d = reinterpret_cast<std::uintptr_t>(D), q = reinterpret_cast<std::uintptr_t>(p);
    return q < d + d_bytes && d < q + bytes;
  };
  if (overlaps(A, a_bytes) || overlaps(B, b_bytes) ||
      (scaled && (overlaps(scale_a, sa_bytes) || overlaps(scale_b, sb_bytes))))
    bad("D must not overlap A, B, scale_a or scale_b (cuBLASLt writes D while it reads them)");
  std::lock_guard<std::mutex> lock(plan_mutex());
  auto& cache = plan_cache();
  const auto key = std::make_pair(handle_, PlanKey{int(mode), M, N, K});
  auto it = cache.find(key);
  if (it == cache.end()) {
    auto plan = std::make_unique<Plan>();
    FP8GEMM_CUBLAS_CHECK(cublasLtMatmulDescCreate(&plan->desc, CUBLAS_COMPUTE_32F, CUDA_R_32F));
    const cublasOperation_t op_t = CUBLAS_OP_T, op_n = CUBLAS_OP_N;
    FP8GEMM_CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(plan->desc, CUBLASLT_MATMUL_DESC_TRANSA,
                                                        &op_t, sizeof op_t));
    FP8GEMM_CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(plan->desc, CUBLASLT_MATMUL_DESC_TRANSB,
                                                        &op_n, sizeof op_n));
    if (mode == Mode::per_tensor_fast) {
      const std::int8_t fast = 1;
      FP8GEMM_CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(
          plan->desc, CUBLASLT_MATMUL_DESC_FAST_ACCUM, &fast, sizeof fast));
    }
    if (mode == Mode::block_scaled) {
      // cuBLAS's A is our B (weights, 128x128 blocks); its B is our A (activations, 1x128).
      const std::int32_t blk = CUBLASLT_MATMUL_MATRIX_SCALE_BLK128x128_32F;
      const std::int32_t vec = CUBLASLT_MATMUL_MATRIX_SCALE_VEC128_32F;
      FP8GEMM_CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(
          plan->desc, CUBLASLT_MATMUL_DESC_A_SCALE_MODE, &blk, sizeof blk));
      FP8GEMM_CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(
          plan->desc, CUBLASLT_MATMUL_DESC_B_SCALE_MODE, &vec, sizeof vec));
    }
    // Column-major views: cuBLAS A = K x N (ld K), B = K x M (ld K), D = N x M (ld N).
    const cudaDataType_t in = scaled ? CUDA_R_8F_E4M3 : CUDA_R_16BF;
    FP8GEMM_CUBLAS_CHECK(cublasLtMatrixLayoutCreate(&plan->a, in, K, N, K));
    FP8GEMM_CUBLAS_CHECK(cublasLtMatrixLayoutCreate(&plan->b, in, K, M, K));
    FP8GEMM_CUBLAS_CHECK(cublasLtMatrixLayoutCreate(&plan->d, CUDA_R_16BF, N, M, N));

    // The scale pointers take part in the heuristic's choice only through their mode; set
    // them once here, again on every call below.
    if (scaled) {
      FP8GEMM_CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(
          plan->desc, CUBLASLT_MATMUL_DESC_A_SCALE_POINTER, &scale_b, sizeof scale_b));
      FP8GEMM_CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(
          plan->desc, CUBLASLT_MATMUL_DESC_B_SCALE_POINTER, &scale_a, sizeof scale_a));
    }

    cublasLtMatmulPreference_t pref = nullptr;
    FP8GEMM_CUBLAS_CHECK(cublasLtMatmulPreferenceCreate(&pref));
    FP8GEMM_CUBLAS_CHECK(cublasLtMatmulPreferenceSetAttribute(
        pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &workspace_bytes_,
        sizeof workspace_bytes_));
    // The heuristic's first choice, unless FP8GEMM_CUBLASLT_ALGO=i asks for its i-th (for
    // experiments on how much the choice matters; recorded in the benchmark JSON).
    const int index = algo_index();
    std::vector<cublasLtMatmulHeuristicResult_t> heuristics(std::size_t(index) + 1);
    int found = 0;
    const cublasStatus_t st =
        cublasLtMatmulAlgoGetHeuristic(handle_, plan->desc, plan->a, plan->b, plan->d, plan->d,
                                       pref, index + 1, heuristics.data(), &found);
    cublasLtMatmulPreferenceDestroy(pref);
    if (st != CUBLAS_STATUS_SUCCESS || found <= index) {
      std::ostringstream s;
      s << "fp8gemm::CublasLtGemm: cuBLASLt has no algorithm for "
        << (mode == Mode::block_scaled ? "block-scaled FP8"
            : mode == Mode::bf16       ? "bf16"
                                       : "per-tensor FP8")
        << " " << M << " x "
        << N << " x " << K << " (" << cublasLtGetStatusName(st) << ", " << found
        << " candidates, asked for number " << index << ")";
      throw std::runtime_error(s.str());
    }
    plan->algo = heuristics[std::size_t(index)].algo;
    it = cache.emplace(key, std::move(plan)).first;
  }
  Plan& plan = *it->second;
  // The memory queries run when the buffers differ from the ones this plan last checked, so a
  // benchmark loop on the same buffers pays them once (the chapters' plans check at construction).
  const std::array<const void*, 5> buffers{A, B, D, scale_a, scale_b};
  if (plan.checked != buffers) {
    require_device_accessible(A, a_bytes, kWho, "A");
    require_device_accessible(B, b_bytes, kWho, "B");
    require_device_accessible(D, d_bytes, kWho, "D");
    if (scaled) {
      require_device_accessible(scale_a, sa_bytes, kWho, "scale_a");
      require_device_accessible(scale_b, sb_bytes, kWho, "scale_b");
    }
    plan.checked = buffers;
  }
  if (scaled) {
    FP8GEMM_CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(
        plan.desc, CUBLASLT_MATMUL_DESC_A_SCALE_POINTER, &scale_b, sizeof scale_b));
    FP8GEMM_CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(
        plan.desc, CUBLASLT_MATMUL_DESC_B_SCALE_POINTER, &scale_a, sizeof scale_a));
  }
  const float alpha = 1.0f, beta = 0.0f;
  FP8GEMM_CUBLAS_CHECK(cublasLtMatmul(handle_, plan.desc, &alpha, B, plan.a, A, plan.b, &beta, D,
                                      plan.d, D, plan.d, &plan.algo, workspace_, workspace_bytes_,
                                      stream));
  check_launch(kWho);
}

}  // namespace fp8gemm
