#!/usr/bin/env python3
"""A tile's first K block in a ch07_timeline JSON (default: timeline_c9a1097.json here), per tile
change of each recorded CTA (medians over them, cycles of that CTA's SM clock): when the first
K block's empty barrier completed (E1, every reader of the cluster released it) against the later
and the earlier of the two consumer warpgroups' main-loop starts; how far apart the starts were;
when the block's data landed (its full barrier, F1) against the earlier start (negative: before);
the period of the tile's second K block; how far apart the two warpgroups' epilogues of the
previous tile ended. Usage: first_block.py [JSON]"""
import json, os, statistics as st, sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "timeline"))
from analyse import cta_tiles  # noqa: E402  (the timeline's per-CTA series)

path = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "timeline_c9a1097.json")
d = json.load(open(path))
for r in d["runs"]:
    rows = []
    for c in r["ctas"]:
        if not c.get("tiles"):
            continue
        E, F, first, starts, tl = cta_tiles(c)
        n = min(len(tl[0]), len(tl[1]), len(starts))
        for i in range(1, n):
            s0, s1 = tl[0][i][3], tl[1][i][3]
            e0, e1 = tl[0][i - 1][5], tl[1][i - 1][5]
            j = starts[i]
            second = E[j + 1] - E[j] if j + 1 < len(E) and not first[j + 1] else None
            rows.append((E[j] - max(s0, s1), E[j] - min(s0, s1), abs(s0 - s1), F[j] - min(s0, s1),
                         second, abs(e0 - e1)))
    if not rows:
        continue
    med = [st.median(x[i] for x in rows if x[i] is not None) for i in range(6)]
    print("%s %s: %d changes; E1 - later start %.0f, E1 - earlier start %.0f, starts apart %.0f, "
          "F1 - earlier start %.0f, second K block %.0f, epilogue ends apart %.0f"
          % ("x".join(map(str, r["shape"])), r["kernel"], len(rows), *med))
