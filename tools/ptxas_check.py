#!/usr/bin/env python3
"""Compile CUDA sources with `ptxas -v` and fail on what makes a Hopper kernel silently slow.

ptxas reports some performance problems only as "info" lines that no build fails on:
  C7514  wgmma.mma_async instructions serialized (non-wgmma instructions touch accumulators of
         a wgmma in flight): every wgmma then waits for the previous one;
  C7515  wgmma serialized for another reason (e.g. the accumulators span a function call);
  C7517  a warpgroup.wait injected by the compiler to read registers a wgmma is still writing;
  C7508  setmaxnreg ignored (no register cap at kernel entry);
and spills / stack frames (local memory) show only in the resource lines. This script compiles
each source with the given nvcc arguments plus -Xptxas -v and exits 1 if any of those appear
(naming the kernel), 0 otherwise, 2 if the compiler fails. --expect-findings inverts the
result: the self-test that a deliberately bad kernel is caught.

  ptxas_check.py --nvcc NVCC [--expect-findings] SOURCE... -- NVCC_ARGS...
"""
import argparse
import os
import re
import subprocess
import sys
import tempfile

BAD_CODES = {"C7514", "C7515", "C7517", "C7508"}


def check(nvcc, source, args):
    with tempfile.TemporaryDirectory() as tmp:
        cmd = [nvcc, *args, "-Xptxas", "-v", "-c", source, "-o", os.path.join(tmp, "x.o")]
        p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode != 0:
        print(f"ptxas_check: compiling {source} failed:\n{p.stderr[-4000:]}", file=sys.stderr)
        return None
    findings, function, kernels = [], "?", 0
    for line in p.stderr.splitlines():
        m = re.search(r"(?:Compiling entry function|Function properties for) '?([^' ]+)'?", line)
        if m:
            function = m.group(1)
            kernels += line.find("Compiling entry function") >= 0
        m = re.search(r"\((C\d{4})\)", line)
        if m and m.group(1) in BAD_CODES:
            findings.append(f"{function}: {line.strip()}")
        m = re.search(r"(\d+) bytes stack frame, (\d+) bytes spill stores, (\d+) bytes spill loads",
                      line)
        if m and any(int(v) for v in m.groups()):
            findings.append(f"{function}: {line.strip()}")
    return findings, kernels


def main():
    argv = sys.argv[1:]
    if "--" not in argv:
        print(__doc__, file=sys.stderr)
        return 2
    cut = argv.index("--")
    ap = argparse.ArgumentParser()
    ap.add_argument("--nvcc", required=True)
    ap.add_argument("--expect-findings", action="store_true")
    ap.add_argument("sources", nargs="+")
    opts = ap.parse_args(argv[:cut])
    total = []
    for src in opts.sources:
        result = check(opts.nvcc, src, argv[cut + 1:])
        if result is None:
            return 2
        found, kernels = result
        print(f"  {os.path.basename(src)}: {kernels} kernel(s) compiled, {len(found)} finding(s)")
        if kernels == 0:
            print(f"ptxas_check: no kernel compiled from {src}: nothing was checked", file=sys.stderr)
            return 2
        total += found
    for f in total:
        print("  " + f)
    if opts.expect_findings:
        print("ptxas_check: findings expected:", "ok" if total else "NONE FOUND (FAILED)")
        return 0 if total else 1
    print("ptxas_check:", "FAILED" if total else "ok")
    return 1 if total else 0


if __name__ == "__main__":
    sys.exit(main())
