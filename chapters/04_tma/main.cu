// Chapter 4's executable: validate the TMA kernel, then benchmark it beside cuBLASLt.
#include "common/chapter_main.hpp"
#include "tma.cuh"

int main(int argc, char** argv) {
  return fp8gemm::chapter_main(
      argc, argv,
      {"ch04_tma", "Chapter 4: TMA (cp.async.bulk.tensor) + mbarrier ring feeding mma.sync",
       fp8gemm::ch04::gemm, 16});
}
