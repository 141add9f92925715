#!/usr/bin/env python3
"""Turn the committed benchmark JSON into the plots and the results tables.

Reads every *.json in --data (Google Benchmark output written by the chapter executables and by
the cuBLASLt baseline; see docs/measuring.md) and writes:

  <out>/ladder.png   TFLOPS of every chapter at 4096^3 and 8192^3, cuBLASLt per-tensor as lines
  <out>/sizes.png    TFLOPS against square size (1024..8192) per chapter, plus cuBLASLt
  <repo>/README.md   the table between <!-- results:begin --> and <!-- results:end -->, and the
                     cuBLASLt baseline table between <!-- baseline:begin --> / <!-- baseline:end -->
  <repo>/chapters/NN_*/README.md
                     the chapter's measured rows between <!-- measured:begin --> / <!-- measured:end -->

and, from the chapter-6 subfolder <data>/ch06/ (not part of the *.json read above):

  ablation.json      (Google Benchmark JSON) -> <out>/ch06_ablation.png and, in chapter 6's README,
                     the table between <!-- ablation:begin --> / <!-- ablation:end -->
  accuracy.json      ({"commit", "data", "rows": [{"K", "ch06_fast", ...}]}) -> <out>/ch06_accuracy.png
                     and the table between <!-- accuracy:begin --> / <!-- accuracy:end -->
  sweep.json         ({"gpu", "commit", "method", "results": [...]}, written by ch06_sweep) -> the
                     tables between <!-- sweep:begin --> / <!-- sweep:end -->

and, from the chapter-7 subfolder <data>/ch07/ (chapter 7's measured table is the generic one,
against cuBLASLt block-scaled, with GB/s):

  peers.json         (Google Benchmark JSON by bench/peers.py: torch blockwise scaled_mm and
                     DeepGEMM, same method as the harness) -> <out>/ch07_peers.png and the table
                     between <!-- peers:begin --> / <!-- peers:end -->, with ch07 and cuBLASLt
                     block-scaled from ch07_*.json and the geomean ratios
  accuracy.json      ({"commit", "shape", "metric", "results": [{"data", "K", recipes...}]})
                     -> <out>/ch07_accuracy.png and the <!-- accuracy:begin --> block
  quantize_bench.json (Google Benchmark JSON by bench/quantize_bench) -> the
                     <!-- quantizers:begin --> block (% of the copy, the 85% target; kernel-variant
                     entries "<quantiser>_vN_<name>" go to the next block instead)
  quantize_bench_*.json (quantize_bench runs of kernel variants, e.g. quantize_bench_1x128_<commit>)
                     -> the <!-- quantizer-variants:begin --> block: per file with variant entries
                     (quantize_bench.json first), each variant's GB/s and % of copy side by side
  sweep*.json        (Google Benchmark JSON of the tuning sweep, "ch07:<kernel>/<shape>") -> the
                     <!-- sweep:begin --> block, with the kernel kTable in
                     <repo>/chapters/07_block_scaling/bs_gemm.cpp picks

and, from the chapter-9 subfolder <data>/ch09/:

  accuracy.json      (chapter 9's MXFP8 rows of chapter 7's accuracy study, same format, recipes
                     mxfp8_floor_ocp / mxfp8_rceil, plus gpu_quantiser per row) -> two more
                     columns in chapter 7's accuracy table and lines in ch07_accuracy.png
                     ("MXFP8 (chapter 9's Hopper GEMM), floor / rceil", joined by data and K), and
                     chapter 9's own <!-- accuracy:begin --> block (beside chapter 7's 1 x 128)

and, from chapter 9's Hopper file <data>/ch09_hopper_mxfp8.json (one of the *.json above, written
by `ch09_hopper_mxfp8 --kernels=all`: the default kernel "ch09_hopper_mx", every kernel as
"ch09_hopper_mx:<kernel>", earlier versions suffixed _v2, _v1, the dequantize_bf16 path as
"ch09_hopper_mx_bf16" (its rule) and "ch09_hopper_mx_bf16:<kernel>", its bf16 GEMM alone
"ch09_bf16_gemm_alone" and cuBLASLt's "cublaslt_bf16" on the same operands, chapter 7's
"ch07_block_scaled" and cuBLASLt block-scaled, in one process):

  <out>/ch09_hopper.png  grouped bars per shape: the earlier versions' fastest kernels, the
                     default (current version), the dequantize_bf16 path, chapter 7, cuBLASLt
                     block-scaled, and issue 11's
                     target (0.7x chapter 7) as a dashed line per shape
  chapter 9's README the table between <!-- hopper:begin --> / <!-- hopper:end -->: TFLOPS and the
                     ratio to chapter 7 per shape, and issue 11's target (>= 0.7x chapter 7 at
                     8192^3 and as the geomean over the M = 4096 DeepSeek-V3 shapes), met or not

and, from the chapter-8 subfolder <data>/ch08/ (chapter 8's measured table is the generic one,
against ch07_loop, one chapter-7 call per expert, from ch08_grouped_moe.json):

  peers.json         (Google Benchmark JSON by bench/peers_moe.py: DeepGEMM grouped contiguous,
                     masked and k-grouped, torch grouped and a loop of scaled_mm, same method)
                     -> <out>/ch08_peers.png and, in chapter 8's README, the table between
                     <!-- peers:begin --> / <!-- peers:end -->, case by case with issue 10's
                     target ratios

and, from <data>/engine_loops/ (Google Benchmark JSON of chapter 6's and 7's executables timing
the promoted main loop's versions side by side, one file per run, "chNN_*.json"):

  chNN_*.json        -> in chapter NN's README (6 and 7) the tables between <!-- loops:begin -->
                     / <!-- loops:end -->: per file a row per (tile, loop version), TFLOPS per
                     shape, the geomean over the shapes against the same tile's first loop and
                     against the same run's cuBLASLt; kernel names read as of the file's commit
                     (LOOPS_LEAN_DEFAULT_COMMITS: before f4a8670 no suffix = the lean loop)

Chapters after LADDER_LAST_CHAPTER get their own README blocks but stay out of the top-level
ladder (README.md's results table, ladder.png, sizes.png).

A missing file leaves its blocks alone and its plot undrawn.

A file without the markers is left alone; so is a table with no data. Benchmarks that report
error_occurred are skipped (and named on stderr). Files are only rewritten when their content
changes, and the output is deterministic (no timestamps in the PNGs), so running twice changes
nothing. With --check nothing is written and the exit status is 1 if anything would change.

    python3 plots/plot.py                 # regenerate from plots/data/h200/
    python3 plots/plot.py --check         # CI: is everything up to date?

Never edit the generated numbers by hand: re-run the benchmarks and this script.
"""

from __future__ import annotations

import argparse
import io
import json
import math
import os
import re
import statistics
import sys
import textwrap
from dataclasses import dataclass, field

SCRIPT_DIR = os.path.dirname(os.path.abspath(__file__))
REPO_ROOT = os.path.dirname(SCRIPT_DIR)

PER_TENSOR = "cublaslt_per_tensor"
PEER_NAMES = {  # the cuBLASLt peers, in the order tables show them
    "cublaslt_per_tensor": "cuBLASLt per-tensor (fast accum)",
    "cublaslt_per_tensor_promoted": "cuBLASLt per-tensor (promoted)",
    "cublaslt_block_scaled": "cuBLASLt block-scaled 1x128 / 128x128",
    "ch07_loop": "one chapter-7 call per expert on the same operands (`ch07_loop`)",
}
PEER_SHORT = {
    "cublaslt_per_tensor": "per-tensor",
    "cublaslt_per_tensor_promoted": "per-tensor promoted",
    "cublaslt_block_scaled": "block-scaled",
}
PROMOTED = "cublaslt_per_tensor_promoted"
# Which peer a chapter is compared with ("% of cuBLASLt"): the first of these that the chapter's
# own JSON file measured at the same shape. Block-scaled chapters are compared with the
# block-scaled peer; promoted-accumulation implementations (a name containing "promoted") with
# cuBLASLt's default, promoted accumulation; everything else with per-tensor fast accumulation
# (the same arithmetic).
PEER_PREFERENCE_DEFAULT = ["cublaslt_per_tensor", "cublaslt_per_tensor_promoted",
                           "cublaslt_block_scaled"]
PEER_PREFERENCE_BLOCK = ["cublaslt_block_scaled", "cublaslt_per_tensor",
                         "cublaslt_per_tensor_promoted"]
PEER_PREFERENCE_PROMOTED = ["cublaslt_per_tensor_promoted", "cublaslt_per_tensor",
                            "cublaslt_block_scaled"]

LADDER_SIZES = [4096, 8192]
# The last chapter in the top-level ladder (README.md's results table, ladder.png, sizes.png).
# Later chapters get only their own README blocks until the top-level README is updated to
# include them: raise this then (one line; the ladder picks the chapter's file up by itself).
LADDER_LAST_CHAPTER = 6
SQUARE_SIZES = [1024, 2048, 4096, 8192]

CHAPTER_RE = re.compile(r"^ch(\d{2})_(.+)$")
SHAPE_RE = re.compile(r"^(\d+)x(\d+)x(\d+)$")

MARK_RESULTS = ("<!-- results:begin -->", "<!-- results:end -->")
MARK_BASELINE = ("<!-- baseline:begin -->", "<!-- baseline:end -->")
MARK_MEASURED = ("<!-- measured:begin -->", "<!-- measured:end -->")
MARK_ABLATION = ("<!-- ablation:begin -->", "<!-- ablation:end -->")
MARK_ACCURACY = ("<!-- accuracy:begin -->", "<!-- accuracy:end -->")
MARK_SWEEP = ("<!-- sweep:begin -->", "<!-- sweep:end -->")

# Chapter 6's subfolder of the data folder, and the steps of its ablation, in order.
CH06_DIR = "ch06"
CH06_CHAPTER = 6
ABLATION_STEPS = [
    ("ch05_wgmma", "ch05"),
    ("ch06_1_warp_specialized", "1 warp-specialized"),
    ("ch06_2_persistent", "2 persistent"),
    ("ch06_3_tma_store", "3 TMA-store epilogue"),
    ("ch06_4_multicast", "4 2-CTA multicast"),
    ("ch06_5_tiles", "5 per-shape tiles"),
    ("ch06_6_pingpong", "6 ping-pong consumers"),
]
ACCURACY_SERIES = [  # key in accuracy.json rows -> label
    ("ch06_fast", "ch06 fast accumulation"),
    ("ch06_promoted", "ch06 promoted"),
    ("cublaslt_fast", "cuBLASLt fast accumulation"),
    ("cublaslt_promoted", "cuBLASLt promoted (its default)"),
]
SWEEP_MAX_DIFF = 2e-2  # a sweep result further than this from cuBLASLt's D is wrong, not a winner
SWEEP_RASTER_KERNELS = [  # kernel-name patterns whose tile order (raster) the sweep varies:
    # the TMA-store kernels only (the registers-epilogue sibling shares the prefix but is another
    # kernel, run with the automatic order only)
    (r"^128x256_s4_c2x1_(fast|promoted)_tma_b2$", "128x256 c2x1"),
    (r"^256x128_s4_c1x2_(fast|promoted)_tma_b2$", "256x128 c1x2"),
]


class DataError(Exception):
    """A benchmark file that cannot be read: fatal, the committed data must always parse."""


# ------------------------------------------------------------------------------------------------
# Reading the JSON


@dataclass
class Row:
    impl: str
    shape: str
    tflops: float
    median_us: float | None
    file: "BenchFile"
    # Every other finite numeric field of the benchmark row (GB/s, cupti_TFLOPS, pct_of_copy,
    # rel_error, ...), the median over repetitions like TFLOPS.
    counters: dict[str, float] = field(default_factory=dict)

    def counter(self, key: str) -> float | None:
        return self.counters.get(key)


@dataclass
class BenchFile:
    path: str
    name: str  # file name, e.g. ch01_naive.json
    context: dict
    rows: list[Row] = field(default_factory=list)

    def find(self, impl: str, shape: str) -> Row | None:
        for r in self.rows:
            if r.impl == impl and r.shape == shape:
                return r
        return None


def warn(msg: str) -> None:
    print(f"plot.py: {msg}", file=sys.stderr)


def _num(v) -> float | None:
    try:
        x = float(v)
    except (TypeError, ValueError):
        return None
    return x if math.isfinite(x) else None


_COUNTER_SKIP = {"family_index", "per_family_instance_index", "repetitions", "repetition_index",
                 "threads", "iterations", "TFLOPS", "median_us"}


def load_file(path: str) -> BenchFile:
    try:
        with open(path, encoding="utf-8") as f:
            doc = json.load(f)
    except (OSError, json.JSONDecodeError) as e:
        raise DataError(f"{path}: not readable as benchmark JSON ({e})") from e
    if not isinstance(doc, dict) or not isinstance(doc.get("benchmarks"), list):
        raise DataError(f"{path}: no 'benchmarks' list (is it Google Benchmark JSON output?)")
    ctx = doc.get("context") if isinstance(doc.get("context"), dict) else {}
    bf = BenchFile(path=path, name=os.path.basename(path), context=ctx)
    # Several iteration rows of one benchmark (--benchmark_repetitions) are reduced to their
    # median; aggregate rows (mean/median/stddev) are ignored since we recompute.
    grouped: dict[tuple[str, str], list[tuple[float, float | None]]] = {}
    extras: dict[tuple[str, str], dict[str, list[float]]] = {}
    for b in doc["benchmarks"]:
        if not isinstance(b, dict):
            continue
        name = str(b.get("run_name") or b.get("name") or "")
        if b.get("run_type", "iteration") != "iteration":
            continue
        if b.get("error_occurred") or b.get("skipped"):
            msg = b.get("error_message") or b.get("skip_message") or "no message"
            warn(f"{bf.name}: skipping errored benchmark {b.get('name', name)}: {msg}")
            continue
        parts = name.split("/")
        if len(parts) < 2:
            warn(f"{bf.name}: skipping benchmark with unexpected name {name!r}")
            continue
        impl, shape = parts[0], parts[1]
        tflops = _num(b.get("TFLOPS"))
        if tflops is None:
            warn(f"{bf.name}: skipping {name}: no TFLOPS counter")
            continue
        grouped.setdefault((impl, shape), []).append((tflops, _num(b.get("median_us"))))
        ex = extras.setdefault((impl, shape), {})
        for k, v in b.items():
            x = _num(v) if isinstance(v, (int, float)) and not isinstance(v, bool) else None
            if x is not None and k not in _COUNTER_SKIP:
                ex.setdefault(k, []).append(x)
    for (impl, shape), vals in grouped.items():  # dicts keep file order
        tf = statistics.median(v[0] for v in vals)
        meds = [v[1] for v in vals if v[1] is not None]
        counters = {k: statistics.median(xs) for k, xs in extras[(impl, shape)].items()}
        bf.rows.append(Row(impl, shape, tf, statistics.median(meds) if meds else None, bf,
                           counters))
    return bf


def load_dir(data_dir: str) -> list[BenchFile]:
    if not os.path.isdir(data_dir):
        return []
    names = sorted(n for n in os.listdir(data_dir) if n.endswith(".json"))
    return [load_file(os.path.join(data_dir, n)) for n in names]


# ------------------------------------------------------------------------------------------------
# Organising: chapters, peers, shapes


def chapter_number(impl: str) -> int | None:
    m = CHAPTER_RE.match(impl)
    return int(m.group(1)) if m else None


def square(shape: str) -> int | None:
    m = SHAPE_RE.match(shape)
    if m and m.group(1) == m.group(2) == m.group(3):
        return int(m.group(1))
    return None


def shape_label(shape: str) -> str:
    s = square(shape)
    return f"{s}³" if s else shape


def peers_for(impl: str) -> list[str]:
    if impl.startswith("ch08_"):
        return ["ch07_loop"]  # chapter 8's baseline: one chapter-7 call per expert
    if "block" in impl:
        return PEER_PREFERENCE_BLOCK
    if "promoted" in impl:
        return PEER_PREFERENCE_PROMOTED
    return PEER_PREFERENCE_DEFAULT


@dataclass
class Measured:
    """One chapter implementation at one shape, with the peer from the same file."""
    row: Row
    peer: Row | None

    @property
    def pct(self) -> float | None:
        if self.peer is None or self.peer.tflops <= 0:
            return None
        return 100.0 * self.row.tflops / self.peer.tflops


class Dataset:
    def __init__(self, files: list[BenchFile]):
        self.files = files
        # Chapter implementation -> the file it is taken from: the file named after it if there
        # is one (ch05_wgmma.json for ch05_wgmma), else the first file (sorted) that has it.
        self.source: dict[str, BenchFile] = {}
        for f in files:
            # A chapter executable's file may time another chapter's code as its baseline
            # (ch08_grouped_moe.json: ch07_loop, chapter 7's plans in a loop): that belongs to
            # the file's chapter, not to the other chapter's tables.
            file_ch = chapter_number(f.name)
            for impl in uniq(r.impl for r in f.rows if chapter_number(r.impl) is not None and
                             (file_ch is None or chapter_number(r.impl) == file_ch)):
                cur = self.source.get(impl)
                if cur is None or (cur.name != impl + ".json" and f.name == impl + ".json"):
                    self.source[impl] = f
        self.chapters = sorted(self.source, key=lambda i: (chapter_number(i), i))

    def rows_of(self, impl: str) -> list[Measured]:
        f = self.source[impl]
        out = []
        for r in f.rows:
            if r.impl != impl:
                continue
            peer = None
            for p in peers_for(impl):
                peer = f.find(p, r.shape)
                if peer:
                    break
            out.append(Measured(r, peer))
        return out

    def at(self, impl: str, shape: str) -> Measured | None:
        for m in self.rows_of(impl):
            if m.row.shape == shape:
                return m
        return None

    def peer_median(self, peer: str, shape: str) -> tuple[float, int] | None:
        """The median over every file's measurement of `peer` at `shape` (they are re-measured
        beside each chapter), and how many there were."""
        vals = [r.tflops for f in self.files for r in f.rows if r.impl == peer and r.shape == shape]
        return (statistics.median(vals), len(vals)) if vals else None

    def used_files(self) -> list[BenchFile]:
        names = {self.source[i].name for i in self.chapters}
        return [f for f in self.files if f.name in names]


