#!/usr/bin/env python3
"""Checks a chapter's per-shape kernel table against the committed tuning sweep it came from.

For every shape of the table that the sweep measured, the table's kernel must be within
--tolerance (default 3%) of the fastest correct kernel of that shape in the sweep (issue
"Chapter 10": the dispatcher never picks a configuration more than 3% slower than the best one in
the committed sweep). Exits 1 and names the shapes otherwise. Two sweep formats:

  --sweep A.json ...   Google Benchmark JSON (a chapter's --kernels tuning sweep), entries
                       "<prefix><kernel>/<MxNxK>/..." with a TFLOPS counter;
  --dispatch-sweep D.json ... --family F
                       fp8gemm_dispatch_sweep's JSON (chapter 10), the family's correct results;
                       of several files, a shape comes whole from the first that measured it (as
                       gen_dispatch_table.py takes a family's own re-sweep over the full one);
                       where a shape has interleaved confirmations (confirm_median_us) those alone
                       rank it, as tools/gen_dispatch_table.py ranks it, and a table kernel that
                       was not confirmed there is an error; sustained medians (sustain_median_us,
                       --sustain_ms) outrank the confirmations the same way.

  tools/check_table.py --table chapters/07_block_scaling/bs_gemm.cpp \
      --dispatch-sweep plots/data/h200/ch10/dispatch_sweep.json --family block_scaled
  tools/check_table.py --table chapters/07_block_scaling/bs_gemm.cpp \
      --sweep plots/data/h200/ch07/sweep_large.json plots/data/h200/ch07/sweep_small.json \
      --prefix ch07:

In place of --table, --picks-exe EXE [--sms N] takes the library's choices for the family from
fp8gemm_dispatch_picks (with --sms: for plans on N SMs, the table rescaled to them), e.g. against
a sweep run with --max_sms=N:
  tools/check_table.py --picks-exe build/bin/fp8gemm_dispatch_picks --sms 112 \
      --dispatch-sweep plots/data/h200/ch10/dispatch_sweep_block_scaled_sms112.json
"""
import argparse
import json
import re
import subprocess
import sys

import sweep_ranking  # tools/, beside this script


def table_entries(path):
    """{(M, N, K): kernel} from a C++ table of {M, N, K, "kernel"} rows."""
    text = open(path, encoding="utf-8").read()
    rows = re.findall(r"\{\s*(\d+)\s*,\s*(\d+)\s*,\s*(\d+)\s*,\s*\"([^\"]+)\"\s*\}", text)
    return {(int(m), int(n), int(k)): name for m, n, k, name in rows}


def sweep_results(paths, prefix):
    """{shape: {kernel: TFLOPS}} from Google Benchmark JSON entries "<prefix><kernel>/<MxNxK>/..."."""
    out = {}
    for p in paths:
        for b in json.load(open(p, encoding="utf-8"))["benchmarks"]:
            if b.get("error_occurred"):
                continue
            parts = b["name"].split("/")
            if len(parts) < 2 or not parts[0].startswith(prefix):
                continue
            m, n, k = (int(x) for x in parts[1].split("x"))
            out.setdefault((m, n, k), {})[parts[0][len(prefix):]] = float(b["TFLOPS"])
    return out


def picks_entries(exe, sms, family):
    """{(M, N, K): kernel} of fp8gemm_dispatch_picks' lines for the family."""
    cmd = [exe] + ([f"--sms={sms}"] if sms else [])
    out = {}
    for line in subprocess.run(cmd, check=True, capture_output=True, text=True).stdout.splitlines():
        f = line.split()
        if len(f) >= 3 and f[0] == family:
            out[tuple(int(x) for x in f[1].split("x"))] = f[2]
    return out


def dispatch_sweep_results(path, family):
    """{shape: {kernel: TFLOPS}} from fp8gemm_dispatch_sweep's JSON: the family's results ranked
    as gen_dispatch_table.py ranks them (tools/sweep_ranking.py: by sustained medians where the
    shape has two or more, then only those kernels; else by confirmed medians where it has two or
    more; else by every correct kernel's block median)."""
    rows = [r for r in json.load(open(path, encoding="utf-8"))["results"] if r.get("family") == family]
    out = {}
    for shape in {r["shape"] for r in rows}:
        m, n, k = (int(x) for x in shape.split("x"))
        _, times = sweep_ranking.ranking([r for r in rows if r["shape"] == shape])
        if times:
            out[(m, n, k)] = {kernel: 2.0 * m * n * k / (us * 1e-6) / 1e12 for kernel, us in times.items()}
    return out


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    which = ap.add_mutually_exclusive_group(required=True)
    which.add_argument("--table")
    which.add_argument("--picks-exe")
    ap.add_argument("--sms", type=int, default=0, help="with --picks-exe: fp8gemm_dispatch_picks --sms")
    ap.add_argument("--allow-sms-mismatch", action="store_true",
                    help="check picks for other SMs than the sweep ran on (its context's max_sms)")
    src = ap.add_mutually_exclusive_group(required=True)
    src.add_argument("--sweep", nargs="+")
    src.add_argument("--dispatch-sweep", nargs="+")
    ap.add_argument("--family", default="block_scaled",
                    help="with --dispatch-sweep: the family whose results rank the table")
    ap.add_argument("--prefix", default="")
    ap.add_argument("--tolerance", type=float, default=0.03)
    a = ap.parse_args(argv)
    table = table_entries(a.table) if a.table else picks_entries(a.picks_exe, a.sms, a.family)
    if a.sms and not a.picks_exe:
        ap.error("--sms needs --picks-exe")
    if a.dispatch_sweep:
        for path in a.dispatch_sweep:
            swept = int(json.load(open(path, encoding="utf-8")).get("context", {}).get("max_sms", 0) or 0)
            if swept != a.sms and not a.allow_sms_mismatch:
                ap.error(f"{path} was swept with --max_sms={swept}, the picks are for --sms={a.sms} "
                         "(0: all SMs); --allow-sms-mismatch to compare them anyway")
        sweep = {}
        for path in a.dispatch_sweep:
            for shape, kernels in dispatch_sweep_results(path, a.family).items():
                sweep.setdefault(shape, kernels)
    else:
        sweep = sweep_results(a.sweep, a.prefix)
    if not table:
        print(f"check_table: no table rows found in {a.table or a.picks_exe}")
        return 1
    bad, checked = [], 0
    for shape, kernel in sorted(table.items()):
        got = sweep.get(shape)
        if not got:
            continue  # the sweep did not measure this shape
        checked += 1
        best_kernel = max(got, key=got.get)
        mine = got.get(kernel)
        name = "x".join(map(str, shape))
        if mine is None:
            bad.append(f"{name}: table kernel {kernel} is not in the sweep's ranking of the shape "
                       f"(fastest: {best_kernel})")
        elif mine < (1 - a.tolerance) * got[best_kernel]:
            bad.append(f"{name}: table kernel {kernel} {mine:.1f} TFLOPS is more than "
                       f"{a.tolerance:.0%} below the sweep's fastest {best_kernel} {got[best_kernel]:.1f}")
        else:
            print(f"  {name:<18} {kernel:<36} {mine:8.1f}  (fastest {best_kernel} {got[best_kernel]:.1f})")
    if checked == 0:
        print("check_table: the sweep measured none of the table's shapes")
        return 1
    for b in bad:
        print("FAIL", b)
    print(f"check_table: {checked} shapes checked, {len(bad)} off")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
