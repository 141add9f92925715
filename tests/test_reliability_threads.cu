// GPU tests of calls from worker threads, in a process of their own so that the calls really are
// the first ones: the main thread only allocates the operands, then N std::threads wait at a
// common start line and make their first CUDA call through a chapter's gemm() at the same
// moment. A worker thread has no current CUDA context until something makes it current, so a
// driver-API call made first (cuTensorMapEncodeTiled in chapters 4 and 5) used to fail with
// CUDA_ERROR_INVALID_CONTEXT; and the one-time kernel preparation (architecture check and
// shared-memory opt-in, per device) is raced by every thread at once. Both must just work.
// Also: two threads with their own CublasLtGemm building plans for the same shapes at once (the
// plan cache they share is one map: it needs its lock).
#include <atomic>
#include <cstdint>
#include <cstdio>
#include <exception>
#include <string>
#include <thread>
#include <vector>

#include "catch.hpp"
#include "chapters/01_naive/naive.cuh"
#include "chapters/02_smem_tiling/smem_tiling.cuh"
#include "chapters/03_mma_sync/mma_sync.cuh"
#include "chapters/04_tma/tma.cuh"
#include "chapters/05_wgmma/wgmma.cuh"
#include "common/check.hpp"
#include "common/cublaslt.hpp"
#include "common/cuda.hpp"

namespace {

using fp8gemm::CheckOperands;
using fp8gemm::CheckOptions;

/// What one worker runs: a list of calls, each on its own operands.
struct Job {
  std::string label;
  fp8gemm::PerTensorKernel kernel;
  std::vector<const CheckOperands*> operands;
  std::string error;  // what it threw, if anything
};

/// Starts one thread per job; all wait until every one is running, then make their calls (their
/// first CUDA calls) on the legacy default stream and synchronise it. Returns when all are done.
void run_together(std::vector<Job>& jobs) {
  std::atomic<int> ready{0};
  std::atomic<bool> go{false};
  std::vector<std::thread> threads;
  for (Job& job : jobs)
    threads.emplace_back([&ready, &go, &job] {
      ready.fetch_add(1);
      while (!go.load()) std::this_thread::yield();
      try {
        for (const CheckOperands* ops : job.operands) job.kernel(ops->gemm(), nullptr);
        FP8GEMM_CUDA_CHECK(cudaStreamSynchronize(nullptr));
      } catch (const std::exception& e) {
        job.error = e.what();
      }
    });
  while (ready.load() < int(jobs.size())) std::this_thread::yield();
  go.store(true);
  for (auto& t : threads) t.join();
}

/// Every job's calls succeeded and every D is correct.
void require_all_correct(const std::vector<Job>& jobs) {
  for (const Job& job : jobs) {
    std::printf("  %-30s %s\n", job.label.c_str(),
                job.error.empty() ? "no exception" : job.error.c_str());
    INFO(job.label << ": " << job.error);
    CHECK(job.error.empty());
    for (const CheckOperands* ops : job.operands) {
      const fp8gemm::CheckResult r = ops->result();
      std::printf("  %-30s   %s  %s\n", job.label.c_str(), r.ok() ? "ok  " : "FAIL",
                  r.describe().c_str());
      INFO(job.label << ": " << r.describe());
      CHECK(r.ok());
    }
  }
  CHECK(cudaPeekAtLastError() == cudaSuccess);
}

/// `threads` workers, each calling `kernel` once on its own operands (M x N x K), at once.
void first_calls(const char* name, const fp8gemm::PerTensorKernel& kernel, int threads,
                 std::int64_t M, std::int64_t N, std::int64_t K, std::uint64_t seed) {
  std::vector<CheckOperands> ops;
  for (int t = 0; t < threads; ++t) {
    CheckOptions opt;
    opt.seed = seed + std::uint64_t(t);
    ops.emplace_back(M, N, K, opt);
  }
  for (const auto& o : ops) o.poison_d(nullptr);
  FP8GEMM_CUDA_CHECK(cudaDeviceSynchronize());
  std::vector<Job> jobs;
  for (int t = 0; t < threads; ++t)
    jobs.push_back({std::string(name) + " thread " + std::to_string(t), kernel, {&ops[t]}, {}});
  run_together(jobs);
  require_all_correct(jobs);
}

}  // namespace

