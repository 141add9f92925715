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


def parse_args(argv, doc, add_options=lambda ap: None):
    """`--nvcc NVCC [OPTIONS] SOURCE... -- NVCC_ARGS...` (OPTIONS: what `add_options(parser)` adds):
    (the parsed options, the nvcc arguments), or None when there is no "--" (`doc` printed)."""
    if "--" not in argv:
        print(doc, file=sys.stderr)
        return None
    cut = argv.index("--")
    ap = argparse.ArgumentParser()
    ap.add_argument("--nvcc", required=True)
    add_options(ap)
    ap.add_argument("sources", nargs="+")
    return ap.parse_args(argv[:cut]), argv[cut + 1:]


def check(nvcc, source, args, only=None):
    """Compiles `source` with -Xptxas -v: (the findings, "function: ptxas line", and the number of
    kernels compiled), or None if the compiler failed (its error printed). `only`: a substring;
    then only the kernels whose name contains it are counted and checked (a finding in a function
    they call counts for them)."""
    with tempfile.TemporaryDirectory() as tmp:
        cmd = [nvcc, *args, "-Xptxas", "-v", "-c", source, "-o", os.path.join(tmp, "x.o")]
        p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode != 0:
        print(f"ptxas_check: compiling {source} failed:\n{p.stderr[-4000:]}", file=sys.stderr)
        return None
    findings, function, entry, kernels = [], "?", "?", 0
    for line in p.stderr.splitlines():
        m = re.search(r"(?:Compiling entry function|Function properties for) '?([^' ]+)'?", line)
        if m:
            function = m.group(1)
            if line.find("Compiling entry function") >= 0:
                entry = function
                kernels += only is None or only in entry
        if only is not None and only not in entry:
            continue
        m = re.search(r"\((C\d{4})\)", line)
        if m and m.group(1) in BAD_CODES:
            findings.append(f"{function}: {line.strip()}")
        m = re.search(r"(\d+) bytes stack frame, (\d+) bytes spill stores, (\d+) bytes spill loads",
                      line)
        if m and any(int(v) for v in m.groups()):
            findings.append(f"{function}: {line.strip()}")
    return findings, kernels


def main():
    parsed = parse_args(sys.argv[1:], __doc__,
                        lambda ap: ap.add_argument("--expect-findings", action="store_true"))
    if parsed is None:
        return 2
    opts, nvcc_args = parsed
    total = []
    for src in opts.sources:
        result = check(opts.nvcc, src, nvcc_args)
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
