#!/usr/bin/env python3
"""Chapter 10's README tables, generated from the committed H200 data (Python 3, standard library).

Reads
  plots/data/h200/ch10/library_bench_<commit>.log   fp8gemm_library_bench's verdict tables (a), (b),
  plots/data/h200/ch10/library_bench.json           (c) and the same run's JSON (checked to agree)
  plots/data/h200/ch10/dispatch_sweep.json          the dispatch sweep ((c) is set beside it)
  plots/data/h200/ch10/torch/*_<commit>.log, bench_torch.json, ch10_torch_train.json
                                                    the PyTorch package's run (tests, bench, training)
and writes the blocks of chapters/10_production/README.md between <!-- NAME:begin --> and
<!-- NAME:end --> (NAME: libbench-a, libbench-b, libbench-c, torch-run, torch-overhead,
torch-linear, torch-parts, torch-gemm). Numbers are copied as the logs print them; where a table
shows a number the logs do not print (a range, a difference, a sum, a ratio from the JSON), the
block says it is computed and from what. Before anything is written, every logged number that a
table uses is compared with the JSON written by the same run, formatted as the program formats
it: a log and a JSON from different runs are refused.

  python3 chapters/10_production/tools/readme_tables.py           # rewrite the README's blocks
  python3 chapters/10_production/tools/readme_tables.py --check   # exit 1 if a block is stale
"""
import argparse
import difflib
import glob
import json
import os
import re
import sys
from decimal import Decimal

ROOT = os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", ".."))
README = os.path.join(ROOT, "chapters", "10_production", "README.md")
DATA = os.path.join("plots", "data", "h200", "ch10")
TORCH = os.path.join(DATA, "torch")

ANSI = re.compile(r"\x1b\[[0-9;]*m")


class DataError(Exception):
    pass


def rel(path):
    return os.path.relpath(path, ROOT).replace(os.sep, "/")


def read(path):
    with open(os.path.join(ROOT, path), encoding="utf-8") as f:
        return f.read()


def one_file(pattern):
    """The single committed file matching pattern (relative to the repository), and its commit
    (the part of the name after the last '_')."""
    hits = sorted(glob.glob(os.path.join(ROOT, pattern)))
    if len(hits) != 1:
        raise DataError(f"expected one file {pattern}, found {len(hits)}: {[rel(h) for h in hits]}")
    name = os.path.basename(hits[0])
    return rel(hits[0]), os.path.splitext(name)[0].rsplit("_", 1)[1]


def agree(what, logged, computed):
    if logged != computed:
        raise DataError(f"{what}: the log says {logged}, the JSON gives {computed} "
                        "(not the same run?)")


def rng(values):
    """'lo-hi' of printed numbers (compared as numbers, shown as printed); one value alone."""
    vs = sorted(set(values), key=Decimal)
    return vs[0] if len(vs) == 1 else f"{vs[0]}-{vs[-1]}"


def md_table(header, rows, align=None):
    align = align or ["---"] * len(header)
    out = ["| " + " | ".join(header) + " |", "|" + "|".join(align) + "|"]
    out += ["| " + " | ".join(str(c) for c in r) + " |" for r in rows]
    return out


# ============================================ library bench ======================================

def block_lines(text, start, stop):
    """The lines after the one starting with `start` (and its header lines), up to `stop`."""
    lines = text.splitlines()
    i = next((k for k, l in enumerate(lines) if l.startswith(start)), None)
    if i is None:
        raise DataError(f"no section starting {start!r} in the library bench log")
    out = []
    for l in lines[i + 1:]:
        if re.match(stop, l):
            return out, l
        out.append(l)
    raise DataError(f"section {start!r}: no closing line matching {stop!r}")


