// Chapter 9's accuracy study: the MXFP8 rows of chapter 7's accuracy table (issue 11, part 4).
//
// The same points as chapter 7's study (common/accuracy_study.hpp: 256 x 256 x K, K up to 65536,
// N(0, 1), outlier channels, all-positive; the same generators and seeds, so the same data), each
// quantised by the MXFP8 CPU quantiser (quantize_mx, common/mx.hpp; e4m3 in 1 x 32 blocks along
// K, one UE8M0 scale per block) under both exponent rules (floor_ocp: the OCP rule, rceil:
// cuBLAS's), multiplied by the Hopper MXFP8 GEMM (ch09::HopperPlan), and compared like chapter
// 7's recipes: against the float64 product of the unquantised data and against that of the
// dequantised operands, plus the quantisation-only error.
//
// The rows quantise the float data on the CPU, as chapter 7's do (so the comparison is the
// recipe's, not the input's). A user's path starts from bf16 on the GPU, so each point also
// rounds the data to bf16, quantises it with the GPU quantiser (quantize_mx_1x32), checks its
// bytes (codes and the whole swizzled scale buffer) against quantize_mx of the same bf16 values,
// and multiplies those operands too: "gpu_quantiser" in the JSON, {bit_exact, vs_exact}.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "common/mx.hpp"
#include "mx_emulate.hpp"

namespace fp8gemm::ch09 {

/// The CPU half of one point under one exponent rule: the quantised operands and the float64
/// product of their dequantised values on `rows`, and how far that lies from `ref_exact`.
struct MxStudyOperands {
  MxQuantized a, b;
  std::vector<double> ref_quantised;  ///< rows.size() x N
  double quantisation_only = 0;
};

/// Quantises a (M x K) and b (N x K) with quantize_mx under `rule` and computes the rest of
/// MxStudyOperands (ref_exact: rows.size() x N, the unquantised data's float64 product).
MxStudyOperands mx_study_operands(const std::vector<float>& a, const std::vector<float>& b,
                                  std::int64_t M, std::int64_t N, std::int64_t K,
                                  const std::vector<std::int64_t>& rows, MxExponentRule rule,
                                  const std::vector<double>& ref_exact);

/// The quantised pair as the chapter-9 call's host operands (MxOperands: mx_call,
/// reference_f64_rows, emulate_kernel).
MxOperands to_operands(const MxQuantized& a, const MxQuantized& b);

/// The study's JSON key of a rule's row: "mxfp8_floor_ocp" or "mxfp8_rceil".
std::string recipe_key(MxExponentRule rule);

/// Runs the study on the GPU (an sm_90a GPU: the Hopper MXFP8 GEMM), prints a table and writes
/// it as JSON to `path` (with `commit`): chapter 7's format, recipes "mxfp8_floor_ocp" and
/// "mxfp8_rceil", quantisation_only by the same keys, and per row "gpu_quantiser". Returns false
/// (after writing everything) if a GEMM's error against its own dequantised operands exceeds
/// the chapter's validation tolerance or the GPU quantiser's bytes differ from the CPU one's:
/// then the numbers are not the recipe's.
bool run_accuracy_study(const std::string& path, const std::string& commit);

}  // namespace fp8gemm::ch09
