#!/usr/bin/env python3
"""ptxas's verdict on the lean quantiser kernels (tuning_1x128 "v2_lean" and later in
common/src/quantize_gpu.cu and quantize_grouped_gpu.cu): compiled with -Xptxas -v, every kernel
whose name contains `lean` must have no stack frame and no spill (a spill in these memory-bound
kernels costs bandwidth silently; a small change to the arithmetic made the token kernel spill
once). The first kernels (v1_first) of the same sources spill and are not checked here.

  ptxas_quantize_lean.py --nvcc NVCC --expect N SOURCE... -- NVCC_ARGS...
Exit 0: at least N lean kernels compiled, none with stack or spills; 1: findings; 2: compiler
failure or fewer lean kernels than expected (nothing was checked).
"""
import argparse
import os
import re
import subprocess
import sys
import tempfile


def main():
    argv = sys.argv[1:]
    if "--" not in argv:
        print(__doc__, file=sys.stderr)
        return 2
    cut = argv.index("--")
    ap = argparse.ArgumentParser()
    ap.add_argument("--nvcc", required=True)
    ap.add_argument("--expect", type=int, required=True)
    ap.add_argument("sources", nargs="+")
    opts = ap.parse_args(argv[:cut])
    findings, lean = [], 0
    for src in opts.sources:
        with tempfile.TemporaryDirectory() as tmp:
            cmd = [opts.nvcc, *argv[cut + 1:], "-Xptxas", "-v", "-c", src, "-o",
                   os.path.join(tmp, "x.o")]
            p = subprocess.run(cmd, capture_output=True, text=True)
        if p.returncode != 0:
            print(f"compiling {src} failed:\n{p.stderr[-4000:]}", file=sys.stderr)
            return 2
        function = "?"
        for line in p.stderr.splitlines():
            m = re.search(r"Compiling entry function '([^']+)'", line)
            if m:
                function = m.group(1)
                lean += "lean" in function
            m = re.search(r"(\d+) bytes stack frame, (\d+) bytes spill stores, (\d+) bytes spill "
                          r"loads", line)
            if m and "lean" in function and any(int(v) for v in m.groups()):
                findings.append(f"{function}: {line.strip()}")
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
