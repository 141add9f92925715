#!/usr/bin/env python3
"""Session 15, call 6: the staged loop on the default's 3-stage tile against the lean loop, two runs
of ch08_grouped_moe (the kernels' order reversed; each run interleaves its implementations per
case). Prints the README's table (TFLOPS per run and the staged kernel's time over the lean one's);
with --check README, exits 1 unless README's block between <!-- session15-s3:begin --> and
<!-- session15-s3:end --> is exactly that output.

    python3 plots/data/h200/ch08/session15/staged_s3.py [--check chapters/08_grouped_moe/NOTEBOOK.md]
"""
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import readme_block  # noqa: E402  (plots/data/h200/ch08/readme_block.py)

HERE = os.path.dirname(os.path.abspath(__file__))
RUNS = [("lean first", "staged_s3_lean_first_44ecee1_call6.json"),
        ("staged first", "staged_s3_staged_first_44ecee1_call6.json")]
LEAN = "ch08:256x128_s3_c1x2_promoted_tma_b4"
STAGED = LEAN + "_loop12"

lines = []
data = []
for label, f in RUNS:
    d = json.load(open(os.path.join(HERE, f)))
    by = {}
    for b in d["benchmarks"]:
        impl, case = b["name"].split("/")[:2]
        by.setdefault(case, {})[impl] = b
    data.append((label, f, d["context"], by))
ctx = data[0][2]
lines.append(f"Source: `{data[0][1]}` and `{data[1][1]}` (commit {ctx['git_commit'][:7]}, {ctx['gpu']}, "
             f"timing {ctx['timing']}, GPU delay {float(ctx['gpu_delay_us']):.0f} us, L2 flushed before each timed call).\n")
lines.append("| case | run | lean loop, TFLOPS | staged loop, TFLOPS | lean time / staged time |")
lines.append("|---|---|---:|---:|---:|")
for case in data[0][3]:
    for label, _, _, by in data:
        v = by[case]
        lean, staged = v[LEAN], v[STAGED]
        lines.append(f"| `{case}` | {label} | {lean['TFLOPS']:.1f} | {staged['TFLOPS']:.1f} | "
                     f"{lean['real_time'] / staged['real_time']:.3f} |")
text = "\n".join(lines)
args = sys.argv[1:]
if "--check" in args:
    readme_block.check(args[args.index("--check") + 1], "session15-s3", text, "staged_s3.py",
                       "the JSON")
else:
    print(text)
