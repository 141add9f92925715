#!/usr/bin/env python3
"""The library's per-shape dispatch table, learned from the committed H200 sweeps.

For every (family, shape) that a committed sweep timed, the table names the fastest kernel that
passed the sweep's correctness check. Two files are generated from the JSON, and both are
committed so that a reader sees why each shape gets its kernel:

  chapters/10_production/src/dispatch_table.inc  the C++ table the library's plans look up
  chapters/10_production/dispatch_table.md       the same as a markdown table: chosen kernel,
                                                 its time, the runner-up, cuBLASLt in the same run

Families (what fp8gemm::dispatch_family names; the kernel lists of the chapters):
  block_scaled          chapter 7, fp8gemm::BlockScaledPlan, bf16 D stored by TMA
  per_tensor_promoted   chapter 6, fp8gemm::PerTensorPlan, FP32 promotion every 128 K
  per_tensor_fast       chapter 6, fp8gemm::PerTensorPlan with Accumulation::fast
  mxfp8_hopper          chapter 9's Hopper kernels, fp8gemm::MxPlan on compute capability 9.0

Sources, in order of precedence; a (family, shape) comes whole from the first source that has it,
never mixed across runs (where the dispatch sweep confirmed its fastest kernels interleaved, its
"confirm_median_us", those medians alone rank the (family, shape); where it also timed them each
alone under sustained load (--sustain_ms), "sustain_median_us", those rank it instead):
  plots/data/h200/ch10/dispatch_sweep_sustained.json      fp8gemm_dispatch_sweep --sustain_ms=...
                                             on the large shapes (absent until it runs on the H200)
  plots/data/h200/ch10/dispatch_sweep_block_scaled.json   fp8gemm_dispatch_sweep
                                             --families=block_scaled (re-swept after a change to
                                             those kernels alone; today the M <= 128
                                             re-sweep of session 46, d711d74)
  plots/data/h200/ch10/dispatch_sweep_per_tensor.json    fp8gemm_dispatch_sweep
                                             --families=per_tensor (likewise; absent)
  plots/data/h200/ch10/dispatch_sweep.json   fp8gemm_dispatch_sweep (every kernel, every family)
  plots/data/h200/ch06/squares_d433170/squares_1.json   ch06_warp_specialization --kernels=...
                                             (Google Benchmark, interleaved; 2048^3 and 4096^3, fast)
  plots/data/h200/ch07/sweep_large.json      ch07_block_scaling --kernels=... (Google Benchmark)
  plots/data/h200/ch07/sweep_small.json
  plots/data/h200/ch06/sweep.json            ch06_sweep (its own format; the default tile order)

Corrections: the sweeps time each kernel in its own block of launches, so clock and power drift
between blocks can rank two kernels wrongly (at 74d644d the sweep put a per-tensor kernel 7.8%
ahead at 8192^3 that the interleaved method measured 10.6% behind). The library benchmark's part
(c) (fp8gemm_library_bench) times the table's kernel against the chapter's own rule's kernel
interleaved, launch by launch. A log of it kept in plots/data/h200/ch10/corrections/ corrects the
table: where it says "RULE FASTER" about the very kernel the sweeps chose, the row takes the
rule's kernel, with the two interleaved medians as its time and runner-up, and the log as its
source. A later sweep that chooses another kernel makes the correction lapse (the log is about a
kernel no longer chosen).

  gen_dispatch_table.py --picks-exe BUILD/bin/fp8gemm_dispatch_picks   (or --picks FILE)
      write the two files. fp8gemm_dispatch_picks (pure CPU, built in every configuration) prints
      what the C++ dispatcher and each chapter's own rule choose for every shape; the markdown's
      summary ("The table against the chapters' own rules": how often the chapter's rule was
      already the sweep's fastest, how much slower it is where not, the table's kernel against
      cuBLASLt) is computed from the chapters' choices and the dispatch sweeps' times alone.
  gen_dispatch_table.py --check [--picks-exe EXE | --picks FILE]
      regenerate in memory and fail if the committed files differ (the markdown only with the
      picks, which its summary needs); with the picks, also fail if any pick of the library on a
      swept shape is not a correct kernel of the sweep or is more than --tolerance (3%) slower
      than the sweep's fastest, and list the DeepSeek-V3 shapes that no sweep covers.
  gen_dispatch_table.py --self-test
      proves the check can fail: a table with one kernel changed and a pick 3% off are caught,
      and the markdown's summary changes with the chapters' choices.
Python 3 standard library only.
"""
import argparse
import difflib
import glob
import json
import os
import re
import subprocess
import sys
import textwrap

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))
sys.path.insert(0, os.path.join(REPO, "tools"))
import sweep_ranking  # noqa: E402  (tools/sweep_ranking.py: the ranking check_table.py shares)
INC = "chapters/10_production/src/dispatch_table.inc"
MD = "chapters/10_production/dispatch_table.md"
# Names of the promoted loop's comparison instances (engine/kernel_info.cuh): not for the table.
COMPARISON_ONLY = sweep_ranking.COMPARISON_ONLY
SOURCES = [
    # A family re-swept alone after its kernels changed (fp8gemm_dispatch_sweep --families=...)
    # goes first, so its pairs take precedence over the full sweep's older rows. One today: the
    # block-scaled M <= 128 re-sweep of session 46 (d711d74, adopted in 61c1b6d); the per-family
    # sweeps the full sweep of 945b0eb replaced (block-scaled c47176c, per-tensor fe11ef0) and the
    # full sweep of 80c55ad are kept under plots/data/h200/ch10/history/.
    # The large shapes re-timed with --sustain_ms (each confirmed kernel alone at the power cap,
    # session 49's method; plots/data/h200/session49_plan/). Absent until it runs on the H200.
    ("plots/data/h200/ch10/dispatch_sweep_sustained.json", "dispatch"),
    ("plots/data/h200/ch10/dispatch_sweep_block_scaled.json", "dispatch"),
    ("plots/data/h200/ch10/dispatch_sweep_per_tensor.json", "dispatch"),
    ("plots/data/h200/ch10/dispatch_sweep.json", "dispatch"),
    # 2048^3 and 4096^3, fast: every large fast kernel of chapter 6 (cooperative and ping-pong)
    # timed interleaved with cuBLASLt by its --kernels mode (d433170; a second run in the
    # opposite order beside it, squares_2.json, chose the same kernels). Before chapter 6's own
    # sweep below, which timed one kernel after the other.
    ("plots/data/h200/ch06/squares_d433170/squares_1.json", "gbench_ch06"),
    ("plots/data/h200/ch07/sweep_large.json", "gbench_ch07"),
    ("plots/data/h200/ch07/sweep_small.json", "gbench_ch07"),
    ("plots/data/h200/ch06/sweep.json", "ch06"),
]
# The library benchmark's logs whose part (c) corrects the sweeps (above), applied in name order.
# Kept apart from the newest log (plots/data/h200/ch10/library_bench_<commit>.log, which the
# README's tables read): once a correction is in the table, the next benchmark run no longer
# compares the two kernels, so the log that measured it must stay.
BENCH_LOGS = "plots/data/h200/ch10/corrections/library_bench_*.log"
# Its part (c) family names -> the table's.
BENCH_FAMILIES = {"block_scaled": "block_scaled", "per_tensor": "per_tensor_promoted",
                  "mxfp8": "mxfp8_hopper"}
