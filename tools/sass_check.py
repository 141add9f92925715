#!/usr/bin/env python3
"""Assert which SASS instructions a compiled kernel contains.

Runs `cuobjdump --dump-sass` on a binary (executable, object or library), keeps the functions
of the requested architecture whose (mangled) name matches --kernel, and checks that every
--contains opcode appears in them and no --absent opcode does. An opcode matches an instruction
whose mnemonic starts with it (QGMMA matches QGMMA.64x128x32.F32.E4M3.E4M3). Exits 0 on success,
1 on a failed check (printing what was found), 2 when the tool or the kernel is missing: a SASS
test can fail, never pass vacuously.

  sass_check.py --cuobjdump PATH --binary FILE [--arch sm_90a] [--kernel REGEX] [--each]
                [--at-most OP=N]... [--order A<B]... [--first-before A<B]...
                [--contains OP]... [--absent OP]... [--interleaved-ffma F] [--list]
--each: every --contains opcode must appear in every matching function (default: in their union).
--at-most OP=N: OP appears at most N times in the matching functions together.
--order A<B: in every matching function, the first A comes before the last B (both present).
--first-before A<B: in every matching function, the first A comes before the first B.
--interleaved-ffma F: in every matching function at least the fraction F of the FFMAs have the
yield bit of their control word clear (bit 45 of the instruction's second 64-bit word: the bit
DeepGEMM's interleave_ffma.py post-pass toggled in runs of promotion FFMAs so that the warp
scheduler may switch warps inside a run; ptxas has done it itself since CUDA 12.9).
--expect-failure: the checks must fail (exit 0 if they do, 1 if they pass; a missing tool or
kernel still exits 2), to show on a known-bad kernel that a check can fail.
"""
import argparse
import collections
import re
import subprocess
import sys


def matches(op, wanted):
    """An instruction's mnemonic matches an opcode it equals, extends ("QGMMA.64x...") or whose
    base name is the opcode."""
    return op == wanted or op.startswith(wanted + ".") or op.split(".")[0] == wanted


def position(ops, wanted, last=False):
    """Index of the first (or last) instruction matching `wanted` in ops, None if none does."""
    order = range(len(ops) - 1, -1, -1) if last else range(len(ops))
    return next((i for i in order if matches(ops[i], wanted)), None)


YIELD_BIT = 1 << 45  # in the second (high) 64-bit word of a 128-bit sm_90 / sm_100 instruction


def yield_clear(controls, opcode="FFMA"):
    """(count of opcode, count of them with the yield bit clear) in one function's controls."""
    highs = [high for op, high in controls if op.split(".")[0] == opcode]
    return len(highs), sum(1 for h in highs if not h & YIELD_BIT)


def dump_sass(cuobjdump, binary):
    """cuobjdump --dump-sass of the binary (raises OSError / CalledProcessError). cuobjdump needs
    nvdisasm; the PyPI packages put both in one bin/ folder that is not on PATH."""
    import os
    import shutil
    tool = shutil.which(cuobjdump) or cuobjdump
    env = dict(os.environ)
    env["PATH"] = os.path.dirname(os.path.abspath(tool)) + os.pathsep + env.get("PATH", "")
    return subprocess.run([cuobjdump, "--dump-sass", binary], check=True, capture_output=True,
                          text=True, env=env).stdout


