#!/usr/bin/env python3
"""Runs the fp8gemm PyTorch tests without pytest (the GPU machine may not have it):

    PYTHONPATH=<staged dir> python3 run_tests.py [-k SUBSTRING] [-x] [FILE ...]

Collects test_*.py beside this file (or the files named), calls every test_* function (expanding
_testlib.parametrize), and prints one line per test and a last line "N passed, N failed,
N skipped". Exit status 1 if any failed. With pytest present, `python3 -m pytest` runs the same
files."""

from __future__ import annotations

import argparse
import importlib.util
import itertools
import os
import sys
import time
import traceback

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import _testlib  # noqa: E402

_testlib.HAVE_PYTEST = False  # this runner's skip and parametrize, even where pytest exists


def cases(f):
    """(label, kwargs) for every parameter combination of f."""
    params = getattr(f, "_params", [])
    if not params:
        return [("", {})]
    axes = []
    for names, values in params:
        keys = [n.strip() for n in names.split(",")]
        axes.append([dict(zip(keys, v if len(keys) > 1 else (v,))) for v in values])
    out = []
    for combo in itertools.product(*axes):
        kw = {}
        for d in combo:
            kw.update(d)
        out.append(("[" + "-".join(str(v) for v in kw.values()) + "]", kw))
    return out


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("files", nargs="*")
    ap.add_argument("-k", default="", help="run only tests whose name contains this")
    ap.add_argument("-x", action="store_true", help="stop at the first failure")
    args = ap.parse_args()
    files = args.files or sorted(os.path.join(HERE, f) for f in os.listdir(HERE)
                                 if f.startswith("test_") and f.endswith(".py"))
    passed = failed = skipped = 0
    for path in files:
        name = os.path.splitext(os.path.basename(path))[0]
        spec = importlib.util.spec_from_file_location(name, path)
        mod = importlib.util.module_from_spec(spec)
        try:
            spec.loader.exec_module(mod)
        except _testlib.SkipTest as e:
            print(f"SKIP {name}: {e}")
            skipped += 1
            continue
        for fname in sorted(n for n in dir(mod) if n.startswith("test_")):
            f = getattr(mod, fname)
            if not callable(f):
                continue
            for label, kw in cases(f):
                full = f"{name}::{fname}{label}"
                if args.k and args.k not in full:
                    continue
                t0 = time.time()
                try:
                    f(**kw)
                except _testlib.SkipTest as e:
                    skipped += 1
                    print(f"SKIP {full}: {e}", flush=True)
                except Exception:  # noqa: BLE001 - report every failure and go on
                    failed += 1
                    print(f"FAIL {full} ({time.time() - t0:.1f} s)", flush=True)
                    traceback.print_exc()
                    if args.x:
                        print(f"{passed} passed, {failed} failed, {skipped} skipped")
                        return 1
                else:
                    passed += 1
                    print(f"PASS {full} ({time.time() - t0:.1f} s)", flush=True)
    print(f"{passed} passed, {failed} failed, {skipped} skipped")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