def load_library():
    log_path, commit = one_file(os.path.join(DATA, "library_bench_*.log"))
    json_path = os.path.join(DATA, "library_bench.json").replace(os.sep, "/")
    text = ANSI.sub("", read(log_path))
    data = json.loads(read(json_path))
    full = data["context"]["git_commit"]
    if not full.startswith(commit):
        raise DataError(f"{log_path} is named for {commit}, {json_path} says commit {full}")
    m = re.search(r"^commit: ([0-9a-f]+)$", text, re.M)
    if not m or m.group(1) != full:
        raise DataError(f"{log_path}: its commit line does not match {json_path}'s {full}")
    bench = {b["name"].split("/iterations")[0]: b for b in data["benchmarks"]}

    # (a)
    lines, summary_a = block_lines(text, "(a) GPU time", r"^\d+ pairs judged")
    a = []
    for l in lines:
        f = l.split()
        if not f or f[0] in ("entry",) or l.startswith(" "):
            continue
        row = dict(zip(["entry", "shape", "lib", "lib_iqr", "chap", "chap_iqr", "ctl", "ctl_iqr",
                        "rounds", "ratio", "aa", "libctl"], f[:12]))
        row["verdict"] = " ".join(f[12:])
        b = bench.get(f"pair:{row['entry']}/{row['shape']}")
        if b is None:
            raise DataError(f"(a) {row['entry']} {row['shape']}: not in {json_path}")
        iqr = lambda side: "%.1f" % (100.0 * (b[f"{side}_p75_us"] - b[f"{side}_p25_us"]) /
                                     b[f"{side}_us"])
        for key, val in (("lib", "%.2f" % b["library_us"]), ("chap", "%.2f" % b["chapter_us"]),
                         ("ctl", "%.2f" % b["control_us"]), ("lib_iqr", iqr("library")),
                         ("chap_iqr", iqr("chapter")), ("ctl_iqr", iqr("control")),
                         ("rounds", "%d" % b["rounds"]), ("ratio", "%.4f" % b["ratio"]),
                         ("aa", "%.4f" % b["aa_ratio"]),
                         ("libctl", "%.4f" % b["ratio_vs_control"])):
            agree(f"(a) {row['entry']} {row['shape']} {key}", row[key], val)
        row["json"] = b
        a.append(row)
    cpu_s = {}
    for name, b in bench.items():
        part = {"pair": "(a)", "rule": "(c)"}.get(name.split(":")[0], "(b)")
        cpu_s[part] = cpu_s.get(part, 0.0) + b["cpu_time"] / 1e6

    # (b)
    lines, summary_b = block_lines(text, "(b) host CPU time", r"^\d+ library entry points over")
    b_rows, empty = [], None
    for l in lines:
        if l.startswith("entry") or not l.strip():
            continue
        if l.startswith("empty kernel"):
            empty = l.split()[-2]
            agree("(b) empty kernel", empty,
                  "%.2f" % bench["host_launch:empty_kernel/1x1x1"]["median_us"])
            continue
        f = l.split()
        row = {"entry": f[0], "shape": f[1], "lib": f[2], "chap": f[3], "verdict": " ".join(f[4:])}
        agree(f"(b) {f[0]} {f[1]} library", row["lib"],
              "%.2f" % bench[f"host_library:{f[0]}/{f[1]}"]["median_us"])
        agree(f"(b) {f[0]} {f[1]} chapter", row["chap"],
              "%.2f" % bench[f"host_chapter:{f[0]}/{f[1]}"]["median_us"])
        b_rows.append(row)

    # (c)
    lines, summary_c = block_lines(text, "(c) the table's kernel", r"^table faster at \d+")
    c = []
    for l in lines:
        f = l.split()
        if not f or f[0] == "entry" or l.startswith(" "):
            continue
        row = dict(zip(["entry", "shape", "rule", "table", "rule_us", "table_us", "ratio", "aa"],
                       f[:8]))
        row["verdict"] = " ".join(f[8:])
        j = bench.get(f"rule:{row['entry']}/{row['shape']}")
        if j is None:
            raise DataError(f"(c) {row['entry']} {row['shape']}: not in {json_path}")
        for key, val in (("rule_us", "%.2f" % j["library_us"]),
                         ("table_us", "%.2f" % j["chapter_us"]), ("ratio", "%.4f" % j["ratio"]),
                         ("aa", "%.4f" % j["aa_ratio"])):
            agree(f"(c) {row['entry']} {row['shape']} {key}", row[key], val)
        c.append(row)
    if not a or not b_rows or not c or empty is None:
        raise DataError(f"{log_path}: a section is empty")
    return {"log": log_path, "json": json_path, "commit": commit, "cpu_s": cpu_s, "a": a,
            "summary_a": summary_a,
            "b": b_rows, "empty": empty, "summary_b": summary_b, "c": c, "summary_c": summary_c}


