#!/usr/bin/env python3
"""Where a block-scaled kernel's cycles go, from ch07_timeline's ring stamps (chapter 7's
NOTEBOOK.md, "A timeline of the kernel"; common/engine/timeline.cuh says what is stamped).

Per K block j of a recorded CTA: F_j, the clock when its stage's full barrier completed (operands
landed), and E_j, when its empty barrier completed (every reader, in both CTAs of a cluster,
released it: in chapter 7's loop right after the K block's last wgmma completes, before its last
promotion). From them:
  period     E_j - E_(j-1): the consumers' time per K block; against the tensor cores' own
             BlockM x BlockN x 128 / 4096 cycles (4096 e4m3 MACs per cycle and SM);
  mid-tile   the periods of K blocks that are not a tile's first; tile change: the first's;
  early      E_(j-1) - F_j: how long block j's data had been waiting when block j-1 was released
             (negative: it landed after; the consumers then waited for it).
And where the JSON has the consumers' tile stamps (since fe2206d: each tile's main-loop start
and end and epilogue end, per warpgroup), a tile change split into its parts, medians over the
tile changes of CTAs 0-3 and both warpgroups:
  last promotion   loop end - E of the tile's last K block (the release comes before it);
  epilogue         epilogue end - loop end;
  to next tile     next loop start - epilogue end (the scheduler, the next tile's set-up);
  first K block    E of the next tile's first K block - its loop start (its B scales' first
                   load, the wait, the waves).
Usage: analyse.py [JSON ...] (default: every *.json here; .json.xz read as well); prints markdown
tables per file. analyse.py --positions JSON...: cycles per K block by position in the tile;
analyse.py --unroll JSON...: by position modulo the lean loop's unroll factor (session 23).
"""
import glob
import json
import lzma
import statistics
import sys


def load(path):
    """A timeline JSON, or one compressed with xz (path ending in .xz)."""
    with (lzma.open(path, "rt") if path.endswith(".xz") else open(path)) as f:
        return json.load(f)


def pct(v, q):
    v = sorted(v)
    return v[min(len(v) - 1, int(q * len(v)))]


def analyse_cta(c, tensor):
    F = [x[1] for x in c["full"]]
    E = [x[1] for x in c["empty"]]
    first = [x[0] for x in c["empty"]]
    n = min(len(F), len(E))
    mid, change, early = [], [], []
    for j in range(1, n):
        p = E[j] - E[j - 1]
        (change if first[j] else mid).append(p)
        early.append(E[j - 1] - F[j])
    elapsed = E[n - 1] - F[0]
    return {
        "blocks": n,
        "tiles": sum(first[:n]),
        "elapsed": elapsed,
        "util": n * tensor / elapsed,
        "mid_med": statistics.median(mid),
        "mid_mean": statistics.mean(mid),
        "mid_p90": pct(mid, 0.9),
        "change_med": statistics.median(change) if change else float("nan"),
        "mid_excess": sum(p - tensor for p in mid),
        "change_excess": sum(p - tensor for p in change),
        "early_med": statistics.median(early),
        "late_frac": sum(1 for e in early if e < 0) / len(early),
    }