FAMILIES = [
    ("block_scaled", "chapter 7 (`fp8gemm::BlockScaledPlan`, bf16 D stored by TMA)"),
    ("per_tensor_promoted", "chapter 6 (`fp8gemm::PerTensorPlan`, promoted accumulation)"),
    ("per_tensor_fast", "chapter 6 (`fp8gemm::PerTensorPlan`, `Accumulation::fast`)"),
    ("mxfp8_hopper", "chapter 9, Hopper (`fp8gemm::MxPlan` on compute capability 9.0)"),
]
# The families whose every DeepSeek-V3 shape must be covered by a sweep for --check to pass.
REQUIRED = {"block_scaled", "per_tensor_promoted", "per_tensor_fast"}
DEEPSEEK_NK = [(2112, 7168), (24576, 1536), (32768, 512), (7168, 16384), (4096, 7168), (7168, 2048)]
DEEPSEEK = [(m, n, k) for m in (64, 128, 4096) for n, k in DEEPSEEK_NK]
SQUARE = (8192, 8192, 8192)


class Source:
    """One sweep file: {(family, shape): {"kernels": {name: us}, "peer": us or None}}."""

    def __init__(self, path, kind):
        self.path = path
        self.kind = kind
        data = json.load(open(os.path.join(REPO, path), encoding="utf-8"))
        # A sweep run with --max_sms=N (N > 0: the kernels on fewer SMs than the GPU has) measures
        # another question; the table is learned on all SMs.
        max_sms = int(data.get("context", {}).get("max_sms", 0) or 0)
        if max_sms > 0:
            sys.exit(f"gen_dispatch_table.py: {path} was swept with --max_sms={max_sms}; the "
                     "table is learned from sweeps on all SMs")
        self.results = {}
        if kind == "dispatch":
            self._read_dispatch(data)
        elif kind == "gbench_ch07":
            self._read_gbench_ch07(data)
        elif kind == "gbench_ch06":
            self._read_gbench_ch06(data)
        else:
            self._read_ch06(data)
        self.commit, self.gpu = self._context(data)
        self.sms = self._sm_count(data)

    def _context(self, data):
        ctx = data.get("context", {})
        commit = ctx.get("git_commit") or data.get("commit") or "unknown"
        gpu = ctx.get("gpu") or data.get("gpu") or "unknown"
        return commit, gpu.split(",")[0]

    @staticmethod
    def _sm_count(data):
        """The SMs of the GPU the sweep ran on (every kernel's grid had them all): the context's
        gpu_sm_count, or the "132 SMs" of a describe_device() string; 0 if neither says."""
        ctx = data.get("context", {})
        if ctx.get("gpu_sm_count"):
            return int(ctx["gpu_sm_count"])
        m = re.search(r"(\d+) SMs", ctx.get("gpu") or data.get("gpu") or "")
        return int(m.group(1)) if m else 0

    def _slot(self, family, shape):
        return self.results.setdefault((family, shape), {"kernels": {}, "peer": None})

    def _add(self, family, shape, kernel, us):
        # The promoted loop's comparison instances (names ending in _loopN, _2deep or _spin: the
        # same tile with a loop or wait that is not its default, kept for chapter 6's loop table) never enter
        # the table; sweeps since 61b9328 time them beside the defaults.
        if not COMPARISON_ONLY.search(kernel):
            self._slot(family, shape)["kernels"][kernel] = us

    def _read_dispatch(self, data):
        rows = {}
        for r in data["results"]:
            shape = parse_shape(r["shape"])
            slot = self._slot(r["family"], shape)
            if r.get("peer"):
                if r.get("ok"):
                    slot["peer"] = float(r["median_us"])
            elif r.get("ok"):
                self._add(r["family"], shape, r["kernel"], float(r["median_us"]))
                rows.setdefault((r["family"], shape), []).append(r)
        # Where the sweep confirmed its fastest kernels interleaved (fp8gemm_dispatch_sweep's
        # confirm()), or then timed them each alone under sustained load (--sustain_ms), those
        # medians alone rank the (family, shape) (tools/sweep_ranking.py, the rule check_table.py
        # shares: interleaved, every kernel runs at one clock; alone, at the clock its own power
        # allows at the cap, as a long run of one GEMM does; session 49). "timed" keeps the count
        # and "all" every kernel's block median: the candidates of the SM-rescaled rule, all timed
        # the same way (the confirmation timed only the fastest few; mixing the two footings
        # ranked worse against the 112-SM sweep: chapter 10's NOTEBOOK.md, "Session 46: how fast on
        # fewer SMs").
        for key, mine in rows.items():
            field, times = sweep_ranking.ranking(mine)
            if field != "median_us":
                slot = self.results[key]
                slot["timed"] = len(slot["kernels"])
                slot["all"] = slot["kernels"]
                slot["kernels"] = times

    @staticmethod
    def _gbench_rows(data):
        """(implementation, shape, median us) of a Google Benchmark JSON's timed benchmarks,
        named "<implementation>/<MxNxK>/..." (the chapters time only validated kernels)."""
        for b in data["benchmarks"]:
            parts = b["name"].split("/")
            if not b.get("error_occurred") and len(parts) >= 2:
                yield parts[0], parse_shape(parts[1]), float(b["median_us"])

    def _read_gbench_ch07(self, data):
        # "ch07:<kernel>/<MxNxK>/iterations:1/manual_time".
        for name, shape, us in self._gbench_rows(data):
            if name.startswith("ch07:"):
                self._add("block_scaled", shape, name[5:], us)
            elif name == "cublaslt_block_scaled":
                self._slot("block_scaled", shape)["peer"] = us

    def _read_gbench_ch06(self, data):
        # "<kernel>/<MxNxK>/iterations:1/manual_time" from chapter 6's --kernels mode (it times
        # only after every named kernel passed its check); the family from the kernel's mode, the
        # peer cuBLASLt in the same mode ("cublaslt_per_tensor" is fast accumulation).
        for name, shape, us in self._gbench_rows(data):
            if name == "cublaslt_per_tensor":
                self._slot("per_tensor_fast", shape)["peer"] = us
            elif name == "cublaslt_per_tensor_promoted":
                self._slot("per_tensor_promoted", shape)["peer"] = us
            elif "_fast_" in name or "_promoted_" in name:
                mode = "fast" if "_fast_" in name else "promoted"
                self._add("per_tensor_" + mode, shape, name, us)

    def _read_ch06(self, data):
        # Each kernel with the plan's default tile order ("(auto)"); the sweep's fixed-order
        # variants are not what a plan without RasterOptions runs. Correct: within 2e-2 of
        # cuBLASLt (the sweep's own criterion).
        for r in data["results"]:
            shape = parse_shape(r["shape"])
            family = "per_tensor_" + r["mode"]
            if r["impl"].startswith("cublaslt_"):
                if r["impl"] == "cublaslt_" + r["mode"]:
                    self._slot(family, shape)["peer"] = float(r["median_us"])
                continue
            if not r["raster"].endswith("(auto)") or not r["diff_vs_cublaslt"] < 2e-2:
                continue
            self._add(family, shape, r["impl"], float(r["median_us"]))


