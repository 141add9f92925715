#!/usr/bin/env python3
"""CTest `docs_site` (cpu): builds the Doxygen site into a scratch folder and checks what the
site promises (issue 12, part 5), not only that doxygen ran:

  - the main page is docs/mainpage.md (USE_MDFILE_AS_MAINPAGE), and no other Markdown file
    competes for it (doxygen matches that setting by file name, so with "README.md" every
    chapter's README.md claimed the main page and was dropped from the site);
  - every chapter folder chapters/NN_*/README.md has its page and the main page links to it;
  - the main page links the public header and the entry points to their documentation pages;
  - doxygen reports no warning about the main page or a Markdown page it could not resolve.

    python3 docs/check_site.py --doxygen doxygen --out /tmp/site [--version 0.8.0]

Exit status: 0 pass, 1 fail, 77 skipped (doxygen not found). Run from anywhere (it changes to
the repository root: the Doxyfile's paths are relative to it).
"""

from __future__ import annotations

import argparse
import glob
import os
import re
import shutil
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)

# The entry points the main page must link: name as shown -> the pages it may link to (the
# public plans are classes of their own or aliases of the chapters' classes, documented on the
# namespace's page; either is the API's documentation).
ENTRY_POINTS = {
    "fp8gemm::PerTensorPlan": ("classfp8gemm_1_1PerTensorPlan", "namespacefp8gemm"),
    "fp8gemm::BlockScaledPlan": ("classfp8gemm_1_1BlockScaledPlan", "namespacefp8gemm"),
    "fp8gemm::WeightGradPlan": ("classfp8gemm_1_1WeightGradPlan", "namespacefp8gemm"),
    "fp8gemm::ch06::Plan": ("classfp8gemm_1_1ch06_1_1Plan",),
    "fp8gemm::ch07::Plan": ("classfp8gemm_1_1ch07_1_1Plan",),
    "fp8gemm::ch08::Plan": ("classfp8gemm_1_1ch08_1_1Plan",),
    "fp8gemm::ch09::HopperPlan": ("classfp8gemm_1_1ch09_1_1HopperPlan",),
    "chapters/10_production/include/fp8gemm/fp8gemm.hpp": ("fp8gemm_8hpp",),
    "common/quantize_gpu.hpp": ("quantize__gpu_8hpp",),
    "common/scale_layout.hpp": ("scale__layout_8hpp",),
}

failures: list[str] = []


def check(cond: bool, what: str) -> None:
    print(("ok    " if cond else "FAIL  ") + what)
    if not cond:
        failures.append(what)


def page_id(md_path: str) -> str:
    """Doxygen's page file for a Markdown file (md_ + path without .md, '/' -> '_')."""
    rel = os.path.relpath(md_path, REPO)[:-3]
    return "md_" + re.sub(r"[^A-Za-z0-9]", "_", rel)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--doxygen", default="doxygen")
    ap.add_argument("--out", required=True, help="scratch output folder (emptied first)")
    ap.add_argument("--version", help="PROJECT_NUMBER to stamp (the CMake project's version)")
    args = ap.parse_args()
    if shutil.which(args.doxygen) is None:
        print(f"SKIP: {args.doxygen} not found (apt-get install doxygen)")
        return 77
    os.chdir(REPO)
    shutil.rmtree(args.out, ignore_errors=True)
    os.makedirs(args.out)
    with open(os.path.join(HERE, "Doxyfile"), encoding="utf-8") as f:
        config = f.read()
    # Later lines win: the output folder and the version go last.
    config += f"\nOUTPUT_DIRECTORY = {args.out}\n"
    if args.version:
        config += f"PROJECT_NUMBER = {args.version}\n"
    p = subprocess.run([args.doxygen, "-"], input=config, capture_output=True, text=True)
    warnings = [l for l in (p.stdout + p.stderr).splitlines() if "warning" in l.lower()]
    check(p.returncode == 0, f"doxygen exits 0 (got {p.returncode})")
    html = os.path.join(args.out, "html")
    index = os.path.join(html, "index.html")
    if not os.path.isfile(index):
        check(False, "html/index.html exists")
        return 1
    with open(index, encoding="utf-8") as f:
        main_page = f.read()

    check("The chapter ladder" in main_page and "Entry points" in main_page,
          "the main page is docs/mainpage.md")
    check(not any("more than one \\mainpage" in w for w in warnings),
          "no Markdown file competes for the main page")
    check(not any("mainpage.md" in w for w in warnings), "no doxygen warning about the main page")
    check(not any("unable to resolve reference" in w and ".md" in w for w in warnings),
          "every link to a Markdown page resolves")
    if args.version:
        check(args.version in main_page, f"the site says version {args.version}")

    chapters = sorted(glob.glob(os.path.join(REPO, "chapters", "[0-9][0-9]_*", "README.md")))
    check(len(chapters) >= 10, f"{len(chapters)} chapter READMEs found")
    for md in chapters:
        pid = page_id(md)
        name = os.path.basename(os.path.dirname(md))
        check(os.path.isfile(os.path.join(html, pid + ".html")), f"chapter {name} has its page")
        check(f'href="{pid}.html"' in main_page, f"the main page links chapter {name}")
    for md in ("README.md", "docs/design.md", "docs/contract.md", "docs/fp8_numerics.md"):
        check(os.path.isfile(os.path.join(html, page_id(os.path.join(REPO, md)) + ".html")),
              f"{md} has its page")

    for name, targets in ENTRY_POINTS.items():
        pages = "|".join(re.escape(t) for t in targets)
        linked = re.search(r'href="((?:' + pages + r')\.html)[^"]*"[^>]*>' + re.escape(name) + "<",
                           main_page)
        check(linked is not None and os.path.isfile(os.path.join(html, linked.group(1))),
              f"the main page links {name} to its page ({linked.group(1) if linked else 'none'})")

    for w in warnings:
        print(f"  doxygen: {w}")
    if failures:
        print(f"\n{len(failures)} check(s) failed")
        return 1
    print("\nall checks passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