def m_of(shape):
    return int(shape.split("x")[0])


def render_a(L):
    groups = []
    for entry in ("block_scaled", "per_tensor", "mxfp8"):
        rows = [r for r in L["a"] if r["entry"] == entry]
        groups.append((entry, "M = 64, 128 (12 shapes)", [r for r in rows if m_of(r["shape"]) <= 128]))
        groups.append((entry, "M = 4096 (6 shapes) and 8192^3",
                       [r for r in rows if m_of(r["shape"]) > 128]))
    for entry in ("grouped", "wgrad"):
        for r in L["a"]:
            if r["entry"] == entry:
                groups.append((entry, r["shape"], [r]))
    body = []
    for entry, what, rows in groups:
        if not rows:
            raise DataError(f"(a): no {entry} rows for {what}")
        judged = [r for r in rows if not r["verdict"].startswith("unjudged")]
        body.append([f"`{entry}`", what, f"{len(judged)} of {len(rows)}",
                     sum(r["verdict"] == "OVER 2%" for r in judged),
                     rng(r["ratio"] for r in rows), rng(r["aa"] for r in rows),
                     rng(r["libctl"] for r in rows),
                     rng(r[k] for r in rows for k in ("lib_iqr", "chap_iqr", "ctl_iqr")),
                     rng(r["rounds"] for r in rows)])
    aa_half = sum(abs(r["json"]["aa_ratio"] - 1) <= 0.005 for r in L["a"])
    out_band = [r for r in L["a"] if not Decimal("0.9950") <= Decimal(r["ratio"]) <= Decimal("1.0050")]
    out = [f"Source: [`{L['log']}`](../../{L['log']}) (`fp8gemm_library_bench` at commit "
           f"{L['commit']}; its JSON `{L['json']}` agrees, checked). Per group the range of the "
           "log's per-pair values (medians' ratios; IQR of all three sides as % of the median); "
           "all 60 rows are in the log.", ""]
    out += md_table(["entry", "shapes", "judged (A/A within 1%)", "over 2%", "library / chapter",
                     "A/A (control / chapter)", "library / control", "IQR %", "rounds"], body,
                    ["---", "---", "---:", "---:", "---:", "---:", "---:", "---:", "---:"])
    out += ["", f"The log's summary: \"{L['summary_a'].strip()}\"", "",
            f"Computed from the JSON: A/A within 0.5% at {aa_half} of {len(L['a'])} pairs; "
            f"library / chapter outside 0.9950-1.0050 at {len(out_band)}" +
            (": " + ", ".join(f"{r['entry']} {r['shape']} {r['ratio']} (A/A {r['aa']})"
                              for r in out_band) if out_band else "") +
            ". The benchmarks' `cpu_time` in the JSON, summed per part: " +
            ", ".join(f"{k} {L['cpu_s'][k]:.1f} s" for k in sorted(L["cpu_s"])) + "."]
    return out