def parse_shape(s):
    m, n, k = (int(x) for x in s.split("x"))
    return (m, n, k)


def shape_name(s):
    return "%dx%dx%d" % s


def load_sources():
    out = []
    for path, kind in SOURCES:
        if os.path.exists(os.path.join(REPO, path)):
            out.append(Source(path, kind))
    return out


class BenchLog:
    """The library benchmark's part (c): [(family, shape, rule_kernel, table_kernel, rule_us,
    table_us, verdict)], with the log's commit and GPU (a source of corrected rows)."""

    kind = "interleaved"

    def __init__(self, path):
        self.path = path
        self.rows = []
        self.commit, self.gpu = "unknown", "unknown"
        in_c = False
        for line in open(os.path.join(REPO, path), encoding="utf-8"):
            if line.startswith("commit: "):
                self.commit = line.split()[1]
            elif line.startswith("GPU: "):
                self.gpu = line[5:].split(",")[0].strip()
            elif line.startswith("(c) "):
                in_c = True
            elif in_c:
                f = line.split()
                if len(f) >= 9 and f[0] in BENCH_FAMILIES and "x" in f[1]:
                    self.rows.append((BENCH_FAMILIES[f[0]], parse_shape(f[1]), f[2], f[3],
                                      float(f[4]), float(f[5]), " ".join(f[8:])))
                elif f and f[0] == "table" and f[1:2] == ["faster"]:
                    in_c = False


