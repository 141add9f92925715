// Chapter 3's executable: validate the mma.sync kernel, then benchmark it beside cuBLASLt.
#include "common/chapter_main.hpp"
#include "mma_sync.cuh"

int main(int argc, char** argv) {
  return fp8gemm::chapter_main(
      argc, argv,
      {"ch03_mma_sync", "Chapter 3: tensor cores via mma.sync m16n8k32 e4m3, cp.async pipeline",
       fp8gemm::ch03::gemm, 16});
}
