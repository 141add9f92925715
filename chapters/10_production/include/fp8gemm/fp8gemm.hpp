// fp8gemm: FP8 GEMM on NVIDIA Hopper — the public header of the library (chapter 10).
//
//   #include <fp8gemm/fp8gemm.hpp>              // find_package(fp8gemm), fp8gemm::fp8gemm
//
// What it offers today (each with plan / run: the plan validates, checks the GPU and builds the
// tensor maps once; run(stream) only launches; errors follow docs/contract.md — a call the rules
// accept runs correctly, a call they refuse throws std::invalid_argument naming the argument,
// before any GPU work):
//   fp8gemm::PerTensorPlan     D = scale_a scale_b A.B^T, e4m3 in, bf16 out (chapter 6); FP32
//                              promotion every 128 K by default, fast accumulation opt-in
//   fp8gemm::BlockScaledPlan   DeepSeek-V3 block scaling, A 1 x 128 and B 128 x 128 scales in
//                              the layouts of fp8gemm/common/scale_layout.hpp, bf16 or FP32
//                              output with accumulate (chapter 7)
//   fp8gemm::GroupedPlan       mixture-of-experts forward (and dgrad): G experts' GEMMs in one
//                              launch, block-scaled, contiguous rows with device offsets or
//                              masked, any rows per expert, capturable in a CUDA graph (chapter 8)
//   fp8gemm::WeightGradPlan    the experts' weight gradients dB_g = dD_g^T . A_g, k-grouped over
//                              each expert's tokens, FP32 with optional accumulate (chapter 8)
//   quantize_1x128, quantize_128x128, quantize_1x128_dual, quantize_tokens_transposed_1x128
//   (the weight gradient's operands), convert_*_scales (quantize_gpu.hpp)
// Layouts: A is M x K row-major (activations), B is N x K row-major (weights), D is M x N
// row-major; leading dimensions in elements.
#pragma once

#include "bs_gemm.hpp"              // chapter 7 (installed under fp8gemm/chapters/07_block_scaling)
#include "grouped_gemm.hpp"         // chapter 8 (installed under fp8gemm/chapters/08_grouped_moe)
#include "wgrad.hpp"                // chapter 8's weight gradient
#include "common/quantize_gpu.hpp"  // the quantisers
#include "common/scale_layout.hpp"  // GroupScaleLayout, BlockScaleLayout
#include "ws_gemm.hpp"              // chapter 6 (installed under fp8gemm/chapters/06_warp_specialization)

#define FP8GEMM_VERSION_MAJOR 0
#define FP8GEMM_VERSION_MINOR 8
#define FP8GEMM_VERSION_PATCH 0

namespace fp8gemm {

/// "0.8.0": the library's version (CHANGELOG.md).
inline constexpr const char* version() { return "0.8.0"; }

/// Per-tensor scaled FP8 GEMM (chapter 6's engine). PerTensorGemm: common/gemm.hpp.
using PerTensorPlan = ch06::Plan;
using PerTensorOptions = ch06::Options;
using engine::Accumulation;

/// Block-scaled FP8 GEMM (chapter 7).
using BlockScaledGemm = ch07::BlockScaledGemm;
using BlockScaledPlan = ch07::Plan;
using BlockScaledOptions = ch07::Options;
using BlockScaledOutput = ch07::Output;

/// Grouped (mixture-of-experts) block-scaled FP8 GEMM and its k-grouped weight gradient (chapter 8).
using GroupedGemm = ch08::GroupedGemm;
using GroupedLayout = ch08::Layout;
using GroupedPlan = ch08::Plan;
using GroupedOptions = ch08::Options;
using WeightGradGemm = ch08::WeightGradGemm;
using WeightGradPlan = ch08::WeightGradPlan;
using WeightGradOptions = ch08::WeightGradOptions;

}  // namespace fp8gemm