def load_bench_logs():
    return [BenchLog(os.path.relpath(p, REPO))
            for p in sorted(glob.glob(os.path.join(REPO, BENCH_LOGS)))]


def correct(table, log, source_index):
    """Applies the log's "RULE FASTER" verdicts (module docstring, "Corrections") in place;
    returns [(family, shape, old_kernel, rule_kernel, table_us, rule_us)]."""
    done = []
    if log is None:
        return done
    for family, shape, rule, chosen, rule_us, table_us, verdict in log.rows:
        e = table.get((family, shape))
        if verdict != "RULE FASTER" or e is None or e["kernel"] != chosen:
            continue
        done.append((family, shape, chosen, rule, table_us, rule_us))
        # ("all" and "all_source" stay the sweep's: the SM-rescaled rule's candidates.)
        table[(family, shape)] = dict(
            e, kernel=rule, us=rule_us, second=chosen, second_us=table_us, candidates=2,
            source=source_index, times={rule: rule_us, chosen: table_us}, peer=None)
    return done


def learn(sources):
    """{(family, shape): entry}: the fastest correct kernel of the first source with the pair."""
    table = {}
    for si, src in enumerate(sources):
        for (family, shape), slot in sorted(src.results.items()):
            if (family, shape) in table or not slot["kernels"]:
                continue
            ranked = sorted(slot["kernels"].items(), key=lambda kv: (kv[1], kv[0]))
            best, best_us = ranked[0]
            second, second_us = ranked[1] if len(ranked) > 1 else ("", 0.0)
            table[(family, shape)] = {
                "kernel": best, "us": best_us, "second": second, "second_us": second_us,
                "candidates": slot.get("timed", len(ranked)), "source": si, "peer": slot["peer"],
                "times": slot["kernels"], "all": slot.get("all", slot["kernels"]),
                "all_source": si,
            }
    return table


def family_order(f):
    return [name for name, _ in FAMILIES].index(f)


def sorted_keys(table):
    return sorted(table, key=lambda fs: (family_order(fs[0]), fs[1]))


def render_inc(sources, table):
    lines = [
        "// GENERATED by chapters/10_production/tools/gen_dispatch_table.py from the committed sweeps",
        "// below; do not edit (run the script; the CTest library_dispatch_table fails on a stale copy).",
        "// Each row: the fastest kernel that passed the sweep's correctness check for that family and",
        "// shape, its median time, the runner-up, how many kernels the sweep timed there, and the",
        "// source (kDispatchSources, with the SMs of the GPU it ran on). kDispatchCandidates: every",
        "// correct kernel that source timed on each row's shape, its block median, fastest first",
        "// (what a plan on another number of SMs rescales: dispatch.hpp, rule table_sms).",
        "// Included by dispatch.cpp inside namespace fp8gemm::detail.",
        "",
        "constexpr DispatchSource kDispatchSources[] = {",
    ]
    for s in sources:
        lines.append('    {"%s", "%s", "%s", %d},' % (s.path, s.commit, s.gpu, getattr(s, "sms", 0)))
    if not sources:
        lines.append('    {"", "", "", 0},')
    lines.append("};")
    lines.append("")
    lines.append("constexpr DispatchEntry kDispatchTable[] = {")
    if not table:  # C++ has no empty arrays; a row no call matches (the CPU test flags it)
        lines.append('    {"", 0, 0, 0, "", 0.0, "", 0.0, 0, 0},')
    for key in sorted_keys(table):
        family, (m, n, k) = key
        e = table[key]
        lines.append('    {"%s", %d, %d, %d, "%s", %.3f, "%s", %.3f, %d, %d},' % (
            family, m, n, k, e["kernel"], e["us"], e["second"], e["second_us"], e["candidates"],
            e["source"]))
    lines.append("};")
    lines.append("")
    lines.append("constexpr DispatchCandidate kDispatchCandidates[] = {")
    rows = 0
    for key in sorted_keys(table):
        family, (m, n, k) = key
        e = table[key]
        for name, us in sorted(e.get("all", {}).items(), key=lambda kv: (kv[1], kv[0])):
            lines.append('    {"%s", %d, %d, %d, "%s", %.3f, %d},' % (
                family, m, n, k, name, us, e["all_source"]))
            rows += 1
    if rows == 0:
        lines.append('    {"", 0, 0, 0, "", 0.0, 0},')
    lines.append("};")
    return "\n".join(lines) + "\n"


