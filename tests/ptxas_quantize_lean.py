#!/usr/bin/env python3
"""ptxas's verdict on the lean quantiser kernels (tuning_1x128 "v2_lean" and later in
common/src/quantize_gpu.cu and quantize_grouped_gpu.cu): compiled with -Xptxas -v, every kernel
whose name contains `lean` must have no stack frame and no spill (a spill in these memory-bound
kernels costs bandwidth silently; a small change to the arithmetic made the token kernel spill
once), nor any other finding of tools/ptxas_check.py, whose compiling and parsing this uses. The first kernels (v1_first) of the same sources spill and are not checked here.

  ptxas_quantize_lean.py --nvcc NVCC --expect N SOURCE... -- NVCC_ARGS...
Exit 0: at least N lean kernels compiled, none with stack or spills; 1: findings; 2: compiler
failure or fewer lean kernels than expected (nothing was checked).
"""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tools"))
import ptxas_check  # noqa: E402  (tools/ptxas_check.py: compiling, parsing ptxas's lines)


def main():
    parsed = ptxas_check.parse_args(sys.argv[1:], __doc__,
                                    lambda ap: ap.add_argument("--expect", type=int, required=True))
    if parsed is None:
        return 2
    opts, nvcc_args = parsed
    findings, lean = [], 0
    for src in opts.sources:
        result = ptxas_check.check(opts.nvcc, src, nvcc_args, only="lean")
        if result is None:
            return 2
        findings += result[0]
        lean += result[1]
    print(f"  {lean} lean kernel(s) compiled, {len(findings)} finding(s)")
    for f in findings:
        print("  " + f)
    if lean < opts.expect:
        print(f"ptxas_quantize_lean: expected >= {opts.expect} lean kernels", file=sys.stderr)
        return 2
    print("ptxas_quantize_lean:", "FAILED" if findings else "ok")
    return 1 if findings else 0


if __name__ == "__main__":
    sys.exit(main())