def parse_sass(text, arch, controls=None, operands=False):
    """Returns {function name: [mnemonics]} for the ELF sections of the given arch (operands:
    each instruction's whole text, predicate and operands too, instead of its mnemonic); fills
    controls (if given) with {function name: [(mnemonic, second 64-bit word)]}."""
    functions = collections.OrderedDict()
    pending = None
    current_arch_ok = False
    current = None
    arch_num = arch.replace("sm_", "").rstrip("a").rstrip("f")
    for line in text.splitlines():
        m = re.match(r"\s*(?:arch =|code for) (sm_\w+)", line)  # fatbin / bare cubin
        if m:
            found = m.group(1).replace("sm_", "").rstrip("a").rstrip("f")
            current_arch_ok = found == arch_num
            continue
        m = re.match(r"\s*Function : (\S+)", line)
        if m:
            current = m.group(1) if current_arch_ok else None
            if current:
                functions.setdefault(current, [])
            continue
        if current is None:
            continue
        # "        /*0070*/                   QGMMA.64x128x32.F32.E4M3.E4M3 ... ;"
        m = re.match(r"\s*/\*[0-9a-f]+\*/\s+(@!?U?P\w+\s+)?([A-Z][A-Za-z0-9_.]*)", line)
        if m:
            functions[current].append(
                line.split("*/", 1)[1].split(";")[0].strip() if operands else m.group(2))
            pending = m.group(2)
            continue
        # The instruction's second 64-bit word is alone on the next line: "/* 0x000fe2... */".
        m = re.match(r"\s*/\* (0x[0-9a-f]{16}) \*/\s*$", line)
        if m and pending is not None and controls is not None:
            controls.setdefault(current, []).append((pending, int(m.group(1), 16)))
        pending = None
    return functions


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cuobjdump", default="cuobjdump")
    ap.add_argument("--binary", required=True)
    ap.add_argument("--arch", default="sm_90a")
    ap.add_argument("--kernel", default=".")
    ap.add_argument("--contains", action="append", default=[])
    ap.add_argument("--absent", action="append", default=[])
    ap.add_argument("--list", action="store_true", help="print the matched kernels' opcodes")
    ap.add_argument("--at-most", action="append", default=[], metavar="OP=N",
                    help="OP may appear at most N times in the matching functions together")
    ap.add_argument("--order", action="append", default=[], metavar="A<B",
                    help="in each matching function the first A precedes the last B")
    ap.add_argument("--first-before", action="append", default=[], metavar="A<B",
                    help="in each matching function the first A precedes the first B")
    ap.add_argument("--interleaved-ffma", type=float, default=None, metavar="F",
                    help="in each matching function at least the fraction F of the FFMAs have "
                         "the yield bit clear")
    ap.add_argument("--expect-failure", action="store_true",
                    help="exit 0 only if a check fails (a missing kernel is still an error)")
    ap.add_argument("--each", action="store_true",
                    help="require every --contains opcode in each matching function")
    args = ap.parse_args()

    try:
        out = dump_sass(args.cuobjdump, args.binary)
    except (OSError, subprocess.CalledProcessError) as e:
        detail = getattr(e, "stderr", "") or ""
        print(f"sass_check: cannot run {args.cuobjdump} on {args.binary}: {e} {detail}",
              file=sys.stderr)
        return 2
    controls = {}
    functions = parse_sass(out, args.arch, controls)
    pattern = re.compile(args.kernel)
    chosen = {name: ops for name, ops in functions.items() if pattern.search(name)}
    if not chosen:
        print(f"sass_check: no {args.arch} function matching /{args.kernel}/ in {args.binary}; "
              f"found: {list(functions)[:20]}", file=sys.stderr)
        return 2
    opcodes = collections.Counter(op for ops in chosen.values() for op in ops)
    base = collections.Counter()
    for op, n in opcodes.items():
        base[op.split(".")[0]] += n

    def present(wanted):
        return sum(n for op, n in opcodes.items() if matches(op, wanted))

    failures = []
    for op in args.contains:
        n = present(op)
        print(f"  {op}: {n} in {len(chosen)} function(s)")
        if n == 0:
            failures.append(f"expected {op} but it is absent")
        if args.each:
            for fname, ops in chosen.items():
                if not any(matches(o, op) for o in ops):
                    failures.append(f"expected {op} in {fname} but it is absent there")
    for op in args.absent:
        n = present(op)
        print(f"  {op} (must be absent): {n}")
        if n > 0:
            failures.append(f"{op} must be absent but appears {n} times")
    for spec in args.at_most:
        op, _, limit = spec.partition("=")
        n = present(op)
        print(f"  {op} (at most {limit}): {n}")
        if n > int(limit):
            failures.append(f"{op} may appear at most {limit} times but appears {n} times")
    # --order A<B: the first A before the last B; --first-before A<B: before the first B.
    for spec, b_last in [(s, True) for s in args.order] + [(s, False) for s in args.first_before]:
        first, _, second = spec.partition("<")
        which = "last" if b_last else "first"
        for fname, ops in chosen.items():
            a, b = position(ops, first), position(ops, second, last=b_last)
            print(f"  {first} (first, at {a}) before {second} ({which}, at {b}) in {fname[:60]}...")
            if a is None or b is None or a >= b:
                failures.append(
                    f"expected the first {first} before the {which} {second} in {fname}")
    if args.interleaved_ffma is not None:
        for fname in chosen:
            total, clear = yield_clear(controls.get(fname, []))
            share = clear / total if total else 0.0
            print(f"  FFMA: {total}, yield bit clear on {clear} ({share:.2f}) in {fname[:60]}...")
            if total == 0 or share < args.interleaved_ffma:
                failures.append(f"expected at least {args.interleaved_ffma:.2f} of the FFMAs with the "
                                f"yield bit clear in {fname}; found {clear} of {total}")
    if args.list or failures:
        print("functions: " + ", ".join(chosen))
        print("opcodes: " + ", ".join(f"{op} x{n}" for op, n in base.most_common()))
    if args.expect_failure:
        if failures:
            print("sass_check ok: the checks failed, as expected: " + "; ".join(failures))
            return 0
        print("sass_check FAILED: the checks were expected to fail and passed", file=sys.stderr)
        return 1
    if failures:
        print("sass_check FAILED: " + "; ".join(failures), file=sys.stderr)
        return 1
    print("sass_check ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