def render_b(L):
    body = [["empty `<<<1, 1>>>` launch", "-", L["empty"], "-", "-", "-"]]
    for r in L["b"]:
        diff = Decimal(r["lib"]) - Decimal(r["chap"])
        body.append([f"`{r['entry']}`", r["shape"], r["lib"], r["chap"],
                     f"{diff:+.2f}", r["verdict"]])
    out = [f"Source: [`{L['log']}`](../../{L['log']}) (commit {L['commit']}), part (b); "
           "\"library - chapter\" computed from the two printed columns.", ""]
    out += md_table(["entry", "shape", "library us per run()", "chapter plan us", "library - chapter",
                     "target <= 5 us"], body, ["---", "---", "---:", "---:", "---:", "---"])
    out += ["", f"The log's summary: \"{L['summary_b'].strip()}\""]
    return out


FAMILY = {"block_scaled": "block_scaled", "per_tensor": "per_tensor_promoted",
          "mxfp8": "mxfp8_hopper"}


def load_sweep():
    path = os.path.join(DATA, "dispatch_sweep.json").replace(os.sep, "/")
    data = json.loads(read(path))
    med = {}
    for r in data["results"]:
        if r.get("ok") and not r.get("peer"):
            med[(r["family"], r["shape"], r["kernel"])] = r["median_us"]
    return path, data["context"]["git_commit"][:7], med


def render_c(L):
    spath, scommit, med = load_sweep()
    body = []
    for r in L["c"]:
        fam = FAMILY[r["entry"]]
        try:
            s = med[(fam, r["shape"], r["rule"])] / med[(fam, r["shape"], r["table"])]
        except KeyError as e:
            raise DataError(f"(c) {r['entry']} {r['shape']}: {e} not an ok result of {spath}")
        body.append([f"`{r['entry']}`", r["shape"], f"`{r['rule']}`", f"`{r['table']}`",
                     r["rule_us"], r["table_us"], r["ratio"], r["aa"], r["verdict"], "%.4f" % s])
    out = [f"Source: [`{L['log']}`](../../{L['log']}) (commit {L['commit']}), part (c); last "
           f"column computed from [`{spath}`](../../{spath}) (commit {scommit}): the rule's "
           "kernel's median over the table's kernel's in the dispatch sweep (> 1: the table's "
           "kernel faster there).", ""]
    out += md_table(["entry", "shape", "chapter's rule", "table", "rule us", "table us",
                     "rule / table", "A/A", "verdict", "sweep: rule / table"], body,
                    ["---", "---", "---", "---", "---:", "---:", "---:", "---:", "---", "---:"])
    out += ["", f"The log's summary: \"{L['summary_c'].strip()}\""]
    return out


# ================================================ PyTorch ========================================

