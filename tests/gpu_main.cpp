// main() of the GPU test executables: with no CUDA GPU present it prints why and exits with 77,
// which CTest reports as "skipped" (SKIP_RETURN_CODE), never as passed or failed. A test that needs
// several GPUs sets FP8GEMM_TEST_MIN_GPUS (tests/reliability.cmake): with fewer it skips the same way.
#define CATCH_CONFIG_RUNNER
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "catch.hpp"
#include "common/cuda.hpp"

int main(int argc, char** argv) {
  bool listing = false;
  for (int i = 1; i < argc; ++i) listing |= std::strncmp(argv[i], "--list", 6) == 0;
  if (!listing && fp8gemm::cuda_device_count() == 0) {
    std::printf("SKIPPED: no CUDA GPU present; %s needs an NVIDIA Hopper GPU (sm_90a).\n", argv[0]);
    return 77;
  }
  const char* min_gpus = std::getenv("FP8GEMM_TEST_MIN_GPUS");
  if (!listing && min_gpus != nullptr && fp8gemm::cuda_device_count() < std::atoi(min_gpus)) {
    std::printf("SKIPPED: %d CUDA GPU(s) present; these cases need %s.\n",
                fp8gemm::cuda_device_count(), min_gpus);
    return 77;
  }
  if (!listing) std::printf("GPU: %s\n", fp8gemm::describe_device().c_str());
  return Catch::Session().run(argc, argv);
}