def ladder_files(files: list[BenchFile]) -> list[BenchFile]:
    """The files of the top-level ladder: all but those whose chapter implementations all come
    after LADDER_LAST_CHAPTER (files without a chapter implementation, the baseline, stay)."""
    out = []
    for f in files:
        chs = {chapter_number(r.impl) for r in f.rows} - {None}
        if chs and min(chs) > LADDER_LAST_CHAPTER:
            continue
        out.append(f)
    return out


# ------------------------------------------------------------------------------------------------
# Describing where numbers come from


def ctx_str(ctx: dict, key: str) -> str | None:
    v = ctx.get(key)
    return None if v is None or v == "" else str(v)


def cuda_version(v: str | None) -> str | None:
    """CUDA's integer versions: 1000 * major + 10 * minor (13000 -> 13.0)."""
    n = _num(v)
    if n is None:
        return v
    n = int(n)
    return f"{n // 1000}.{(n % 1000) // 10}"


def short_commit(c: str | None) -> str:
    if not c:
        return "unknown"
    dirty = c.endswith("-dirty")
    sha = c[:-6] if dirty else c
    return sha[:10] + ("-dirty" if dirty else "")


def uniq(xs) -> list[str]:
    out = []
    for x in xs:
        if x and x not in out:
            out.append(x)
    return out


def describe_env(files: list[BenchFile], *, with_commit: bool = True, markdown: bool = True) -> str:
    """'NVIDIA H200 (132 SMs, max SM clock 1980 MHz, memory clock 3201 MHz), CUDA runtime 13.0,
    driver 13.0, cuBLASLt 130100, commit 0123456789'. Differing values are all listed."""
    def vals(key, conv=lambda x: x):
        return uniq(conv(ctx_str(f.context, key)) for f in files)

    gpu = " / ".join(vals("gpu")) or "unknown GPU"
    hw = []
    if vals("gpu_sm_count"):
        hw.append(f"{'/'.join(vals('gpu_sm_count'))} SMs")
    if vals("gpu_max_sm_clock_mhz"):
        hw.append(f"max SM clock {'/'.join(vals('gpu_max_sm_clock_mhz'))} MHz")
    if vals("gpu_memory_clock_mhz"):
        hw.append(f"memory clock {'/'.join(vals('gpu_memory_clock_mhz'))} MHz")
    s = gpu + (f" ({', '.join(hw)})" if hw else "")
    sw = []
    if vals("cuda_runtime_version", cuda_version):
        sw.append(f"CUDA runtime {'/'.join(vals('cuda_runtime_version', cuda_version))}")
    if vals("cuda_driver_version", cuda_version):
        sw.append(f"driver CUDA {'/'.join(vals('cuda_driver_version', cuda_version))}")
    if vals("cublaslt_version"):
        sw.append(f"cuBLASLt {'/'.join(vals('cublaslt_version'))}")
    if with_commit:
        commits = vals("git_commit", lambda c: short_commit(c) if c else None)
        q = "`" if markdown else ""
        sw.append(("commit " if len(commits) <= 1 else "commits ")
                  + (", ".join(f"{q}{c}{q}" for c in commits) or "unknown"))
    return ", ".join([s] + sw)


def gpu_name(files: list[BenchFile]) -> str:
    return " / ".join(uniq(ctx_str(f.context, "gpu") for f in files)) or "unknown GPU"


def is_fixture(files: list[BenchFile]) -> bool:
    return any("FIXTURE" in (ctx_str(f.context, "gpu") or "") for f in files)


# ------------------------------------------------------------------------------------------------
# Tables (markdown)


def fmt_tf(x: float | None) -> str:
    if x is None:
        return "—"
    return f"{x:.2f}" if x < 10 else f"{x:.1f}"


def fmt_pct(m: Measured | None, default_peer: str = PER_TENSOR) -> str:
    if m is None or m.pct is None:
        return "—"
    s = f"{m.pct:.2f}%" if m.pct < 1 else f"{m.pct:.1f}%"
    # Named whenever it is not the default peer, and whenever it is not the implementation's
    # preferred one (a fallback: e.g. a promoted kernel measured beside fast cuBLASLt only).
    if m.peer is not None and (m.peer.impl != default_peer
                               or m.peer.impl != peers_for(m.row.impl)[0]):
        s += f" (vs {PEER_SHORT.get(m.peer.impl, m.peer.impl)})"
    return s


MODES_NOTE = ("fast modes against cuBLASLt fast accumulation, promoted against cuBLASLt's default "
              "promoted accumulation")


def has_promoted(impls) -> bool:
    return any("promoted" in i and "block" not in i for i in impls)


def chapter_label(impl: str) -> str:
    m = CHAPTER_RE.match(impl)
    return f"{int(m.group(1))}: {m.group(2)}" if m else impl


GENERATED_NOTE = "_Generated by `python3 plots/plot.py` from the benchmark JSON; do not edit by hand._"


def results_table(ds: Dataset, data_label: str) -> str | None:
    rows = []
    for impl in ds.chapters:
        cells = [ds.at(impl, f"{s}x{s}x{s}") for s in LADDER_SIZES]
        if all(c is None for c in cells):
            continue
        line = [f"`{impl}`"]
        for c in cells:
            line += [fmt_tf(c.row.tflops if c else None), fmt_pct(c)]
        rows.append("| " + " | ".join(line) + " |")
    if not rows:
        return None
    head = ["chapter"]
    for s in LADDER_SIZES:
        head += [f"TFLOPS {s}³", "% of cuBLASLt"]
    out = ["| " + " | ".join(head) + " |",
           "|" + "|".join(["---"] + ["---:"] * (len(head) - 1)) + "|"]
    out += rows
    out.append("")
    if has_promoted(ds.chapters):
        against = (f"against cuBLASLt per-tensor in the same accumulation mode ({MODES_NOTE}), "
                   f"measured in the same process as the chapter; the peer is noted where it is "
                   f"not fast accumulation")
    else:
        against = ("against cuBLASLt per-tensor (FP32 fast accumulation) measured in the same "
                   "process as the chapter, unless noted")
    out.append(f"% of cuBLASLt: {against}. Measured on "
               f"{describe_env(ds.used_files())}; data `{data_label}`.")
    out.append("")
    out.append(GENERATED_NOTE)
    return "\n".join(out)


def baseline_table(bf: BenchFile, data_label: str) -> str | None:
    impls = uniq(r.impl for r in bf.rows if r.impl.startswith("cublaslt"))
    impls = [p for p in PEER_NAMES if p in impls] + sorted(p for p in impls if p not in PEER_NAMES)
    if not impls:
        return None
    shapes = uniq(r.shape for r in bf.rows if r.impl in impls)  # in the order they were run
    head = ["shape (M×N×K)"] + [f"{PEER_NAMES.get(p, p)}" for p in impls]
    out = ["| " + " | ".join(head) + " |", "|" + "|".join(["---"] + ["---:"] * len(impls)) + "|"]
    for s in shapes:
        cells = [shape_label(s).replace("x", "×")]
        for p in impls:
            r = bf.find(p, s)
            cells.append(fmt_tf(r.tflops if r else None))
        out.append("| " + " | ".join(cells) + " |")
    out.append("")
    out.append(f"TFLOPS (2MNK / median time, L2 flushed). Measured on {describe_env([bf])}; "
               f"data `{data_label}/{bf.name}`.")
    out.append("")
    out.append(GENERATED_NOTE)
    return "\n".join(out)


# Per-chapter options of the measured table: the peer named in the header (then not repeated in
# every cell) and a GB/s column (small M is memory-bound). Chapters not listed: the defaults.
MEASURED_OPTIONS = {
    7: {"peer": "cublaslt_block_scaled", "header": "% of cuBLASLt block-scaled", "gbps": True},
    8: {"peer": "ch07_loop", "header": "% of a loop of chapter-7 calls", "gbps": True,
        "gbps_note": "GB/s: the real rows of A and D, the weights of experts with rows and the "
                     "scales, each once (the weight gradient: both operands over the real tokens, "
                     "their scales and dB written once), / median time. TFLOPS count real rows "
                     "(tokens) only. "},
}


def fmt_gbs(x: float | None) -> str:
    return "—" if x is None else f"{x:.0f}"


def measured_table(ds: Dataset, impls: list[str], data_label: str, *, peer: str | None = None,
                   header: str | None = None, gbps: bool = False,
                   gbps_note: str | None = None) -> str | None:
    ms = [m for i in impls for m in ds.rows_of(i)]
    if not ms:
        return None
    multi = len(impls) > 1
    gbps = gbps and any(m.row.counter("GB/s") is not None for m in ms)
    head = (["implementation"] if multi else []) + (
        ["shape (M×N×K)", "TFLOPS", header or "% of cuBLASLt"] + (["GB/s"] if gbps else [])
        + ["median µs"])
    out = ["| " + " | ".join(head) + " |",
           "|" + "|".join(["---"] * (2 if multi else 1) + ["---:"] * (4 if gbps else 3)) + "|"]
    for m in ms:
        cells = ([f"`{m.row.impl}`"] if multi else []) + [
            shape_label(m.row.shape).replace("x", "×"), fmt_tf(m.row.tflops),
            fmt_pct(m, peer or PER_TENSOR)] + ([fmt_gbs(m.row.counter("GB/s"))] if gbps else []) + [
            "—" if m.row.median_us is None else f"{m.row.median_us:.1f}"]
        out.append("| " + " | ".join(cells) + " |")
    files = uniq(ds.source[i].name for i in impls)
    bfs = [f for f in ds.files if f.name in files]
    peers = uniq(m.peer.impl for m in ms if m.peer)
    peer_txt = " / ".join(PEER_NAMES.get(p, p) for p in peers) or "cuBLASLt"
    if has_promoted(impls) and PROMOTED in peers:
        peer_txt += f" in the same accumulation mode ({MODES_NOTE})"
    extra = ""
    if gbps:
        extra = gbps_note or ("GB/s: (M K + N K + 2 M N + scale) bytes / median time, the bytes "
                              "any implementation must move. ")
    delays = uniq(ctx_str(f.context, "gpu_delay_us") for f in bfs)
    if delays and any(_num(d) for d in delays):
        extra += (f"Each timed launch follows an L2 flush and a "
                  f"{'/'.join(f'{_num(d):g}' for d in delays)} µs GPU-side delay "
                  f"(`--gpu_delay_us`). ")
    out.append("")
    out.append(f"{header or '% of cuBLASLt'}: against {peer_txt}, timed in the same process. "
               f"{extra}From {', '.join(f'`{data_label}/{n}`' for n in files)}, measured on "
               f"{describe_env(bfs)}.")
    out.append("")
    out.append(GENERATED_NOTE)
    return "\n".join(out)


def replace_between(text: str, marks: tuple[str, str], body: str) -> str | None:
    """The text with everything between the markers replaced by body; None without markers."""
    b = text.find(marks[0])
    if b < 0:
        return None
    e = text.find(marks[1], b + len(marks[0]))
    if e < 0:
        warn(f"found {marks[0]} without {marks[1]}; leaving the file alone")
        return None
    return text[: b + len(marks[0])] + "\n" + body.rstrip("\n") + "\n" + text[e:]


# ------------------------------------------------------------------------------------------------
# Chapter 6's extra data (<data>/ch06/): the ablation, the accuracy table, the tuning sweep


_NONFINITE_RE = re.compile(r"(:\s*)(-?)(nan|inf(?:inity)?)\b(?=\s*[,}\]])", re.IGNORECASE)


def _nonfinite(m: re.Match) -> str:
    word = "NaN" if m.group(3).lower() == "nan" else m.group(2) + "Infinity"
    return m.group(1) + word


def load_custom(path: str, list_key: str) -> dict:
    """A custom JSON object whose list_key is a list of objects. C++ streams write a NaN or an
    infinity as nan / inf (not JSON): they are read as such (and never win anything)."""
    try:
        with open(path, encoding="utf-8") as f:
            text = f.read()
        doc = json.loads(_NONFINITE_RE.sub(_nonfinite, text))
    except (OSError, ValueError) as e:
        raise DataError(f"{path}: not readable as JSON ({e}); a truncated file means the run "
                        f"that wrote it did not finish") from e
    if not isinstance(doc, dict) or not isinstance(doc.get(list_key), list):
        raise DataError(f"{path}: no '{list_key}' list")
    doc[list_key] = [r for r in doc[list_key] if isinstance(r, dict)]
    return doc


@dataclass
class Ch06Data:
    label: str  # e.g. plots/data/h200/ch06
    ablation: BenchFile | None = None
    accuracy: dict | None = None
    sweep: dict | None = None

    def empty(self) -> bool:
        return self.ablation is None and self.accuracy is None and self.sweep is None

    def gpus(self) -> list[str]:
        out = []
        if self.ablation is not None:
            out.append(ctx_str(self.ablation.context, "gpu") or "")
        for doc in (self.accuracy, self.sweep):
            if doc is not None:
                out.append(str(doc.get("gpu") or ""))
        return out


def load_ch06(data_dir: str, label: str) -> Ch06Data:
    d = os.path.join(data_dir, CH06_DIR)
    out = Ch06Data(label=f"{label}/{CH06_DIR}")
    path = os.path.join(d, "ablation.json")
    if os.path.isfile(path):
        out.ablation = load_file(path)
    path = os.path.join(d, "accuracy.json")
    if os.path.isfile(path):
        out.accuracy = load_custom(path, "rows")
    path = os.path.join(d, "sweep.json")
    if os.path.isfile(path):
        out.sweep = load_custom(path, "results")
    return out


def fmt_gain(cur: float | None, prev: float | None) -> str:
    if cur is None or prev is None or prev <= 0:
        return "—"
    return f"{100.0 * (cur / prev - 1.0):+.1f}%"


def fmt_ratio(a: float | None, b: float | None) -> str:
    if a is None or b is None or b <= 0:
        return "—"
    p = 100.0 * a / b
    return f"{p:.2f}%" if p < 1 else f"{p:.1f}%"


def ablation_steps(bf: BenchFile) -> tuple[list[tuple[str, str]], list[str]]:
    """The steps present in the file (known ones in ladder order, then any other non-cuBLASLt
    implementation in file order) and the shapes (in file order)."""
    present = uniq(r.impl for r in bf.rows)
    steps = [(i, lab) for i, lab in ABLATION_STEPS if i in present]
    known = {i for i, _ in ABLATION_STEPS}
    steps += [(i, i) for i in present if i not in known and not i.startswith("cublaslt")]
    shapes = uniq(r.shape for r in bf.rows if not r.impl.startswith("cublaslt"))
    return steps, shapes


def ablation_table(bf: BenchFile, data_label: str) -> str | None:
    steps, shapes = ablation_steps(bf)
    if not steps or not shapes:
        return None
    head = ["step", "implementation"]
    for s in shapes:
        lab = shape_label(s).replace("x", "×")
        head += [f"TFLOPS {lab}", "% of cuBLASLt", "vs previous step"]
    out = ["| " + " | ".join(head) + " |",
           "|" + "|".join(["---", "---"] + ["---:"] * (len(head) - 2)) + "|"]
    prev: dict[str, float | None] = {s: None for s in shapes}
    for k, (impl, lab) in enumerate(steps):
        cells = [lab, f"`{impl}`"]
        for s in shapes:
            r, q = bf.find(impl, s), bf.find(PER_TENSOR, s)
            cur = r.tflops if r else None
            cells += [fmt_tf(cur), fmt_ratio(cur, q.tflops if q else None),
                      fmt_gain(cur, prev[s]) if k > 0 else "—"]
            prev[s] = cur
        out.append("| " + " | ".join(cells) + " |")
    if any(bf.find(PER_TENSOR, s) for s in shapes):
        cells = [PEER_NAMES[PER_TENSOR], f"`{PER_TENSOR}`"]
        for s in shapes:
            q = bf.find(PER_TENSOR, s)
            cells += [fmt_tf(q.tflops if q else None), "—", "—"]
        out.append("| " + " | ".join(cells) + " |")
    out.append("")
    out.append(f"Each step adds one idea to the row above it; fast accumulation throughout. "
               f"% of cuBLASLt: against {PEER_NAMES[PER_TENSOR]} at the same shape, timed in the "
               f"same process; vs previous step: the TFLOPS over the row above's, minus 1. "
               f"Measured on {describe_env([bf])}; data `{data_label}/{bf.name}`.")
    out.append("")
    out.append(GENERATED_NOTE)
    return "\n".join(out)


def fmt_err(x) -> str:
    v = x if isinstance(x, (int, float)) and not isinstance(x, bool) else None
    if v is None:
        return "—"
    return f"{v:.1e}" if math.isfinite(v) else str(v)


def accuracy_rows(doc: dict) -> list[dict]:
    rows = []
    for r in doc["rows"]:
        k = _num(r.get("K"))
        if k is None:
            warn(f"accuracy.json: skipping a row without K: {r!r}")
            continue
        rows.append(r | {"K": int(k)})
    return rows


def accuracy_table(doc: dict, data_label: str) -> str | None:
    rows = accuracy_rows(doc)
    if not rows:
        return None
    keys = [k for k, _ in ACCURACY_SERIES]
    keys += uniq(k for r in rows for k in r if k != "K" and k not in keys)
    names = dict(ACCURACY_SERIES)
    head = ["K"] + [names.get(k, k) for k in keys]
    out = ["| " + " | ".join(head) + " |", "|" + "|".join(["---:"] * len(head)) + "|"]
    for r in rows:
        out.append("| " + " | ".join([str(r["K"])] + [fmt_err(r.get(k)) for k in keys]) + " |")
    where = []
    if doc.get("gpu"):
        where.append(f"measured on {doc['gpu']}")
    where.append(f"commit `{short_commit(str(doc.get('commit') or ''))}`")
    out.append("")
    out.append(f"Relative Frobenius error of D against the float64 CPU reference. Data: "
               f"{doc.get('data') or 'not described'}; {', '.join(where)}; "
               f"file `{data_label}/accuracy.json`.")
    out.append("")
    out.append(GENERATED_NOTE)
    return "\n".join(out)


@dataclass
class SweepResult:
    shape: str
    impl: str
    mode: str
    raster: str
    tflops: float
    diff: float | None
    index: int  # file order, for deterministic ties

    @property
    def cublaslt(self) -> bool:
        return self.impl.startswith("cublaslt")

    @property
    def valid(self) -> bool:
        return self.cublaslt or (self.diff is not None and self.diff < SWEEP_MAX_DIFF)