def load_torch():
    blog, commit = one_file(os.path.join(TORCH, "bench_torch_*.log"))
    tlog, c2 = one_file(os.path.join(TORCH, "tests_*.log"))
    rlog, c3 = one_file(os.path.join(TORCH, "train_*.log"))
    elog, c4 = one_file(os.path.join(TORCH, "env_*.log"))
    if len({commit, c2, c3, c4}) != 1:
        raise DataError(f"the torch logs name different commits: {commit}, {c2}, {c3}, {c4}")
    bjson = os.path.join(TORCH, "bench_torch.json").replace(os.sep, "/")
    rjson = os.path.join(TORCH, "ch10_torch_train.json").replace(os.sep, "/")
    bench, train = json.loads(read(bjson)), json.loads(read(rjson))
    for path, d in ((bjson, bench), (rjson, train)):
        if not d["context"]["git_commit"].startswith(commit):
            raise DataError(f"{path} is from {d['context']['git_commit']}, the logs from {commit}")
    text = read(blog)

    overhead = []
    for m in re.finditer(r"^overhead (.+?): host ([\d.]+) us/call(?:, back to back ([\d.]+) us/call)?$",
                         text, re.M):
        p = bench["overhead"]["paths"].get(m.group(1))
        if p is None:
            raise DataError(f"{blog}: overhead path {m.group(1)!r} not in {bjson}")
        agree(f"overhead {m.group(1)} host", m.group(2), "%.2f" % p["host_us_per_call"])
        if m.group(3):
            agree(f"overhead {m.group(1)} b2b", m.group(3), "%.2f" % p["back_to_back_us_per_call"])
        overhead.append(m.groups())
    m = re.search(r"^op overhead over C\+\+: ([\d.]+) us \(target <= ([\d.]+)\)$", text, re.M)
    if not m or not overhead:
        raise DataError(f"{blog}: no overhead lines")
    agree("op overhead", m.group(1), "%.2f" % bench["overhead"]["op_overhead_us"])
    op_overhead = m.group(1)

    linear = []
    pat = re.compile(
        r"^linear (\d+)x(\d+)x(\d+): bf16 ([\d.]+) ms, fp8 ([\d.]+) ms \(([\d.]+)x; cached W "
        r"([\d.]+)x; fwd ([\d.]+)x; GEMMs alone ([\d.]+) ms = ceiling ([\d.]+)x\), errors (.*)\n"
        r"  parts: (.*)\n  wgrad kernels: (.*)$", re.M)
    jl = {(r["M"], r["N"], r["K"]): r for r in bench["linear"]}
    for m in pat.finditer(text):
        M, N, K = (int(m.group(i)) for i in (1, 2, 3))
        j = jl.get((M, N, K))
        if j is None:
            raise DataError(f"{blog}: linear {M}x{N}x{K} not in {bjson}")
        t = j["times"]
        for what, logged, val in (
                ("bf16", m.group(4), "%.3f" % t["bf16_fwd_bwd"]["median_ms"]),
                ("fp8", m.group(5), "%.3f" % t["fp8_fwd_bwd"]["median_ms"]),
                ("speed-up", m.group(6), "%.2f" % j["speedup_fwd_bwd"]),
                ("cached", m.group(7), "%.2f" % j["speedup_fwd_bwd_cached_weight"]),
                ("fwd", m.group(8), "%.2f" % j["speedup_fwd"]),
                ("gemms", m.group(9), "%.3f" % j["fp8_gemms_ms"]),
                ("ceiling", m.group(10), "%.2f" % j["speedup_ceiling_gemms_only"])):
            agree(f"linear {M}x{N}x{K} {what}", logged, val)
        # "transpose W codes, torch copy (reference)" holds a comma: re-join what split off
        fixed = {}
        pending = None
        for item in m.group(12).split(", "):
            if pending is not None:
                item = pending + ", " + item
                pending = None
            name, _, val = item.rpartition(" ")
            if not re.fullmatch(r"[\d.]+", val):
                pending = item
                continue
            fixed[name] = val
        parts = fixed
        for name, val in parts.items():
            if name not in j["fp8_parts_ms"]:
                raise DataError(f"linear {M}x{N}x{K}: part {name!r} not in {bjson}")
            agree(f"linear {M}x{N}x{K} part {name}", val, "%.3f" % j["fp8_parts_ms"][name])
        wk = []
        for item in m.group(13).split(", "):
            name, tf, _ = item.split(" ")
            agree(f"linear {M}x{N}x{K} wgrad {name}", tf,
                  "%.0f" % j["wgrad_kernel_sweep"][name]["TFLOPS"])
            wk.append((name, tf))
        linear.append({"N": N, "K": K, "bf16": m.group(4), "fp8": m.group(5), "speedup": m.group(6),
                       "cached": m.group(7), "fwd": m.group(8), "gemms": m.group(9),
                       "ceiling": m.group(10), "errors": m.group(11), "parts": parts, "wgrad": wk,
                       "json": j})
    if len(linear) != len(bench["linear"]):
        raise DataError(f"{blog}: {len(linear)} linear shapes, {bjson} has {len(bench['linear'])}")

    gemm = []
    jg = {(r["M"], r["N"], r["K"]): r for r in bench["gemm"]}
    for m in re.finditer(r"^gemm (\d+)x(\d+)x(\d+): (.*)$", text, re.M):
        key = tuple(int(m.group(i)) for i in (1, 2, 3))
        j = jg.get(key)
        if j is None:
            raise DataError(f"{blog}: gemm {key} not in {bjson}")
        impls = {}
        for item in m.group(4).split(", "):
            name, tf, _ = item.rsplit(" ", 2)
            agree(f"gemm {key} {name}", tf, "%.0f" % j["impls"][name]["TFLOPS"])
            impls[name] = tf
        gemm.append({"shape": "x".join(map(str, key)), "impls": impls, "json": j})

    tests = read(tlog)
    m = re.search(r"^(?:=+ )?(\d+ passed.*?) in [\d.]+s(?: =+)?$", tests, re.M)
    if not m:
        raise DataError(f"{tlog}: no pytest summary line")
    skips = re.findall(r"^SKIPPED \[\d+\] [^:]+:\d+: (.*)$", tests, re.M)
    return {"blog": blog, "bjson": bjson, "commit": commit, "tlog": tlog, "rlog": rlog,
            "elog": elog, "rjson": rjson, "overhead": overhead, "op_overhead": op_overhead,
            "linear": linear, "gemm": gemm, "tests": m.group(1), "skips": skips,
            "train": read(rlog), "train_json": train, "env": read(elog), "bench": bench}


