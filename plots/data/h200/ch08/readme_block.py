"""The README check shared by chapter 8's session summaries (session14/summarise.py,
session15/staged_s3.py, session16/narrow.py, session17/masked_s3b4.py, session18/streamk.py): a
table printed from committed JSON must be exactly the README's block between
<!-- MARKER:begin --> and <!-- MARKER:end -->; and the reader of the executable's JSON that the
last two share."""
import json
import os
import re
import sys


def executable_medians(path: str) -> dict:
    """{(kernel, case): median us} of a chapter-8 executable's JSON (names "ch08:KERNEL/CASE/...")."""
    out = {}
    for b in json.load(open(path))["benchmarks"]:
        m = re.match(r"ch08:([^/]+)/([^/]+)/", b["name"])
        if m and "median_us" in b:
            out[(m.group(1), m.group(2))] = b["median_us"]
    return out


def check(readme_path: str, marker: str, text: str, who: str, source: str) -> None:
    """Exits 1 (naming `who`, the block and `source`) unless the block equals `text`."""
    readme = open(readme_path).read()
    begin, end = f"<!-- {marker}:begin -->\n", f"\n<!-- {marker}:end -->"
    block = readme[readme.index(begin) + len(begin):readme.index(end)]
    if block.strip() != text.strip():
        sys.stderr.write(f"{who}: {readme_path}'s {marker} block differs from {source}\n")
        sys.exit(1)
    sys.stdout.write(f"{who}: {readme_path}'s {marker} block matches {source}\n")


def table_main(argv: list, marker: str, table, who: str, source: str) -> None:
    """A session summary's main: prints `table()`, or with `--check README` checks the README's
    `marker` block against it (check above). Session 37's peers.py on."""
    if len(argv) == 3 and argv[1] == "--check":
        check(argv[2], marker, table(), who, source)
    else:
        print(table())


def check_lines(readme_path: str, lines: list) -> int:
    """1 (naming each missing line) unless every table line of `lines` (those starting "| ")
    appears in the README verbatim: for summaries whose tables the README quotes in its prose
    rather than between markers (session 37's summarise.py and producer.py)."""
    readme = open(readme_path).read()
    missing = [line for line in lines if line.startswith("| ") and line not in readme]
    for line in missing:
        print("not in the README:", line)
    return 1 if missing else 0


def sections_main(argv: list, sections: list) -> int:
    """A session summary's main over (title, table lines, README folder or None) sections: prints
    each; with `--check README`, 1 unless every line of the sections whose folder is README's
    appears in it (check_lines above). Sessions 38 and 39."""
    if len(argv) > 2 and argv[1] == "--check":
        folder = os.path.basename(os.path.dirname(os.path.abspath(argv[2])))
        return check_lines(argv[2], [l for _, ls, f in sections if f == folder for l in ls])
    for title, lines, _ in sections:
        print(f"## {title}\n")
        print("\n".join(lines) + "\n")
    return 0