def sweep_results(doc: dict) -> list[SweepResult]:
    out = []
    for i, r in enumerate(doc["results"]):
        tf = _num(r.get("tflops"))
        shape, impl, mode = r.get("shape"), r.get("impl"), r.get("mode")
        if not (isinstance(shape, str) and isinstance(impl, str) and isinstance(mode, str)) \
                or tf is None:
            warn(f"sweep.json: skipping result {i} (needs shape, impl, mode, finite tflops): {r!r}")
            continue
        out.append(SweepResult(shape, impl, mode, str(r.get("raster") or "-"), tf,
                               _num(r.get("diff_vs_cublaslt")), i))
    return out


def _best(rs: list[SweepResult]) -> SweepResult | None:
    return max(rs, key=lambda r: (r.tflops, -r.index)) if rs else None


def _worst(rs: list[SweepResult]) -> SweepResult | None:
    return min(rs, key=lambda r: (r.tflops, r.index)) if rs else None


def _modes(results: list[SweepResult]) -> list[str]:
    order = {"fast": 0, "promoted": 1}
    return sorted(uniq(r.mode for r in results), key=lambda m: (order.get(m, 2), m))


def sweep_table(doc: dict, data_label: str) -> str | None:
    results = sweep_results(doc)
    if not results:
        return None
    shapes = uniq(r.shape for r in results)
    modes = _modes(results)
    rows = []
    for s in shapes:
        for mode in modes:
            rs = [r for r in results if r.shape == s and r.mode == mode]
            if not rs:
                continue
            best = _best([r for r in rs if not r.cublaslt and r.valid])
            peers = [r for r in rs if r.cublaslt]
            peer = next((r for r in peers if r.impl == f"cublaslt_{mode}"), peers[0] if peers else None)
            rows.append("| " + " | ".join([
                shape_label(s).replace("x", "×"), mode,
                f"`{best.impl}`" if best else "—", best.raster if best else "—",
                fmt_tf(best.tflops if best else None), fmt_tf(peer.tflops if peer else None),
                fmt_ratio(best.tflops if best else None, peer.tflops if peer else None)]) + " |")
    if not rows:
        return None
    out = ["| shape (M×N×K) | mode | best kernel | raster | TFLOPS | cuBLASLt TFLOPS | % of cuBLASLt |",
           "|---|---|---|---|---:|---:|---:|"]
    out += rows
    wrong = [r for r in results if not r.valid]
    out.append("")
    what = (f"The fastest kernel per shape and accumulation mode among the sweep's results within "
            f"{SWEEP_MAX_DIFF:g} (relative Frobenius difference) of cuBLASLt's D, against cuBLASLt "
            f"in the same mode from the same file")
    if wrong:
        listed = "; ".join(f"`{r.impl}` {r.raster} at {shape_label(r.shape).replace('x', '×')}"
                           for r in wrong[:8])
        more = f" and {len(wrong) - 8} more" if len(wrong) > 8 else ""
        what += (f"; {len(wrong)} result(s) further from cuBLASLt (or not finite) never count: "
                 f"{listed}{more}")
    out.append(what + ".")

    # How much the tile order matters: the big kernels' best and worst raster.
    fams = [(p, lab) for p, lab in SWEEP_RASTER_KERNELS]
    rrows = []
    for s in shapes:
        for mode in modes:
            cells, any_var = [], False
            for prefix, _ in fams:
                rs = [r for r in results if r.shape == s and r.mode == mode and r.valid
                      and re.match(prefix, r.impl)]
                if len({r.raster for r in rs}) < 2:
                    cells += ["—", "—", "—"]
                    continue
                any_var = True
                several = len({r.impl for r in rs}) > 1
                b, w = _best(rs), _worst(rs)

                def cell(r: SweepResult) -> str:
                    tag = r.raster + (f", {r.impl[len(prefix):]}" if several else "")
                    return f"{fmt_tf(r.tflops)} ({tag})"
                cells += [cell(b), cell(w), fmt_gain(b.tflops, w.tflops)]
            if any_var:
                rrows.append("| " + " | ".join([shape_label(s).replace("x", "×"), mode] + cells) + " |")
    if rrows:
        head = ["shape (M×N×K)", "mode"]
        for _, lab in fams:
            head += [f"{lab}: best raster", "worst raster", "best over worst"]
        out.append("")
        out.append("| " + " | ".join(head) + " |")
        out.append("|" + "|".join(["---", "---"] + ["---:"] * (len(head) - 2)) + "|")
        out += rrows
        out.append("")
        out.append("The tile order of the two big kernels (TFLOPS, raster in brackets): `Gm` visits "
                   "the tiles in bands of G tile rows walked down M, `Gn` in bands of G tile "
                   "columns walked along N, `(auto)` is the plan's own choice.")
    out.append("")
    src = [f"Measured on {doc['gpu']}"] if doc.get("gpu") else []
    src.append(f"commit `{short_commit(str(doc.get('commit') or ''))}`")
    if doc.get("method"):
        src.append(f"timing: {doc['method']}")
    out.append(f"{'; '.join(src)}; data `{data_label}/sweep.json`.")
    out.append("")
    out.append(GENERATED_NOTE)
    return "\n".join(out)


# ------------------------------------------------------------------------------------------------
# Chapter 7's extra data (<data>/ch07/): the peers (torch, DeepGEMM), the accuracy study, the
# quantisers' bandwidth, the tuning sweep


CH07_DIR = "ch07"
CH07_CHAPTER = 7
MARK_PEERS = ("<!-- peers:begin -->", "<!-- peers:end -->")
MARK_QUANTIZERS = ("<!-- quantizers:begin -->", "<!-- quantizers:end -->")
MARK_QUANT_VARIANTS = ("<!-- quantizer-variants:begin -->", "<!-- quantizer-variants:end -->")
CH07_PEER = "cublaslt_block_scaled"
TORCH_BLOCKWISE = "torch_scaled_mm_blockwise"
DEEPGEMM = "deepgemm"
CH07_SMALL_M = 128  # shapes with M <= this are the decode (memory-bound) group of the peers table
CH07_RECIPES = [  # key in accuracy.json results -> label
    ("per_tensor_fast", "per-tensor, fast accumulation"),
    ("per_tensor_promoted", "per-tensor, promoted"),
    ("block_scaled_promoted", "block-scaled, promoted"),
]
CH07_QUANT_ONLY = [("per_tensor", "per-tensor"), ("block_scaled", "block-scaled")]
QUANT_TARGET_PCT = 85.0  # of the device-to-device copy's bandwidth (issue "Chapter 07")
QUANT_COPY_PREFIX = "copy_d2d_as_"
# quantize_bench's kernel-variant entries: "<quantiser>_v<N>_<name>" (tuning_1x128's v1_first, ...)
_QUANT_VARIANT_RE = re.compile(r"^(?P<op>.+)_(?P<variant>v\d+_[A-Za-z0-9]+)$")
# ch07/ files of variant runs (e.g. quantize_bench_1x128_<commit>.json), beside quantize_bench.json
_QUANT_VARIANT_FILE_RE = re.compile(r"^quantize_bench_.+\.json$")
SWEEP_PREFIX = "ch07:"
SWEEP_TOP = 3
CH07_TABLE_SOURCE = os.path.join("chapters", "07_block_scaling", "bs_gemm.cpp")
_KTABLE_RE = re.compile(r"kTable\[\]\s*=\s*\{(.*?)\n\};", re.S)
_KTABLE_ENTRY_RE = re.compile(r"\{\s*(\d+)\s*,\s*(\d+)\s*,\s*(\d+)\s*,\s*\"([^\"]+)\"\s*\}")


@dataclass
class Ch07Data:
    label: str  # e.g. plots/data/h200/ch07
    peers: BenchFile | None = None
    accuracy: dict | None = None
    quantize: BenchFile | None = None
    sweeps: list[BenchFile] = field(default_factory=list)
    quantize_variants: list[BenchFile] = field(default_factory=list)  # quantize_bench_*.json

    def empty(self) -> bool:
        return (self.peers is None and self.accuracy is None and self.quantize is None
                and not self.sweeps and not self.quantize_variants)

    def gpus(self) -> list[str]:
        out = [ctx_str(f.context, "gpu") or ""
               for f in (self.peers, self.quantize, *self.sweeps, *self.quantize_variants)
               if f is not None]
        if self.accuracy is not None:
            out.append(str(self.accuracy.get("gpu") or ""))
        return out


def load_ch07(data_dir: str, label: str) -> Ch07Data:
    d = os.path.join(data_dir, CH07_DIR)
    out = Ch07Data(label=f"{label}/{CH07_DIR}")
    path = os.path.join(d, "peers.json")
    if os.path.isfile(path):
        out.peers = load_file(path)
    path = os.path.join(d, "accuracy.json")
    if os.path.isfile(path):
        out.accuracy = load_custom(path, "results")
    path = os.path.join(d, "quantize_bench.json")
    if os.path.isfile(path):
        out.quantize = load_file(path)
    if os.path.isdir(d):
        out.sweeps = [load_file(os.path.join(d, n)) for n in sorted(os.listdir(d))
                      if re.match(r"^sweep.*\.json$", n)]
        out.quantize_variants = [load_file(os.path.join(d, n)) for n in sorted(os.listdir(d))
                                 if _QUANT_VARIANT_FILE_RE.match(n)]
    return out


# Chapter 9's extra data (<data>/ch09/): the MXFP8 rows of chapter 7's accuracy study.
CH09_DIR = "ch09"
CH09_CHAPTER = 9
CH09_RECIPES = [  # key in ch09/accuracy.json results -> label (in chapter 7's table)
    ("mxfp8_floor_ocp", "MXFP8 (chapter 9's Hopper GEMM), floor"),
    ("mxfp8_rceil", "MXFP8 (chapter 9's Hopper GEMM), rceil"),
]
CH09_QUANT_ONLY = [("mxfp8_floor_ocp", "MXFP8 floor"), ("mxfp8_rceil", "MXFP8 rceil")]


# The requantize_block_scaled path's run (<data>/ch09/requant.json: `ch09_hopper_mxfp8`, its
# default variants), which times the three Hopper paths, the path's chapter-7 GEMM alone and
# chapter 7 in one process.
CH09_REQUANT_FILE = "requant.json"
CH09_REQUANT_IMPL = "ch09_hopper_mx_requant"
CH09_REQUANT_GEMM = "ch09_requant_gemm_alone"
CH09_REQUANT_ONCE = "ch09_requant_weights_once"  # B re-quantised once, A per call (session 54)
MARK_REQUANT = ("<!-- requant:begin -->", "<!-- requant:end -->")


@dataclass
class Ch09Data:
    label: str  # e.g. plots/data/h200/ch09
    accuracy: dict | None = None
    requant: "BenchFile | None" = None

    def empty(self) -> bool:
        return self.accuracy is None and self.requant is None

    def gpus(self) -> list[str]:
        out = [str(self.accuracy.get("gpu") or "")] if self.accuracy is not None else []
        if self.requant is not None:
            out.append(str(self.requant.context.get("gpu") or ""))
        return out


def load_ch09(data_dir: str, label: str) -> Ch09Data:
    out = Ch09Data(label=f"{label}/{CH09_DIR}")
    path = os.path.join(data_dir, CH09_DIR, "accuracy.json")
    if os.path.isfile(path):
        out.accuracy = load_custom(path, "results")
    path = os.path.join(data_dir, CH09_DIR, CH09_REQUANT_FILE)
    if os.path.isfile(path):
        out.requant = load_file(path)
    return out


# Chapter 9's Hopper MXFP8 GEMM (<data>/ch09_hopper_mxfp8.json, `ch09_hopper_mxfp8
# --kernels=all`): the kernel's versions beside chapter 7 and cuBLASLt block-scaled, timed in the
# same process, with issue 11's target.
MARK_HOPPER = ("<!-- hopper:begin -->", "<!-- hopper:end -->")
CH09_HOPPER_FILE = "ch09_hopper_mxfp8.json"
# The plan's default kernel; each kernel is timed as "ch09_hopper_mx:<kernel>".
CH09_HOPPER_IMPL = "ch09_hopper_mx"
CH09_HOPPER_CH07 = "ch07_block_scaled"  # chapter 7's plan, the baseline of the ratios
# The dequantize_bf16 path (HopperPath): its rule's kernel, each kernel as "<impl>:<kernel>", its
# bf16 GEMM alone and cuBLASLt's bf16 GEMM on the same operands.
CH09_BF16_IMPL = "ch09_hopper_mx_bf16"
CH09_BF16_GEMM = "ch09_bf16_gemm_alone"
CH09_CUBLASLT_BF16 = "cublaslt_bf16"
# The version of the kernels named without a _vN suffix (kernels_hopper.cu: kVersion's default);
# earlier versions are "<kernel>_vN". Raise it when a new version becomes the default.
CH09_HOPPER_VERSION = 3
# Issue 11: >= 0.7x chapter 7 at 8192^3 and as the geomean over the M = 4096 DeepSeek-V3 shapes.
CH09_TARGET = 0.7
CH09_TARGET_SQUARE = "8192x8192x8192"
CH09_TARGET_M = 4096
DEEPSEEK_NK = [(2112, 7168), (24576, 1536), (32768, 512), (7168, 16384), (4096, 7168), (7168, 2048)]
_VERSION_RE = re.compile(r"^(.*)_v(\d+)$")


def shape_dims(shape: str) -> tuple[int, int, int] | None:
    m = SHAPE_RE.match(shape)
    return (int(m.group(1)), int(m.group(2)), int(m.group(3))) if m else None


def fmt_x(x: float | None) -> str:
    return "—" if x is None else f"{x:.3f}x"


def ratio(a: Row | None, b: Row | None) -> float | None:
    if a is None or b is None or b.tflops <= 0:
        return None
    return a.tflops / b.tflops


def geomean(xs: list[float]) -> float | None:
    xs = [x for x in xs if x is not None and x > 0]
    return math.exp(sum(math.log(x) for x in xs) / len(xs)) if xs else None


def ch07_main(ds: Dataset) -> tuple[str, BenchFile] | None:
    """Chapter 7's implementation (the first, if several) and its file."""
    impls = [i for i in ds.chapters if chapter_number(i) == CH07_CHAPTER]
    return (impls[0], ds.source[impls[0]]) if impls else None


@dataclass
class PeerRow:
    shape: str
    ours: Row | None
    cublaslt: Row | None
    torch: Row | None
    deepgemm: Row | None

    @property
    def small(self) -> bool:
        d = shape_dims(self.shape)
        return d is not None and d[0] <= CH07_SMALL_M

    @property
    def vs_deepgemm(self) -> float | None:
        return ratio(self.ours, self.deepgemm)

    @property
    def vs_cublaslt(self) -> float | None:
        return ratio(self.ours, self.cublaslt)


def peer_rows(ds: Dataset, peers: BenchFile) -> tuple[str | None, BenchFile | None, list[PeerRow]]:
    main = ch07_main(ds)
    impl, bf = main if main else (None, None)
    # The peers' shapes, in the order of chapter 7's own file where it has them.
    theirs = uniq(r.shape for r in peers.rows)
    shapes = [s for s in uniq(r.shape for r in bf.rows) if s in theirs] if bf else []
    shapes += [s for s in theirs if s not in shapes]
    rows = []
    for s in shapes:
        rows.append(PeerRow(s, bf.find(impl, s) if bf else None,
                            bf.find(CH07_PEER, s) if bf else None,
                            peers.find(TORCH_BLOCKWISE, s), peers.find(DEEPGEMM, s)))
    return impl, bf, rows


def _summary(label: str, rows: list[PeerRow]) -> str:
    def part(name: str, xs: list[float | None]) -> str:
        xs = [x for x in xs if x is not None]
        g = geomean(xs)
        if g is None:
            return f"{name}: no shape has both"
        rng = f", {min(xs):.2f}-{max(xs):.2f} per shape" if len(xs) > 1 else ""
        return f"{name} geomean **{g:.3f}x** ({len(xs)} shape{'s' if len(xs) != 1 else ''}{rng})"
    return (f"{label}: " + part("ch07 / DeepGEMM", [r.vs_deepgemm for r in rows]) + "; "
            + part("ch07 / cuBLASLt block-scaled", [r.vs_cublaslt for r in rows]) + ".")


def peers_table(ds: Dataset, peers: BenchFile, data_label: str, ch07_label: str) -> str | None:
    impl, bf, rows = peer_rows(ds, peers)
    rows = [r for r in rows if any((r.ours, r.cublaslt, r.torch, r.deepgemm))]
    if not rows:
        return None
    head = ["shape (M×N×K)", f"`{impl or 'ch07'}` TFLOPS", "cuBLASLt block-scaled (C++)",
            "torch blockwise `scaled_mm`", "DeepGEMM", "DeepGEMM, CUPTI kernel time",
            "ch07 / DeepGEMM", "ch07 / cuBLASLt"]
    out = ["| " + " | ".join(head) + " |", "|" + "|".join(["---"] + ["---:"] * 7) + "|"]
    for r in rows:
        out.append("| " + " | ".join([
            shape_label(r.shape).replace("x", "×"),
            *(fmt_tf(x.tflops if x else None) for x in (r.ours, r.cublaslt, r.torch, r.deepgemm)),
            fmt_tf(r.deepgemm.counter("cupti_TFLOPS") if r.deepgemm else None),
            fmt_x(r.vs_deepgemm), fmt_x(r.vs_cublaslt)]) + " |")
    large = [r for r in rows if not r.small]
    small = [r for r in rows if r.small]
    out.append("")
    if large:
        out.append("- " + _summary(f"M > {CH07_SMALL_M}", large))
    if small:
        out.append("- " + _summary(f"M <= {CH07_SMALL_M} (memory-bound)", small))
    ctx = peers.context
    delay_c = _num(ctx_str(bf.context, "gpu_delay_us")) if bf else None
    delay_p = _num(ctx_str(ctx, "delay_us"))
    same = (delay_c is not None and delay_p is not None and abs(delay_c - delay_p) < 0.5
            and ctx_str(ctx, "l2_flush") == "1" and (bf is None or ctx_str(bf.context, "l2_flush") == "1"))
    if same:
        method = (f"All four timed alike: an L2 flush outside the timed region, a {delay_p:g} µs "
                  f"GPU-side delay before the start event (so a Python call's host work is "
                  f"hidden), CUDA events around one call, the median over the calls")
    else:
        method = (f"Timing differs between the two files (C++ delay "
                  f"{'—' if delay_c is None else f'{delay_c:g} µs'}, Python delay "
                  f"{'—' if delay_p is None else f'{delay_p:g} µs'}, L2 flush "
                  f"{ctx_str(bf.context, 'l2_flush') if bf else '—'} / {ctx_str(ctx, 'l2_flush')}): "
                  f"compare with care")
    vers = []
    if ctx_str(ctx, "torch_version"):
        vers.append(f"torch {ctx_str(ctx, 'torch_version')}")
    if ctx_str(ctx, "deep_gemm_version"):
        vers.append(f"DeepGEMM {ctx_str(ctx, 'deep_gemm_version')}")
    out.append("")
    out.append(f"TFLOPS = 2 M N K / median time. {method}; the ratios are TFLOPS over TFLOPS. "
               f"DeepGEMM, CUPTI kernel time: the same kernel's time from CUPTI over a burst of "
               f"launches with the L2 flushed between them and no delay (GPU kernel time only; "
               f"`cupti_TFLOPS`). Ours and cuBLASLt from "
               f"{f'`{data_label}/{bf.name}`' if bf else '—'}; torch and DeepGEMM"
               f"{' (' + ', '.join(vers) + ')' if vers else ''} from "
               f"`{ch07_label}/{peers.name}` (`bench/peers.py`, the full method in its "
               f"context's `method`). Measured on "
               f"{describe_env(([bf] if bf else []) + [peers])}.")
    out.append("")
    out.append(GENERATED_NOTE)
    return "\n".join(out)


