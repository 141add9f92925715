#!/usr/bin/env python3
"""Session 49's H100 calls (binaries of a2836d9; call 7 of c935eb7): the sustained runs of calls 3-6 (each kernel alone
for ~2 s, back-to-back launches, L2 flushed before each, the median; call_c.sh) beside the
dispatch sweep's block medians and interleaved confirmation of call 1 at 8192^3, and each
run's SM clock and power (nvidia-smi every 100 ms, samples over 300 W).
  python3 plots/data/h200/session49/summarise.py
check_table's verdicts for call 1's sweeps need the picks of the same commit (CPU only):
  python3 tools/check_table.py --picks-exe build/bin/fp8gemm_dispatch_picks --sms 112 \\
    --family mxfp8_hopper --dispatch-sweep plots/data/h200/session49/call1_h100_a2836d9/dispatch_sweep_mx_sms112_a2836d9.json
"""
import glob
import io
import json
import os
import re
import statistics as st
import tarfile

HERE = os.path.dirname(os.path.abspath(__file__))
PAIRS = {  # (shape tag, family tag): (the table's row on 132 SMs, table_sms' pick on 112)
    "bs": ("192x128_s4_c1x1_promoted_tma_b2", "256x128_s3_c1x2_promoted_tma_b4"),
    "f": ("128x192_s4_c2x1_fast_tma_b2_pp", "192x128_s4_c2x1_fast_tma_b2"),
    "w": ("192x128_s4_c1x1_promoted_tma_b2", "256x128_s3_c1x2_promoted_tma_b4"),
}
SHAPE = {"bs": "8192^3 block-scaled", "f": "8192^3 per-tensor fast", "w": "4096x24576x1536 block-scaled"}


def secs(hms):
    h, m, s = hms.split(":")
    return int(h) * 3600 + int(m) * 60 + float(s)


def sustained(call):
    tar = tarfile.open(os.path.join(HERE, call, "logs.txz"))
    files = {m.name: tar.extractfile(m).read().decode() for m in tar.getmembers() if m.isfile()}
    smi = []
    for line in io.StringIO(files.get("sus/smi.csv", "")):
        p = [x.strip() for x in line.split(",")]
        if len(p) >= 3 and "MHz" in p[1]:
            smi.append((secs(p[0].split()[1]), int(p[1].split()[0]), float(p[2].split()[0])))
    marks = {}
    for line in io.StringIO(files.get("sus/marks.txt", "")):
        tm, ev, tag = line.split()
        marks.setdefault(tag, {})[ev] = secs(tm[:15])
    out = []
    for name, text in sorted(files.items()):
        if not name.endswith(".json"):
            continue
        tag = os.path.basename(name)[:-5]
        m = re.match(r"(bs|f|w)_sms(\d+)_(\d)_(.+)", tag)
        r = [x for x in json.loads(text)["results"] if x.get("ok") and not x.get("peer")][0]
        span = marks.get(tag)
        load = [s for s in smi if span and span["start"] <= s[0] <= span["end"] and s[2] > 300]
        clk = st.median(s[1] for s in load) if load else None
        out.append((m.group(1), int(m.group(2)) or 132, int(m.group(3)), m.group(4), r["median_us"], clk))
    return out


def main():
    print("Sustained, each kernel alone ~2 s (medians in us; clock = median SM MHz under load):")
    rows = {}
    for call in ("call3_h100_a2836d9", "call4_h100_a2836d9", "call5_h100_a2836d9", "call6_h100_a2836d9"):
        for fam, sms, i, k, us, clk in sustained(call):
            rows.setdefault((fam, sms), []).append((call[:5], i, k, us, clk))
    for (fam, sms), rs in sorted(rows.items(), key=lambda x: (x[0][0], -x[0][1])):
        row, pick = PAIRS[fam]
        print(f"  {SHAPE[fam]} on {sms} SMs")
        by = {}
        for call, i, k, us, clk in rs:
            by.setdefault(k, []).append(us)
            print(f"    {call} run {i} {k:38s} {us:8.1f} us  " +
                  (f"{clk:5.0f} MHz  {us * clk / 1e6:5.3f} M cycles" if clk else "(no clock samples)"))
        mean = {k: sum(v) / len(v) for k, v in by.items()}
        if row in mean and pick in mean:
            print(f"    table_sms' pick {pick} / the row {row}: {mean[pick] / mean[row]:.3f}x the time "
                  f"(mean of {len(by[pick])} and {len(by[row])} runs)")
        for k in mean:
            if k not in (row, pick):
                print(f"    {k} / the row: {mean[k] / mean[row]:.3f}x")
    print("\nCall 7 (c935eb7, --confirm=2 --sustain_ms=2000, all SMs, block-scaled 8192^3):")
    d = json.load(open(os.path.join(HERE, "call7_h100_c935eb7", "smoke_sustain.json")))
    for r in d["results"]:
        if r.get("sustain_median_us"):
            print(f"  {r['kernel']:38s} block {r['median_us']:7.1f}  confirmed {r['confirm_median_us']:7.1f}"
                  f"  sustained {r['sustain_median_us']:7.1f} ({r['sustain_reps']} launches)")
    print("\nCall 1's sweep at 8192^3 (block median, interleaved confirmation; us):")
    for sms in ("112", "0"):
        d = json.load(open(os.path.join(HERE, "call1_h100_a2836d9", f"dispatch_sweep_sq_sms{sms}_a2836d9.json")))
        for r in d["results"]:
            names = {v for pair in PAIRS.values() for v in pair} | {"128x128_s6_c1x1_fast_tma_b2_pp"}
            if r.get("ok") and not r.get("peer") and r["kernel"] in names and r["family"] != "per_tensor_promoted":
                print(f"  {'all' if sms == '0' else sms:>3s} SMs {r['family']:16s} {r['kernel']:38s} block {r['median_us']:7.1f}"
                      f"  confirmed {r.get('confirm_median_us') or float('nan'):7.1f}")


if __name__ == "__main__":
    main()