def render_torch_run(T):
    env = T["env"].splitlines()
    train = [l for l in T["train"].splitlines() if l and not l.startswith("==")]
    out = [f"Run at commit {T['commit']} (sources: `{T['elog']}`, `{T['tlog']}`, `{T['rlog']}`, "
           f"`{T['bjson']}`, `{T['rjson']}`):", ""]
    out.append(f"- Environment: `{env[1].strip()}`; `{env[2].strip()}` (GPU, driver, clocks; "
               "Python, torch, CUDA, fp8gemm, commit).")
    out.append(f"- Tests: {T['tests']}. Skipped, as the log gives the reasons: " +
               "; ".join(f"\"{s}\"" for s in T["skips"]) + ".")
    ctx = T["train_json"]["context"]
    out.append(f"- Training ({ctx['model']}, {ctx['task']}, {ctx['optimizer']}, {ctx['steps']} "
               f"steps, batch {ctx['batch']}):")
    out += [f"  `{l.split('; wrote')[0]}`" for l in train]
    return out


def render_torch_overhead(T):
    o = T["bench"]["overhead"]
    body = [[f"`{p}`", h, b or "-"] for p, h, b in T["overhead"]]
    out = [f"Source: [`{T['blog']}`](../../{T['blog']}) (commit {T['commit']}); shape "
           f"{'x'.join(map(str, o['shape']))}, {o['calls']} calls per batch, median of "
           f"{o['repeats']} batches.", ""]
    out += md_table(["path", "host us per call (GPU kept busy)", "back to back us per call"], body,
                    ["---", "---:", "---:"])
    out += ["", f"Op overhead over the C++ `plan.run()` loop: {T['op_overhead']} us (target <= 10)."]
    return out


def render_torch_linear(T):
    body = []
    for r in T["linear"]:
        p = r["parts"]
        body.append([f"{r['N']} x {r['K']}", r["bf16"], r["fp8"], f"{r['speedup']}x",
                     f"{r['cached']}x", f"{r['fwd']}x",
                     f"{p['gemm fwd']} + {p['gemm dgrad']} + {p[wgrad_part(p)]} = "
                     f"{r['gemms']}", f"{r['ceiling']}x", "%.3f" % r["json"]["fp8_non_gemm_ms"]])
    out = [f"Source: [`{T['blog']}`](../../{T['blog']}) (commit {T['commit']}); M = 4096, "
           "times in ms (medians, an L2 flush before each); \"rest\" is the JSON's "
           "`fp8_non_gemm_ms` (FP8 step - the three GEMMs; the three addends are rounded "
           "separately).", ""]
    out += md_table(["N x K", "bf16 step", "FP8 step", "speed-up", "cached W", "forward only",
                     "FP8 GEMMs: fwd + dgrad + wgrad", "GEMMs-only ceiling", "rest"], body,
                    ["---", "---:", "---:", "---:", "---:", "---:", "---:", "---:", "---:"])
    return out


