"""How the kernels of one (family, shape) of fp8gemm_dispatch_sweep's JSON are ranked: the one rule
that chapters/10_production/tools/gen_dispatch_table.py learns the library's table by and that
tools/check_table.py checks tables against, so the two cannot drift apart.

The sweep times every kernel of a shape in a block, one kernel after the other ("median_us"); it
then times the fastest few again interleaved, one launch of each per round ("confirm_median_us",
--confirm), and with --sustain_ms each of those alone under sustained load
("sustain_median_us"). The most careful timing that covers two or more kernels ranks the shape,
and only the kernels it timed: the footings are never mixed (a block median and an interleaved
median of the same kernel differ by up to 11% at 8192^3 under the H200's power cap; chapter 10's
NOTEBOOK.md, "Session 49").
"""
import re

# The promoted loop's comparison instances (names ending in _loopN, _2deep or _spin: the same
# tile with a loop that is not its default, kept for chapter 6's loop table) are timed beside the
# defaults but are not configurations the library can pick, so they rank nothing.
COMPARISON_ONLY = re.compile(r"_(loop\d+|2deep|spin)$")

# The timings, most careful first.
RANK_FIELDS = ("sustain_median_us", "confirm_median_us", "median_us")


def candidates(rows):
    """The rows that can rank: correct (ok), not a peer (cuBLASLt), not a comparison instance."""
    return [r for r in rows
            if r.get("ok") and not r.get("peer") and not COMPARISON_ONLY.search(r["kernel"])]


def ranking(rows):
    """(field, {kernel: microseconds}) for one (family, shape): the first of RANK_FIELDS that two
    or more of its candidate rows carry (one kernel alone ranks nothing), and those rows only;
    the block medians of every candidate otherwise. rows: that (family, shape)'s results."""
    mine = candidates(rows)
    for field in RANK_FIELDS[:-1]:
        timed = {r["kernel"]: float(r[field]) for r in mine if r.get(field) is not None}
        if len(timed) >= 2:
            return field, timed
    return "median_us", {r["kernel"]: float(r["median_us"]) for r in mine}
