// main() of the GPU test executables: with no CUDA GPU present it prints why and exits with 77,
// which CTest reports as "skipped" (SKIP_RETURN_CODE), never as passed or failed.
#define CATCH_CONFIG_RUNNER
#include <cstdio>
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
  if (!listing) std::printf("GPU: %s\n", fp8gemm::describe_device().c_str());
  return Catch::Session().run(argc, argv);
}
