#!/usr/bin/env python3
"""Kernel by kernel: does a binary's SASS equal another build's? For a change meant to touch some
kernels only, this says which kernels of each GPU test binary changed, so that the GPU tests of the
others need not run again (their SASS is the one that passed).

  python3 tools/sass_diff.py OLD_BIN_DIR NEW_BIN_DIR [NAME ...]

OLD_BIN_DIR / NEW_BIN_DIR: folders of executables (e.g. an unpacked .gpu archive's bin/ and
build/bin/); NAME: the executables to compare (default: those in NEW_BIN_DIR/gpu_tests.txt). For
each: the kernels present in both with the same instruction text (cuobjdump -sass, addresses,
comments and the /*...*/ encodings dropped), those that differ, and those in one binary only, each
differing kernel named by its KernelConfig arguments (BlockM, BlockN, Stages) and math policy.
cuobjdump: $CUOBJDUMP, else the one on PATH, else /usr/local/cuda/bin/cuobjdump.
"""
import os
import re
import shutil
import subprocess
import sys

FUNC = re.compile(r"^\s+Function : (\S+)")
INSTR = re.compile(r"^\s+/\*[0-9a-f]{4,}\*/\s+(.*?)\s*;?\s*(/\*.*\*/)?\s*$")
CFG = re.compile(r"KernelConfigILi(\d+)ELi(\d+)ELi(\d+)ELi(\d+)ELi(\d+)")
MATH = re.compile(r"(PerTensorMath|BlockScaledMath|GroupedBlockScaledMath|KGroupedMath|"
                  r"MxScaledMath|SplitKBlockScaledMath|TimelineMath|StreamKGroupedMath|\w+Math)")


def cuobjdump():
    return (os.environ.get("CUOBJDUMP") or shutil.which("cuobjdump")
            or "/usr/local/cuda/bin/cuobjdump")


def kernels(path):
    """{mangled name: tuple of instruction strings} of every function in the binary's SASS."""
    out = subprocess.run([cuobjdump(), "-sass", path], capture_output=True, text=True, check=True)
    funcs, name = {}, None
    for line in out.stdout.splitlines():
        m = FUNC.match(line)
        if m:
            name = m.group(1)
            funcs[name] = []
            continue
        if name is None:
            continue
        m = INSTR.match(line)
        if m:
            funcs[name].append(m.group(1))
    return {k: tuple(v) for k, v in funcs.items()}


def describe(name):
    c = CFG.search(name)
    maths = sorted(set(MATH.findall(name)))
    return f"{'x'.join(c.groups()[:2]) + '_s' + c.group(3) if c else name[:60]} {','.join(maths)}"


def main(argv):
    if len(argv) < 3:
        print(__doc__, file=sys.stderr)
        return 2
    old_dir, new_dir = argv[1], argv[2]
    names = argv[3:]
    if not names:
        with open(os.path.join(new_dir, "gpu_tests.txt")) as f:
            names = [line.strip() for line in f if line.strip()]
    changed_any = False
    for n in names:
        o, p = os.path.join(old_dir, n), os.path.join(new_dir, n)
        if not (os.path.exists(o) and os.path.exists(p)):
            print(f"== {n}: missing in {'old' if not os.path.exists(o) else 'new'}")
            changed_any = True
            continue
        ko, kn = kernels(o), kernels(p)
        same = [k for k in kn if k in ko and ko[k] == kn[k]]
        diff = [k for k in kn if k in ko and ko[k] != kn[k]]
        only_new = [k for k in kn if k not in ko]
        only_old = [k for k in ko if k not in kn]
        changed_any |= bool(diff or only_new or only_old)
        print(f"== {n}: {len(same)} same, {len(diff)} differ, {len(only_new)} new only, "
              f"{len(only_old)} old only")
        for label, ks in (("differs", diff), ("new only", only_new), ("old only", only_old)):
            for k in sorted(ks, key=describe):
                print(f"   {label}: {describe(k)}")
    return 1 if changed_any else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
