#!/usr/bin/env python3
"""CPU test of plots/plot.py (CTest `plots_script`; plain script, no pytest).

1. Runs plot.py on the fixture folder tests/data/bench_fixture/ (synthetic JSON, "gpu": "FIXTURE
   (not a measurement)") against a skeleton README and chapter READMEs in a temp dir, and checks:
   the PNGs are valid and non-trivial, the README tables hold the numbers and percentages
   computed here independently from the fixture, chapter tables are filled, files without
   markers or without data are left alone, an errored benchmark is skipped and reported, a
   second run changes nothing, --check passes when up to date and fails when not, an unreadable
   JSON is an error.
2. When plots/data/h200/ holds any JSON, runs plot.py on it (temp out dir, temp copies of the
   READMEs) so the committed data always parses, and checks that it is not fixture data.

Exit status: 0 pass, 1 fail, 77 skipped (matplotlib missing).
"""

from __future__ import annotations

import glob
import json
import os
import shutil
import statistics
import struct
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
PLOT = os.path.join(HERE, "plot.py")
FIXTURE = os.path.join(REPO, "tests", "data", "bench_fixture")
COMMITTED = os.path.join(REPO, "plots", "data", "h200")

failures: list[str] = []


def check(cond: bool, what: str) -> None:
    print(("ok    " if cond else "FAIL  ") + what)
    if not cond:
        failures.append(what)


def run(*args: str) -> subprocess.CompletedProcess:
    p = subprocess.run([sys.executable, PLOT, *args], capture_output=True, text=True)
    sys.stdout.write("".join(f"  | {l}\n" for l in (p.stdout + p.stderr).splitlines()))
    return p


def read(path: str) -> str:
    with open(path, encoding="utf-8") as f:
        return f.read()


def snapshot(root: str) -> dict[str, bytes]:
    out = {}
    for dirpath, _, names in os.walk(root):
        for n in names:
            p = os.path.join(dirpath, n)
            with open(p, "rb") as f:
                out[os.path.relpath(p, root)] = f.read()
    return out


def png_size(path: str) -> tuple[int, int] | None:
    with open(path, "rb") as f:
        head = f.read(24)
    if len(head) < 24 or head[:8] != b"\x89PNG\r\n\x1a\n" or head[12:16] != b"IHDR":
        return None
    return struct.unpack(">II", head[16:24])


# --- the expected numbers, computed here without plot.py's code --------------------------------

def fixture_rows() -> dict[str, dict[tuple[str, str], dict]]:
    """file name -> (impl, shape) -> benchmark dict (errored ones left out)."""
    out = {}
    for path in sorted(glob.glob(os.path.join(FIXTURE, "*.json"))):
        with open(path) as f:
            doc = json.load(f)
        rows = {}
        for b in doc["benchmarks"]:
            if b.get("error_occurred"):
                continue
            impl, shape = b["name"].split("/")[:2]
            rows[(impl, shape)] = b
        out[os.path.basename(path)] = rows
    return out


def pct(a: float, b: float) -> str:
    p = 100.0 * a / b
    return f"{p:.2f}%" if p < 1 else f"{p:.1f}%"


def tf(x: float) -> str:
    return f"{x:.2f}" if x < 10 else f"{x:.1f}"


SKELETON_README = """# fp8gemm (test skeleton)

Intro text that must survive.

<!-- results:begin -->
stale table
<!-- results:end -->

## Baseline

<!-- baseline:begin -->
<!-- baseline:end -->

The end.
"""

SKELETON_CHAPTER = """# Chapter {n}

Text before.

## Measured

<!-- measured:begin -->
(to be generated)
<!-- measured:end -->

Text after.
"""


def make_skeleton(root: str) -> None:
    os.makedirs(root)
    with open(os.path.join(root, "README.md"), "w") as f:
        f.write(SKELETON_README)
    for d in ("01_naive", "02_smem_tiling", "05_wgmma", "07_block_scaling"):
        os.makedirs(os.path.join(root, "chapters", d))
        with open(os.path.join(root, "chapters", d, "README.md"), "w") as f:
            f.write(SKELETON_CHAPTER.format(n=d))
    os.makedirs(os.path.join(root, "chapters", "03_mma_sync"))
    with open(os.path.join(root, "chapters", "03_mma_sync", "README.md"), "w") as f:
        f.write("# Chapter 3\n\nNo markers here: plot.py must leave this file alone.\n")


