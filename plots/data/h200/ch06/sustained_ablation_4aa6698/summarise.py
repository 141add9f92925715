#!/usr/bin/env python3
"""The ablation's fast kernels at 8192^3, each launched back to back for 5 s (chapter 6's
--sustained with --kernels, binaries 4aa6698, two runs in opposite kernel orders, cuBLASLt first
in both), with the SM clock, power and throttle reasons nvidia-smi sampled every 100 ms.
Prints TFLOPS and the median clock and power of each window.

  python3 plots/data/h200/ch06/sustained_ablation_4aa6698/summarise.py
"""
import datetime
import os
import re
import statistics

HERE = os.path.dirname(os.path.abspath(__file__))


def samples():
    out = []
    for line in open(os.path.join(HERE, "sustained_clocks.csv")):
        p = [x.strip() for x in line.split(",")]
        try:
            t = datetime.datetime.strptime(p[0], "%Y/%m/%d %H:%M:%S.%f")
        except (ValueError, IndexError):
            continue
        ms = t.replace(tzinfo=datetime.timezone.utc).timestamp() * 1000
        out.append((ms, int(p[1].split()[0]), float(p[2].split()[0])))
    return out


def main():
    s = samples()
    print("%-30s %10s %10s %10s %10s" % ("implementation", "run 1", "run 2", "clock MHz", "power W"))
    rows = {}
    for run in (1, 2):
        for line in open(os.path.join(HERE, "sustained_%d.log" % run)):
            m = re.match(r"SUSTAINED (\S+)\s+([\d.]+) TFLOPS (\d+) (\d+)", line)
            if not m:
                continue
            a, b = int(m.group(3)), int(m.group(4))
            win = [x for x in s if a <= x[0] <= b]
            r = rows.setdefault(m.group(1), {"tf": [], "mhz": [], "w": []})
            r["tf"].append(float(m.group(2)))
            r["mhz"] += [x[1] for x in win]
            r["w"] += [x[2] for x in win]
    for name, r in rows.items():
        print("%-30s %10.1f %10.1f %10.0f %10.0f" % (name, r["tf"][0], r["tf"][1],
                                                     statistics.median(r["mhz"]),
                                                     statistics.median(r["w"])))


if __name__ == "__main__":
    main()
