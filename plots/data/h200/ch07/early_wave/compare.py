#!/usr/bin/env python3
"""Session 22: the early-first-wave kernels (_ew8 / _ew4, and in chapter 6 the plain 8x loop
_loop8) against their twins, from one call's archive of chapter 6 and 7 runs (two runs each,
every kernel timed interleaved with the others at each shape).
Usage: compare.py ab_<commit>.txz [--pairs=NEW:OLD,...]  -> per shape: both runs' medians (us)
and the time ratio, then the geomean time ratio per kernel. --pairs names the twins by their
suffixes (default: _ew8:,_ew4:,:_loop8; session 23's ping-pong hand-over: :_lho, the new kernel
without a suffix, its twin with _lho)."""
import collections
import json
import math
import sys
import tarfile

PAIRS = (("_ew8", ""), ("_ew4", ""), ("", "_loop8"))  # (new suffix, old suffix)


def main(path, pairs=PAIRS):
    runs = collections.defaultdict(dict)  # chapter -> {(impl, shape): [us, ...]}
    with tarfile.open(path) as tar:
        for m in sorted(tar.getmembers(), key=lambda m: m.name):
            if not m.name.endswith(".json"):
                continue
            ch = m.name.split("/")[-1].split("_")[0]
            for b in json.load(tar.extractfile(m)).get("benchmarks", []):  # a failed run: none
                if b.get("run_type") == "aggregate":
                    continue
                impl, shape = b["name"].split("/")[:2]
                runs[ch].setdefault((impl.split(":")[-1], shape), []).append(b["real_time"])
    for ch, t in sorted(runs.items()):
        print(ch)
        ratios = collections.defaultdict(list)
        def order(s):  # shapes MxNxK by size; chapter 8's case names by name
            return (0, [int(x) for x in s.split("x")], "") if s.replace("x", "").isdigit() \
                else (1, [], s)
        shapes = sorted({s for _, s in t}, key=order)
        for s in shapes:
            for impl in sorted({i for i, _ in t}):
                for new, old in pairs:
                    if not new and not old:
                        continue
                    if new and not impl.endswith(new):
                        continue
                    if old and (impl + old, s) not in t:
                        continue
                    n_name = impl
                    o_name = impl[: -len(new)] if new else impl + old
                    if (n_name, s) not in t or (o_name, s) not in t or n_name == o_name:
                        continue
                    a, b = t[(o_name, s)], t[(n_name, s)]
                    r = [y / x for x, y in zip(a, b)]
                    ratios[n_name + " vs " + o_name].append(sum(r) / len(r))
                    print(f"  {s:16s} {n_name:42s} old {', '.join(f'{x:.1f}' for x in a)}"
                          f"  new {', '.join(f'{x:.1f}' for x in b)}  new/old "
                          + " ".join(f"{x:.4f}" for x in r))
        for k, v in ratios.items():
            g = math.exp(sum(map(math.log, v)) / len(v))
            print(f"  geomean time ratio {k}: {g:.4f} over {len(v)} shapes")


if __name__ == "__main__":
    args = [a for a in sys.argv[1:] if not a.startswith("--pairs=")]
    spec = [a[len("--pairs="):] for a in sys.argv[1:] if a.startswith("--pairs=")]
    main(args[0], tuple(tuple(p.split(":")) for p in spec[0].split(",")) if spec else PAIRS)