def test_fixture(tmp: str) -> None:
    print("== fixture data:", os.path.relpath(FIXTURE, REPO))
    repo = os.path.join(tmp, "repo")
    out = os.path.join(tmp, "out")
    make_skeleton(repo)
    before = snapshot(repo)
    args = ("--data", FIXTURE, "--repo", repo, "--out", out)

    p = run(*args)
    check(p.returncode == 0, f"plot.py exits 0 on the fixture (got {p.returncode})")
    check("ch05_wgmma/8192x8192x8192" in p.stderr and "error" in p.stderr.lower(),
          "the errored benchmark is reported on stderr")
    check("ladder.png" in p.stdout and "README.md" in p.stdout, "plot.py prints what it wrote")

    for name in ("ladder.png", "sizes.png"):
        path = os.path.join(out, name)
        size = png_size(path) if os.path.isfile(path) else None
        check(size is not None, f"{name} exists and is a PNG")
        if size:
            check(size[0] >= 800 and size[1] >= 400, f"{name} is {size[0]}x{size[1]} pixels (>= 800x400)")
            check(os.path.getsize(path) > 20000, f"{name} has {os.path.getsize(path)} bytes (> 20000)")

    rows = fixture_rows()
    readme = read(os.path.join(repo, "README.md"))
    check("Intro text that must survive." in readme and "The end." in readme,
          "README text outside the markers is kept")
    check("stale table" not in readme, "the old results table is replaced")
    check(readme.count("<!-- results:begin -->") == 1 and readme.count("<!-- results:end -->") == 1,
          "the markers are kept, once each")

    # Independently computed results rows: chapter vs the per-tensor peer from its own file
    # (block-scaled chapters vs the block-scaled peer).
    for fname, impl, peer in (("ch01_naive.json", "ch01_naive", "cublaslt_per_tensor"),
                              ("ch03_mma_sync.json", "ch03_mma_sync", "cublaslt_per_tensor"),
                              ("ch05_wgmma.json", "ch05_wgmma", "cublaslt_per_tensor"),
                              ("ch07_block_scaling.json", "ch07_block_scaling", "cublaslt_block_scaled")):
        cells = [f"`{impl}`"]
        for s in (4096, 8192):
            shape = f"{s}x{s}x{s}"
            r, q = rows[fname].get((impl, shape)), rows[fname].get((peer, shape))
            if r is None:
                cells += ["—", "—"]
            else:
                p_ = pct(r["TFLOPS"], q["TFLOPS"])
                if peer != "cublaslt_per_tensor":
                    p_ += " (vs block-scaled)"
                cells += [tf(r["TFLOPS"]), p_]
        line = "| " + " | ".join(cells) + " |"
        check(line in readme, f"README results row {line}")
    # The same, spelled out once by hand so a shared mistake cannot hide.
    check("| `ch01_naive` | 3.20 | 0.26% | 3.10 | 0.21% |" in readme, "ch01 row literal")
    check("| `ch03_mma_sync` | 310.0 | 25.0% | 360.0 | 25.0% |" in readme, "ch03 row literal")
    check("| `ch05_wgmma` | 620.0 | 49.2% | — | — |" in readme, "ch05 row: errored 8192³ shown as —")
    check("FIXTURE (not a measurement)" in readme and "CUDA runtime 13.0" in readme
          and "1980 MHz" in readme and "f1x7ure000" in readme, "README line names GPU, CUDA, clock, commit")

    # Baseline table.
    for shape, label in (("4096x4096x4096", "4096³"), ("8192x8192x8192", "8192³"),
                         ("4096x7168x16384", "4096×7168×16384"), ("64x7168x2048", "64×7168×2048")):
        b = rows["baseline_cublaslt.json"]
        vals = [tf(b[(p, shape)]["TFLOPS"]) for p in
                ("cublaslt_per_tensor", "cublaslt_per_tensor_promoted", "cublaslt_block_scaled")]
        line = f"| {label} | " + " | ".join(vals) + " |"
        check(line in readme, f"README baseline row {line}")

    # Chapter READMEs.
    ch01 = read(os.path.join(repo, "chapters", "01_naive", "README.md"))
    check("(to be generated)" not in ch01 and "Text before." in ch01 and "Text after." in ch01,
          "chapter 1 README: table replaced, text kept")
    r01 = rows["ch01_naive.json"]
    for s in (1024, 2048, 4096, 8192):
        shape = f"{s}x{s}x{s}"
        r, q = r01[("ch01_naive", shape)], r01[("cublaslt_per_tensor", shape)]
        line = f"| {s}³ | {tf(r['TFLOPS'])} | {pct(r['TFLOPS'], q['TFLOPS'])} | {r['median_us']:.1f} |"
        check(line in ch01, f"chapter 1 row {line}")
    check("ch01_naive.json" in ch01 and "FIXTURE (not a measurement)" in ch01
          and "1980 MHz" in ch01 and "CUDA runtime 13.0" in ch01 and "f1x7ure000" in ch01,
          "chapter 1 line names the JSON file, GPU, clock, CUDA version, commit")
    ch05 = read(os.path.join(repo, "chapters", "05_wgmma", "README.md"))
    check("| 4096³ | 620.0 | 49.2% |" in ch05 and "| 8192³ |" not in ch05,
          "chapter 5 table has 4096³ and skips the errored 8192³")
    ch07 = read(os.path.join(repo, "chapters", "07_block_scaling", "README.md"))
    check("| 4096³ | 1100.0 | 110.0% (vs block-scaled) |" in ch07,
          "chapter 7 compared with the block-scaled peer of its own file")
    for d in ("02_smem_tiling", "03_mma_sync"):
        rel = os.path.join("chapters", d, "README.md")
        check(read(os.path.join(repo, rel)).encode() == before[rel],
              f"{rel} (no data / no markers) left alone")

    # Idempotence and --check.
    s1 = snapshot(repo) | {"out/" + k: v for k, v in snapshot(out).items()}
    p = run(*args)
    s2 = snapshot(repo) | {"out/" + k: v for k, v in snapshot(out).items()}
    check(p.returncode == 0 and s1 == s2, "a second run changes nothing")
    check("wrote" not in p.stdout, "the second run reports nothing written")
    p = run(*args, "--check")
    check(p.returncode == 0, "--check passes when everything is up to date")
    ch01_path = os.path.join(repo, "chapters", "01_naive", "README.md")
    edited = ch01.replace("| 1024³ |", "| 1024³ (edited by hand) |")
    with open(ch01_path, "w", encoding="utf-8") as f:
        f.write(edited)
    p = run(*args, "--check")
    check(p.returncode == 1, f"--check fails when a table was edited by hand (got {p.returncode})")
    check(read(ch01_path) == edited, "--check writes nothing")
    p = run(*args)
    check(read(ch01_path) == ch01, "a normal run restores the generated table")

    # An unreadable JSON file is an error, not silently skipped.
    bad = os.path.join(tmp, "bad_data")
    os.makedirs(bad)
    shutil.copy(os.path.join(FIXTURE, "ch01_naive.json"), bad)
    with open(os.path.join(bad, "ch02_smem_tiling.json"), "w") as f:
        f.write('{"context": {}, "benchmarks": [ {"name": "trunc')
    p = run("--data", bad, "--repo", os.path.join(tmp, "repo_bad"), "--out", os.path.join(tmp, "out_bad"))
    check(p.returncode == 2 and "ch02_smem_tiling.json" in p.stderr,
          "a truncated JSON file makes plot.py fail and name the file")

    # Fixture data must never land in the repository: plot.py refuses (checked with --no-png and
    # a temp --out so that even a broken guard could only touch README.md's marked blocks).
    real_readme = os.path.join(REPO, "README.md")
    before_real = open(real_readme, "rb").read() if os.path.isfile(real_readme) else None
    p = run("--data", FIXTURE, "--repo", REPO, "--out", os.path.join(tmp, "out_guard"), "--no-png")
    after_real = open(real_readme, "rb").read() if os.path.isfile(real_readme) else None
    check(p.returncode == 2 and before_real == after_real,
          "plot.py refuses to write fixture data into the repository")


