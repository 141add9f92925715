#!/usr/bin/env python3
"""Old against new binaries from one GPU call: chapters 6, 7 and 8's executables run in the order
old, new, new, old (sessions 19-21; each call's README or script says which). Reads the call's
archive (ab_<commit>.txz) or a folder it was unpacked into; the runs are the JSON files named
<chapter>_<run>_<old|new>.json in it. Prints one markdown table per chapter present: each side's
times (us, the JSON's real_time, runs 1, 4 and 2, 3), new / old, and the same ratio of the peer
timed in the same runs (its drift): cuBLASLt per tensor (fast or promoted) for chapter 6, cuBLASLt
block-scaled for chapter 7, chapter 7's loop per group (ch07_loop) for chapter 8.
Usage: abcompare.py ARCHIVE_OR_DIR, e.g. abcompare.py epilogue_fence_fcfc53b/ab_fcfc53b.txz."""
import json
import os
import re
import sys
import tarfile

PAIRS = [("ch06", [("ch06_fast", "cublaslt_per_tensor"),
                   ("ch06_promoted", "cublaslt_per_tensor_promoted")]),
         ("ch07", [("ch07_block_scaled", "cublaslt_block_scaled")]),
         ("ch08", [("ch08_grouped", "ch07_loop")])]
NAME = re.compile(r"(ch0[678])_(\d)_(old|new)\.json$")


def times(doc):
    return {b["name"].split("/iterations")[0]: b["real_time"] for b in doc["benchmarks"] if "real_time" in b}


def parse(name, text):
    """A run's times, or None (with a message) where its JSON was cut off, e.g. by a timeout."""
    try:
        return times(json.loads(text))
    except json.JSONDecodeError as e:
        print(f"abcompare.py: {name} skipped (unreadable JSON: {e})", file=sys.stderr)
        return None


def load(path):
    runs = {}
    if os.path.isdir(path):
        for root, _, files in os.walk(path):
            for f in files:
                g = NAME.search(f)
                if g:
                    with open(os.path.join(root, f)) as fh:
                        t = parse(f, fh.read())
                    if t is not None:
                        runs[(g[1], int(g[2]), g[3])] = t
        return runs
    with tarfile.open(path) as tar:
        for m in tar.getmembers():
            g = NAME.search(m.name)
            if g:
                t = parse(m.name, tar.extractfile(m).read().decode())
                if t is not None:
                    runs[(g[1], int(g[2]), g[3])] = t
    return runs


def main(argv):
    if len(argv) != 2:
        sys.exit(__doc__)
    runs = load(argv[1])
    if not runs:
        sys.exit(f"abcompare.py: no <chapter>_<run>_<old|new>.json in {argv[1]}")

    def side(ch, name, v):
        return [runs[k][name] for k in sorted(runs) if k[0] == ch and k[2] == v and name in runs[k]]

    for ch, pairs in PAIRS:
        rows = []
        for impl, peer in pairs:
            shapes = sorted({n.split("/", 1)[1] for k, r in runs.items() if k[0] == ch for n in r
                             if n.startswith(impl + "/")})
            for s in shapes:
                o, n = side(ch, f"{impl}/{s}", "old"), side(ch, f"{impl}/{s}", "new")
                po, pn = side(ch, f"{peer}/{s}", "old"), side(ch, f"{peer}/{s}", "new")
                if not o or not n:
                    continue
                r = (sum(n) / len(n)) / (sum(o) / len(o))
                pr = f"{(sum(pn) / len(pn)) / (sum(po) / len(po)):.4f}" if po and pn else "-"
                rows.append(f"| {s} | {impl} | {', '.join('%.1f' % x for x in o)} | "
                            f"{', '.join('%.1f' % x for x in n)} | {r:.4f} | {peer} {pr} |")
        if rows:
            print(f"| {ch} shape | impl | old (runs) | new (runs) | new / old | peer new / old |")
            print("|---|---|---|---|---:|---:|")
            print("\n".join(rows))
            print()


if __name__ == "__main__":
    main(sys.argv)