PARTS = ["quantize_128x128(W)", "quantize_1x128_dual(x)", "quantize_1x128_dual(dY)",
         "transpose W blocks"]
# Since session 26 the layer makes W and W^T's operand in one launch; the two calls it replaced
# are still timed (references).
PARTS_DUAL_W = ["quantize_128x128_dual(W)", "quantize_1x128_dual(x)", "quantize_1x128_dual(dY)"]
PART_HEADERS = {"quantize_128x128(W)": "quantise W", "quantize_1x128_dual(x)": "dual x",
                "quantize_1x128_dual(dY)": "dual dY", "transpose W blocks": "transpose W (ours)",
                "dW float32 -> bf16": "dW f32 -> bf16",
                "quantize_128x128_dual(W)": "W and W^T (dual)"}


def wgrad_part(p):
    """The layer's weight-gradient GEMM among the parts: bf16 dW from the kernel since session 9;
    before it, float32 dW (then cast: the part "dW float32 -> bf16")."""
    return "gemm wgrad (bf16 dW)" if "gemm wgrad (bf16 dW)" in p else "gemm wgrad (float32 dW)"


def layer_parts(p):
    """The step's memory-bound parts the layer runs (the cast only while dW came as float32)."""
    if "quantize_128x128_dual(W)" in p:
        return PARTS_DUAL_W
    return PARTS + (["dW float32 -> bf16"] if "dW float32 -> bf16" in p else [])


def two_launch_w(p, j):
    """The earlier path's W parts, quantise W + transpose W, as a reference column (None before
    the dual existed: those parts are the layer's own columns then)."""
    if "quantize_128x128_dual(W)" not in j:
        return None
    return "%s + %s = %.3f" % (p["quantize_128x128(W)"], p["transpose W blocks"],
                               j["quantize_128x128(W)"] + j["transpose W blocks"])


def render_torch_parts(T):
    body = []
    gemm4096 = {g["shape"]: g["impls"] for g in T["gemm"]}
    for r in T["linear"]:
        p, j = r["parts"], r["json"]
        pnames = layer_parts(j["fp8_parts_ms"])
        s = sum(j["fp8_parts_ms"][k] for k in pnames)
        g = gemm4096[f"4096x{r['N']}x{r['K']}"]
        ref = two_launch_w(p, j["fp8_parts_ms"])
        body.append([f"{r['N']} x {r['K']}"] + [p[k] for k in pnames] +
                     ["%.3f" % s, "%.3f" % (j["fp8_non_gemm_ms"] - s)] +
                     ([ref] if ref is not None else []) + [
                      p["transpose W codes, torch copy (reference)"],
                      g["fp8gemm.ops.gemm_block_scaled"], g["torch.matmul bf16"],
                      "%.0f" % (2 * j["M"] * r["N"] * r["K"] /
                                (j["fp8_parts_ms"][wgrad_part(j["fp8_parts_ms"])] * 1e-3) / 1e12),
                      "%s (`%s`)" % max(((tf, n) for n, tf in r["wgrad"]),
                                        key=lambda x: float(x[0]))])
    names = [n for n, _ in T["linear"][0]["wgrad"]]
    out = [f"Source: [`{T['blog']}`](../../{T['blog']}) (commit {T['commit']}); ms unless "
           "TFLOPS. \"Sum\" and \"rest - sum\" computed from the JSON's parts (each timed alone, "
           "L2 flushed); TFLOPS from the log's `gemm 4096x...` lines (fp8gemm's forward GEMM, "
           f"bf16 `torch.matmul`); \"wgrad, the layer's\" from the part `{wgrad_part(p)}` "
           "(the plan's default kernel for the shape), \"wgrad, fastest compiled\" the best of "
           f"the log's `wgrad kernels` line ({len(names)} kernels timed on the step's dW, one "
           "after the other).", ""]
    heads = [PART_HEADERS[k] for k in layer_parts(p)]
    refs = (["quantise W + transpose W, two launches (reference)"]
            if "quantize_128x128_dual(W)" in p else [])
    out += md_table(["N x K"] + heads +
                    ["sum", "rest - sum"] + refs + ["torch's W copy (reference)",
                     "FP8 GEMM TFLOPS", "bf16 TFLOPS", "wgrad, the layer's TFLOPS",
                     "wgrad, fastest compiled TFLOPS"], body,
                    ["---"] + ["---:"] * (len(heads) + len(refs) + 7))
    return out


