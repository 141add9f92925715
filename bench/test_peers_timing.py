#!/usr/bin/env python3
"""CPU test of bench/peers.py's timing (Gpu.time_group, and time_call, a group of one) against a
simulated GPU: a clock that the flush, the delay and each call advance by known amounts, and
events that read it. Checks that every call of an interleaved group gets its own call's time
(not the flush's, the delay's or a neighbour's), the number of rounds (budget x n / the sum of
the estimates, clamped), the per-call delay override, --no-delay, and the "interleaved" flag.
Needs no torch and no GPU (CTest `peers_timing`, label cpu).

  python3 bench/test_peers_timing.py
"""
import os
import sys
import types

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import peers as P  # noqa: E402

CLOCK = [0.0]  # simulated GPU time, ms


class Event:
    def __init__(self, enable_timing=True):
        self.t = None

    def record(self):
        self.t = CLOCK[0]

    def synchronize(self):
        pass

    def elapsed_time(self, other):
        return other.t - self.t


def advance(ms):
    CLOCK[0] += ms


def call(ms):
    return lambda: advance(ms)


def make_gpu(no_delay=False):
    cycles_per_us = 1000.0
    torch = types.SimpleNamespace(cuda=types.SimpleNamespace(
        Event=Event, synchronize=lambda: None, _sleep=lambda c: advance(c / cycles_per_us / 1e3)))
    g = P.Gpu.__new__(P.Gpu)  # without __init__: no torch, no device
    g.torch = torch
    g.args = types.SimpleNamespace(warmup=3, budget_ms=250.0, min_reps=10, max_reps=300, no_delay=no_delay)
    g.cycles_per_us = cycles_per_us
    g.delay_cycles = 0 if no_delay else 50_000  # 50 us
    g.flush_us = 46.0
    g.flush = lambda: advance(0.046)
    return g


def main():
    failures = []

    def check(cond, what):
        if not cond:
            failures.append(what)
            print("FAIL", what)

    g = make_gpu()
    r = g.time_group([call(0.9), call(0.1), call(2.0)])
    check([round(x["median_ms"], 9) for x in r] == [0.9, 0.1, 2.0], f"own times: {r}")
    check(all(x["reps"] == 250 for x in r), "rounds = 250 x 3 / 3.0 ms")
    check(all(x["interleaved"] == 1.0 for x in r), "interleaved flag in a group")
    t = g.time_call(call(0.5))
    check(abs(t["median_ms"] - 0.5) < 1e-9 and t["reps"] == 300 and t["interleaved"] == 0.0,
          f"time_call: {t}")
    check(g.time_call(call(5.0))["reps"] == 50, "reps = 250 / 5 ms")
    check(g.time_call(call(100.0))["reps"] == 10, "at least min_reps")
    # The delay is outside the timed region, whatever its length.
    check(abs(g.time_call(call(0.2), delay_us=500)["median_ms"] - 0.2) < 1e-9, "delay not timed")
    g2 = make_gpu(no_delay=True)
    check(abs(g2.time_call(call(0.2), delay_us=500)["median_ms"] - 0.2) < 1e-9, "--no-delay")
    print("peers timing:", "FAILED" if failures else "all checks passed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
