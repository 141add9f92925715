#!/usr/bin/env python3
"""Session 18: stream-K over the last round (chapter 8's _sk kernels) against the data-parallel
kernels they are built from, in the chapter's executable (interleaved, L2 flushed, 50 us GPU-side
delay; two runs per call in reversed kernel order; median times). Each cell is the stream-K
kernel's time over its twin's in the same run, the mean of the two runs (> 1: slower).

  call 1 (20472cf)  first rule (split a last round of 1/8 to 7/8 of the grid), the owner's reads
                    into registers;
  call 3 (0dc62d2)  second rule (1/2 to 7/8), reads into registers;
  call 4 (8722e7c)  second rule; _skr reads into registers (call 3's code), _sk staged through
                    the ring with cp.async.

    python3 plots/data/h200/ch08/session18/streamk.py [--check README]
"""
import os
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, ".."))
from readme_block import executable_medians  # noqa: E402
WIDE, TALL = "256x128_s4_c1x1_promoted_tma_b1", "128x256_s4_c1x1_promoted_tma_b1"


def medians(path):
    return executable_medians(os.path.join(HERE, path))


def ratio(runs, kernel, twin, case):
    r = [run[(kernel, case)] / run[(twin, case)] for run in runs]
    return sum(r) / len(r)


def split(case, block_m, block_n):
    """Whether the second rule splits the case's last round (stream_k.hpp), on 132 CTAs."""
    m = re.match(r"(bal|masked)_g(\d+)x(\d+)_n(\d+)_k(\d+)", case)
    groups, rows, n = int(m.group(2)), int(m.group(3)), int(m.group(4))
    tiles = groups * -(-rows // block_m) * -(-n // block_n)
    grid = min(132, tiles)
    last = tiles % grid
    return f"{tiles} tiles, " + (f"last round {last}: split" if 2 * last >= grid and 8 * last <= 7 * grid
                                 else f"last round {last or grid}: whole")


def table():
    c1 = [medians("call1_20472cf/sk_run1.json"), medians("call1_20472cf/sk_run2.json")]
    c3 = [medians("call3_0dc62d2/sk2_run1.json"), medians("call3_0dc62d2/sk2_run2.json")]
    c4 = [medians("call4_8722e7c/sk3_run1.json"), medians("call4_8722e7c/sk3_run2.json")]
    cases = sorted({c for (_, c) in c4[0]})
    lines = ["| case (256 x 128 tiles) | 256 x 128, us (call 4) | call 1 | call 3 | call 4 `_skr` | call 4 `_sk` | 128 x 256: call 1 | call 3 | call 4 `_sk` |",
             "|---|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for c in cases:
        base = sum(run[(WIDE, c)] for run in c4) / 2
        cells = [ratio(c1, WIDE + "_sk", WIDE, c), ratio(c3, WIDE + "_sk", WIDE, c),
                 ratio(c4, WIDE + "_skr", WIDE, c), ratio(c4, WIDE + "_sk", WIDE, c),
                 ratio(c1, TALL + "_sk", TALL, c), ratio(c3, TALL + "_sk", TALL, c),
                 ratio(c4, TALL + "_sk", TALL, c)]
        lines.append(f"| {c} ({split(c, 256, 128)}) | {base:.1f} | " +
                     " | ".join(f"{x:.3f}" for x in cells) + " |")
    return "\n".join(lines)


if __name__ == "__main__":
    text = table()
    if len(sys.argv) == 3 and sys.argv[1] == "--check":
        sys.path.insert(0, os.path.join(HERE, ".."))
        from readme_block import check  # noqa: E402
        check(sys.argv[2], "session18-streamk", text, "session18/streamk.py", "the JSON beside it")
    print(text)