def render_torch_gemm(T):
    body = []
    for g in T["gemm"]:
        i = g["impls"]
        body.append([g["shape"], i["fp8gemm.ops.gemm_block_scaled"],
                     i["torch block-scaled scaled_mm"], i["torch.matmul bf16"],
                     "%.2f" % g["json"]["ours_over_torch_speed"]])
    apis = sorted({g["json"]["torch_api"] for g in T["gemm"]})
    out = [f"Source: [`{T['blog']}`](../../{T['blog']}) (commit {T['commit']}); TFLOPS as "
           f"logged; torch's block-scaled GEMM through `{'`, `'.join(apis)}` on the same "
           "operands; last column the JSON's `ours_over_torch_speed` (torch's median over "
           "ours).", ""]
    out += md_table(["M x N x K", "fp8gemm.ops.gemm_block_scaled", "torch block-scaled scaled_mm",
                     "torch.matmul bf16", "fp8gemm / torch"], body,
                    ["---", "---:", "---:", "---:", "---:"])
    return out


# ================================================ README =========================================

def blocks():
    L, T = load_library(), load_torch()
    return {"libbench-a": render_a(L), "libbench-b": render_b(L), "libbench-c": render_c(L),
            "torch-run": render_torch_run(T), "torch-overhead": render_torch_overhead(T),
            "torch-linear": render_torch_linear(T), "torch-parts": render_torch_parts(T),
            "torch-gemm": render_torch_gemm(T)}


def apply(text, new):
    for name, lines in new.items():
        begin, end = f"<!-- {name}:begin -->", f"<!-- {name}:end -->"
        if text.count(begin) != 1 or text.count(end) != 1:
            raise DataError(f"README: expected one {begin} and one {end}")
        i, k = text.index(begin) + len(begin), text.index(end)
        if k < i:
            raise DataError(f"README: {end} before {begin}")
        text = text[:i] + "\n" + "\n".join(lines) + "\n" + text[k:]
    return text


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--check", action="store_true",
                    help="exit 1 (with a diff) if the README's blocks are not what the data give")
    ap.add_argument("--readme", default=README)
    args = ap.parse_args()
    try:
        with open(args.readme, encoding="utf-8") as f:
            old = f.read()
        new = apply(old, blocks())
    except (DataError, OSError, KeyError, ValueError) as e:
        print(f"readme_tables: {e}", file=sys.stderr)
        return 2
    if args.check:
        if new != old:
            sys.stdout.writelines(difflib.unified_diff(
                old.splitlines(True), new.splitlines(True), "README.md (committed)",
                "README.md (from the data)"))
            print(f"readme_tables: {rel(args.readme)} is stale: run "
                  "python3 chapters/10_production/tools/readme_tables.py", file=sys.stderr)
            return 1
        print(f"readme_tables: {rel(args.readme)} matches the committed data")
        return 0
    if new != old:
        with open(args.readme, "w", encoding="utf-8") as f:
            f.write(new)
        print(f"readme_tables: wrote {rel(args.readme)}")
    else:
        print(f"readme_tables: {rel(args.readme)} already up to date")
    return 0


if __name__ == "__main__":
    sys.exit(main())
