// Chapter 5's executable: validate the wgmma kernel, then benchmark it beside cuBLASLt.
#include "common/chapter_main.hpp"
#include "wgmma.cuh"

int main(int argc, char** argv) {
  return fp8gemm::chapter_main(
      argc, argv,
      {"ch05_wgmma",
       "Chapter 5: warpgroup MMA (wgmma m64n256k32 e4m3) from 128B-swizzled shared memory, TMA ring",
       fp8gemm::ch05::gemm, 16});
}
