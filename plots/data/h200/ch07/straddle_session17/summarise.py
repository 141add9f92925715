#!/usr/bin/env python3
"""Session 17, call 3 (binaries of 81c7fc5): chapter 7's tiles that straddle B-scale blocks with
their default loop and with the rolled lean loop (_loop1; 128 x 176 also unrolled 2x, _loop2),
beside the table's tile at each shape, in the chapter's executable (interleaved, L2 flushed,
50 us GPU-side delay, medians), two runs in reversed kernel order (*_default_first.json,
*_rolled_first.json). Prints each kernel's median time over its tile's default loop (< 1: faster)
and over the table's tile, per run and their mean.

    python3 plots/data/h200/ch07/straddle_session17/summarise.py [--check README]
"""
import json
import os
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
TABLE = {"large": "192x128_s4_c2x1_promoted_tma_b2", "decode": "128x64_s8_c1x1_promoted_tma_b1"}


def medians(path):
    out = {}
    for b in json.load(open(path))["benchmarks"]:
        m = re.match(r"ch07:([^/]+)/(\d+x\d+x\d+)/", b["name"])
        if m:
            out[(m.group(1), m.group(2))] = b["median_us"]
    return out


def rows():
    lines = ["| shape | kernel | / its default loop (run 1, run 2: mean) | / the table's tile (mean) |",
             "|---|---|---:|---:|"]
    for part in ("large", "decode"):
        runs = [medians(os.path.join(HERE, f"straddle_{part}_{o}_first.json")) for o in ("default", "rolled")]
        shapes = sorted({s for (_, s) in runs[0]}, key=lambda s: [int(v) for v in s.split("x")])
        for s in shapes:
            for k in sorted({k for (k, ss) in runs[0] if ss == s and k != TABLE[part]}):
                base = re.sub(r"_loop\d+$", "", k)
                r_def = [r[(k, s)] / r[(base, s)] for r in runs]
                r_tab = [r[(k, s)] / r[(TABLE[part], s)] for r in runs]
                d = "-" if k == base else f"{r_def[0]:.3f}, {r_def[1]:.3f}: **{sum(r_def) / 2:.3f}**"
                lines.append(f"| {s} | `{k}` | {d} | {sum(r_tab) / 2:.3f} |")
    return "\n".join(lines)


if __name__ == "__main__":
    text = rows()
    if len(sys.argv) == 3 and sys.argv[1] == "--check":
        sys.path.insert(0, os.path.join(HERE, "..", "..", "ch08"))
        from readme_block import check  # noqa: E402  (chapter 8's shared README-block check)
        check(sys.argv[2], "straddle-session17", text, "plots/data/h200/ch07/straddle_session17/summarise.py", "the JSON beside it")
    print(text)