def ch07_accuracy_rows(doc: dict) -> list[dict]:
    rows = []
    for r in doc["results"]:
        k = _num(r.get("K"))
        if k is None or not isinstance(r.get("data"), str):
            warn(f"accuracy.json: skipping a result without data or K: {r!r}")
            continue
        rows.append(r | {"K": int(k)})
    return rows


def _sub(r: dict, key: str, sub: str) -> float | None:
    d = r.get(key)
    if not isinstance(d, dict):
        return None
    v = d.get(sub)
    return v if isinstance(v, (int, float)) and not isinstance(v, bool) else None


def _err_cell(r: dict | None, key: str) -> str:
    """'vs_exact (vs_quantised)' of one recipe in one result, or — where there is none."""
    if r is None:
        return "—"
    e, q = _sub(r, key, "vs_exact"), _sub(r, key, "vs_quantised")
    return fmt_err(e) + (f" ({fmt_err(q)})" if q is not None else "")


def by_point(doc: dict | None) -> dict[tuple[str, int], dict]:
    """An accuracy study's results by (data, K): how chapter 9's rows join chapter 7's."""
    return {} if doc is None else {(r["data"], r["K"]): r for r in ch07_accuracy_rows(doc)}


def ch07_accuracy_table(doc: dict, data_label: str, mx: dict | None = None,
                        mx_label: str | None = None) -> str | None:
    rows = ch07_accuracy_rows(doc)
    if not rows:
        return None
    mx_rows = by_point(mx)
    mx_recipes = CH09_RECIPES if mx is not None else []
    head = (["data", "K"] + [lab for _, lab in CH07_RECIPES] + [lab for _, lab in mx_recipes]
            + [f"quantisation only, {lab}" for _, lab in CH07_QUANT_ONLY]
            + [f"quantisation only, {lab}" for _, lab in (CH09_QUANT_ONLY if mx is not None else [])])
    out = ["| " + " | ".join(head) + " |",
           "|" + "|".join(["---", "---:"] + ["---:"] * (len(head) - 2)) + "|"]
    for r in rows:
        m = mx_rows.get((r["data"], r["K"]))
        cells = [str(r["data"]).replace("_", " "), str(r["K"])]
        cells += [_err_cell(r, k) for k, _ in CH07_RECIPES]
        cells += [_err_cell(m, k) for k, _ in mx_recipes]
        cells += [fmt_err(_sub(r, "quantisation_only", k)) for k, _ in CH07_QUANT_ONLY]
        if mx is not None:
            cells += [fmt_err(_sub(m, "quantisation_only", k)) if m else "—" for k, _ in CH09_RECIPES]
        out.append("| " + " | ".join(cells) + " |")
    what = str(doc.get("metric") or "relative error of D")
    where = []
    if doc.get("shape"):
        where.append(f"Shape {doc['shape']}")
    if doc.get("rows_compared") is not None:
        where.append(f"{doc['rows_compared']} rows compared")
    if doc.get("gpu"):
        where.append(f"measured on {doc['gpu']}")
    where.append(f"commit `{short_commit(str(doc.get('commit') or ''))}`")
    out.append("")
    out.append(f"{what[:1].upper() + what[1:]}: against the float64 product of the unquantised "
               f"data, and in brackets against the float64 product of the dequantised operands "
               f"(the accumulation's and D's rounding alone). Quantisation only: the float64 "
               f"product of the dequantised operands against that of the data, what the recipe's "
               f"quantisation alone costs. "
               f"{'; '.join(where)}; file `{data_label}/accuracy.json`.")
    if mx is not None:
        out.append("")
        out.append(f"MXFP8 columns: chapter 9's Hopper MXFP8 GEMM (`ch09::HopperPlan`, a promotion "
                   f"per 32 K) on the same data (the same generators and seeds), quantised by "
                   f"`quantize_mx` in 1 x 32 blocks with UE8M0 scales; floor = the OCP rule "
                   f"(floor(log2 amax) - 8, the block's top values can saturate at 448), rceil = "
                   f"cuBLAS's (ceil(log2(amax / 448)), nothing saturates). "
                   f"{_where(mx)[:1].upper() + _where(mx)[1:]}; file `{mx_label}/accuracy.json`.")
    out.append("")
    out.append(GENERATED_NOTE)
    return "\n".join(out)


def _where(doc: dict) -> str:
    where = []
    if doc.get("gpu"):
        where.append(f"measured on {doc['gpu']}")
    where.append(f"commit `{short_commit(str(doc.get('commit') or ''))}`")
    return "; ".join(where)


def ch09_accuracy_table(doc: dict, data_label: str, ch07: dict | None = None,
                        ch07_label: str | None = None) -> str | None:
    """Chapter 9's block: its MXFP8 rows beside chapter 7's 1 x 128 recipe (where chapter 7's
    study is there), the quantisation-only errors, and the GPU quantiser's path from bf16."""
    rows = ch07_accuracy_rows(doc)
    if not rows:
        return None
    bs = by_point(ch07)
    bs_recipe = [r for r in CH07_RECIPES if r[0] == "block_scaled_promoted"] if ch07 else []
    bs_quant = [q for q in CH07_QUANT_ONLY if q[0] == "block_scaled"] if ch07 else []
    short = {"mxfp8_floor_ocp": "MXFP8 floor", "mxfp8_rceil": "MXFP8 rceil"}
    head = (["data", "K"] + [f"{lab} (chapter 7)" for _, lab in bs_recipe]
            + [short[k] for k, _ in CH09_RECIPES]
            + [f"quantisation only, {lab}" for _, lab in bs_quant]
            + [f"quantisation only, {short[k]}" for k, _ in CH09_RECIPES]
            + ["GPU quantiser from bf16: floor / rceil"])
    out = ["| " + " | ".join(head) + " |",
           "|" + "|".join(["---", "---:"] + ["---:"] * (len(head) - 2)) + "|"]
    differ = False
    for r in rows:
        c = bs.get((r["data"], r["K"]))
        cells = [str(r["data"]).replace("_", " "), str(r["K"])]
        cells += [_err_cell(c, k) for k, _ in bs_recipe]
        cells += [_err_cell(r, k) for k, _ in CH09_RECIPES]
        cells += [fmt_err(_sub(c, "quantisation_only", k)) if c else "—" for k, _ in bs_quant]
        cells += [fmt_err(_sub(r, "quantisation_only", k)) for k, _ in CH09_RECIPES]
        gq = r.get("gpu_quantiser") if isinstance(r.get("gpu_quantiser"), dict) else {}
        parts = []
        for rule in ("floor_ocp", "rceil"):
            g = gq.get(rule) if isinstance(gq.get(rule), dict) else None
            if g is None:
                parts.append("—")
                continue
            bad = g.get("bit_exact") is not True
            differ |= bad
            parts.append(fmt_err(_sub(gq, rule, "vs_exact")) + (" (**bytes differ**)" if bad else ""))
        cells.append(" / ".join(parts))
        out.append("| " + " | ".join(cells) + " |")
    what = str(doc.get("metric") or "relative error of D")
    out.append("")
    out.append(f"{what[:1].upper() + what[1:]}: against the float64 product of the unquantised "
               f"data, and in brackets against the float64 product of the dequantised operands "
               f"(the GEMM's own error). MXFP8: `quantize_mx` (1 x 32 blocks, UE8M0 scales; floor "
               f"= the OCP rule, rceil = cuBLAS's) on the float data, then `ch09::HopperPlan`; "
               f"chapter 7's study's data (same generators and seeds)"
               + (f", its 1 x 128 / 128 x 128 column from `{ch07_label}/accuracy.json`" if ch07
                  else "") +
               f". GPU quantiser: the data rounded to bf16, `quantize_mx_1x32` on the GPU (its "
               f"bytes " + ("NOT ALWAYS equal to `quantize_mx`'s on the same values: see **bytes "
                            "differ**" if differ else "equal to `quantize_mx`'s on the same "
                            "bf16 values at every point") +
               f"), the same GEMM, error against the unquantised data. Shape "
               f"{doc.get('shape') or '?'}; {doc.get('rows_compared', '?')} rows compared; "
               f"{_where(doc)}; file `{data_label}/accuracy.json`.")
    out.append("")
    out.append(GENERATED_NOTE)
    return "\n".join(out)


def fmt_x_trunc(x: float | None) -> str:
    """A ratio truncated to three decimals, as the target verdicts are: 0.6999 reads 0.699x."""
    return "—" if x is None else f"{math.floor(x * 1000) / 1000:.3f}x"


def hopper_kernels(bf: BenchFile) -> dict[int, list[str]]:
    """Version -> the file's "ch09_hopper_mx:<kernel>" implementations of it, in file order."""
    out: dict[int, list[str]] = {}
    prefix = CH09_HOPPER_IMPL + ":"
    for impl in uniq(r.impl for r in bf.rows if r.impl.startswith(prefix)):
        m = _VERSION_RE.match(impl[len(prefix):])
        out.setdefault(int(m.group(2)) if m else CH09_HOPPER_VERSION, []).append(impl)
    return out


def hopper_kernel_name(impl: str) -> str:
    """'ch09_hopper_mx:128x128_s5_..._v2' -> '128x128_s5_...' (the version is the column's)."""
    name = impl.split(":", 1)[1] if ":" in impl else impl
    m = _VERSION_RE.match(name)
    return m.group(1) if m else name


@dataclass
class HopperRow:
    shape: str
    default: Row | None  # the plan's default kernel (the current version)
    fastest: dict[int, Row | None]  # version -> its fastest kernel at the shape
    ch07: Row | None
    cublaslt: Row | None
    bf16: Row | None = None  # the dequantize_bf16 path, its rule's kernel
    bf16_fastest: Row | None = None  # its fastest kernel
    bf16_gemm: Row | None = None  # its bf16 GEMM alone
    cublaslt_bf16: Row | None = None
    requant: Row | None = None  # the requantize_block_scaled path (requant_table)
    requant_gemm: Row | None = None  # its chapter-7 GEMM alone
    requant_once: Row | None = None  # the same with the weights re-quantised once

    def vs_ch07(self, r: Row | None) -> float | None:
        return ratio(r, self.ch07)

    @property
    def target_group(self) -> bool:
        """One of the M = 4096 DeepSeek-V3 shapes (the geomean half of issue 11's target)."""
        d = shape_dims(self.shape)
        return d is not None and d[0] == CH09_TARGET_M and (d[1], d[2]) in DEEPSEEK_NK


def hopper_rows(bf: BenchFile) -> tuple[list[int], list[HopperRow]]:
    """The versions present (newest first) and a row per shape chapter 9 ran (file order)."""
    kernels = hopper_kernels(bf)
    versions = sorted(set(kernels) | {CH09_HOPPER_VERSION}, reverse=True)
    shapes = uniq(r.shape for r in bf.rows
                  if r.impl == CH09_HOPPER_IMPL or r.impl.startswith(CH09_HOPPER_IMPL + ":"))
    rows = []
    for s in shapes:
        fastest = {}
        for v in versions:
            rs = [r for r in (bf.find(i, s) for i in kernels.get(v, [])) if r is not None]
            fastest[v] = max(rs, key=lambda r: r.tflops) if rs else None  # ties: file order
        b16 = [r for r in (bf.find(i, s) for i in uniq(
            x.impl for x in bf.rows if x.impl.startswith(CH09_BF16_IMPL + ":"))) if r is not None]
        rows.append(HopperRow(s, bf.find(CH09_HOPPER_IMPL, s), fastest,
                              bf.find(CH09_HOPPER_CH07, s), bf.find(CH07_PEER, s),
                              bf.find(CH09_BF16_IMPL, s),
                              max(b16, key=lambda r: r.tflops) if b16 else None,
                              bf.find(CH09_BF16_GEMM, s), bf.find(CH09_CUBLASLT_BF16, s)))
    return versions, rows


@dataclass
class HopperTarget:
    square: float | None  # the default kernel / chapter 7 at 8192^3
    group: list[float]  # the same per M = 4096 DeepSeek-V3 shape that has both
    geomean: float | None

    @property
    def square_met(self) -> bool | None:
        return None if self.square is None else self.square >= CH09_TARGET

    @property
    def geomean_met(self) -> bool | None:
        return None if self.geomean is None else self.geomean >= CH09_TARGET


def hopper_target(rows: list[HopperRow], pick=lambda r: r.default) -> HopperTarget:
    sq = next((r.vs_ch07(pick(r)) for r in rows if r.shape == CH09_TARGET_SQUARE), None)
    group = [x for x in (r.vs_ch07(pick(r)) for r in rows if r.target_group) if x is not None]
    return HopperTarget(sq, group, geomean(group))


def _verdict(ok: bool | None) -> str:
    return "—" if ok is None else ("met" if ok else "**not met**")


def hopper_table(bf: BenchFile, data_label: str) -> str | None:
    versions, rows = hopper_rows(bf)
    rows = [r for r in rows if r.default or any(r.fastest.values())]
    if not rows:
        return None
    cur = CH09_HOPPER_VERSION
    shown = [v for v in versions if any(r.fastest[v] for r in rows)]
    has_bf16 = any(r.bf16 for r in rows)
    bf16_head = ([f"dequantize_bf16, its rule (`{CH09_BF16_IMPL}`)", "dequantize_bf16, fastest kernel",
                  "its bf16 GEMM alone", "cuBLASLt bf16, same operands"] if has_bf16 else [])
    head = (["shape (M×N×K)", f"v{cur}, the default (`{CH09_HOPPER_IMPL}`)"]
            + [f"v{v}, fastest kernel" for v in shown] + bf16_head
            + [f"chapter 7 (`{CH09_HOPPER_CH07}`)", "cuBLASLt block-scaled"])
    out = ["| " + " | ".join(head) + " |",
           "|" + "|".join(["---"] + ["---:"] * (len(head) - 1)) + "|"]

    def cell(r: HopperRow, x: Row | None, named: bool = False) -> str:
        if x is None:
            return "—"
        name = f"`{hopper_kernel_name(x.impl)}` " if named else ""
        return f"{name}{fmt_tf(x.tflops)} ({fmt_x_trunc(r.vs_ch07(x))})"

    for r in rows:
        out.append("| " + " | ".join(
            [shape_label(r.shape).replace("x", "×"), cell(r, r.default)]
            + [cell(r, r.fastest[v], named=True) for v in shown]
            + ([cell(r, r.bf16), cell(r, r.bf16_fastest, named=True), cell(r, r.bf16_gemm),
                cell(r, r.cublaslt_bf16)] if has_bf16 else [])
            + [fmt_tf(r.ch07.tflops if r.ch07 else None), cell(r, r.cublaslt)]) + " |")

    t = hopper_target(rows)
    n_group = sum(r.target_group for r in rows)
    out.append("")
    sq = (f"{shape_label(CH09_TARGET_SQUARE)} **{fmt_x_trunc(t.square)}**, {_verdict(t.square_met)}"
          if t.square is not None else f"{shape_label(CH09_TARGET_SQUARE)} not measured")
    if t.geomean is not None:
        rng = f" ({min(t.group):.2f}-{max(t.group):.2f} per shape)" if len(t.group) > 1 else ""
        of = "" if len(t.group) == len(DEEPSEEK_NK) else f" of {len(DEEPSEEK_NK)}"
        gm = (f"geomean over the {len(t.group)}{of} M = {CH09_TARGET_M} DeepSeek-V3 shapes "
              f"**{fmt_x_trunc(t.geomean)}**{rng}, {_verdict(t.geomean_met)}")
    else:
        gm = f"no M = {CH09_TARGET_M} DeepSeek-V3 shape measured beside chapter 7"
    out.append(f"- Issue 11's target, the default kernel at >= {CH09_TARGET:g}x chapter 7: "
               f"{sq}; {gm}.")
    if has_bf16:
        b = hopper_target(rows, lambda r: r.bf16)
        parts = []
        if b.square is not None:
            parts.append(f"{shape_label(CH09_TARGET_SQUARE)} **{fmt_x_trunc(b.square)}**, "
                         f"{_verdict(b.square_met)}")
        if b.geomean is not None:
            parts.append(f"geomean over the {len(b.group)} M = {CH09_TARGET_M} DeepSeek-V3 shapes "
                         f"**{fmt_x_trunc(b.geomean)}** ({min(b.group):.2f}-{max(b.group):.2f} "
                         f"per shape), {_verdict(b.geomean_met)}")
        g = hopper_target(rows, lambda r: r.bf16_gemm)
        gq = (f"; its bf16 GEMM alone {fmt_x_trunc(g.square)} at {shape_label(CH09_TARGET_SQUARE)}"
              f" and {fmt_x_trunc(g.geomean)} over the same shapes" if g.geomean else "")
        out.append(f"- The same target for the opt-in dequantize_bf16 path (`{CH09_BF16_IMPL}`): "
                   f"{'; '.join(parts)}{gq}.")
    if n_group:
        parts = []
        for v in shown:
            g = hopper_target(rows, lambda r, v=v: r.fastest[v]).geomean
            parts.append(f"v{v}'s fastest kernel per shape {fmt_x_trunc(g)}")
        g = hopper_target(rows, lambda r: r.cublaslt).geomean
        parts.append(f"cuBLASLt block-scaled {fmt_x_trunc(g)}")
        out.append(f"- Geomean over the same shapes, over chapter 7: {', '.join(parts)}.")

    older = [v for v in shown if v != cur]
    ctx = bf.context
    timing = []
    if ctx_str(ctx, "l2_flush") in ("1", "clean"):
        timing.append("an L2 flush" + (" (clean: memset, then a read pass)" if ctx_str(ctx, "l2_flush") == "clean" else ""))
    delay = _num(ctx_str(ctx, "gpu_delay_us"))
    if delay:
        timing.append(f"a {delay:g} µs GPU-side delay (`--gpu_delay_us`)")
    out.append("")
    out.append(
        f"TFLOPS = 2 M N K / median time; in brackets the TFLOPS over chapter 7's at the same "
        f"shape (truncated to three decimals, as the target's verdicts: 0.6999 reads 0.699x). "
        f"v{cur} is the current `MxScaledMath` (`common/engine/mx_scaled.cuh`); the default "
        f"column is the kernel `ch09::HopperPlan` picks"
        + (f"; {', '.join(f'v{v}' for v in older)}: its earlier versions, kernels named `_v"
           f"{older[0]}`" + "".join(f", `_v{v}`" for v in older[1:]) if older else "")
        + ". A version's column is its fastest kernel at the shape (of those "
        "`--kernels=all` times), named without the version suffix."
        + (" dequantize_bf16: `ch09::HopperPath::dequantize_bf16`, A and B dequantised to bf16 "
           "into the plan's workspace, then a bf16 GEMM on the engine (both launches timed); its "
           "bf16 GEMM alone and cuBLASLt's bf16 GEMM read the operands it dequantised."
           if has_bf16 else "")
        + " Chapter 7: its block-scaled "
        "plan (1 x 128 / 128 x 128 scales, a promotion per 128 K), and cuBLASLt block-scaled on "
        "chapter 7's operands: the same shape and kind of data as chapter 9's, not the same "
        "data. All timed in the same process"
        + (f", each timed launch after {' and '.join(timing)}" if timing else "")
        + f", CUDA events, the median. From `{data_label}/{bf.name}`, measured on "
        f"{describe_env([bf])}.")
    out.append("")
    out.append(GENERATED_NOTE)
    return "\n".join(out)


