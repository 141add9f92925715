#!/usr/bin/env python3
"""CPU test of bench/peers_moe.py --interleave: Runner.record keeps a case's checked calls and
run_case times them in one Gpu.time_group (each with its own delay, a wrong result left out, calls
checked before a set-up failure still timed), and the entries are written with the same fields as one
after the other, plus interleaved = 1. Without --interleave every call is its own group of one.

The GPU is bench/test_peers_timing.py's simulated clock (imported, not copied); a case's calls are fake
(each advances the clock by its own time), so each entry's median must be its own call's time. Every
time_group call is logged; the grouping check is also run on the log of the run without --interleave,
where it must fail (so that the check can tell the two apart). Needs no torch and no GPU (CTest
`peers_moe_interleave`, label cpu).

  python3 bench/test_peers_moe_interleave.py
"""
import contextlib
import io
import os
import sys
import types

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import peers as P  # noqa: E402
import peers_moe as M  # noqa: E402
import test_peers_timing as T  # noqa: E402  (the simulated GPU clock)

# The skewed case's implementations, each a fake call of its own time (ms); FA's result is wrong.
CALL_MS = {M.DG_CONTIG: 0.9, M.DG_PSUM: 0.8, M.DG_PAD: 0.05, M.DG_CONTIG_PAD: 0.95, M.TORCH_GMM: 1.2,
           M.TORCH_GMM_FA: 1.1}
WRONG = {M.TORCH_GMM_FA}
LONG_DELAY_US = 1000.0


class FakeRunner(M.Runner):
    """run_case with a case body that, like case_contiguous, checks each implementation inside guarded()
    and hands it to record() (many-launch ones with --long-delay-us); raise_after: a set-up failure after
    that many implementations."""

    raise_after = None

    def case_contiguous(self, case, impls):
        for k, impl in enumerate(impls):
            if self.raise_after is not None and k == self.raise_after:
                raise RuntimeError("fake set-up failure")

            def body(impl=impl):
                fn = T.call(CALL_MS[impl])
                self.names[id(fn)] = impl
                ok = impl not in WRONG
                chk = {"ok": ok, "rel_error": 1e-3 if ok else 0.5, "max_rel_error": 1e-3 if ok else 0.5,
                       "worst_tile_error": 1e-3 if ok else 0.5, "tolerance": 5e-3}
                self.record(impl, case, fn, chk, f"fake {impl}", 1e6, flops=impl != M.DG_PAD,
                            delay_us=self.args.long_delay_us if impl in M.HOST_HEAVY else None,
                            fields={"first_call_s": 0.25})
            self.guarded(impl, case, body)


def run(interleave, impls=None, raise_after=None, failing_group=False):
    """One skewed case through FakeRunner.run_case: (the output's entries, the time_group log as
    [(implementations, delays)], the runner)."""
    gpu = T.make_gpu()
    gpu.torch.cuda.empty_cache = lambda: None
    args = types.SimpleNamespace(warmup=3, budget_ms=250.0, min_reps=10, max_reps=300, no_delay=False,
                                 interleave=interleave, cupti_launches=0, long_delay_us=LONG_DELAY_US)
    gpu.args = args
    log = []
    group = gpu.time_group  # the real one, logged

    def logged(fns, delays_us=None):
        log.append(([runner.names[id(f)] for f in fns], list(delays_us or [None] * len(fns))))
        if failing_group:
            raise RuntimeError("fake launch failure")
        return group(fns, delays_us)
    gpu.time_group = logged
    out = P.Output(None, {})
    runner = FakeRunner(gpu.torch, None, gpu, args, out, [])
    runner.names = {}
    runner.raise_after = raise_after
    case = M.Case("skewed", "skew_test_n256_k256", 4, 256, 256, [100, 0, 300, 50], "skew_test")
    with contextlib.redirect_stdout(io.StringIO()):
        ok = runner.run_case(case, list(impls or case.impls))
    assert ok
    return {b["name"].split("/")[0]: b for b in out.doc["benchmarks"]}, log, runner


def one_group(log, impls) -> bool:
    """The grouping --interleave must give: a single time_group call with these implementations, in order."""
    return len(log) == 1 and log[0][0] == list(impls)


FAILURES = []


def check(cond, what):
    """A failed check is printed and counted; the run goes on, so that one run lists them all."""
    if not cond:
        FAILURES.append(what)
        print("FAIL", what)


def main():
    checked = [i for i in CALL_MS if i not in WRONG]
    delays = [LONG_DELAY_US if i in M.HOST_HEAVY else None for i in checked]

    seq, seq_log, seq_runner = run(interleave=False)
    il, il_log, il_runner = run(interleave=True)

    # The grouping, and that the check tells the two ways apart.
    check(one_group(il_log, checked), f"--interleave: one group of the checked calls: {il_log}")
    check(il_log and il_log[0][1] == delays, f"--interleave: each call keeps its delay: {il_log}")
    check(not one_group(seq_log, checked), "the grouping check must fail without --interleave")
    check(seq_log == [([i], [d]) for i, d in zip(checked, delays)], f"one after the other: {seq_log}")

    # Entries: each its own time, the same fields either way plus interleaved, the wrong one untimed.
    for impl in checked:
        a, b = seq.get(impl, {}), il.get(impl, {})
        check(abs(b.get("median_us", -1) - 1e3 * CALL_MS[impl]) < 1e-6, f"{impl}: own time interleaved: {b}")
        check(abs(a.get("median_us", -1) - 1e3 * CALL_MS[impl]) < 1e-6, f"{impl}: own time alone: {a}")
        check(b.get("interleaved") == 1.0 and a.get("interleaved") == 0.0, f"{impl}: interleaved flag")
        check(set(a) == set(b), f"{impl}: same fields: {set(a) ^ set(b)}")
        check(b.get("delay_us") == (LONG_DELAY_US if impl in M.HOST_HEAVY else None), f"{impl}: delay_us field")
        check(b.get("first_call_s") == 0.25 and b.get("label") == f"fake {impl}", f"{impl}: fields and label")
    for impl in WRONG:
        check(il.get(impl, {}).get("error_occurred") is True and "median_us" not in il.get(impl, {}),
              f"{impl}: a wrong result is an error entry without a time: {il.get(impl)}")
    check(il_runner.failures == seq_runner.failures == len(WRONG), "failures counted once")
    check(il_runner.pending == [], "nothing left pending after the case")

    # A set-up failure after two implementations: those two still timed together, the rest errors.
    part, log, _ = run(interleave=True, raise_after=2)
    check(one_group(log, checked[:2]), f"checked before a set-up failure: one group: {log}")
    check(all(part[i].get("interleaved") == 1.0 for i in checked[:2]), "their entries")
    check(all("case set-up failed" in part[i].get("error", "") for i in list(CALL_MS)[2:]), "the rest: errors")

    # A group of one is timed as alone (interleaved 0).
    one, log, _ = run(interleave=True, impls=[M.TORCH_GMM])
    check(one_group(log, [M.TORCH_GMM]) and one[M.TORCH_GMM].get("interleaved") == 0.0, f"group of one: {log}")

    # The group's error is every member's.
    bad, log, runner = run(interleave=True, failing_group=True)
    check(all("fake launch failure" in bad[i].get("error", "") for i in checked), "group error on every member")
    check(runner.failures == len(checked) + len(WRONG), f"group error failures: {runner.failures}")

    print("peers_moe interleave:", "FAILED" if FAILURES else "all checks passed")
    return 1 if FAILURES else 0


if __name__ == "__main__":
    sys.exit(main())
