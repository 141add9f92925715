// Chapter 1's executable: validate the naive kernel, then benchmark it beside cuBLASLt.
#include "common/chapter_main.hpp"
#include "naive.cuh"

int main(int argc, char** argv) {
  return fp8gemm::chapter_main(
      argc, argv,
      {"ch01_naive", "Chapter 1: naive FP8 GEMM, one thread per output", fp8gemm::ch01::gemm, 1});
}