TEST_CASE("ch05: two threads making their first calls at the same moment both succeed",
          "[gpu][threads][ch05]") {
  std::printf("\n== two threads, first CUDA call of each = ch05_wgmma gemm() (tensor maps through "
              "the driver API, kernel preparation), at once: no exception, both D correct\n");
  first_calls("ch05_wgmma", fp8gemm::ch05::gemm, 2, 300, 520, 656, 1);
}

TEST_CASE("ch04: two threads making their first calls at the same moment both succeed",
          "[gpu][threads][ch04]") {
  std::printf("\n== two threads, first CUDA call of each = ch04_tma gemm(), at once\n");
  first_calls("ch04_tma", fp8gemm::ch04::gemm, 2, 300, 520, 656, 11);
}

TEST_CASE("chapters 1-3: two threads each, six at once, first calls", "[gpu][threads]") {
  std::printf("\n== six threads, two per chapter 1-3, first calls at once\n");
  std::vector<CheckOperands> ops;
  for (int i = 0; i < 6; ++i) {
    CheckOptions opt;
    opt.seed = 21 + std::uint64_t(i);
    ops.emplace_back(200, 264, 320, opt);
  }
  for (const auto& o : ops) o.poison_d(nullptr);
  FP8GEMM_CUDA_CHECK(cudaDeviceSynchronize());
  const fp8gemm::PerTensorKernel kernels[] = {fp8gemm::ch01::gemm, fp8gemm::ch02::gemm,
                                              fp8gemm::ch03::gemm};
  const char* names[] = {"ch01_naive", "ch02_smem_tiling", "ch03_mma_sync"};
  std::vector<Job> jobs;
  for (int i = 0; i < 6; ++i)
    jobs.push_back({std::string(names[i / 2]) + " thread " + std::to_string(i % 2), kernels[i / 2],
                    {&ops[std::size_t(i)]}, {}});
  run_together(jobs);
  require_all_correct(jobs);
}

TEST_CASE("cuBLASLt: two threads building plans for the same shapes at once", "[gpu][threads][cublaslt]") {
  std::printf("\n== two threads, each with its own CublasLtGemm, 4 shapes x 3 calls each, plans "
              "created concurrently in the shared cache: no exception, every D correct\n");
  const std::int64_t shapes[][3] = {{256, 256, 256}, {200, 264, 640}, {512, 128, 1024},
                                    {64, 2112, 512}};
  std::vector<CheckOperands> ops;
  std::uint64_t seed = 31;
  for (int t = 0; t < 2; ++t)
    for (const auto& s : shapes)
      for (int rep = 0; rep < 3; ++rep) {
        CheckOptions opt;
        opt.seed = seed++;
        ops.emplace_back(s[0], s[1], s[2], opt);
      }
  for (const auto& o : ops) o.poison_d(nullptr);
  FP8GEMM_CUDA_CHECK(cudaDeviceSynchronize());
  fp8gemm::CublasLtGemm cublas[2];
  std::vector<Job> jobs;
  const std::size_t per_thread = ops.size() / 2;
  for (int t = 0; t < 2; ++t) {
    Job job;
    job.label = "cuBLASLt thread " + std::to_string(t);
    fp8gemm::CublasLtGemm* lt = &cublas[t];
    job.kernel = [lt](const fp8gemm::PerTensorGemm& g, cudaStream_t stream) {
      lt->per_tensor(g.M, g.N, g.K, g.A, g.B, g.D, g.scale_a, g.scale_b, false, stream);
    };
    for (std::size_t i = 0; i < per_thread; ++i) job.operands.push_back(&ops[t * per_thread + i]);
    jobs.push_back(std::move(job));
  }
  run_together(jobs);
  require_all_correct(jobs);
}
