// Chapter 2's executable: validate the tiled CUDA-core kernel, then benchmark it beside cuBLASLt.
#include "common/chapter_main.hpp"
#include "smem_tiling.cuh"

int main(int argc, char** argv) {
  return fp8gemm::chapter_main(
      argc, argv,
      {"ch02_smem_tiling", "Chapter 2: shared-memory tiles, 8 x 8 register blocking, CUDA cores",
       fp8gemm::ch02::gemm, 16});
}
