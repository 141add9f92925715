#!/usr/bin/env python3
"""Session 39's calls, from their committed archives: the producer warp (session 38's branch
producer-warp, 572f0ad's engine code) back on main as 4d9085f, GPU-tested and measured.
  1. call 1: every GPU test binary but test_chapter_07_splitk (its step ran out of time), and the
     PyTorch package's tests (gpu_tests_4d9085f.txt, call.log);
  2. call 2: test_chapter_07_splitk; old (main's session-37 engine, e93c92e's executables) / new
     (4d9085f) runs old, new, new, old, session 38's shapes and cases: new / old per shape for
     chapter 7 and per chapter the geomean, least and most, with the peer's drift; chapter 8 per
     case; ncu (one launch each) old and new at two M <= 128 shapes, and the consumers' loop from
     the new kernel's source view against DeepGEMM's (session 37).
Usage: python3 summarise.py [--check README] (--check: the README's lines that quote these
tables must match, used by CTest chapter_07_session39)."""
import importlib.util
import math
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "ch08"))
import readme_block  # noqa: E402
# Session 38's tables, given a call's folder (loaded under its own name: it imports session 37's
# summarise.py as "summarise").
_spec = importlib.util.spec_from_file_location(
    "summarise38", os.path.join(HERE, "..", "session38", "summarise.py"))
summarise38 = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(summarise38)
C2 = os.path.join(HERE, "call2_4d9085f")


def ch08_table():
    res = summarise38.ab_ratios(C2)[("ch08", "ch08_grouped")]
    lines = ["| chapter 8 case | new / old (2 + 2 runs) | chapter 7's loop's drift |",
             "|---|---:|---:|"]
    for case, (r, p) in sorted(res.items()):
        lines.append(f"| {case} | {r:.3f} | {'-' if math.isnan(p) else f'{p:.3f}'} |")
    return lines


def main(argv):
    per_shape, summary = summarise38.ab_tables(C2)
    sections = [("new / old per chapter (call 2)", summary, "07_block_scaling"),
                ("chapter 7, new / old per shape (call 2)", per_shape, "07_block_scaling"),
                ("chapter 8, new / old per case (call 2)", ch08_table(), "08_grouped_moe"),
                ("ncu, one launch each (call 2)", summarise38.ncu_table(C2), "07_block_scaling"),
                ("the consumers' loop against DeepGEMM's (call 2; session 37 call 5)",
                 summarise38.consumer_loops(C2, "chapter 7, producer warp (4d9085f)"),
                 "07_block_scaling")]
    if len(argv) > 2 and argv[1] == "--check":
        folder = os.path.basename(os.path.dirname(os.path.abspath(argv[2])))
        return readme_block.check_lines(argv[2], [l for _, ls, f in sections if f == folder
                                                  for l in ls])
    for title, lines, _ in sections:
        print(f"## {title}\n")
        print("\n".join(lines) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
