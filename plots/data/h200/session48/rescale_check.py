#!/usr/bin/env python3
"""Session 48: the library's rule table_sms (a table row's sweep times, each scaled by the
kernel's waves on the plan's SMs over its waves on the sweep's; dispatch.cpp rescaled_choice,
3% margin, the row kept on fewer SMs where its waves do not change) replayed in Python against
the per-tensor sweeps of calls 3 and 4 (H100, 112 SMs and all 132) and call 5 (H200, 112 SMs),
and against the H200's block-scaled sweeps (plots/data/h200/ch10, all SMs and 112). Models of the time ratio tried:
  none      the row as learned (no rescaling)
  int       whole waves, the library's model
  dampA     1 + A x (int - 1): a partial extra wave costing A of a whole one
  frac      fractional waves (tiles / slots): at 112 against 132 SMs a uniform factor for every
            candidate, so it picks nearly as "none" does (only the 3% margin differs)
Per model: shapes whose pick is within 3% of the fastest by the sweep's ranking (check_table's:
the interleaved confirmations alone where a shape has them, so a pick the sweep did not confirm
counts as a miss), and the pick's block median over the fastest block median (worst, geomean).
  python3 plots/data/h200/session48/rescale_check.py
Simpler than the C++ rule and the table's generator in ways that change nothing with these files
(checked pick by pick against check_table's output): the table's row is taken as the fastest of
its sweep by the same ranking (the generator also applies bench-log corrections, none today), the
sweep's SM count is 132 as given, the comparison-only kernels (_loopN, _2deep) are not filtered
(the sweeps have none), and ties go by dictionary order.
"""
import json
import math
import os
import re

HERE = os.path.dirname(os.path.abspath(__file__))
CH10 = os.path.join(HERE, "..", "ch10")


def load(path):
    out = {}
    for r in json.load(open(path, encoding="utf-8"))["results"]:
        if r.get("peer") or not r.get("ok"):
            continue
        out.setdefault((r["family"], r["shape"]), {})[r["kernel"]] = (r["median_us"], r.get("confirm_median_us"))
    return out


def tile(kernel):
    return tuple(int(x) for x in re.match(r"(\d+)x(\d+)_s\d+_c(\d)x(\d)", kernel).groups())


def units(shape, kernel):
    M, N, _ = (int(x) for x in shape.split("x"))
    bm, bn, cm, cn = tile(kernel)
    return math.ceil(math.ceil(M / bm) / cm) * math.ceil(math.ceil(N / bn) / cn), cm * cn


def waves(shape, kernel, sms):
    u, size = units(shape, kernel)
    return math.ceil(u / max(1, sms // size))


def ratio(model, shape, kernel, usable, swept):
    if model == "none":
        return 1.0
    w = waves(shape, kernel, usable) / waves(shape, kernel, swept)
    if model == "int":
        return w
    if model.startswith("damp"):
        return 1 + float(model[4:]) * (w - 1)
    u, size = units(shape, kernel)
    return (u / max(1, usable // size)) / (u / max(1, swept // size))


def ranking(results):
    confirmed = {k: v[1] for k, v in results.items() if v[1]}
    return confirmed or {k: v[0] for k, v in results.items()}


def choice(model, shape, candidates, row, usable, swept, margin=0.03):
    if model == "none":
        return row
    pred = {k: t * ratio(model, shape, k, usable, swept) for k, t in candidates.items()}
    best = min(pred, key=pred.get)
    if row in pred:
        if usable < swept and waves(shape, row, usable) == waves(shape, row, swept):
            return row
        if pred[row] <= pred[best] * (1 + margin):
            return row
    return best


def evaluate(label, table_sweep, test_sweep, families, models, usable=112, swept=132):
    A, B = load(table_sweep), load(test_sweep)
    print(label)
    for model in models:
        misses, n, over = [], 0, []
        for (family, shape), results in sorted(B.items()):
            if family not in families or (family, shape) not in A:
                continue
            cands = {k: v[0] for k, v in A[(family, shape)].items()}
            ra = ranking(A[(family, shape)])
            row = min(ra, key=ra.get)  # the table's row: the fastest of the table's sweep
            pick = choice(model, shape, cands, row, usable, swept)
            rb = ranking(results)
            best = min(rb, key=rb.get)
            n += 1
            fastest = min(v[0] for v in results.values())
            over.append(results[pick][0] / fastest if pick in results else float("inf"))
            if pick not in rb:
                misses.append(f"{family} {shape} {pick}: not confirmed, block median {over[-1]:.3f}x")
            elif rb[pick] > 1.03 * rb[best]:
                misses.append(f"{family} {shape} {pick}: {rb[pick] / rb[best]:.3f}x the fastest")
        geo = math.exp(sum(map(math.log, over)) / len(over))
        print(f"  {model:9s} {n - len(misses)}/{n} within 3%; pick over fastest (block medians): "
              f"worst {max(over):.3f}x, geomean {geo:.4f}x")
        for m in misses:
            print("      miss:", m)


if __name__ == "__main__":
    pt = ["per_tensor_promoted", "per_tensor_fast"]
    c3 = os.path.join(HERE, "call3_h100_6557f23", "dispatch_sweep_per_tensor_sms112_6557f23.json")
    c4 = os.path.join(HERE, "call4_h100_6557f23", "dispatch_sweep_per_tensor_all_6557f23.json")
    models = ["none", "int", "damp0.25", "damp0.5", "damp0.75", "frac"]
    evaluate("The library's view: the committed H200 table (dispatch_sweep.json) on the H100's 112 SMs",
             os.path.join(CH10, "dispatch_sweep.json"), c3, pt, ["none", "int"])
    evaluate("The same table on the H100's 132 SMs (no rescaling: the GPU's own difference)",
             os.path.join(CH10, "dispatch_sweep.json"), c4, pt, ["none"], usable=132)
    evaluate("The rescaling alone: the H100's own all-SM sweep as the table, its 112-SM sweep as the test",
             c4, c3, pt, models)
    c5 = os.path.join(HERE, "call5_h200_3d2ce3a", "dispatch_sweep_per_tensor_sms112_3d2ce3a.json")
    evaluate("The library's view on the H200 (call 5): the committed table against the H200's 112-SM sweep",
             os.path.join(CH10, "dispatch_sweep.json"), c5, pt, models)
    evaluate("Block-scaled on the H200 (session 46: all SMs, then 112; the committed CTest's data)",
             os.path.join(CH10, "dispatch_sweep_block_scaled.json"),
             os.path.join(CH10, "dispatch_sweep_block_scaled_sms112.json"), ["block_scaled"], models)
