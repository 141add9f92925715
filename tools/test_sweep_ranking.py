#!/usr/bin/env python3
"""CPU test of tools/sweep_ranking.py, the ranking gen_dispatch_table.py and check_table.py share.
Each case is a (family, shape)'s rows as fp8gemm_dispatch_sweep writes them; the expected field
and kernels are what the rule's docstring promises. Exits 1 and names the case on a mismatch.
--break-rule swaps the rule for one that always ranks by the block medians of every correct row,
comparison instances included; CTest sweep_ranking_test_can_fail expects exactly the five cases
that depend on the rule to fail, so the test is shown to see each part of it."""
import sys

import sweep_ranking


def row(kernel, block, confirm=None, sustain=None, ok=True, peer=False):
    r = {"kernel": kernel, "median_us": block, "ok": ok}
    if confirm is not None:
        r["confirm_median_us"] = confirm
    if sustain is not None:
        r["sustain_median_us"] = sustain
    if peer:
        r["peer"] = True
    return r


CASES = [
    # (name, rows, expected field, expected {kernel: us})
    ("block medians only", [row("a", 10.0), row("b", 11.0)], "median_us", {"a": 10.0, "b": 11.0}),
    ("confirmation ranks, only its kernels",
     [row("a", 10.0, confirm=12.0), row("b", 11.0, confirm=11.5), row("c", 10.5)],
     "confirm_median_us", {"a": 12.0, "b": 11.5}),
    ("sustained outranks confirmation",
     [row("a", 10.0, confirm=12.0, sustain=13.0), row("b", 11.0, confirm=11.5, sustain=12.5),
      row("c", 10.5, confirm=10.9)],
     "sustain_median_us", {"a": 13.0, "b": 12.5}),
    ("one sustained kernel ranks nothing: the confirmation does",
     [row("a", 10.0, confirm=12.0, sustain=13.0), row("b", 11.0, confirm=11.5)],
     "confirm_median_us", {"a": 12.0, "b": 11.5}),
    ("one confirmed kernel ranks nothing: the block medians do",
     [row("a", 10.0, confirm=12.0), row("b", 11.0)], "median_us", {"a": 10.0, "b": 11.0}),
    ("failed rows, peers and comparison instances never rank",
     [row("a", 10.0), row("bad", 1.0, ok=False), row("cublaslt", 2.0, peer=True),
      row("x_promoted_tma_b2_loop1", 3.0), row("y_2deep", 3.0), row("z_spin", 3.0), row("b", 11.0)],
     "median_us", {"a": 10.0, "b": 11.0}),
    ("a comparison instance's confirmation does not make two: the block medians rank",
     [row("a", 10.0, confirm=12.0), row("x_promoted_tma_b2_loop1", 9.0, confirm=9.0),
      row("b", 11.0)],
     "median_us", {"a": 10.0, "b": 11.0}),
]


def main():
    rule = sweep_ranking.ranking
    if "--break-rule" in sys.argv[1:]:
        # Block medians always, of every correct non-peer row (comparison instances included):
        # the ranking cases and the exclusion cases must then fail.
        rule = lambda rows: ("median_us", {r["kernel"]: float(r["median_us"])  # noqa: E731
                                           for r in rows if r.get("ok") and not r.get("peer")})
    bad = 0
    for name, rows, field, times in CASES:
        got = rule(rows)
        if got != (field, times):
            print(f"FAIL {name}: got {got}, expected {(field, times)}")
            bad += 1
        else:
            print(f"ok   {name}")
    print(f"test_sweep_ranking: {len(CASES)} cases, {bad} failed")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