def test_committed(tmp: str) -> None:
    files = sorted(glob.glob(os.path.join(COMMITTED, "*.json")))
    if not files:
        print("== no committed data in plots/data/h200/ yet: that part is skipped")
        return
    print(f"== committed data: {len(files)} JSON file(s) in plots/data/h200/")
    for path in files:
        with open(path) as f:
            gpu = str(json.load(f).get("context", {}).get("gpu", ""))
        check("FIXTURE" not in gpu, f"{os.path.basename(path)} is a measurement (gpu: {gpu!r})")
    repo = os.path.join(tmp, "committed_repo")
    os.makedirs(repo)
    if os.path.isfile(os.path.join(REPO, "README.md")):
        shutil.copy(os.path.join(REPO, "README.md"), repo)
    for readme in glob.glob(os.path.join(REPO, "chapters", "[0-9][0-9]_*", "README.md")):
        d = os.path.join(repo, "chapters", os.path.basename(os.path.dirname(readme)))
        os.makedirs(d, exist_ok=True)
        shutil.copy(readme, d)
    out = os.path.join(tmp, "committed_out")
    args = ("--data", COMMITTED, "--repo", repo, "--out", out)
    p = run(*args)
    check(p.returncode == 0, f"plot.py parses the committed data (exit {p.returncode})")
    for name in ("ladder.png", "sizes.png"):
        path = os.path.join(out, name)
        if os.path.isfile(path):
            check(png_size(path) is not None, f"committed data: {name} is a PNG")
    p = run(*args, "--check")
    check(p.returncode == 0, "committed data: a second run would change nothing")


def main() -> int:
    try:
        import matplotlib  # noqa: F401
        import numpy  # noqa: F401
    except ImportError as e:
        print(f"SKIP: {e} (pip install matplotlib numpy)")
        return 77
    with tempfile.TemporaryDirectory(prefix="fp8gemm_plots_") as tmp:
        test_fixture(tmp)
        test_committed(tmp)
    if failures:
        print(f"\n{len(failures)} check(s) failed:")
        for f in failures:
            print("  " + f)
        return 1
    print("\nall checks passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
