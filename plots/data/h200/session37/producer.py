#!/usr/bin/env python3
"""Session 37, call 5: ncu's source view (one launch each, clocks as the driver set them) of
chapter 7's table kernel (64x16_s16, code of 0f8167c) and DeepGEMM's kernel for the same tile and
ring at 64x2112x7168. Prints, per side, the stall samples by reason, the SASS lines with the most
samples, and the producer's loop: warp instructions executed per ring stage (the loop's lines:
from the target of the backward branch after its last TMA load to that branch, every line's
executions summed, over 132 CTAs x 56 K blocks).
Usage: python3 producer.py [--check README]"""
import csv
import io
import os
import sys
import tarfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "ch08"))
import readme_block  # noqa: E402
ARCHIVE = os.path.join(HERE, "call5_db77afb", "src.txz")
STAGES = 132 * 56  # CTAs x K blocks at 64x2112x7168 (one tile per CTA)


def rows(side):
    with tarfile.open(ARCHIVE) as tar:
        text = tar.extractfile(f"src/{side}_sass.csv").read().decode()
    table = list(csv.reader(io.StringIO(text)))
    return table[1], table[2:]


def producer_loop(hdr, data):
    """The producer's loop lines: from the target of the loop's backward branch (the first plain
    BRA after the last TMA load whose target lies before it) to that branch."""
    src = [r[1].strip() for r in data]
    addr = [int(r[0], 16) for r in data]
    last_tma = max(i for i, s in enumerate(src) if s.startswith("UTMALDG"))
    for i in range(last_tma, len(src)):
        words = src[i].replace("@", "").split()
        if "BRA" in words:
            target = int(words[-1].rstrip(";"), 16)
            if target < addr[i]:
                return data[addr.index(target):i + 1]
    raise ValueError("no backward branch after the last TMA load")


def summary(side):
    hdr, data = rows(side)
    ia = hdr.index("Warp Stall Sampling (All Samples)")
    ie = hdr.index("Instructions Executed")
    reasons = [i for i, h in enumerate(hdr) if h.startswith("stall_") and "Not Issued" not in h]
    total = {hdr[i][6:]: sum(int(r[i] or 0) for r in data) for i in reasons}
    samples = sum(total.values())
    loop = producer_loop(hdr, data)
    per_stage = sum(int(r[ie] or 0) for r in loop) / STAGES
    top = sorted(data, key=lambda r: -int(r[ia] or 0))[:3]
    return {"instructions": sum(int(r[ie] or 0) for r in data), "samples": samples,
            "reasons": {k: v / samples for k, v in sorted(total.items(), key=lambda kv: -kv[1])},
            "producer_per_stage": per_stage, "producer_lines": len(loop),
            "top": [(int(r[ia] or 0) / samples, r[1].strip()) for r in top]}


def table():
    s = {side: summary(side) for side in ("ours", "dg")}
    ours, dg = s["ours"], s["dg"]
    out = ["| 64x2112x7168, one launch | chapter 7 (`64x16_s16`) | DeepGEMM (64 x 16, 16 stages) |",
           "|---|---:|---:|",
           f"| warp instructions executed | {ours['instructions']:,} | {dg['instructions']:,} |",
           f"| producer: warp instructions per ring stage | {ours['producer_per_stage']:.1f} | "
           f"{dg['producer_per_stage']:.1f} |"]
    for reason in ("long_sb", "wait", "selected", "barrier"):
        a, b = (100 * x["reasons"].get(reason, 0) for x in (ours, dg))
        out.append(f"| stall samples: {reason} | {a:.0f} % | {b:.0f} % |")
    for side in ("ours", "dg"):
        share, line = s[side]["top"][0]
        words = line.split()
        op = " ".join(words[:2]) if line.startswith("@") else words[0]
        who = "chapter 7" if side == "ours" else "DeepGEMM"
        out.append(f"| most-sampled line, {who} | `{op}` {100 * share:.0f} % | |")
    return out


def main(argv):
    lines = table()
    if len(argv) == 3 and argv[1] == "--check":
        return readme_block.check_lines(argv[2], lines)
    print("\n".join(lines))
    for side in ("ours", "dg"):
        s = summary(side)
        print(f"\n{side}: top lines by stall samples")
        for share, line in s["top"]:
            print(f"  {100 * share:4.1f} %  {line}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
