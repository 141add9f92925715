// Chapter 7's accuracy study (README "Accuracy"): the relative error against float64 of
//   per-tensor scaling, fast accumulation         (chapter 6, opt-in)
//   per-tensor scaling, promoted every 128 K      (chapter 6's default)
//   block scaling (1 x 128, 128 x 128), promoted  (this chapter)
// on three kinds of data, K up to 65536: N(0, 1); activations with a few outlier channels (A's
// columns 100x larger, what LLM activations look like and why block scaling exists); and
// all-positive U[0.5, 1] (where fast accumulation drifts). Each recipe's error is given twice:
// against the float64 product of the unquantised data (what a user sees) and against the float64
// product of its own dequantised operands (the GEMM's own error, quantisation excluded).
// The data, the points (shapes, seeds), the metrics and the JSON rows are shared with chapter 9's
// MXFP8 rows (common/accuracy_study.hpp); plots/plot.py adds those rows to this chapter's table.
#pragma once

#include <string>

namespace fp8gemm::ch07 {

/// Runs the study on the GPU, prints a table and writes it as JSON to `path` (with `commit`).
void run_accuracy_study(const std::string& path, const std::string& commit);

}  // namespace fp8gemm::ch07