def requant_table(bf: BenchFile, data_label: str) -> str | None:
    """Chapter 9's requantize_block_scaled path against chapter 7 and the other two paths, one run."""
    shapes = uniq(r.shape for r in bf.rows if r.impl == CH09_REQUANT_IMPL)
    if not shapes:
        return None
    head = ["shape (M×N×K)", f"re-quantise + chapter 7 (`{CH09_REQUANT_IMPL}`)",
            f"weights re-quantised once (`{CH09_REQUANT_ONCE}`)",
            f"its chapter-7 GEMM alone (`{CH09_REQUANT_GEMM}`)",
            "the re-quantisation: µs (GB/s)", f"chapter 7 (`{CH09_HOPPER_CH07}`)",
            f"default path (`{CH09_HOPPER_IMPL}`)", f"dequantize_bf16 (`{CH09_BF16_IMPL}`)"]
    out = ["| " + " | ".join(head) + " |", "|" + "|".join(["---"] + ["---:"] * (len(head) - 1)) + "|"]
    rows = []
    for s in shapes:
        ch07 = bf.find(CH09_HOPPER_CH07, s)
        path, alone = bf.find(CH09_REQUANT_IMPL, s), bf.find(CH09_REQUANT_GEMM, s)
        hr = HopperRow(s, bf.find(CH09_HOPPER_IMPL, s), {}, ch07, None, bf.find(CH09_BF16_IMPL, s),
                       requant=path, requant_gemm=alone, requant_once=bf.find(CH09_REQUANT_ONCE, s))
        rows.append(hr)

        def cell(x: Row | None) -> str:
            return "—" if x is None else f"{fmt_tf(x.tflops)} ({fmt_x_trunc(ratio(x, ch07))})"
        rq = "—"
        if path and alone and path.median_us and alone.median_us:
            us = path.median_us - alone.median_us
            d = shape_dims(s)
            gbs = 2 * (d[0] + d[1]) * d[2] / (us * 1e3) if d and us > 0 else None
            rq = f"{us:.1f}" + (f" ({gbs:,.0f})" if gbs else "")
        out.append("| " + " | ".join([shape_label(s).replace("x", "×"), cell(path),
                                      cell(hr.requant_once), cell(alone), rq,
                                      fmt_tf(ch07.tflops if ch07 else None), cell(hr.default),
                                      cell(hr.bf16)]) + " |")
    out.append("")
    parts = []
    picks = [(f"re-quantise + chapter 7 (`{CH09_REQUANT_IMPL}`)", lambda r: r.requant),
             (f"weights re-quantised once (`{CH09_REQUANT_ONCE}`)", lambda r: r.requant_once),
             ("its chapter-7 GEMM alone", lambda r: r.requant_gemm),
             (f"the default path (`{CH09_HOPPER_IMPL}`)", lambda r: r.default),
             (f"dequantize_bf16 (`{CH09_BF16_IMPL}`)", lambda r: r.bf16)]
    if not any(r.requant_once for r in rows):  # a run from before session 54's bench entry
        picks = [p for p in picks if CH09_REQUANT_ONCE not in p[0]]
    for i, (name, pick) in enumerate(picks):
        t = hopper_target(rows, pick)
        verdict = ""
        if i == 0 and t.square is not None and t.geomean is not None:  # issue 11's, for this path
            verdict = (f" ({_verdict(t.square_met and t.geomean_met)} against issue 11's "
                       f"{CH09_TARGET:g}x, for this opt-in, not exact path)")
        parts.append(f"{name}: {shape_label(CH09_TARGET_SQUARE)} {fmt_x_trunc(t.square)}, geomean "
                     f"over the {len(t.group)} M = {CH09_TARGET_M} DeepSeek-V3 shapes "
                     f"{fmt_x_trunc(t.geomean)}" + verdict)
    out.append("- Over chapter 7, same run: " + "; ".join(parts) + ".")
    out.append("")
    out.append(
        "TFLOPS = 2 M N K / median time; in brackets over chapter 7's at the same shape (truncated "
        "to three decimals). The re-quantising path times both of its launches (`requantize_mx`, "
        "then chapter 7's plan); its GEMM alone is that plan's run on the operands the path's last "
        "run re-quantised; weights re-quantised once is the path as an inference user with fixed "
        "MXFP8 weights runs it from the public functions (B re-quantised once, outside the timing; "
        "per call `requantize_mx` on A alone, then chapter 7's plan); the re-quantisation's time is "
        "the path's median minus its GEMM's (not a median of its own), its GB/s the 2 (M + N) K "
        "bytes it reads and writes over that time. "
        "Chapter 7 runs on its own operands (the same shape and kind of data, not the same data). "
        f"All in one process, CUDA events, the median. From `{data_label}/{bf.name}`, measured on "
        f"{describe_env([bf])}.")
    out.append("")
    out.append(GENERATED_NOTE)
    return "\n".join(out)


def quantizer_rates(bf: BenchFile, r: Row) -> tuple[float | None, float | None, float | None]:
    """A quantiser entry's GB/s, the GB/s of its copy (the entry of the same shape named
    QUANT_COPY_PREFIX + its name) and its % of the copy (its own counter, else computed)."""
    gbs = r.counter("GB/s")
    copy = bf.find(QUANT_COPY_PREFIX + r.impl, r.shape)
    cgbs = copy.counter("GB/s") if copy else None
    pct = r.counter("pct_of_copy")
    if pct is None and gbs is not None and cgbs:
        pct = 100.0 * gbs / cgbs
    return gbs, cgbs, pct


def fmt_pct_truncated(pct: float) -> str:
    """A % of the copy truncated to one decimal, so that the shown value agrees with the target's
    verdict (84.995 reads 84.9%, not a rounded 85.0% beside "missed")."""
    return f"{math.floor(pct * 10 + 1e-9) / 10:.1f}%"


def quantizers_table(bf: BenchFile, data_label: str) -> str | None:
    rows = []
    for r in bf.rows:
        if (r.impl.startswith(QUANT_COPY_PREFIX) or r.impl.startswith("copy")
                or _QUANT_VARIANT_RE.match(r.impl)):  # variants: quantizer_variants_table
            continue
        gbs, cgbs, pct = quantizer_rates(bf, r)
        verdict = "—" if pct is None else ("met" if pct >= QUANT_TARGET_PCT else "**missed**")
        rows.append("| " + " | ".join([
            f"`{r.impl}`", r.shape.replace("x", "×"), fmt_gbs(gbs), fmt_gbs(cgbs),
            "—" if pct is None else fmt_pct_truncated(pct), verdict]) + " |")
    if not rows:
        return None
    out = ["| quantiser | shape | GB/s | copy GB/s | % of copy | "
           f">= {QUANT_TARGET_PCT:g}% of copy |", "|---|---|---:|---:|---:|---|"]
    out += rows
    out.append("")
    out.append(f"GB/s: the bytes a quantiser must move (bf16 read, e4m3 and FP32 scales written) / "
               f"median time; copy GB/s: a device-to-device `cudaMemcpyAsync` of the same bytes, "
               f"timed in the same process (L2 flushed before every launch); % of the copy "
               f"truncated to one decimal. The target: "
               f"{QUANT_TARGET_PCT:g}% of the copy. Measured on {describe_env([bf])}; data "
               f"`{data_label}/{bf.name}`.")
    out.append("")
    out.append(GENERATED_NOTE)
    return "\n".join(out)


def quantizer_variants_table(files: list[BenchFile], data_label: str) -> str | None:
    """The kernel variants of each quantiser side by side (quantize_bench's "<op>_<variant>"
    entries, each beside its own copy), one table per file: GB/s and % of the copy per variant,
    and which variants meet the target."""
    parts = []
    for bf in files:
        cells: dict[tuple[str, str], dict[str, tuple[float | None, float | None]]] = {}
        variants: list[str] = []
        for r in bf.rows:
            m = _QUANT_VARIANT_RE.match(r.impl)
            if r.impl.startswith("copy") or not m:
                continue
            gbs, _, pct = quantizer_rates(bf, r)
            v = m.group("variant")
            if v not in variants:
                variants.append(v)
            cells.setdefault((m.group("op"), r.shape), {})[v] = (gbs, pct)
        if not cells:
            continue
        head = ["quantiser", "shape"]
        for v in variants:
            head += [f"{v} GB/s", f"{v} % of copy"]
        head.append(f">= {QUANT_TARGET_PCT:g}% of copy")
        out = ["| " + " | ".join(head) + " |",
               "|---|---|" + "---:|---:|" * len(variants) + "---|"]
        for (op, shape), per in cells.items():
            row = [f"`{op}`", shape.replace("x", "×")]
            met = []
            for v in variants:
                gbs, pct = per.get(v, (None, None))
                row += [fmt_gbs(gbs), "—" if pct is None else fmt_pct_truncated(pct)]
                if pct is not None and pct >= QUANT_TARGET_PCT:
                    met.append(v)
            row.append(", ".join(met) if met else "none")
            out.append("| " + " | ".join(row) + " |")
        out.append("")
        out.append(f"Kernel variants (`<quantiser>_<variant>` entries of `bench/quantize_bench`), "
                   f"each timed beside its own device-to-device copy of the same bytes in the same "
                   f"process (L2 flushed before every launch); GB/s and the target as above. "
                   f"Measured on {describe_env([bf])}; data `{data_label}/{bf.name}`.")
        parts.append("\n".join(out))
    if not parts:
        return None
    return "\n\n".join(parts) + "\n\n" + GENERATED_NOTE


def read_ktable(repo: str) -> dict[str, str] | None:
    """'MxNxK' -> kernel name from kTable in chapter 7's bs_gemm.cpp; None if not found."""
    path = os.path.join(repo, CH07_TABLE_SOURCE)
    try:
        with open(path, encoding="utf-8") as f:
            text = f.read()
    except OSError:
        return None
    m = _KTABLE_RE.search(text)
    if not m:
        warn(f"{CH07_TABLE_SOURCE}: no kTable found; the sweep block lists the fastest only")
        return None
    return {f"{a}x{b}x{c}": k for a, b, c, k in _KTABLE_ENTRY_RE.findall(m.group(1))}


def ch07_sweep_table(sweeps: list[BenchFile], data_label: str,
                     ktable: dict[str, str] | None, main: BenchFile | None) -> str | None:
    lines = []
    for bf in sweeps:
        shapes = uniq(r.shape for r in bf.rows if r.impl.startswith(SWEEP_PREFIX))
        for s in shapes:
            rs = sorted(((r, i) for i, r in enumerate(bf.rows)
                         if r.shape == s and r.impl.startswith(SWEEP_PREFIX)),
                        key=lambda ri: (-ri[0].tflops, ri[1]))
            rs = [r for r, _ in rs]
            q = bf.find(CH07_PEER, s)
            cells = [shape_label(s).replace("x", "×")]
            for k in range(SWEEP_TOP):
                if k < len(rs):
                    r = rs[k]
                    cells.append(f"`{r.impl[len(SWEEP_PREFIX):]}` {fmt_tf(r.tflops)} "
                                 f"({fmt_ratio(r.tflops, q.tflops if q else None)})")
                else:
                    cells.append("—")
            cells.append(fmt_tf(q.tflops if q else None))
            if ktable is not None:
                name = ktable.get(s)
                if name is None:
                    cells.append("— (not in the table)")
                else:
                    hit = next((k for k, r in enumerate(rs)
                                if r.impl[len(SWEEP_PREFIX):] == name), None)
                    where = ("fastest" if hit == 0 else
                             f"#{hit + 1} of {len(rs)}, {fmt_tf(rs[hit].tflops)}" if hit is not None
                             else "not in this sweep")
                    cells.append(f"`{name}` ({where})")
            lines.append("| " + " | ".join(cells) + " |")
    if not lines:
        return None
    head = ["shape (M×N×K)"] + [f"#{k + 1} (TFLOPS, % of cuBLASLt)" for k in range(SWEEP_TOP)] + [
        "cuBLASLt block-scaled"] + (["kernel in `kTable`"] if ktable is not None else [])
    out = ["| " + " | ".join(head) + " |",
           "|" + "|".join(["---"] + ["---"] * SWEEP_TOP + ["---:"]
                          + (["---"] if ktable is not None else [])) + "|"]
    out += lines
    out.append("")
    commits = uniq(short_commit(ctx_str(f.context, "git_commit")) for f in sweeps)
    note = (f"The {SWEEP_TOP} fastest kernels per shape (by median time, L2 flushed) and "
            f"cuBLASLt block-scaled from the same file, timed in the same process")
    if ktable is not None:
        note += (f"; `kTable`: the kernel chapter 7's table (`{CH07_TABLE_SOURCE}`, read from the "
                 f"source as it is now) picks for the shape")
    main_c = short_commit(ctx_str(main.context, "git_commit")) if main else None
    if main_c and commits and commits != [main_c]:
        note += (f". The sweep ran at commit {', '.join(f'`{c}`' for c in commits)}, not at the "
                 f"measured table's `{main_c}`: its TFLOPS are that build's")
    out.append(note + ".")
    out.append("")
    delays = uniq(ctx_str(f.context, "gpu_delay_us") or "0" for f in sweeps)
    delay = (f"{'/'.join(f'{_num(d) or 0:g}' for d in delays)} µs GPU-side delay before each "
             f"launch" if any(_num(d) for d in delays) else "no GPU-side delay before the launches")
    out.append(f"Timing: L2 flushed, {delay}. Measured on {describe_env(sweeps)}; data "
               f"{', '.join(f'`{data_label}/{f.name}`' for f in sweeps)}.")
    out.append("")
    out.append(GENERATED_NOTE)
    return "\n".join(out)


# ------------------------------------------------------------------------------------------------
# The promoted loop's versions side by side (<data>/engine_loops/): chapters 6 and 7


MARK_LOOPS = ("<!-- loops:begin -->", "<!-- loops:end -->")
LOOPS_DIR = "engine_loops"
# The commit that made each math policy's fastest loop its default (two-deep where it fits, else
# the first loop for per-tensor scaling and the lean loop for block scaling): kernels named
# before it and after it mean different loops. Binaries of these commits, the last before it,
# name the lean one-buffer loop without a suffix; any other commit is read with the new names.
LOOPS_DEFAULTS_COMMIT = "f4a8670"
LOOPS_LEAN_DEFAULT_COMMITS = ("61b9328", "3e2acd2")
# Chapter 6 files at commits whose per-tensor default on tiles where two-deep does not fit (BM or BN
# above 128) is known: commit -> {BM: loop} for those tiles, "first" for any BM not listed. The
# first loop from f4a8670 on; 172780d made the lean loop unrolled 8x the default on 256 x 128 and
# 192 x 128, the next commit on 256 x 128 only.
LOOPS_CH06_DEFAULTS = {"377d953": {}, "172780d": {256: "lean8", 192: "lean8"},
                       "80c55ad": {256: "lean8"}}
# Loop version -> label, in the order of a tile's rows.
LOOP_LABELS = {
    "first": "first",
    "lean": "lean",
    "lean2": "lean, unrolled 2x",
    "lean4": "lean, unrolled 4x",
    "lean8": "lean, unrolled 8x",
    "two-deep": "two-deep",
    "default": "the commit's default",
    "fast": "fast accumulation (no promotion)",
}
_LOOP_SUFFIX_RE = re.compile(r"^(?P<tile>.+?)(?:_(?P<suffix>loop\d+|2deep))?$")
LOOPS_PEERS = {  # chapter -> (peer of its promoted kernels, peer of its fast kernels)
    CH06_CHAPTER: (PROMOTED, PER_TENSOR),
    CH07_CHAPTER: (CH07_PEER, CH07_PEER),
}


