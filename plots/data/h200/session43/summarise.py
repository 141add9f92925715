#!/usr/bin/env python3
"""Session 43's calls (session 42's plan, run on branch long-cycle's binaries of 0d59ffe: main at
db48841 plus kTwoDeepLongCycleLoop, the default of block scaling's narrow one-slab tiles), from
their committed folders:
  1. call 1: every GPU test binary (gpu_tests_0d59ffe.txt). The call's 575 s plan ran out before
     the last one, test_chapter_07_splitk, which ran first in call 2 (gpu_tests_splitk_0d59ffe.txt);
  2. call 2: chapter 7's executable, old (a334058) / new / new / old on session 38's fifteen shapes
     (ab.txz; the plan was cut to 455 s on the device by a sed in the call's command line, so that
     call 3 fitted the device budget; the runs took 77 s);
  3. call 3: the PyTorch tests of the staged package (0d59ffe) and its op against DeepGEMM 2.6.1,
     interleaved, 50 us delay (peers_ch07_0d59ffe.json; that JSON's git_commit names the device
     tree's HEAD, not the package: the package's commit is call.log's "package:" line).
  4. call 4 (binaries of 18a7ac7: main with the branch merged, session 42's host-code mend, the
     mended chapter 9 and library threads tests; package staged at 5ed74e6): six GPU test
     binaries (four ran before the plan's 280 s ran out; quantize_test_gpu's XML records one
     failed case, a race of the test's own legacy-stream memsets with its graph replay on a
     non-blocking stream, mended in d7d31a0), the full dispatch sweep (committed as
     plots/data/h200/ch10/dispatch_sweep.json), the PyTorch tests; DeepGEMM's build ran out of its
     100 s, so the peers runs timed our op alone (peers_A/B: not a comparison);
  5. call 5: test_reliability (passed) and quantize_test_gpu, cut off at 45 s.
Usage: python3 summarise.py [--check README] (--check: the README's lines that quote these
tables must match; CTest chapter_07_session43)."""
import json
import os
import re
import sys
from statistics import geometric_mean as geomean

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "ch08"))
sys.path.insert(0, os.path.join(HERE, "..", "ch07"))
import readme_block  # noqa: E402
import abcompare  # noqa: E402

C1 = os.path.join(HERE, "call1_0d59ffe")
C2 = os.path.join(HERE, "call2_0d59ffe")
C3 = os.path.join(HERE, "call3_0d59ffe")


def gpu_tests():
    lines = []
    for path in (os.path.join(C1, "gpu_tests_0d59ffe.txt"),
                 os.path.join(C2, "gpu_tests_splitk_0d59ffe.txt")):
        lines += ["| " + line.strip() + " |" for line in open(path)
                  if line.startswith(("PASS", "FAIL", "SKIP"))]
    count = {k: sum(l.startswith("| " + k) for l in lines) for k in ("PASS", "FAIL", "SKIP")}
    lines.append(f"| calls 1 and 2 together: {count['PASS']} passed, {count['FAIL']} failed, "
                 f"{count['SKIP']} skipped |")
    return lines


def gpu_tests_18a7ac7():
    """Calls 4 and 5: the test binaries' lines, the failed case of quantize_test_gpu (from the
    JUnit XML inside call 4's logs.txz) and test_reliability's result in call 5."""
    import tarfile
    c4 = os.path.join(HERE, "call4_18a7ac7")
    lines = ["| " + line.strip() + " |" for line in open(os.path.join(c4, "gpu_tests_18a7ac7.txt"))
             if line.startswith(("PASS", "FAIL", "SKIP"))]
    with tarfile.open(os.path.join(c4, "logs.txz")) as tar:
        xml = tar.extractfile("gl/tests/quantize_test_gpu.xml").read().decode()
    m = re.search(r'failures="(\d+)" tests="(\d+)"', xml)
    cases = re.findall(r'<testcase [^>]*name="([^"]+)"[^>]*>\s*<failure message="([^"]+)"', xml)
    lines.append(f"| quantize_test_gpu (its JUnit XML; the loop was cut off before its summary line): {m.group(1)} failed of "
                 f"{m.group(2)} assertions: " + "; ".join(f"{n}: {msg}" for n, msg in cases) + " |")
    rel = open(os.path.join(HERE, "call5_18a7ac7", "call5.log")).read()
    lines.append("| call 5: " + "; ".join(l.strip() for l in rel.splitlines() if l.strip()) + " |")
    return lines


def old_new():
    """new / old time per shape (runs 2, 3 against 1, 4: the mean of each side's two runs, as
    abcompare.py prints), and the geomean over the twelve M <= 128 shapes."""
    runs = abcompare.load(os.path.join(C2, "ab.txz"))
    side = {"old": [], "new": []}
    for (chapter, _, which), t in sorted(runs.items()):
        if chapter == "ch07" and t is not None:
            side[which].append(t)
    ratio = {}
    for name in side["old"][0]:
        m = re.match(r"ch07_block_scaled/(\S+)$", name)
        if not m:
            continue
        old = sum(t[name] for t in side["old"]) / len(side["old"])
        new = sum(t[name] for t in side["new"]) / len(side["new"])
        ratio[m.group(1)] = new / old
    shapes = sorted(ratio, key=lambda s: (int(s.split("x")[0]), s))
    lines = ["| shape | new / old, time |", "|---|---:|"]
    lines += [f"| {s} | {ratio[s]:.3f} |" for s in shapes]
    small = [ratio[s] for s in shapes if int(s.split("x")[0]) <= 128]
    lines.append(f"| geomean, the {len(small)} M <= 128 shapes | {geomean(small):.3f} |")
    return lines


def peers():
    """Our op's speed over DeepGEMM's per shape (TFLOPS ratio, one interleaved run)."""
    doc = json.load(open(os.path.join(C3, "peers_ch07_0d59ffe.json")))
    tf = {}
    for b in doc["benchmarks"]:
        m = re.match(r"(fp8gemm_block_scaled|deepgemm)/(\d+x\d+x\d+)", b["name"])
        if m and "TFLOPS" in b:
            tf.setdefault(m.group(2), {})[m.group(1)] = b["TFLOPS"]
    shapes = sorted(tf, key=lambda s: (int(s.split("x")[0]), s))
    lines = ["| shape | fp8gemm TFLOPS | DeepGEMM TFLOPS | fp8gemm / DeepGEMM, speed |",
             "|---|---:|---:|---:|"]
    small = []
    for s in shapes:
        a, d = tf[s]["fp8gemm_block_scaled"], tf[s]["deepgemm"]
        lines.append(f"| {s} | {a:.1f} | {d:.1f} | {a / d:.3f} |")
        if int(s.split("x")[0]) <= 128:
            small.append(a / d)
    lines.append(f"| geomean, the {len(small)} M <= 128 shapes | | | {geomean(small):.3f} |")
    return lines


def main(argv):
    sections = [("calls 1-2: GPU tests of 0d59ffe's binaries", gpu_tests(), "07_block_scaling"),
                ("call 2: chapter 7, kTwoDeepLongCycleLoop (new, 0d59ffe) / two-deep (old, a334058)",
                 old_new(), "07_block_scaling"),
                ("call 3: the PyTorch op (package 0d59ffe) against DeepGEMM 2.6.1, interleaved",
                 peers(), "07_block_scaling"),
                ("calls 4-5: GPU tests of 18a7ac7's binaries", gpu_tests_18a7ac7(),
                 "07_block_scaling")]
    return readme_block.sections_main(argv, sections)


if __name__ == "__main__":
    sys.exit(main(sys.argv))
