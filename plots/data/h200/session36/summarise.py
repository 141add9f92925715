#!/usr/bin/env python3
"""Session 36, from the committed files: the 1 x 128 dual quantiser's variants, each beside
v6_interior (the public quantize_1x128_dual's kernel) in the same process.

  call 1 (abe5a85): v7_pf050 / pf100 / pf200, v6 where each CTA first asks L2
      (cp.async.bulk.prefetch, one thread) for a slice of the x rows that the CTAs launched half,
      one or two resident grids (396 CTAs) later read; two runs of quantize_bench;
  call 2 (ef8999a): v8_ldhint (loads ld.global.nc.L1::no_allocate.L2::256B), v9_hints (v8 and
      the q and q_t stores st.global.cs), v10_l2hint (loads ld.global.nc.L2::256B); three runs;
  and ncu (SpeedOfLight, MemoryWorkloadAnalysis; one launch at 8192 x 7168) of each; and the
  public dual against the median of every copy of the same bytes timed in its run (the bench
  times one beside each item), beside its own item's copy (the target's method).
The variants were removed after these calls (89850da); their code is at abe5a85 and ef8999a.

    python3 plots/data/h200/session36/summarise.py
    python3 plots/data/h200/session36/summarise.py --check chapters/07_block_scaling/NOTEBOOK.md
"""
import collections
import json
import os
import re
import statistics
import sys
import tarfile

HERE = os.path.dirname(os.path.abspath(__file__))
CALLS = [("call1_abe5a85", "abe5a85"), ("call2_ef8999a", "ef8999a")]
MARKER = "session36-dual"
NCU_KEYS = ["Duration", "DRAM Throughput", "L2 Cache Throughput", "L2 Hit Rate"]


def runs(call):
    """[{(name, shape): (GB/s, % of the copy)}] per quantize_bench JSON in the call's q.txz."""
    out = []
    with tarfile.open(os.path.join(HERE, call, "q.txz")) as tar:
        for m in sorted(tar.getmembers(), key=lambda m: m.name):
            if not re.search(r"quantize_bench_dual_.*\.json$", m.name):
                continue
            r = {}
            for b in json.load(tar.extractfile(m))["benchmarks"]:
                name, shape = b["name"].split("/")[:2]
                if name.startswith("quantize_1x128_dual") and "pct_of_copy" in b:
                    r[(name, shape)] = (b["GB/s"], b["pct_of_copy"])
            out.append(r)
    return out


def copies(call):
    """[(shape, [copy GB/s of every item of that shape], public dual GB/s)] per run of the call:
    the device copies of the same bytes that the run timed, one beside each item."""
    out = []
    with tarfile.open(os.path.join(HERE, call, "q.txz")) as tar:
        for m in sorted(tar.getmembers(), key=lambda m: m.name):
            if not re.search(r"quantize_bench_dual_.*\.json$", m.name):
                continue
            cs, pub = collections.defaultdict(list), {}
            for b in json.load(tar.extractfile(m))["benchmarks"]:
                name, shape = b["name"].split("/")[:2]
                if name.startswith("copy_d2d_as_quantize_1x128_dual"):
                    cs[shape].append(b["GB/s"])
                elif name == "quantize_1x128_dual":
                    pub[shape] = b["GB/s"]
            out += [(shape, sorted(cs[shape]), pub[shape]) for shape in sorted(pub)]
    return out


def ncu(call):
    """{variant: {key: "value unit"}} from the call's ncu detail pages."""
    out = {}
    with tarfile.open(os.path.join(HERE, call, "q.txz")) as tar:
        for m in tar.getmembers():
            v = re.search(r"ncu_(.+)_details\.txt$", m.name)
            if not v:
                continue
            d = {}
            for line in tar.extractfile(m).read().decode().splitlines():
                f = line.split()
                for k in NCU_KEYS:
                    if line.strip().startswith(k + " ") and k not in d:
                        d[k] = f"{f[-1]} {f[-2]}"
            out[v.group(1)] = d
    return out


def table():
    lines = ["| call (commit) | kernel | shape | GB/s, run by run | % of the copy, run by run | "
             "/ v6_interior's GB/s (mean) |", "|---|---|---|---|---|---:|"]
    for call, commit in CALLS:
        rs = runs(call)
        names = sorted({k for r in rs for k in r
                        if re.search(r"_v(6_interior|7|8|9|10)_?[a-z0-9]*$", k[0])
                        or k[0] == "quantize_1x128_dual"},
                       key=lambda k: (k[1], k[0] != "quantize_1x128_dual",
                                      int(re.search(r"_v(\d+)", k[0]).group(1)) if "_v" in k[0] else 0,
                                      k[0]))
        for name, shape in names:
            if not all((name, shape) in r for r in rs):
                continue
            gbs = [r[(name, shape)][0] for r in rs]
            pct = [r[(name, shape)][1] for r in rs]
            base = [r[("quantize_1x128_dual_v6_interior", shape)][0] for r in rs]
            ratio = sum(g / b for g, b in zip(gbs, base)) / len(rs)
            label = "public `quantize_1x128_dual` (v6)" if name == "quantize_1x128_dual" \
                else "`" + name.replace("quantize_1x128_dual_", "") + "`"
            lines.append(f"| {call.split('_')[0]} (`{commit}`) | {label} | {shape} | "
                         + ", ".join(f"{g:.0f}" for g in gbs) + " | "
                         + ", ".join(f"{p:.1f}" for p in pct) + f" | {ratio:.3f} |")
    lines.append("")
    lines.append("| call, run | shape | the run's copies of these bytes (GB/s) | their median | "
                 "public dual GB/s | % of its own item's copy | % of the median copy |")
    lines.append("|---|---|---|---:|---:|---:|---:|")
    for call, commit in CALLS:
        own = [r[("quantize_1x128_dual", sh)][1] for r in runs(call) for sh in sorted(
            {k[1] for k in r if k[0] == "quantize_1x128_dual"})]
        for i, (shape, cs, pub) in enumerate(copies(call)):
            med = statistics.median(cs)
            lines.append(f"| {call.split('_')[0]}, {i // 2 + 1} | {shape} | {cs[0]:.0f}-{cs[-1]:.0f} "
                         f"({len(cs)}) | {med:.0f} | {pub:.0f} | {own[i]:.1f} | "
                         f"{100 * pub / med:.1f} |")
    lines.append("")
    lines.append("| call | kernel (8192 x 7168, one launch under ncu) | "
                 + " | ".join(NCU_KEYS) + " |")
    lines.append("|---|---|" + "---:|" * len(NCU_KEYS))
    for call, commit in CALLS:
        for v, d in sorted(ncu(call).items(), key=lambda x: int(re.search(r"v(\d+)", x[0]).group(1))):
            lines.append(f"| {call.split('_')[0]} | `{v}` | "
                         + " | ".join(d.get(k, "-") for k in NCU_KEYS) + " |")
    return "\n".join(lines)


def main(argv):
    text = table()
    if "--check" in argv:
        sys.path.insert(0, os.path.join(HERE, "..", "ch08"))
        import readme_block  # noqa: E402
        readme_block.check(argv[argv.index("--check") + 1], MARKER, text,
                           "session36/summarise.py", "plots/data/h200/session36/")
        return 0
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