def table(path):
    d = load(path)
    lines = [f"Source: `{path.split('/')[-1]}` (commit {d['commit'][:7]}, {d['gpu']})", ""]
    lines.append("| shape | kernel | observed / twin | tensor cycles per K block | K blocks, tiles (CTA 0) "
                 "| cycles per K block mid-tile: median, mean, p90 | at a tile change: median "
                 "| tensor busy (estimate) | lost mid-tile / at tile changes "
                 "| data early by (median cycles) | K blocks whose data landed late |")
    lines.append("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for r in d["runs"]:
        tensor = r["block_m"] * r["block_n"] * 128 / 4096
        rows = [analyse_cta(c, tensor) for c in r["ctas"] if c["full"] and c["empty"]]
        a = rows[0]
        lost = a["elapsed"] - a["blocks"] * tensor
        shape = "x".join(str(v) for v in r["shape"])
        lines.append(
            f"| {shape} | `{r['kernel']}` | {r['observed_us'] / r['twin_us']:.3f} | {tensor:.0f} "
            f"| {a['blocks']}, {a['tiles']} | {a['mid_med']:.0f}, {a['mid_mean']:.0f}, {a['mid_p90']:.0f} "
            f"| {a['change_med']:.0f} | {statistics.mean(x['util'] for x in rows):.3f} "
            f"| {a['mid_excess'] / lost:.2f} / {a['change_excess'] / lost:.2f} "
            f"| {a['early_med']:.0f} | {a['late_frac']:.3f} |")
    lines.append("")
    lines.append("Tensor busy: K blocks x tensor cycles over the recorded span, the mean of CTAs 0-3; "
                 "lost: the span's cycles beyond the tensor cycles, split into mid-tile K blocks' and "
                 "tile changes' shares (CTA 0); late: E_(j-1) < F_j.")
    return "\n".join(lines)


def cta_tiles(c):
    """A recorded CTA's series: E and F (empty and full barrier completions per K block), which
    K blocks start a tile (first), their indices in order (starts), and each consumer
    warpgroup's tile stamps ordered by main-loop start."""
    E = [x[1] for x in c["empty"]]
    F = [x[1] for x in c["full"]]
    first = [x[0] for x in c["empty"]]
    starts = [j for j in range(len(E)) if first[j]]  # each tile's first K block, in order
    tiles = {wg: sorted((t for t in c["tiles"] if t[2] == wg), key=lambda t: t[3]) for wg in (0, 1)}
    return E, F, first, starts, tiles


def tile_changes(r):
    parts = {"last promotion": [], "epilogue": [], "to next tile": [], "first K block": [],
             "whole change": []}
    for c in r["ctas"]:
        if not c.get("tiles"):
            continue
        E, _, first, starts, by_wg = cta_tiles(c)
        for wg in (0, 1):
            tiles = by_wg[wg]
            for i in range(len(tiles) - 1):
                if i + 1 >= len(starts):
                    break
                t, nxt = tiles[i], tiles[i + 1]
                last_e = E[starts[i + 1] - 1]
                first_e = E[starts[i + 1]]
                parts["last promotion"].append(t[4] - last_e)
                parts["epilogue"].append(t[5] - t[4])
                parts["to next tile"].append(nxt[3] - t[5])
                parts["first K block"].append(first_e - nxt[3])
                parts["whole change"].append(first_e - last_e)
    return {k: statistics.median(v) for k, v in parts.items() if v}


def change_table(path):
    d = load(path)
    rows = [(r, tile_changes(r)) for r in d["runs"]]
    rows = [(r, t) for r, t in rows if t]
    if not rows:
        return ""
    keys = ["last promotion", "epilogue", "to next tile", "first K block", "whole change"]
    lines = ["| shape | kernel | " + " | ".join(keys) + " |", "|---|---|" + "---:|" * len(keys)]
    for r, t in rows:
        shape = "x".join(str(v) for v in r["shape"])
        lines.append(f"| {shape} | `{r['kernel']}` | " + " | ".join(f"{t[k]:.0f}" for k in keys) + " |")
    lines.append("")
    lines.append("Cycles, medians over the tile changes of CTAs 0-3 and both warpgroups; the whole change "
                 "runs from the release of a tile's last K block to that of the next tile's first.")
    return "\n".join(lines)


def positions(path):
    """Mean cycles per K block by its position in the tile (the first 40), CTAs 0 and 1."""
    d = load(path)
    out = []
    for r in d["runs"]:
        for c in r["ctas"][:2]:
            E = [x[1] for x in c["empty"]]
            first = [x[0] for x in c["empty"]]
            pos, p, by = [], 0, {}
            for j in range(len(E)):
                p = 0 if first[j] else p + 1
                pos.append(p)
            for j in range(1, len(E)):
                by.setdefault(pos[j], []).append(E[j] - E[j - 1])
            shape = "x".join(str(v) for v in r["shape"])
            out.append(f"{shape} {r['kernel']} CTA {c['cta']}: " +
                       " ".join(f"{k}:{statistics.mean(v):.0f}" for k, v in sorted(by.items()) if k < 40))
    return "\n".join(out)


def unroll_of(kernel):
    """The lean loop's unroll factor of a chapter-7 kernel, from its tile (default_block_scaled_loop:
    8 where a warpgroup has two 64-row slabs, 256 x 128; else 4) or its _loopN suffix."""
    for part in kernel.split("_"):
        if part.startswith("loop") and part[4:].isdigit():
            return int(part[4:])
    return 8 if kernel.startswith("256x") else 4


def unroll_table(path):
    """Mean cycles per K block (mid-tile) by the block's position in the tile modulo the loop's
    unroll factor u, every recorded CTA: a loop whose unrolled body costs extra once per
    iteration shows it at one residue (session 23)."""
    d = load(path)
    lines = ["| shape | kernel | u | mean cycles per K block at position mod u = 0, 1, ... | "
             "spike over the others' median |", "|---|---|---:|---|---:|"]
    for r in d["runs"]:
        u = unroll_of(r["kernel"])
        by = {}
        for c in r["ctas"]:
            E = [x[1] for x in c["empty"]]
            first = [x[0] for x in c["empty"]]
            p = 0
            for j in range(len(E)):
                p = 0 if first[j] else p + 1
                if p > 0 and j > 0:
                    by.setdefault(p % u, []).append(E[j] - E[j - 1])
        means = [statistics.mean(by[k]) for k in range(u) if k in by]
        top = max(means)
        rest = sorted(m for m in means if m != top)
        spike = top - (statistics.median(rest) if rest else top)
        shape = "x".join(str(v) for v in r["shape"])
        lines.append(f"| {shape} | `{r['kernel']}` | {u} | " + ", ".join(f"{m:.0f}" for m in means)
                     + f" | {spike:.0f} |")
    return "\n".join(lines)


if __name__ == "__main__":
    if len(sys.argv) > 2 and sys.argv[1] == "--unroll":
        for p in sys.argv[2:]:
            print(unroll_table(p))
        sys.exit(0)
    if len(sys.argv) > 2 and sys.argv[1] == "--positions":
        for p in sys.argv[2:]:
            print(positions(p))
        sys.exit(0)
    paths = sys.argv[1:] or sorted(glob.glob(__file__.rsplit("/", 1)[0] + "/*.json"))
    for p in paths:
        print(table(p))
        print()
        c = change_table(p)
        if c:
            print(c)
            print()