def load_loops(data_dir: str) -> list[BenchFile]:
    """<data>/engine_loops/*.json (Google Benchmark JSON of chapter 6's and 7's executables),
    oldest run first (the context's date, then the name)."""
    d = os.path.join(data_dir, LOOPS_DIR)
    if not os.path.isdir(d):
        return []
    files = [load_file(os.path.join(d, n)) for n in sorted(os.listdir(d)) if n.endswith(".json")]
    return sorted(files, key=lambda f: (ctx_str(f.context, "date") or "", f.name))


def loops_chapter(bf: BenchFile) -> int | None:
    """The chapter whose executable wrote the file: its name's chNN_ prefix."""
    m = re.match(r"^ch(\d{2})_", bf.name)
    return int(m.group(1)) if m else None


def loops_lean_default(bf: BenchFile) -> bool:
    """The file's kernels are named as before LOOPS_DEFAULTS_COMMIT (no suffix = lean)."""
    c = ctx_str(bf.context, "git_commit") or ""
    return any(c.startswith(p) for p in LOOPS_LEAN_DEFAULT_COMMITS)


def loop_of(impl: str, lean_default: bool) -> tuple[str, str] | None:
    """'ch07:192x128_s4_c2x1_promoted_tma_b2_loop0' -> ('192x128_s4_c2x1_promoted_tma_b2',
    'first'): the kernel's tile (a fast kernel's is its promoted sibling's name) and its loop;
    None for what is not a chapter kernel (cuBLASLt, device_copy, ...)."""
    name = impl.split(":", 1)[1] if ":" in impl else impl
    if not re.match(r"^\d+x\d+_s\d+_c\d+x\d+_(fast|promoted)_", name):
        return None
    if "_fast_" in name:
        return name.replace("_fast_", "_promoted_", 1), "fast"
    m = _LOOP_SUFFIX_RE.match(name)
    tile, suffix = m.group("tile"), m.group("suffix")
    loop = {None: "lean" if lean_default else "default", "loop0": "first", "loop1": "lean",
            "loop2": "lean2", "loop4": "lean4", "loop8": "lean8", "2deep": "two-deep"}.get(suffix)
    if loop is None:
        warn(f"unknown promoted-loop suffix _{suffix} in {impl}: shown as it is")
        loop = suffix
    return tile, loop


@dataclass
class LoopRow:
    impl: str  # the benchmark's implementation name, as in the file
    tile: str
    loop: str
    tflops: dict[str, float]  # shape -> TFLOPS
    base: "LoopRow | None" = None  # what "vs first" divides by (None: no such row in the file)
    peer: str | None = None  # the cuBLASLt entry it is compared with

    def vs(self, other: dict[str, float]) -> tuple[float | None, int]:
        """Geomean of TFLOPS / other's over the shapes both have, and how many shapes."""
        xs = [self.tflops[s] / other[s] for s in self.tflops if s in other and other[s] > 0]
        return geomean(xs), len(xs)


def loop_rows(bf: BenchFile) -> list[LoopRow]:
    """A row per (tile, loop) the file measured, tiles in file order, a tile's loops in
    LOOP_LABELS' order, each with the row it is compared with: the same tile's first loop; for
    two-deep rows without one, the same tile's lean loop; fast rows against their promoted
    sibling's first loop."""
    ch = loops_chapter(bf)
    lean_default = loops_lean_default(bf)
    commit = ctx_str(bf.context, "git_commit") or ""
    known = next((v for c, v in LOOPS_CH06_DEFAULTS.items() if commit.startswith(c)), None)
    known = known if ch == CH06_CHAPTER else None
    promoted_peer, fast_peer = LOOPS_PEERS.get(ch, (PROMOTED, PER_TENSOR))
    rows: dict[tuple[str, str], LoopRow] = {}
    for r in bf.rows:
        tl = loop_of(r.impl, lean_default)
        if tl is None:
            continue
        if known is not None and tl[1] == "default":
            bm, bn = (int(v) for v in re.match(r"^(\d+)x(\d+)_", tl[0]).groups())
            if bm > 128 or bn > 128:
                tl = (tl[0], known.get(bm, "first"))
        row = rows.setdefault(tl, LoopRow(r.impl, tl[0], tl[1], {}))
        row.tflops[r.shape] = r.tflops
    order = list(LOOP_LABELS)
    tiles = uniq(t for t, _ in rows)
    out = sorted(rows.values(), key=lambda x: (tiles.index(x.tile),
                                               order.index(x.loop) if x.loop in order else 99))
    for x in out:
        x.base = rows.get((x.tile, "first"))
        if x.base is None and x.loop == "two-deep":
            x.base = rows.get((x.tile, "lean"))
        x.peer = fast_peer if x.loop == "fast" else promoted_peer
    return out


def _loop_shape_groups(rows: list[LoopRow], bf: BenchFile) -> list[tuple[list[str], list[LoopRow]]]:
    """The file's shapes, in file order, and its rows, split where tiles were measured on
    different shapes (chapter 7's small-M run: each tile on its own shapes) so that no table is
    mostly empty: one group per set of shapes, tiles in file order."""
    shapes = uniq(r.shape for r in bf.rows)
    by_tile: dict[str, set[str]] = {}
    for x in rows:
        by_tile.setdefault(x.tile, set()).update(x.tflops)
    groups: list[tuple[list[str], list[LoopRow]]] = []
    keys: list[frozenset] = []
    for x in rows:
        k = frozenset(by_tile[x.tile])
        if k not in keys:
            keys.append(k)
            groups.append(([s for s in shapes if s in k], []))
        groups[keys.index(k)][1].append(x)
    return groups


def loops_file_table(bf: BenchFile, data_label: str) -> str | None:
    """One file's table(s) (one per set of shapes, see _loop_shape_groups) and its caption: the
    file, the commit its kernels are named at, the timing, the GPU."""
    rows = loop_rows(bf)
    if not rows:
        return None
    ch = loops_chapter(bf)
    promoted_peer, fast_peer = LOOPS_PEERS.get(ch, (PROMOTED, PER_TENSOR))
    peers = [p for p in uniq([promoted_peer, fast_peer])
             if any(x.peer == p for x in rows) and any(r.impl == p for r in bf.rows)]
    peer_tf = {p: {r.shape: r.tflops for r in bf.rows if r.impl == p} for p in peers}
    commit = short_commit(ctx_str(bf.context, "git_commit"))[:7]
    two_deep_vs_lean = any(x.loop == "two-deep" and x.base is not None and x.base.loop == "lean"
                           for x in rows)
    vs_first_head = "vs first" + (" (two-deep: vs lean)" if two_deep_vs_lean else "")
    out = []
    for shapes, grp in _loop_shape_groups(rows, bf):
        head = ([f"kernel (named as at `{commit}`)", "loop"]
                + [shape_label(s).replace("x", "×") for s in shapes]
                + [vs_first_head, "vs cuBLASLt"])
        out += ["| " + " | ".join(head) + " |",
                "|" + "|".join(["---", "---"] + ["---:"] * (len(head) - 2)) + "|"]
        for x in grp:
            if x.base is None:
                vf = "—"
            else:
                g, _ = x.vs(x.base.tflops)
                vf = fmt_x(g) + (" (vs lean)" if x.base.loop == "lean" and x.loop != "lean" else "")
            g, _ = x.vs(peer_tf.get(x.peer, {}))
            vc = fmt_x(g) + (" (vs fast accum.)" if g is not None and x.peer != promoted_peer
                             else "")
            name = x.impl.split(":", 1)[1] if ":" in x.impl else x.impl
            out.append("| " + " | ".join(
                [f"`{name}`", LOOP_LABELS.get(x.loop, x.loop)]
                + [fmt_tf(x.tflops.get(s)) for s in shapes] + [vf, vc]) + " |")
        for p in peers:
            out.append("| " + " | ".join(
                [PEER_NAMES.get(p, p), "—"] + [fmt_tf(peer_tf[p].get(s)) for s in shapes]
                + ["—", "—"]) + " |")
        out.append("")
    timing = []
    if ctx_str(bf.context, "l2_flush") in ("1", "clean"):
        timing.append("L2 flushed" + (" clean" if ctx_str(bf.context, "l2_flush") == "clean" else "")
                      + " before each launch")
    delay = _num(ctx_str(bf.context, "gpu_delay_us"))
    timing.append(f"a {delay:g} µs GPU-side delay before each timed launch" if delay
                  else "no GPU-side delay")
    prefixes = uniq(x.impl.split(":", 1)[0] + ":" for x in rows if ":" in x.impl)
    names = "kernel names as at that commit" + (
        f", the file's {', '.join(f'`{p}`' for p in prefixes)} prefix left out" if prefixes else "")
    out.append(f"`{data_label}/{LOOPS_DIR}/{bf.name}`: one run, binaries of commit `{commit}` "
               f"({names}), {', '.join(timing)}; vs cuBLASLt: against "
               + " / ".join(PEER_NAMES.get(p, p) for p in peers or [promoted_peer])
               + (" (the fast rows against fast accumulation)" if len(peers) > 1 else "")
               + f" in this run. Measured on {describe_env([bf])}.")
    return "\n".join(out)


def loops_note(files: list[BenchFile]) -> str:
    """The block's closing note: what the names meant at the files' commits, the ratios."""
    old = uniq(short_commit(ctx_str(f.context, "git_commit"))[:7] for f in files
               if loops_lean_default(f))
    new = uniq(short_commit(ctx_str(f.context, "git_commit"))[:7] for f in files
               if not loops_lean_default(f))
    parts = []
    if old:
        parts.append(f"Kernel names at {' and '.join(f'`{c}`' for c in old)}: "
                     "`<BM>x<BN>_s<stages>_c<CM>x<CN>_<mode>_tma_b<buffers>` with no suffix = the "
                     "lean one-buffer loop (\"lean\"), `_loop0` = the first loop (\"first\"), "
                     "`_loop2` / `_loop4` = the lean loop unrolled 2 / 4 times, `_2deep` = the "
                     "two-deep loop (\"two-deep\").")
    parts.append(f"{'Since' if old else 'From'} `{LOOPS_DEFAULTS_COMMIT}` on"
                 + (f" ({', '.join(f'`{c}`' for c in new)} here)" if new else "")
                 + ": no suffix = each policy's default at the file's commit: two-deep where two "
                 "partial sums fit; elsewhere, for per-tensor scaling, the first loop (to "
                 "`377d953`), then the lean loop unrolled 8x on 256 x 128 and 192 x 128 "
                 "(`172780d`), on 256 x 128 only (later commits), the first loop on the other "
                 "tiles, and for block "
                 "scaling the lean loop (`f4a8670` to `c6bc1ab`), the lean loop unrolled 4x "
                 "(`1214e66`), unrolled 8x on 256 x 128 and 4x on the other tiles (`74d644d` on). "
                 "The others are named `_loop0` (first), `_loop1` (lean), `_loop2`, `_loop4`, "
                 "`_loop8` (lean unrolled) and `_2deep`.")
    if any(x.loop == "fast" for f in files for x in loop_rows(f)):
        parts.append("`_fast_` kernels: fast accumulation (no promotion), for reference; their "
                     "\"vs first\" is against the same tile's promoted first loop, their \"vs "
                     "cuBLASLt\" against cuBLASLt's fast accumulation.")
    vs_lean = uniq(short_commit(ctx_str(f.context, "git_commit"))[:7] for f in files
                   if any(x.base is not None and x.base.loop == "lean" and x.loop == "two-deep"
                          for x in loop_rows(f)))
    parts.append("TFLOPS = 2 M N K / median time. vs first: the geomean, over the shapes both "
                 "were measured on, of TFLOPS / the same tile's first-loop TFLOPS in the same file "
                 "(— where the file has no first loop for the tile)"
                 + (f"; for two-deep rows whose tile has no first loop in the file (the "
                    f"{' and '.join(f'`{c}`' for c in vs_lean)} runs): / the same tile's lean "
                    f"loop instead, marked (vs lean)" if vs_lean else "")
                 + ". vs cuBLASLt: the geomean of TFLOPS / the same file's cuBLASLt TFLOPS. "
                 "Each file is one run: compare rows within a file, not across files.")
    return " ".join(parts)


def loops_table(files: list[BenchFile], chapter: int, data_label: str) -> str | None:
    """The chapter's block: a table per engine_loops file of the chapter (per run), oldest first."""
    mine = [f for f in files if loops_chapter(f) == chapter]
    parts = [t for t in (loops_file_table(f, data_label) for f in mine) if t]
    if not parts:
        return None
    return "\n\n".join(parts) + "\n\n" + loops_note(mine) + "\n\n" + GENERATED_NOTE


# ------------------------------------------------------------------------------------------------
# Plots


def _mpl():
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    plt.rcParams.update({
        "font.size": 11, "axes.titlesize": 13, "axes.labelsize": 12, "legend.fontsize": 10,
        "svg.hashsalt": "fp8gemm", "path.simplify": True,
    })
    return plt


def _png_bytes(fig) -> bytes:
    buf = io.BytesIO()
    # No 'Software' / date metadata: the same data gives the same bytes.
    fig.savefig(buf, format="png", dpi=110, metadata={"Software": None})
    return buf.getvalue()


def _label(impl: str) -> str:
    m = CHAPTER_RE.match(impl)
    if not m:
        return impl
    return f"ch{m.group(1)}\n" + "\n".join(textwrap.wrap(m.group(2).replace("_", " "), 14))


def _footnote(fig, files: list[BenchFile]) -> None:
    fig.text(0.01, 0.01, describe_env(files, markdown=False), fontsize=8, color="0.35",
             ha="left", va="bottom", wrap=True)


def plot_ladder(ds: Dataset) -> bytes | None:
    impls = [i for i in ds.chapters
             if any(ds.at(i, f"{s}x{s}x{s}") for s in LADDER_SIZES)]
    if not impls:
        return None
    plt = _mpl()
    colors = {4096: "#4C72B0", 8192: "#DD8452"}
    # Promoted chapters add two peer lines to the legend: a wider figure keeps it inside.
    fig, ax = plt.subplots(figsize=(max(12.5 if has_promoted(impls) else 9.0,
                                        1.05 * len(impls) + 3.0), 5.8))
    top = 0.0
    width = 0.38
    for j, s in enumerate(LADDER_SIZES):
        xs, ys = [], []
        for i, impl in enumerate(impls):
            m = ds.at(impl, f"{s}x{s}x{s}")
            if m:
                xs.append(i + (j - 0.5) * width)
                ys.append(m.row.tflops)
                top = max(top, m.row.tflops)
        ax.bar(xs, ys, width, color=colors[s], label=f"chapter, {s}³", zorder=3)
        for x, y in zip(xs, ys):
            ax.annotate(f"{y:.0f}" if y >= 10 else f"{y:.1f}", (x, y), xytext=(0, 2),
                        textcoords="offset points", ha="center", va="bottom", fontsize=8)
        pm = ds.peer_median(PER_TENSOR, f"{s}x{s}x{s}")
        if pm:
            top = max(top, pm[0])
            ax.axhline(pm[0], color=colors[s], linestyle="--" if s == 4096 else ":", linewidth=1.8,
                       zorder=4, label=f"cuBLASLt per-tensor, {s}³: {pm[0]:.0f}"
                       + (f" (median of {pm[1]} runs)" if pm[1] > 1 else ""))
        # Promoted-accumulation chapters have their own peer: cuBLASLt's default mode.
        pm = ds.peer_median(PROMOTED, f"{s}x{s}x{s}") if has_promoted(impls) else None
        if pm:
            top = max(top, pm[0])
            ax.axhline(pm[0], color=colors[s], linestyle="-." if s == 4096 else (0, (6, 2, 1, 2)),
                       linewidth=1.4, alpha=0.8, zorder=4,
                       label=f"cuBLASLt promoted, {s}³: {pm[0]:.0f}"
                       + (f" (median of {pm[1]} runs)" if pm[1] > 1 else ""))
    ax.set_xticks(range(len(impls)))
    ax.set_xticklabels([_label(i) for i in impls], fontsize=9)
    ax.set_ylabel("TFLOPS (2MNK / median time)")
    ax.set_xlabel("chapter")
    ax.set_ylim(0, top * 1.32)  # room for the legend above the tallest bar or line
    ax.grid(axis="y", alpha=0.35, zorder=0)
    ax.set_axisbelow(True)
    ax.legend(loc="upper left", ncol=2, framealpha=0.95)
    fig.suptitle(f"FP8 GEMM, e4m3 in, bf16 out: the chapter ladder on {gpu_name(ds.used_files())}")
    fig.tight_layout(rect=(0, 0.05, 1, 1))
    _footnote(fig, ds.used_files())
    data = _png_bytes(fig)
    plt.close(fig)
    return data


