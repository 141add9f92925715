#!/usr/bin/env python3
"""Session 14's table from peers_interleaved_6904f92_call3.json (and session 15's from its JSON, with
--marker session15-table): per case, DeepGEMM's time over each fp8gemm grouped kernel's (>1: ours
faster; the plain fp8gemm_* row is the plan's default). --ratio A,B adds a column of kernel B's time
over kernel A's per case (>1: A faster), for each such pair given.
Prints Markdown; with --check README, exits 1 unless README's block between
<!-- MARKER:begin --> and <!-- MARKER:end --> (MARKER: session14-table unless --marker) is exactly
that output.

    python3 plots/data/h200/ch08/session14/summarise.py [JSON] [--marker M] [--ratio A,B]...
        [--check chapters/08_grouped_moe/NOTEBOOK.md]
"""
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import readme_block  # noqa: E402  (plots/data/h200/ch08/readme_block.py)

here = os.path.dirname(os.path.abspath(__file__))
args = sys.argv[1:]
check = None
if "--check" in args:
    i = args.index("--check")
    check = args[i + 1]
    del args[i:i + 2]
marker = "session14-table"
if "--marker" in args:
    i = args.index("--marker")
    marker = args[i + 1]
    del args[i:i + 2]
ratios = []
while "--ratio" in args:
    i = args.index("--ratio")
    ratios.append(tuple(args[i + 1].split(",")))
    del args[i:i + 2]
path = args[0] if args else os.path.join(here, "peers_interleaved_6904f92_call3.json")
lines = []
print = lines.append  # noqa: A001  (collected, then printed or compared)
d = json.load(open(path))
by = {}
for r in d["benchmarks"]:
    impl, case = r["name"].split("/", 1)
    by.setdefault(case.split("/")[0], {})[impl] = r["real_time"]
kernels = []
for v in by.values():
    for impl in v:
        if ":" in impl and impl.split(":", 1)[1] not in kernels:
            kernels.append(impl.split(":", 1)[1])
ctx = d["context"]
print(f"Source: `{os.path.basename(path)}` (commit {ctx['git_commit'][:7]}, {ctx['gpu']}, "
      f"DeepGEMM {ctx.get('deep_gemm_version', '?')}, torch {ctx.get('torch_version', '?')}, CUDA runtime "
      f"{ctx.get('cuda_runtime_version', '?')}, driver {ctx.get('nvidia_driver', '?')}; timing {ctx['timing']}, "
      f"{ctx['delay']}, L2 flushed).\n")
print("DeepGEMM's time / ours (>= 1.05 is issue 10's target), the default and each kernel by name:\n")
short = [k.replace("_promoted_tma", "") for k in kernels]
rshort = [f"`{b.replace('_promoted_tma', '')}` / `{a.replace('_promoted_tma', '')}`" for a, b in ratios]
print("| case | default | " + " | ".join(f"`{s}`" for s in short + []) +
      "".join(f" | time of {r}" for r in rshort) + " |")
print("|---|---:|" + "---:|" * (len(kernels) + len(ratios)))
for case, v in by.items():
    masked = "fp8gemm_grouped_masked" in v
    ours = "fp8gemm_grouped_masked" if masked else "fp8gemm_grouped_contiguous"
    dg = v["deepgemm_masked" if masked else "deepgemm_contiguous"]
    cells = [f"{dg / v[ours]:.3f}"] + [f"{dg / v[ours + ':' + k]:.3f}" if ours + ":" + k in v else "-" for k in kernels]
    cells += [f"{v[ours + ':' + b] / v[ours + ':' + a]:.3f}" for a, b in ratios]
    print(f"| `{case}` | " + " | ".join(cells) + " |")

text = "\n".join(lines)
if check is None:
    sys.stdout.write(text + "\n")
else:
    readme_block.check(check, marker, text, "summarise.py", os.path.basename(path))
