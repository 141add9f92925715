#!/usr/bin/env python3
"""Session 24 (binaries and PyTorch package of 6e6f2fc: the pinned early-wave loop the default of
chapters 6, 7 and 8's large tiles): the peers in one process, interleaved, as time ratios
inverted (> 1 = ours faster), as session 20's tables are (../peers_session20/summarise.py):

  call 2: chapter 7 against DeepGEMM (bench/peers.py --interleave --impls
      fp8gemm_block_scaled,deepgemm --cupti-launches 0; L2 flush and a 50 us GPU-side delay
      before each timed call);
  call 3: chapter 8 against DeepGEMM and torch's grouped scaled_mm (bench/peers_moe.py
      --interleave --delay-us 150 --cupti-launches 0), with session 20's ratio to DeepGEMM in
      brackets: the table of chapter 8's NOTEBOOK.md between <!-- session24-peers:begin/end -->.

    python3 plots/data/h200/session24/summarise.py
    python3 plots/data/h200/session24/summarise.py --check chapters/08_grouped_moe/NOTEBOOK.md
"""
import glob
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "engine_wait"))
sys.path.insert(0, os.path.join(HERE, "..", "ch08"))
import peers as session17  # noqa: E402  (the JSON reader)
import readme_block  # noqa: E402  (the README check)

def _load(name, path):
    import importlib.util
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


# Session 20's summariser (its chapter 7 table), by path: "summarise" is this file's name too.
session20 = _load("session20_summarise", os.path.join(HERE, "..", "peers_session20", "summarise.py"))

KINDS = ["bal", "skew", "masked", "wgrad"]
OURS = {"masked": "fp8gemm_grouped_masked", "wgrad": "fp8gemm_weight_grad"}
DG = {"masked": "deepgemm_masked", "wgrad": "deepgemm_kgrouped_wgrad"}


def medians(folder):
    (path,) = glob.glob(os.path.join(folder, "peers_ch08_*.json"))
    return session17.medians(os.path.basename(path), folder)


def ch07():
    session20.HERE = os.path.join(HERE, "call2_6e6f2fc")
    return session20.ch07()


def ch08():
    now = medians(os.path.join(HERE, "call3_6e6f2fc"))
    before = medians(os.path.join(HERE, "..", "peers_session20"))
    cases = sorted({c for (_, c) in now}, key=lambda c: (KINDS.index(c.split("_")[0]), c))
    lines = ["| case | / DeepGEMM | / DeepGEMM with its padding step | / torch grouped |",
             "|---|---:|---:|---:|"]
    for c in cases:
        kind = c.split("_")[0]
        ours_name, dg_name = OURS.get(kind, "fp8gemm_grouped_contiguous"), DG.get(kind, "deepgemm_contiguous")

        def ratio(m, peer):
            return m[(peer, c)] / m[(ours_name, c)] if (peer, c) in m and (ours_name, c) in m else None

        f = lambda x: f"{x:.3f}" if x else "-"  # noqa: E731
        dg, dg_before = ratio(now, dg_name), ratio(before, dg_name)
        lines.append(f"| {c} | {f(dg)} ({f(dg_before)}) | {f(ratio(now, 'deepgemm_contiguous_with_pad'))}"
                     f" | {f(ratio(now, 'torch_scaled_grouped_mm'))} |")
    return "\n".join(lines)


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "--check":
        readme_block.check(sys.argv[2], "session24-peers", ch08(), "session24/summarise.py",
                           "plots/data/h200/session24/call3_6e6f2fc/peers_ch08_*.json")
    else:
        print(ch07() + "\n\n" + ch08())