def pct(x):
    return "%.1f%%" % (100.0 * x)


def chapter_comparison(sources, table, picks):
    """Per family: the chapter's own kernel against the table's, on the DeepSeek-V3 shapes and
    8192^3, where the (family, shape) comes from a dispatch sweep (one run, every kernel of the
    family)."""
    chapter = {(f, s): ck for f, s, _, _, ck in picks}
    out = {}
    for family, _ in FAMILIES:
        rows = []
        for shape in DEEPSEEK + [SQUARE]:
            e = table.get((family, shape))
            if e is None or sources[e["source"]].kind != "dispatch":
                continue
            ck = chapter.get((family, shape))
            rows.append({"shape": shape, "chapter": ck, "chapter_us": e["times"].get(ck),
                         "kernel": e["kernel"], "us": e["us"], "peer": e["peer"]})
        out[family] = rows
    return out


def render_summary(sources, table, picks):
    """The markdown section comparing the table with the chapters' own rules (from the dispatch
    sweep only)."""
    if not any(s.kind == "dispatch" for s in sources):
        return ["## The table against the chapters' own rules", "",
                "No dispatch sweep is committed yet: nothing to compare."]
    cmp = chapter_comparison(sources, table, picks)
    out = [
        "## The table against the chapters' own rules",
        "",
        "Each chapter's own choice (`ch06::choose_kernel`, `ch07::choose_kernel`, chapter 9's",
        "default Hopper kernel; what `fp8gemm_dispatch_picks` prints as `chapter_kernel`) against",
        "the table's kernel, both timed in the same dispatch sweep (the row's source). \"Slower by\" is",
        "the chapter's kernel's median over the table's kernel's median, minus 1; the table's kernel",
        "is the sweep's fastest by definition. Last column: the table's kernel against cuBLASLt in",
        "the same run (cuBLASLt's time over the kernel's, geometric mean over the DeepSeek-V3",
        "shapes and 8192^3; no cuBLASLt MXFP8 peer on Hopper).",
        "",
        "| family | DeepSeek-V3 shapes | chapter's rule = fastest | slower by < 3% | 3-10% | > 10% "
        "| median slower by | largest (shape: chapter's kernel, table's kernel) "
        "| 8192^3 slower by | table vs cuBLASLt |",
        "|---|---:|---:|---:|---:|---:|---:|---|---:|---:|",
    ]
    every = []
    for family, _ in FAMILIES:
        rows = [r for r in cmp[family] if r["shape"] != SQUARE]
        square = [r for r in cmp[family] if r["shape"] == SQUARE]
        timed = [r for r in rows if r["chapter_us"]]
        if not rows:
            continue
        slow = sorted(((r["chapter_us"] / r["us"] - 1, r) for r in timed), key=lambda t: t[0])
        for x, r in slow:
            every.append((x, family, r))
        same = sum(1 for r in timed if r["chapter"] == r["kernel"])
        lt3 = sum(1 for x, r in slow if r["chapter"] != r["kernel"] and x < 0.03)
        lt10 = sum(1 for x, _ in slow if 0.03 <= x < 0.10)
        ge10 = sum(1 for x, _ in slow if x >= 0.10)
        xs = [x for x, _ in slow]
        median = (xs[(len(xs) - 1) // 2] + xs[len(xs) // 2]) / 2 if xs else None
        largest = "-"
        if slow and slow[-1][0] > 0:
            x, r = slow[-1]
            largest = "%s %s: `%s` %.1f us, `%s` %.1f us" % (
                pct(x), shape_name(r["shape"]), r["chapter"], r["chapter_us"], r["kernel"],
                r["us"])
        sq = "-"
        if square and square[0]["chapter_us"]:
            r = square[0]
            sq = pct(r["chapter_us"] / r["us"] - 1)
        peers = [r["peer"] / r["us"] for r in cmp[family] if r["peer"]]
        peer = "-"
        if peers:
            g = 1.0
            for v in peers:
                g *= v
            peer = "%.3fx (faster at %d of %d)" % (g ** (1.0 / len(peers)),
                                                   sum(1 for v in peers if v > 1), len(peers))
        untimed = len(rows) - len(timed)
        out.append("| %s | %d%s | %d | %d | %d | %d | %s | %s | %s | %s |" % (
            family, len(rows), " (%d not timed)" % untimed if untimed else "", same, lt3, lt10,
            ge10, pct(median) if median is not None else "-", largest, sq, peer))
    n = sum(len([r for r in cmp[f] if r["shape"] != SQUARE]) for f, _ in FAMILIES)
    same = sum(1 for x, f, r in every if r["chapter"] == r["kernel"])
    within = sum(1 for x, f, r in every if x < 0.03)
    big = sorted((t for t in every if t[0] > 0.10), key=lambda t: (-t[0], t[1], t[2]["shape"]))
    text = ("Over the %d (family, DeepSeek-V3 shape) pairs the sweep timed, the chapter's own rule "
            "was already the sweep's fastest at %d, within 3%% of it at %d (those included), and "
            "more than 3%% slower at %d; more than 10%% slower at %d, where the table gains most "
            "(the chapter's kernel's time -> the table's kernel's):" % (
                n, same, within, sum(1 for x, _, _ in every if x >= 0.03), len(big)))
    out += [""] + textwrap.wrap(text, 100) + [""]
    for x, f, r in big:
        out.append("- %s %s: `%s` %.1f us -> `%s` %.1f us (%.2fx)" % (
            f, shape_name(r["shape"]), r["chapter"], r["chapter_us"], r["kernel"], r["us"], 1 + x))
    if not big:
        out.append("- none")
    return out


def render_md(sources, table, picks, corrections=()):
    out = [
        "# The library's dispatch table (generated)",
        "",
        "Generated by [tools/gen_dispatch_table.py](tools/gen_dispatch_table.py) from the committed",
        "H200 sweeps; do not edit. For each family and shape: the fastest kernel that passed the",
        "sweep's correctness check (the one `fp8gemm`'s plans run for that exact shape), its median",
        "time, the runner-up and how much slower it was, cuBLASLt in the same run, and how many",
        "kernels the sweep timed there. Shapes not listed get the chapter's own rule (README,",
        "\"Dispatch\").",
        "",
        "Sources:",
        "",
    ]
    for i, s in enumerate(sources):
        out.append("%d. `%s` (commit `%s`, %s)" % (i + 1, s.path, s.commit[:12], s.gpu))
    out += [""] + render_summary(sources, table, picks)
    if corrections:
        out += ["", "## Corrected by the interleaved benchmark", ""]
        out += textwrap.wrap(
            "Where a library benchmark's part (c) (the sources after the sweeps, launch by launch "
            "interleaved) measured the chapter's own rule's kernel faster than the kernel the "
            "sweep chose, the row holds the rule's kernel and the two interleaved medians (the "
            "sweep timed each kernel in its own block of launches; tools/gen_dispatch_table.py, "
            "\"Corrections\"):", 100) + [""]
        for family, shape, old, rule, old_us, rule_us in corrections:
            out.append("- %s %s: `%s` %.2f us -> `%s` %.2f us (%.1f%% faster)" % (
                family, shape_name(shape), old, old_us, rule, rule_us,
                100.0 * (old_us / rule_us - 1)))
    for family, title in FAMILIES:
        keys = [key for key in sorted_keys(table) if key[0] == family]
        out += ["", "## %s: %s" % (family, title), ""]
        if not keys:
            out.append("No sweep has timed this family yet: every shape gets the chapter's rule.")
        else:
            out.append("| shape (MxNxK) | chosen kernel | its time (us) | runner-up | its time (us) "
                       "| runner-up slower by | cuBLASLt (us) | kernels timed | source |")
            out.append("|---|---|---:|---|---:|---:|---:|---:|---:|")
            for key in keys:
                e = table[key]
                margin = "%.1f%%" % (100.0 * (e["second_us"] / e["us"] - 1)) if e["second"] else "-"
                peer = "%.1f" % e["peer"] if e["peer"] else "-"
                out.append("| %s | `%s` | %.1f | %s | %s | %s | %s | %d | %d |" % (
                    shape_name(key[1]), e["kernel"], e["us"],
                    "`%s`" % e["second"] if e["second"] else "-",
                    "%.1f" % e["second_us"] if e["second"] else "-", margin, peer,
                    e["candidates"], e["source"] + 1))
        missing = [s for s in DEEPSEEK if (family, s) not in table]
        if missing:
            out += ["", "DeepSeek-V3 shapes no sweep covers (the chapter's rule applies): " +
                    ", ".join(shape_name(s) for s in missing) + "."]
    return "\n".join(out) + "\n"


def read_picks(args):
    """[(family, shape, kernel, rule, chapter_kernel)] from fp8gemm_dispatch_picks' output."""
    if args.picks_exe:
        text = subprocess.run([args.picks_exe], check=True, capture_output=True, text=True).stdout
    else:
        text = open(args.picks, encoding="utf-8").read()
    picks = []
    for line in text.splitlines():
        f = line.split()
        if not f or f[0].startswith("#"):
            continue
        if len(f) != 5:
            sys.exit("gen_dispatch_table: bad picks line '%s' (want: family MxNxK kernel rule "
                     "chapter_kernel)" % line)
        picks.append((f[0], parse_shape(f[1]), f[2], f[3], f[4]))
    return picks


def check_picks(table, picks, tolerance):
    """Messages for picks that break the rule; prints a line per checked pick."""
    bad = []
    for family, shape, kernel, rule, chapter_kernel in picks:
        e = table.get((family, shape))
        if e is None:
            continue
        t = e["times"].get(kernel)
        ch = e["times"].get(chapter_kernel)
        ch_text = ("chapter's rule: %s %s" % (chapter_kernel, "%.1f us (+%.1f%%)" % (
            ch, 100 * (ch / e["us"] - 1)) if ch else "not timed"))
        if t is None:
            bad.append("%s %s: the library picks %s (%s), which the sweep did not time or which "
                       "failed its check" % (family, shape_name(shape), kernel, rule))
            continue
        slower = t / e["us"] - 1
        print("  %-20s %-16s %-36s %-9s %8.1f us  +%.1f%%   [%s]" % (
            family, shape_name(shape), kernel, rule, t, 100 * slower, ch_text))
        if slower > tolerance:
            bad.append("%s %s: the library picks %s (%s) at %.1f us, %.1f%% slower than %s at "
                       "%.1f us (limit %.0f%%)" % (family, shape_name(shape), kernel, rule, t,
                                                   100 * slower, e["kernel"], e["us"],
                                                   100 * tolerance))
    return bad


def check_pick_coverage(picks):
    """Messages for DeepSeek-V3 shapes the picks leave out (every family must have all)."""
    seen = {(f, s) for f, s, _, _, _ in picks}
    return ["%s %s: fp8gemm_dispatch_picks printed no pick for this DeepSeek-V3 shape" % (
        family, shape_name(s)) for family, _ in FAMILIES for s in DEEPSEEK if (family, s) not in seen]


def differs(path, committed, text):
    """A failure message when the committed text is not what the sweeps give, else None."""
    if committed == text:
        return None
    diff = "".join(list(difflib.unified_diff(
        committed.splitlines(True), text.splitlines(True), path, "regenerated"))[:40])
    return ("%s differs from what the committed sweeps give (rerun "
            "chapters/10_production/tools/gen_dispatch_table.py):\n%s" % (path, diff))


def self_test(sources, table):
    """0 when the check catches a stale table and a slow pick, 1 otherwise."""
    ok = True
    inc = render_inc(sources, table)
    key = next(k for k in sorted_keys(table) if table[k]["second"])
    e = table[key]
    stale = inc.replace('"%s", %.3f' % (e["kernel"], e["us"]), '"%s", %.3f' % (e["second"], e["us"]), 1)
    if stale == inc or differs(INC, stale, inc) is None or differs(INC, inc, inc) is not None:
        print("self-test FAILED: a table with the kernel of %s changed is not told apart" % (key,))
        ok = False
    # A pick just over the tolerance, and the best one.
    fam, shape = key
    slow = dict(e, times=dict(e["times"], slow_kernel=e["us"] * 1.031))
    bad = check_picks({key: slow}, [(fam, shape, "slow_kernel", "table", e["kernel"])], 0.03)
    if not any("3.1% slower" in b for b in bad):
        print("self-test FAILED: a pick 3.1%% slower than the best was not caught: %s" % bad)
        ok = False
    if check_picks({key: slow}, [(fam, shape, e["kernel"], "table", e["kernel"])], 0.03):
        print("self-test FAILED: the best kernel was flagged")
        ok = False
    if not check_picks({key: e}, [(fam, shape, "never_timed", "table", e["kernel"])], 0.03):
        print("self-test FAILED: a kernel the sweep never timed was not caught")
        ok = False
    if not check_pick_coverage([(fam, shape, e["kernel"], "table", e["kernel"])]):
        print("self-test FAILED: missing DeepSeek-V3 picks were not caught")
        ok = False
    # The markdown's summary follows the chapters' choices: the same table with one chapter
    # choice moved from the fastest kernel to the runner-up must give another markdown.
    if any(sources[e["source"]].kind == "dispatch" for e in table.values()):
        k = next(k for k in sorted_keys(table)
                 if table[k]["second"] and sources[table[k]["source"]].kind == "dispatch")
        picks = [(f, s, e["kernel"], "table", e["kernel"]) for (f, s), e in table.items()]
        moved = [(f, s, kern, rule, table[k]["second"] if (f, s) == k else ck)
                 for f, s, kern, rule, ck in picks]
        if render_md(sources, table, picks) == render_md(sources, table, moved):
            print("self-test FAILED: the markdown's summary ignores the chapters' choices")
            ok = False
    # Corrections: a "RULE FASTER" verdict about the sweep's pick replaces it; one about another
    # kernel, or any other verdict, changes nothing.
    fake = BenchLog.__new__(BenchLog)
    fake.path, fake.commit, fake.gpu = "corrections/fake.log", "c0ffee", "GPU"
    alt = "rule_kernel_of_the_test"
    fake.rows = [(fam, shape, alt, e["kernel"], e["us"] * 0.9, e["us"], "RULE FASTER")]
    t = dict(table)
    done = correct(t, fake, 7)
    if not done or t[key]["kernel"] != alt or t[key]["source"] != 7 or t[key]["second"] != e["kernel"]:
        print("self-test FAILED: a RULE FASTER verdict on the sweep's pick did not correct it")
        ok = False
    for rows in ([(fam, shape, alt, "another_kernel", 1.0, 2.0, "RULE FASTER")],
                 [(fam, shape, alt, e["kernel"], 1.0, 2.0, "table faster")]):
        fake.rows = rows
        t = dict(table)
        if correct(t, fake, 7) or t[key] is not table[key]:
            print("self-test FAILED: a verdict that does not apply changed the table: %s" % rows)
            ok = False
    # The sweep's interleaved confirmation outranks its block timing: "b" is slower by block
    # median but faster confirmed, so it must be chosen; without confirmation "a" is.
    # Sustained medians (each kernel alone) outrank both: "a" is then the fastest again.
    def fake_sweep(confirm, sustain=False):
        src = Source.__new__(Source)
        src.results = {}
        rows = [{"family": "block_scaled", "shape": "64x64x128", "kernel": k, "ok": True,
                 "median_us": us, **({"confirm_median_us": c} if confirm else {}),
                 **({"sustain_median_us": c2} if sustain else {})}
                for k, us, c, c2 in (("a", 10.0, 12.0, 9.5), ("b", 11.0, 9.0, 10.0),
                                     ("c", 30.0, None, None))]
        for r in rows:
            for f in ("confirm_median_us", "sustain_median_us"):
                if r.get(f, 0) is None:
                    del r[f]
        src._read_dispatch({"results": rows})
        return src.results[("block_scaled", (64, 64, 128))]
    with_c, without, with_s = fake_sweep(True), fake_sweep(False), fake_sweep(True, True)
    if min(with_c["kernels"], key=with_c["kernels"].get) != "b" or with_c.get("timed") != 3:
        print("self-test FAILED: the interleaved confirmation did not rank the kernels: %s" % with_c)
        ok = False
    if min(without["kernels"], key=without["kernels"].get) != "a":
        print("self-test FAILED: without confirmation the block medians must rank: %s" % without)
        ok = False
    if min(with_s["kernels"], key=with_s["kernels"].get) != "a" or with_s.get("timed") != 3:
        print("self-test FAILED: the sustained medians did not rank the kernels: %s" % with_s)
        ok = False
    print("gen_dispatch_table --self-test: %s" % ("ok" if ok else "FAILED"))
    return 0 if ok else 1


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--check", action="store_true", help="compare with the committed files")
    ap.add_argument("--inc", default=INC, help="the C++ table (relative to the repository)")
    ap.add_argument("--md", default=MD, help="the markdown table (relative to the repository)")
    ap.add_argument("--picks-exe", help="fp8gemm_dispatch_picks, run for the library's picks")
    ap.add_argument("--picks", help="a file with its output instead")
    ap.add_argument("--tolerance", type=float, default=0.03)
    ap.add_argument("--self-test", action="store_true", help="prove that the check can fail")
    args = ap.parse_args()

    sources = load_sources()
    table = learn(sources)
    if args.self_test:
        return self_test(sources, table)
    corrections = []
    for log in load_bench_logs():
        done = correct(table, log, len(sources))
        if done:
            sources.append(log)
            corrections += done
    picks = read_picks(args) if (args.picks_exe or args.picks) else None
    inc = render_inc(sources, table)
    md = render_md(sources, table, picks, corrections) if picks is not None else None
    if not args.check:
        if md is None:
            sys.exit("gen_dispatch_table: the markdown's summary needs the chapters' own choices: "
                     "pass --picks-exe BUILD/bin/fp8gemm_dispatch_picks (pure CPU, built in every "
                     "configuration) or --picks FILE with its output")
        for path, text in ((args.inc, inc), (args.md, md)):
            with open(os.path.join(REPO, path), "w", encoding="utf-8") as f:
                f.write(text)
        print("gen_dispatch_table: %d entries from %d sources -> %s, %s" % (
            len(table), len(sources), args.inc, args.md))
        return 0

    failures = []
    if md is None:
        print("note: %s not checked (its summary needs --picks-exe or --picks)" % args.md)
    for path, text in ((args.inc, inc), (args.md, md)):
        if text is None:
            continue
        full = os.path.join(REPO, path)
        committed = open(full, encoding="utf-8").read() if os.path.exists(full) else ""
        msg = differs(path, committed, text)
        if msg:
            failures.append(msg)
    for family, _ in FAMILIES:
        missing = [shape_name(s) for s in DEEPSEEK if (family, s) not in table]
        if missing:
            note = "%s: %d DeepSeek-V3 shapes not in any sweep: %s" % (family, len(missing),
                                                                       ", ".join(missing))
            if family in REQUIRED:
                failures.append(note)
            else:
                print("note: " + note + " (not required until the dispatch sweep has run)")
    if picks is not None:
        print("the library's picks against the committed sweeps (rule: table, chapter, ...):")
        failures += check_picks(table, picks, args.tolerance) + check_pick_coverage(picks)
    for f in failures:
        print("FAIL: " + f)
    print("gen_dispatch_table --check: %d entries, %d failures" % (len(table), len(failures)))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
