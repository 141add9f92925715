// The body of every per-tensor chapter's executable (chapters/NN_name/main.cu is a few lines):
//  1. no GPU -> say so and exit 2;
//  2. validate the chapter's kernel on fresh random data against the float64 CPU reference at
//     edge shapes and at every benchmark shape (D poisoned first);
//  3. benchmark the square ladder (1024^3 ... 8192^3) beside cuBLASLt (per-tensor, FP32
//     fast accumulation: the arithmetic of chapter 5's wgmma; chapters 1-4 accumulate in full
//     FP32) in the same process;
//  4. print the closing table: shape, TFLOPS, % of cuBLASLt, error.
// Options: --sizes=1024,2048 (square sizes to benchmark), --no-bench (validate only),
// --json=<path> (default <name>.json), plus Google Benchmark's own flags.
#pragma once

#include <cstdint>
#include <vector>

#include "common/gemm.hpp"

namespace fp8gemm {

struct ChapterInfo {
  const char* name;          ///< implementation name in benchmarks and JSON, e.g. "ch01_naive"
  const char* title;         ///< one line, e.g. "Chapter 1: naive FP8 GEMM, one thread per output"
  PerTensorKernel kernel;
  std::int64_t k_multiple;   ///< the kernel's rule on K (1 for chapter 1, 16 after)
};

int chapter_main(int argc, char** argv, const ChapterInfo& chapter);

}  // namespace fp8gemm