def plot_sizes(ds: Dataset) -> bytes | None:
    series = []
    for impl in ds.chapters:
        pts = sorted((square(m.row.shape), m.row.tflops) for m in ds.rows_of(impl)
                     if square(m.row.shape))
        if pts:
            series.append((impl, pts))
    if not series:
        return None
    plt = _mpl()
    from matplotlib.ticker import FuncFormatter
    fig, ax = plt.subplots(figsize=(10.0, 5.8))
    markers = "osD^vP*Xhp"
    cmap = plt.get_cmap("tab10")
    for k, (impl, pts) in enumerate(series):
        ax.plot([p[0] for p in pts], [p[1] for p in pts], marker=markers[k % len(markers)],
                color=cmap(k % 10), linewidth=1.8, markersize=6, label=impl)
    sizes = sorted({square(m.row.shape) for i in ds.chapters for m in ds.rows_of(i)
                    if square(m.row.shape)})
    peer_pts = [(s, ds.peer_median(PER_TENSOR, f"{s}x{s}x{s}")) for s in sizes]
    peer_pts = [(s, p[0]) for s, p in peer_pts if p]
    if peer_pts:
        ax.plot([p[0] for p in peer_pts], [p[1] for p in peer_pts], color="black",
                linestyle="--", linewidth=2.2, marker="s", markersize=6,
                label="cuBLASLt per-tensor (median over runs)")
    if has_promoted(i for i, _ in series):
        prom_pts = [(s, ds.peer_median(PROMOTED, f"{s}x{s}x{s}")) for s in sizes]
        prom_pts = [(s, p[0]) for s, p in prom_pts if p]
        if prom_pts:
            ax.plot([p[0] for p in prom_pts], [p[1] for p in prom_pts], color="0.3",
                    linestyle="-.", linewidth=1.8, marker="^", markersize=6,
                    label="cuBLASLt per-tensor promoted (median over runs)")
            peer_pts = peer_pts + prom_pts  # for the y range below
    ax.set_xscale("log", base=2)
    ax.set_xticks(sizes)
    ax.set_xticklabels([str(s) for s in sizes])
    ax.minorticks_off()
    ys = [p[1] for _, pts in series for p in pts] + [p[1] for p in peer_pts]
    if min(ys) > 0 and max(ys) / min(ys) > 30:
        ax.set_yscale("log")
        ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
        ax.set_ylabel("TFLOPS (log scale)")
    else:
        ax.set_ylabel("TFLOPS")
        ax.set_ylim(0, max(ys) * 1.1)
    ax.set_xlabel("square size M = N = K (log₂ scale)")
    ax.grid(True, which="major", alpha=0.35)
    ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0.0)
    fig.suptitle(f"FP8 GEMM, e4m3 in, bf16 out: TFLOPS against size on {gpu_name(ds.used_files())}")
    fig.tight_layout(rect=(0, 0.05, 1, 1))
    _footnote(fig, ds.used_files())
    data = _png_bytes(fig)
    plt.close(fig)
    return data


def plot_ablation(bf: BenchFile) -> bytes | None:
    steps, shapes = ablation_steps(bf)
    if not steps or not shapes:
        return None
    plt = _mpl()
    palette = ["#4C72B0", "#DD8452", "#55A868", "#C44E52", "#8172B3", "#937860"]
    styles = ["--", ":", "-.", (0, (6, 2, 1, 2))]
    fig, ax = plt.subplots(figsize=(max(9.0, 1.3 * len(steps) + 3.0), 5.8))
    width = 0.8 / len(shapes)
    top = 0.0
    for j, s in enumerate(shapes):
        color = palette[j % len(palette)]
        xs, ys = [], []
        for i, (impl, _) in enumerate(steps):
            r = bf.find(impl, s)
            if r:
                xs.append(i + (j - (len(shapes) - 1) / 2) * width)
                ys.append(r.tflops)
                top = max(top, r.tflops)
        ax.bar(xs, ys, width, color=color, label=shape_label(s).replace("x", "×"), zorder=3)
        for x, y in zip(xs, ys):
            ax.annotate(f"{y:.0f}" if y >= 10 else f"{y:.1f}", (x, y), xytext=(0, 2),
                        textcoords="offset points", ha="center", va="bottom", fontsize=8)
        q = bf.find(PER_TENSOR, s)
        if q:
            top = max(top, q.tflops)
            ax.axhline(q.tflops, color=color, linestyle=styles[j % len(styles)], linewidth=1.8,
                       zorder=4, label=f"cuBLASLt per-tensor (fast accum), "
                                       f"{shape_label(s).replace('x', '×')}: {q.tflops:.0f}")
    ax.set_xticks(range(len(steps)))
    ax.set_xticklabels(["\n".join(textwrap.wrap(lab.replace("_", " "), 14)) for _, lab in steps],
                       fontsize=9)
    ax.set_ylabel("TFLOPS (2MNK / median time)")
    ax.set_xlabel("ablation step (each adds one idea to the previous; fast accumulation)")
    ax.set_ylim(0, top * 1.32)
    ax.grid(axis="y", alpha=0.35, zorder=0)
    ax.set_axisbelow(True)
    ax.legend(loc="upper left", ncol=2, framealpha=0.95)
    fig.suptitle(f"Chapter 6 ablation: from chapter 5 to the persistent warp-specialised engine "
                 f"on {gpu_name([bf])}", fontsize=12)
    fig.tight_layout(rect=(0, 0.05, 1, 1))
    _footnote(fig, [bf])
    data = _png_bytes(fig)
    plt.close(fig)
    return data


def plot_accuracy(doc: dict) -> bytes | None:
    rows = accuracy_rows(doc)
    keys = [k for k, _ in ACCURACY_SERIES]
    keys += uniq(k for r in rows for k in r if k != "K" and k not in keys)
    names = dict(ACCURACY_SERIES)
    series = []
    for k in keys:
        pts = sorted((r["K"], v) for r in rows for v in [_num(r.get(k))]
                     if v is not None and v > 0 and r["K"] > 0)
        if pts:
            series.append((k, pts))
    if not series:
        return None
    plt = _mpl()
    from matplotlib.ticker import FixedLocator, FuncFormatter
    fig, ax = plt.subplots(figsize=(10.0, 5.8))
    style = {  # ours solid, cuBLASLt dashed; fast orange, promoted blue
        "ch06_fast": ("#DD8452", "-", "o"), "ch06_promoted": ("#4C72B0", "-", "s"),
        "cublaslt_fast": ("#C44E52", "--", "^"), "cublaslt_promoted": ("#55A868", "--", "D"),
    }
    cmap = plt.get_cmap("tab10")
    for n, (k, pts) in enumerate(series):
        color, ls, mk = style.get(k, (cmap(n % 10), ":", "x"))
        ax.plot([p[0] for p in pts], [p[1] for p in pts], color=color, linestyle=ls, marker=mk,
                linewidth=1.8, markersize=6, label=names.get(k, k))
    ks = sorted({p[0] for _, pts in series for p in pts})
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.xaxis.set_major_locator(FixedLocator(ks))
    ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
    ax.xaxis.set_minor_locator(FixedLocator([]))
    ax.set_xlabel("K (log₂ scale)")
    ax.set_ylabel("relative error of D vs float64 (log scale)")
    ax.grid(True, which="major", alpha=0.35)
    ax.legend(loc="upper left", framealpha=0.95)
    fig.suptitle("Chapter 6: accumulation error against K", fontsize=12)
    fig.tight_layout(rect=(0, 0.06, 1, 1))
    foot = []
    if doc.get("gpu"):
        foot.append(str(doc["gpu"]))
    if doc.get("data"):
        foot.append(f"data: {doc['data']}")
    foot.append(f"commit {short_commit(str(doc.get('commit') or ''))}")
    fig.text(0.01, 0.01, "; ".join(foot), fontsize=8, color="0.35", ha="left", va="bottom",
             wrap=True)
    data = _png_bytes(fig)
    plt.close(fig)
    return data


def plot_ch07_peers(ds: Dataset, peers: BenchFile) -> bytes | None:
    impl, bf, rows = peer_rows(ds, peers)
    series = [("ours", f"{impl or 'ch07'} (this chapter)", "#DD8452"),
              ("cublaslt", "cuBLASLt block-scaled (C++)", "#4C72B0"),
              ("torch", "torch blockwise scaled_mm", "#55A868"),
              ("deepgemm", "DeepGEMM", "#8172B3")]
    rows = [r for r in rows if any(getattr(r, k) for k, _, _ in series)]
    if not rows:
        return None
    plt = _mpl()
    fig, ax = plt.subplots(figsize=(max(10.0, 0.85 * len(rows) + 3.0), 6.2))
    width = 0.8 / len(series)
    top = 0.0
    for j, (key, lab, color) in enumerate(series):
        xs, ys = [], []
        for i, r in enumerate(rows):
            x = getattr(r, key)
            if x:
                xs.append(i + (j - (len(series) - 1) / 2) * width)
                ys.append(x.tflops)
                top = max(top, x.tflops)
        ax.bar(xs, ys, width, color=color, label=lab, zorder=3)
    ax.set_xticks(range(len(rows)))
    ax.set_xticklabels([shape_label(r.shape).replace("x", "×\n") if not square(r.shape)
                        else shape_label(r.shape) for r in rows], fontsize=8)
    ax.set_ylabel("TFLOPS (2MNK / median time)")
    ax.set_xlabel("shape (M × N × K)")
    ax.set_ylim(0, top * 1.18)
    ax.grid(axis="y", alpha=0.35, zorder=0)
    ax.set_axisbelow(True)
    ax.legend(loc="upper right", ncol=4, framealpha=0.95, fontsize=9)
    files = ([bf] if bf else []) + [peers]
    delay = _num(ctx_str(peers.context, "delay_us"))
    method = "L2 flushed" + (f", {delay:g} µs GPU delay" if delay else "") + ", median"
    commits = uniq(short_commit(ctx_str(f.context, "git_commit")) for f in files)
    fig.suptitle(f"Chapter 7 against its peers on {gpu_name(files)} ({method}; "
                 f"commit {', '.join(commits)})", fontsize=12)
    fig.tight_layout(rect=(0, 0.05, 1, 1))
    _footnote(fig, files)
    data = _png_bytes(fig)
    plt.close(fig)
    return data


# ---------------------------------------------------------------------------------------------
# Chapter 8 (grouped GEMM for MoE): its peers (bench/peers_moe.py) beside ch08_grouped_moe.json,
# case by case, with issue 10's targets as same-run ratios.
CH08_DIR = "ch08"
CH08_CHAPTER = 8
CH08_OURS = {"bal": "ch08_grouped", "skew": "ch08_grouped", "masked": "ch08_grouped",
             "wgrad": "ch08_wgrad"}
# kind -> (peer, target ratio or None, label); the first is the figure's DeepGEMM bar, the last
# its torch bar.
CH08_PEERS = {
    "bal": [("deepgemm_contiguous", 1.05, "DeepGEMM contiguous"),
            ("torch_scaled_grouped_mm", None, "torch `_scaled_grouped_mm` (rowwise)")],
    "skew": [("deepgemm_contiguous", 1.2, "DeepGEMM contiguous, GEMM alone (padded layout)"),
             ("deepgemm_contiguous_with_pad", None, "DeepGEMM with its padding step"),
             ("torch_scaled_grouped_mm", 1.5, "torch `_scaled_grouped_mm` (rowwise)")],
    "masked": [("deepgemm_masked", 1.05, "DeepGEMM masked (expected_m = 1.2 mean)"),
               ("deepgemm_masked_exact", None, "DeepGEMM masked (expected_m exact)")],
    "wgrad": [("deepgemm_kgrouped_wgrad", 1.05, "DeepGEMM k-grouped wgrad"),
              ("torch_scaled_mm_loop_wgrad", None, "a loop of torch `_scaled_mm` (cuBLASLt)")],
}
CH08_KINDS = ["bal", "skew", "masked", "wgrad"]


def load_ch08(data_dir: str) -> BenchFile | None:
    path = os.path.join(data_dir, CH08_DIR, "peers.json")
    return load_file(path) if os.path.isfile(path) else None


# The library's own calls in the peers' file (bench/peers_moe.py --interleave: chapter 8's default
# kernels through fp8gemm.ops, timed in the peers' process, interleaved with them), per kind.
CH08_LIBRARY = {"bal": "fp8gemm_grouped_contiguous", "skew": "fp8gemm_grouped_contiguous",
                "masked": "fp8gemm_grouped_masked", "wgrad": "fp8gemm_weight_grad"}


def ch08_cases(ds: Dataset, peers: BenchFile | None = None
               ) -> tuple[BenchFile | None, list[tuple[str, str, Row]]]:
    """The file ours come from and its (kind, case, row) of the implementation each kind is timed
    by: the library's rows of the peers' file when it has them for every case (the same process and
    method as the peers), else chapter 8's own file (ch08_grouped_moe.json)."""
    if peers is not None:
        own = [(r.shape.split("_")[0], r.shape, r) for r in peers.rows
               if CH08_LIBRARY.get(r.shape.split("_")[0]) == r.impl and r.tflops > 0]
        kinds_cases = {(r.shape.split("_")[0], r.shape) for r in peers.rows
                       if r.shape.split("_")[0] in CH08_LIBRARY}
        if own and len(own) == len(kinds_cases):
            own.sort(key=lambda x: (CH08_KINDS.index(x[0]), x[1]))
            return peers, own
    bf = ds.source.get("ch08_grouped") or ds.source.get("ch08_wgrad")
    if bf is None:
        return None, []
    out = []
    for r in bf.rows:
        kind = r.shape.split("_")[0]
        if kind in CH08_OURS and r.impl == CH08_OURS[kind]:
            out.append((kind, r.shape, r))
    out.sort(key=lambda x: (CH08_KINDS.index(x[0]), x[1]))
    return bf, out


def ch08_peers_table(ds: Dataset, peers: BenchFile, data_label: str, ch08_label: str) -> str | None:
    bf, cases = ch08_cases(ds, peers)
    if not cases:
        return None
    out = ["| case | ours TFLOPS | peer | peer TFLOPS | ours / peer | issue 10's target |",
           "|---|---:|---|---:|---:|---|"]
    met = missed = 0
    for kind, case, row in cases:
        for peer, target, label in CH08_PEERS[kind]:
            theirs = peers.find(peer, case)
            if theirs is None or theirs.tflops <= 0:
                continue
            ratio = row.tflops / theirs.tflops
            shown = math.floor(ratio * 1000) / 1000  # truncated: 1.0499 reads 1.049, not 1.050
            verdict = ""
            if target is not None:
                ok = ratio >= target
                met += ok
                missed += not ok
                verdict = f"≥ {target:g}: " + ("met" if ok else "**missed**")
            out.append(f"| `{case}` | {fmt_tf(row.tflops)} | {label} | {fmt_tf(theirs.tflops)} | "
                       f"{shown:.3f} | {verdict} |")
    # The DeepSeek-V3-like expert layer, summed: both forward GEMMs and both weight gradients of
    # the skewed groups of T tokens (issue 10's realistic workload), median times added.
    layer = []
    for t in sorted({c.split("_t")[1].split("_")[0] for k, c, _ in cases if k == "skew"}, key=int):
        fwd = [r for k, c, r in cases if k == "skew" and f"_t{t}_" in c]
        wg = [r for k, c, r in cases if k == "wgrad" and f"_t{t}_" in c]
        if len(fwd) != 2 or len(wg) != 2 or any(r.median_us is None for r in fwd + wg):
            continue
        ours_us = sum(r.median_us for r in fwd + wg)
        def peer_sum(fwd_impl):
            rows = [peers.find(fwd_impl, r.shape) for r in fwd] + \
                   [peers.find("deepgemm_kgrouped_wgrad", r.shape) for r in wg]
            return None if any(x is None or x.median_us is None for x in rows) else \
                sum(x.median_us for x in rows)
        dg, dg_pad = peer_sum("deepgemm_contiguous"), peer_sum("deepgemm_contiguous_with_pad")
        if dg is None:
            continue
        line = (f"{t} tokens: ours {ours_us:.0f} µs; DeepGEMM {dg:.0f} µs with its GEMMs alone "
                f"(ours {dg / ours_us:.2f}x as fast)")
        if dg_pad is not None:
            line += (f", {dg_pad:.0f} µs with its forward padding step (ours {dg_pad / ours_us:.2f}x "
                     f"as fast)")
        layer.append(line)
    vers = [f"{k} {ctx_str(peers.context, v)}" for k, v in
            (("torch", "torch_version"), ("DeepGEMM", "deep_gemm_version")) if ctx_str(peers.context, v)]
    if layer:
        out.append("")
        out.append("The expert layer end to end (the skewed groups: both forward GEMMs, gate+up and "
                   "down, and both weight gradients, median times added; DeepGEMM's weight "
                   "gradient without its token padding and transposition, ours without our token "
                   "quantiser): " + "; ".join(layer) + ".")
    out.append("")
    out.append(f"Targets: **{met} met, {missed} missed.** TFLOPS = 2 x (real rows) x N x K / median "
               f"time (the weight gradient: 2 x N x K x real tokens); padding rows and empty "
               f"experts count nothing. Both sides timed alike: an L2 flush outside the timed "
               f"region, a {_num(ctx_str(peers.context, 'delay_us')) or 0:g} µs GPU-side delay before "
               f"the start event, CUDA events around one call, the median"
               f"{'; the implementations of a case interleaved, one call each per round' if ctx_str(peers.context, 'timing') == 'interleaved' else ''}. "
               + (f"Ours: chapter 8's default kernels through the library's PyTorch ops "
                  f"({', '.join(sorted(set(CH08_LIBRARY.values())))}), in the peers' process, from "
                  f"`{ch08_label}/{peers.name}`; the peers" if bf is peers else
                  f"Ours from `{data_label}/{bf.name}`; the peers") +
               f"{' (' + ', '.join(vers) + ')' if vers else ''} from `{ch08_label}/{peers.name}` "
               f"(`bench/peers_moe.py`, its context's `method`), in the same GPU session. "
               f"Measured on {describe_env([bf, peers])}.")
    out.append("")
    out.append(GENERATED_NOTE)
    return "\n".join(out)


def plot_ch08_peers(ds: Dataset, peers: BenchFile) -> bytes | None:
    bf, cases = ch08_cases(ds, peers)
    if not cases:
        return None
    series = [("ours", "chapter 8 (grouped / k-grouped, no padding)", "#DD8452"),
              ("deepgemm", "DeepGEMM (contiguous / masked / k-grouped)", "#8172B3"),
              ("torch", "torch (grouped rowwise / loop of scaled_mm)", "#55A868")]
    vals = []
    for kind, case, row in cases:
        dg = peers.find(CH08_PEERS[kind][0][0], case)
        torch = peers.find(CH08_PEERS[kind][-1][0], case) if "torch" in CH08_PEERS[kind][-1][0] else None
        vals.append((case, {"ours": row, "deepgemm": dg, "torch": torch}))
    plt = _mpl()
    fig, ax = plt.subplots(figsize=(max(10.0, 0.8 * len(vals) + 3.0), 6.2))
    width = 0.8 / len(series)
    top = 0.0
    for j, (key, lab, color) in enumerate(series):
        xs, ys = [], []
        for i, (_, v) in enumerate(vals):
            if v[key] is not None:
                xs.append(i + (j - (len(series) - 1) / 2) * width)
                ys.append(v[key].tflops)
                top = max(top, v[key].tflops)
        ax.bar(xs, ys, width, color=color, label=lab, zorder=3)
    ax.set_xticks(range(len(vals)))
    ax.set_xticklabels([c.replace("_n", "\nn").replace("_t", "\nt") for c, _ in vals], fontsize=7)
    ax.set_ylabel("TFLOPS (real rows only / median time)")
    ax.set_ylim(0, top * 1.18)
    ax.grid(axis="y", alpha=0.35, zorder=0)
    ax.set_axisbelow(True)
    ax.legend(loc="upper right", ncol=3, framealpha=0.95, fontsize=9)
    files = [bf, peers]
    delay = _num(ctx_str(peers.context, "delay_us"))
    method = "L2 flushed" + (f", {delay:g} µs GPU delay" if delay else "") + ", median"
    commits = uniq(short_commit(ctx_str(f.context, "git_commit")) for f in files)
    fig.suptitle(f"Chapter 8 against its peers on {gpu_name(files)} ({method}; "
                 f"commit {', '.join(commits)})", fontsize=12)
    fig.tight_layout(rect=(0, 0.05, 1, 1))
    _footnote(fig, files)
    data = _png_bytes(fig)
    plt.close(fig)
    return data


