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
}
PEER_SHORT = {
    "cublaslt_per_tensor": "per-tensor",
    "cublaslt_per_tensor_promoted": "per-tensor promoted",
    "cublaslt_block_scaled": "block-scaled",
}
# Which peer a chapter is compared with ("% of cuBLASLt"): the first of these that the chapter's
# own JSON file measured at the same shape. Block-scaled chapters are compared with the
# block-scaled peer; everything else with per-tensor fast accumulation (the same arithmetic).
PEER_PREFERENCE_DEFAULT = ["cublaslt_per_tensor", "cublaslt_per_tensor_promoted",
                           "cublaslt_block_scaled"]
PEER_PREFERENCE_BLOCK = ["cublaslt_block_scaled", "cublaslt_per_tensor",
                         "cublaslt_per_tensor_promoted"]

LADDER_SIZES = [4096, 8192]
SQUARE_SIZES = [1024, 2048, 4096, 8192]

CHAPTER_RE = re.compile(r"^ch(\d{2})_(.+)$")
SHAPE_RE = re.compile(r"^(\d+)x(\d+)x(\d+)$")

MARK_RESULTS = ("<!-- results:begin -->", "<!-- results:end -->")
MARK_BASELINE = ("<!-- baseline:begin -->", "<!-- baseline:end -->")
MARK_MEASURED = ("<!-- measured:begin -->", "<!-- measured:end -->")


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
    for (impl, shape), vals in grouped.items():  # dicts keep file order
        tf = statistics.median(v[0] for v in vals)
        meds = [v[1] for v in vals if v[1] is not None]
        bf.rows.append(Row(impl, shape, tf, statistics.median(meds) if meds else None, bf))
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
    return PEER_PREFERENCE_BLOCK if "block" in impl else PEER_PREFERENCE_DEFAULT


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
            for impl in uniq(r.impl for r in f.rows if chapter_number(r.impl) is not None):
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
    if m.peer is not None and m.peer.impl != default_peer:
        s += f" (vs {PEER_SHORT.get(m.peer.impl, m.peer.impl)})"
    return s


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
    out.append(f"% of cuBLASLt: against cuBLASLt per-tensor (FP32 fast accumulation) measured in the "
               f"same process as the chapter, unless noted. Measured on "
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


def measured_table(ds: Dataset, impls: list[str], data_label: str) -> str | None:
    ms = [m for i in impls for m in ds.rows_of(i)]
    if not ms:
        return None
    multi = len(impls) > 1
    head = (["implementation"] if multi else []) + ["shape (M×N×K)", "TFLOPS", "% of cuBLASLt",
                                                     "median µs"]
    out = ["| " + " | ".join(head) + " |",
           "|" + "|".join(["---"] * (2 if multi else 1) + ["---:"] * 3) + "|"]
    for m in ms:
        cells = ([f"`{m.row.impl}`"] if multi else []) + [
            shape_label(m.row.shape).replace("x", "×"), fmt_tf(m.row.tflops), fmt_pct(m),
            "—" if m.row.median_us is None else f"{m.row.median_us:.1f}"]
        out.append("| " + " | ".join(cells) + " |")
    files = uniq(ds.source[i].name for i in impls)
    bfs = [f for f in ds.files if f.name in files]
    peers = uniq(m.peer.impl for m in ms if m.peer)
    peer_txt = " / ".join(PEER_NAMES.get(p, p) for p in peers) or "cuBLASLt"
    out.append("")
    out.append(f"% of cuBLASLt: against {peer_txt}, timed in the same process. "
               f"From {', '.join(f'`{data_label}/{n}`' for n in files)}, measured on "
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
    fig, ax = plt.subplots(figsize=(max(9.0, 1.05 * len(impls) + 3.0), 5.8))
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

    try:
        files = load_dir(args.data)
    except DataError as e:
        warn(str(e))
        return 2
    if not files:
        print(f"no benchmark JSON in {args.data}: nothing to do")
        return 0
    if is_fixture(files):
        real = {os.path.realpath(REPO_ROOT), os.path.realpath(os.path.join(REPO_ROOT, "plots"))}
        if not args.check and (os.path.realpath(args.repo) in real
                               or os.path.realpath(args.out) in real):
            warn("the data is a test fixture (gpu: FIXTURE ...); refusing to write it into the "
                 "repository's README or plots. Use --repo and --out pointing elsewhere.")
            return 2

    ds = Dataset(files)
    label = data_label(args.data, args.repo)
    w = Writer(args.check, args.repo)

    if not args.no_png:
        for name, fn in (("ladder.png", plot_ladder), ("sizes.png", plot_sizes)):
            png = fn(ds)
            if png is None:
                print(f"no data for  {name} (not drawn)")
            else:
                w.put(os.path.join(args.out, name), png)

    baseline = next((f for f in files if f.name == "baseline_cublaslt.json"), None)
    update_markdown(w, os.path.join(args.repo, "README.md"), [
        (MARK_RESULTS, results_table(ds, label)),
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
            update_markdown(w, readme, [(MARK_MEASURED, measured_table(ds, impls, label))])

    if args.check and w.changed:
        print(f"{len(w.changed)} file(s) out of date: run python3 plots/plot.py", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
