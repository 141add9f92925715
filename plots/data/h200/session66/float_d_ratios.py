#!/usr/bin/env python3
"""Chapter 9's float D against its bf16 D, per shape, from ch09_hopper_mxfp8 --float-d's JSON
(same run, interleaved, the harness's medians): each path's float D time over the same path's bf16
D time, the default path's accumulate over its float D, and (where --kernels named it) the TMA
FP32 kernel against the default (from registers: sessions 66-67; since session 67 the default's
accumulate is the TMA kernel itself), and any FP32 kernel of the dequantize_bf16 path named
(session 67): against that path's bf16 D and float D defaults, its accumulate against its D = A.B.
Also chapter 7's (ch07_block_scaling --float-d, session 67): ch07_f32d over ch07_block_scaled,
ch07_f32d_acc over ch07_f32d, and each FP32 kernel named against the defaults and itself.

    python3 float_d_ratios.py ch09_float_d_<commit>.json
"""
import json
import sys

TMA = "128x128_s5_c1x1_promoted_f32_tma_b2"  # the default tile's FP32 kernel by TMA (session 66)
PAIRS = [("ch09_hopper_mx_f32d", "ch09_hopper_mx"),
         ("ch09_hopper_mx_bf16_f32d", "ch09_hopper_mx_bf16"),
         ("ch09_hopper_mx_requant_f32d", "ch09_hopper_mx_requant"),
         ("ch09_hopper_mx_f32d_acc", "ch09_hopper_mx_f32d"),
         # With the TMA kernel named (--kernels): against the default (from registers), and its
         # own accumulate (a TMA reduce-add) against its D = A.B.
         ("ch09_hopper_mx_f32d:" + TMA, "ch09_hopper_mx_f32d"),
         ("ch09_hopper_mx_f32d_acc:" + TMA, "ch09_hopper_mx_f32d_acc"),
         ("ch09_hopper_mx_f32d_acc:" + TMA, "ch09_hopper_mx_f32d:" + TMA)]

data = json.load(open(sys.argv[1]))
PAIRS += [("ch07_f32d", "ch07_block_scaled"), ("ch07_f32d_acc", "ch07_f32d")]
for k in sorted({b["name"].split("/")[0].split(":", 1)[1] for b in data["benchmarks"]
                 if b["name"].startswith("ch07_f32d:")}):
    PAIRS += [("ch07_f32d:" + k, "ch07_f32d"), ("ch07_f32d_acc:" + k, "ch07_f32d_acc"),
              ("ch07_f32d_acc:" + k, "ch07_f32d:" + k)]
# The dequantize_bf16 path's FP32 kernels named in --kernels (..._bf16 names).
for k in sorted({b["name"].split("/")[0].split(":", 1)[1] for b in data["benchmarks"]
                 if b["name"].startswith("ch09_hopper_mx_bf16_f32d:")}):
    PAIRS += [("ch09_hopper_mx_bf16_f32d:" + k, "ch09_hopper_mx_bf16"),
              ("ch09_hopper_mx_bf16_f32d:" + k, "ch09_hopper_mx_bf16_f32d"),
              ("ch09_hopper_mx_bf16_f32d_acc:" + k, "ch09_hopper_mx_bf16_f32d:" + k)]
ctx = data["context"]
print(ctx.get("gpu", "?"), "commit", ctx.get("git_commit", ctx.get("commit", "?")))
median = {}
for b in data["benchmarks"]:
    impl, shape = b["name"].split("/")[:2]
    median[(impl, shape)] = b["median_us"]
shapes = sorted({s for _, s in median}, key=lambda s: [int(x) for x in s.split("x")])
for shape in shapes:
    for num, den in PAIRS:
        if (num, shape) in median and (den, shape) in median:
            a, b = median[(num, shape)], median[(den, shape)]
            print(f"{shape:16s} {num:56s} {a:9.1f} us / {den:56s} {b:9.1f} us = {a / b:.3f}")