def plot_ch07_accuracy(doc: dict, mx: dict | None = None) -> bytes | None:
    """Chapter 7's recipes per data kind against K; with chapter 9's MXFP8 rows (`mx`, joined by
    data and K) as two more recipes."""
    rows = [r for r in ch07_accuracy_rows(doc) if r["K"] > 0]
    kinds = uniq(r["data"] for r in rows)
    if not kinds:
        return None
    mx_rows = by_point(mx)
    recipes = [(k, lab, False) for k, lab in CH07_RECIPES]
    # Shorter than the table's headers: the legend has 4 columns under 3 panels.
    recipes += [(k, f"{lab} (chapter 9)", True) for k, lab in CH09_QUANT_ONLY] if mx else []
    plt = _mpl()
    from matplotlib.ticker import FixedLocator, FuncFormatter, LogLocator, NullFormatter
    legend_rows = (2 * len(recipes) + len(CH07_QUANT_ONLY) + 3) // 4
    height = 5.4 + 0.25 * max(0, legend_rows - 2)
    fig, axes = plt.subplots(1, len(kinds), figsize=(5.2 * len(kinds) + 1.0, height), squeeze=False)
    colors = {"per_tensor_fast": "#DD8452", "per_tensor_promoted": "#4C72B0",
              "block_scaled_promoted": "#55A868", "mxfp8_floor_ocp": "#8172B3",
              "mxfp8_rceil": "#C44E52"}
    markers = {"per_tensor_fast": "o", "per_tensor_promoted": "s", "block_scaled_promoted": "D",
               "mxfp8_floor_ocp": "v", "mxfp8_rceil": "^"}
    handles = {}
    for ax, kind in zip(axes[0], kinds):
        rs = sorted((r for r in rows if r["data"] == kind), key=lambda r: r["K"])
        for key, lab, from_mx in recipes:
            src = [mx_rows.get((r["data"], r["K"])) for r in rs] if from_mx else rs
            src = [r for r in src if r is not None]
            for sub, ls, suffix in (("vs_exact", "-", "vs exact"),
                                    ("vs_quantised", ":", "vs quantised operands")):
                pts = [(r["K"], _sub(r, key, sub)) for r in src]
                pts = [(k, v) for k, v in pts if v is not None and v > 0]
                if pts:
                    (h,) = ax.plot([p[0] for p in pts], [p[1] for p in pts], color=colors[key],
                                   linestyle=ls, marker=markers[key],
                                   markersize=6 if sub == "vs_exact" else 3,
                                   linewidth=1.8 if sub == "vs_exact" else 1.2,
                                   label=f"{lab}, {suffix}")
                    handles.setdefault(h.get_label(), h)
        for (key, lab), ls in zip(CH07_QUANT_ONLY, ("--", "-.")):
            pts = [(r["K"], _sub(r, "quantisation_only", key)) for r in rs]
            pts = [(k, v) for k, v in pts if v is not None and v > 0]
            if pts:
                (h,) = ax.plot([p[0] for p in pts], [p[1] for p in pts], color="black",
                               alpha=0.75, linestyle=ls, linewidth=1.2, zorder=4,
                               label=f"quantisation only, {lab}")
                handles.setdefault(h.get_label(), h)
        ks = sorted({r["K"] for r in rs})
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        ax.xaxis.set_major_locator(FixedLocator(ks))
        ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
        ax.xaxis.set_minor_locator(FixedLocator([]))
        ax.set_xlabel("K (log₂ scale)")
        ax.yaxis.set_major_locator(LogLocator(base=10, subs=(1.0, 2.0, 5.0)))
        ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:.0e}".replace("e-0", "e-")))
        ax.yaxis.set_minor_formatter(NullFormatter())
        ax.set_title(kind.replace("_", " "), fontsize=12)
        ax.grid(True, which="major", alpha=0.35)
    axes[0][0].set_ylabel(f"{doc.get('metric') or 'relative error'} (log)", fontsize=10)
    fig.legend(list(handles.values()), list(handles.keys()), loc="lower center", ncol=4,
               fontsize=9, framealpha=0.95, bbox_to_anchor=(0.5, 0.05))
    fig.suptitle("Chapter 7: error of D against K, per recipe and data kind"
                 + (" (with chapter 9's MXFP8)" if mx is not None else ""), fontsize=12)
    fig.tight_layout(rect=(0, 0.2 * 5.4 / height + 0.05 * max(0, legend_rows - 2) * 5.4 / height,
                           1, 1))
    foot = []
    if doc.get("gpu"):
        foot.append(str(doc["gpu"]))
    if doc.get("shape"):
        foot.append(f"shape {doc['shape']}")
    foot.append(f"commit {short_commit(str(doc.get('commit') or ''))}")
    if mx is not None:
        foot.append(f"MXFP8 rows: commit {short_commit(str(mx.get('commit') or ''))}")
    fig.text(0.01, 0.01, "; ".join(foot), fontsize=8, color="0.35", ha="left", va="bottom")
    data = _png_bytes(fig)
    plt.close(fig)
    return data


def plot_ch09_hopper(bf: BenchFile) -> bytes | None:
    """Grouped bars per shape: the older versions' fastest kernels, the default (current
    version), chapter 7 and cuBLASLt block-scaled; issue 11's target as a dashed line per group."""
    versions, rows = hopper_rows(bf)
    cur = CH09_HOPPER_VERSION
    older = [v for v in sorted(versions) if v != cur and any(r.fastest[v] for r in rows)]
    old_colors = ["#937860", "#8172B3", "#C44E52", "#DA8BC3"]
    # (label, colour, the row's measurement, annotate the ratio to chapter 7 above the bar)
    series = [(f"v{v} (fastest kernel)", old_colors[k % len(old_colors)],
               lambda r, v=v: r.fastest[v], False) for k, v in enumerate(older)]
    series += [(f"v{cur}, the default ({CH09_HOPPER_IMPL})", "#DD8452", lambda r: r.default, True)]
    if any(r.bf16 for r in rows):
        series += [(f"dequantize_bf16 path ({CH09_BF16_IMPL})", "#8C8C8C", lambda r: r.bf16, True)]
    series += [(f"chapter 7 ({CH09_HOPPER_CH07})", "#55A868", lambda r: r.ch07, False),
               ("cuBLASLt block-scaled", "#4C72B0", lambda r: r.cublaslt, False)]
    rows = [r for r in rows if any(get(r) for _, _, get, _ in series)]
    if not rows:
        return None
    plt = _mpl()
    fig, ax = plt.subplots(figsize=(max(10.0, 1.2 * len(rows) + 3.0), 6.2))
    width = 0.8 / len(series)
    top = 0.0
    for j, (lab, color, get, note) in enumerate(series):
        xs, ys, qs = [], [], []
        for i, r in enumerate(rows):
            x = get(r)
            if x:
                xs.append(i + (j - (len(series) - 1) / 2) * width)
                ys.append(x.tflops)
                qs.append(r.vs_ch07(x))
                top = max(top, x.tflops)
        ax.bar(xs, ys, width, color=color, label=lab, zorder=3)
        for x, y, q in zip(xs, ys, qs):
            if note and q is not None:
                ax.annotate(fmt_x_trunc(q), (x, y), xytext=(0, 2), textcoords="offset points",
                            ha="center", va="bottom", fontsize=7, zorder=5,
                            bbox={"boxstyle": "square,pad=0.1", "fc": "white", "ec": "none"})
    target_label = f"issue 11's target: {CH09_TARGET:g}x chapter 7"
    for i, r in enumerate(rows):
        if r.ch07:
            ax.hlines(CH09_TARGET * r.ch07.tflops, i - 0.45, i + 0.45, colors="black",
                      linestyles="--", linewidth=1.4, zorder=4, label=target_label)
            target_label = None  # once in the legend
    ax.set_xticks(range(len(rows)))
    ax.set_xticklabels([shape_label(r.shape).replace("x", "×\n") if not square(r.shape)
                        else shape_label(r.shape) for r in rows], fontsize=8)
    ax.set_ylabel("TFLOPS (2MNK / median time)")
    ax.set_xlabel("shape (M × N × K)")
    ax.set_ylim(0, top * 1.25)
    ax.grid(axis="y", alpha=0.35, zorder=0)
    ax.set_axisbelow(True)
    ax.legend(loc="upper left", ncol=3, framealpha=0.95, fontsize=9)
    delay = _num(ctx_str(bf.context, "gpu_delay_us"))
    method = ({"1": "L2 flushed", "clean": "L2 flushed clean"}.get(ctx_str(bf.context, "l2_flush"), "L2 not flushed")) + (
        f", {delay:g} µs GPU delay" if delay else "") + ", median"
    fig.suptitle(f"Chapter 9's Hopper MXFP8 GEMMs (a promotion per 32 K; dequantised to bf16) against chapter 7 on "
                 f"{gpu_name([bf])}\n({method}; commit "
                 f"{short_commit(ctx_str(bf.context, 'git_commit'))})", fontsize=12)
    fig.tight_layout(rect=(0, 0.05, 1, 1))
    _footnote(fig, [bf])
    data = _png_bytes(fig)
    plt.close(fig)
    return data


# ------------------------------------------------------------------------------------------------
# Writing


class Writer:
    def __init__(self, check: bool, repo: str):
        self.check = check
        self.repo = repo
        self.changed: list[str] = []

    def _show(self, path: str) -> str:
        rel = os.path.relpath(path, self.repo)
        return path if rel.startswith("..") else rel

    def put(self, path: str, data: bytes) -> None:
        try:
            with open(path, "rb") as f:
                old = f.read()
        except OSError:
            old = None
        if old == data:
            print(f"unchanged    {self._show(path)}")
            return
        self.changed.append(path)
        if self.check:
            print(f"would change {self._show(path)}")
            return
        os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
        tmp = path + ".tmp"
        with open(tmp, "wb") as f:
            f.write(data)
        os.replace(tmp, path)
        print(f"wrote        {self._show(path)}")

    def put_text(self, path: str, text: str) -> None:
        self.put(path, text.encode("utf-8"))


def data_label(data_dir: str, repo: str) -> str:
    for base in (repo, REPO_ROOT):
        rel = os.path.relpath(os.path.abspath(data_dir), os.path.abspath(base))
        if not rel.startswith(".."):
            return rel.replace(os.sep, "/")
    return os.path.basename(os.path.abspath(data_dir))


def update_markdown(w: Writer, path: str, blocks: list[tuple[tuple[str, str], str | None]]) -> None:
    if not os.path.isfile(path):
        return
    with open(path, encoding="utf-8") as f:
        text = f.read()
    new = text
    found = False
    for marks, body in blocks:
        if marks[0] not in new:
            continue
        if body is None:
            print(f"no data for  {w._show(path)} {marks[0]} (left alone)")
            continue
        r = replace_between(new, marks, body)
        if r is not None:
            new = r
            found = True
    if found:
        w.put_text(path, new)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", default=os.path.join(REPO_ROOT, "plots", "data", "h200"),
                    help="folder of benchmark JSON (default: plots/data/h200)")
    ap.add_argument("--out", default=SCRIPT_DIR, help="where the PNGs go (default: plots/)")
    ap.add_argument("--repo", default=REPO_ROOT,
                    help="where README.md and chapters/ are (default: the repository root)")
    ap.add_argument("--check", action="store_true",
                    help="write nothing; exit 1 if any file would change")
    ap.add_argument("--no-png", action="store_true",
                    help="only the markdown tables (PNG bytes depend on the matplotlib version)")
    args = ap.parse_args(argv)

    label = data_label(args.data, args.repo)
    try:
        files = load_dir(args.data)
        ch06 = load_ch06(args.data, label)
        ch07 = load_ch07(args.data, label)
        ch09 = load_ch09(args.data, label)
        ch08_peers = load_ch08(args.data)
        loops = load_loops(args.data)
    except DataError as e:
        warn(str(e))
        return 2
    if not files and ch06.empty() and ch07.empty() and ch09.empty() and not loops:
        print(f"no benchmark JSON in {args.data}: nothing to do")
        return 0
    if (is_fixture(files) or is_fixture(loops)
            or any("FIXTURE" in g for g in ch06.gpus() + ch07.gpus() + ch09.gpus())):
        real = {os.path.realpath(REPO_ROOT), os.path.realpath(os.path.join(REPO_ROOT, "plots"))}
        if not args.check and (os.path.realpath(args.repo) in real
                               or os.path.realpath(args.out) in real):
            warn("the data is a test fixture (gpu: FIXTURE ...); refusing to write it into the "
                 "repository's README or plots. Use --repo and --out pointing elsewhere.")
            return 2

    ds = Dataset(files)
    top = Dataset(ladder_files(files))
    hopper = next((f for f in files if f.name == CH09_HOPPER_FILE), None)
    w = Writer(args.check, args.repo)

    if not args.no_png:
        for name, fn in (("ladder.png", plot_ladder), ("sizes.png", plot_sizes)):
            png = fn(top)
            if png is None:
                print(f"no data for  {name} (not drawn)")
            else:
                w.put(os.path.join(args.out, name), png)
        for name, fn, arg in (("ch06_ablation.png", plot_ablation, ch06.ablation),
                              ("ch06_accuracy.png", plot_accuracy, ch06.accuracy)):
            png = fn(arg) if arg is not None else None
            if png is not None:
                w.put(os.path.join(args.out, name), png)
            elif arg is not None:
                print(f"no data for  {name} (not drawn)")
        for name, png, present in (
                ("ch08_peers.png", plot_ch08_peers(ds, ch08_peers) if ch08_peers else None,
                 ch08_peers is not None),
                ("ch07_peers.png", plot_ch07_peers(ds, ch07.peers) if ch07.peers else None,
                 ch07.peers is not None),
                ("ch07_accuracy.png",
                 plot_ch07_accuracy(ch07.accuracy, ch09.accuracy) if ch07.accuracy else None,
                 ch07.accuracy is not None),
                ("ch09_hopper.png", plot_ch09_hopper(hopper) if hopper else None,
                 hopper is not None)):
            if png is not None:
                w.put(os.path.join(args.out, name), png)
            elif present:
                print(f"no data for  {name} (not drawn)")

    baseline = next((f for f in files if f.name == "baseline_cublaslt.json"), None)
    update_markdown(w, os.path.join(args.repo, "README.md"), [
        (MARK_RESULTS, results_table(top, label)),
        (MARK_BASELINE, baseline_table(baseline, label) if baseline else None),
    ])

    chapters_dir = os.path.join(args.repo, "chapters")
    if os.path.isdir(chapters_dir):
        for d in sorted(os.listdir(chapters_dir)):
            m = re.match(r"^(\d{2})_", d)
            readme = os.path.join(chapters_dir, d, "README.md")
            if not m or not os.path.isfile(readme):
                continue
            impls = [i for i in ds.chapters if chapter_number(i) == int(m.group(1))]
            opts = MEASURED_OPTIONS.get(int(m.group(1)), {})
            blocks = [(MARK_MEASURED, measured_table(ds, impls, label, **opts))]
            if int(m.group(1)) == CH06_CHAPTER:
                blocks += [
                    (MARK_ABLATION, ablation_table(ch06.ablation, ch06.label) if ch06.ablation else None),
                    (MARK_ACCURACY, accuracy_table(ch06.accuracy, ch06.label) if ch06.accuracy else None),
                    (MARK_SWEEP, sweep_table(ch06.sweep, ch06.label) if ch06.sweep else None),
                    (MARK_LOOPS, loops_table(loops, CH06_CHAPTER, label)),
                ]
            if int(m.group(1)) == CH08_CHAPTER:
                blocks += [(MARK_PEERS, ch08_peers_table(ds, ch08_peers, label,
                                                         f"{label}/{CH08_DIR}")
                            if ch08_peers else None)]
            if int(m.group(1)) == CH09_CHAPTER:
                blocks += [(MARK_HOPPER, hopper_table(hopper, label) if hopper else None),
                           (MARK_REQUANT, requant_table(ch09.requant, ch09.label)
                            if ch09.requant else None),
                           (MARK_ACCURACY, ch09_accuracy_table(ch09.accuracy, ch09.label,
                                                               ch07.accuracy, ch07.label)
                            if ch09.accuracy else None)]
            if int(m.group(1)) == CH07_CHAPTER:
                main07 = ch07_main(ds)
                blocks += [
                    (MARK_PEERS, peers_table(ds, ch07.peers, label, ch07.label)
                     if ch07.peers else None),
                    (MARK_ACCURACY, ch07_accuracy_table(ch07.accuracy, ch07.label,
                                                        ch09.accuracy, ch09.label)
                     if ch07.accuracy else None),
                    (MARK_QUANTIZERS, quantizers_table(ch07.quantize, ch07.label)
                     if ch07.quantize else None),
                    (MARK_QUANT_VARIANTS, quantizer_variants_table(
                        [f for f in (ch07.quantize, *ch07.quantize_variants) if f is not None],
                        ch07.label)),
                    (MARK_SWEEP, ch07_sweep_table(ch07.sweeps, ch07.label, read_ktable(args.repo),
                                                  main07[1] if main07 else None)
                     if ch07.sweeps else None),
                    (MARK_LOOPS, loops_table(loops, CH07_CHAPTER, label)),
                ]
            update_markdown(w, readme, blocks)

    if args.check and w.changed:
        print(f"{len(w.changed)} file(s) out of date: run python3 plots/plot.py", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
