#!/usr/bin/env python3
"""Kernel by kernel: does a binary's SASS equal another build's? For a change meant to touch some
kernels only, this says which kernels of each GPU test binary changed, so that the GPU tests of the
others need not run again (their SASS is the one that passed).

  python3 tools/sass_diff.py OLD_BIN_DIR NEW_BIN_DIR [NAME ...]

OLD_BIN_DIR / NEW_BIN_DIR: folders of executables (e.g. an unpacked .gpu archive's bin/ and
build/bin/); NAME: the executables to compare (default: those in NEW_BIN_DIR/gpu_tests.txt); sm_90a
functions only. For each: the kernels present in both with the same instruction text (cuobjdump
-sass, addresses, comments and the /*...*/ encodings dropped; sass_check.py's parser), those that
differ, and those in one binary only, each differing kernel named by its KernelConfig arguments
(BlockM, BlockN, Stages) and math policy. cuobjdump: $CUOBJDUMP, else the one on PATH, else
/usr/local/cuda/bin/cuobjdump.
"""
import os
import re
import shutil
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import sass_check  # noqa: E402  (its cuobjdump runner and SASS parser)

CFG = re.compile(r"KernelConfigILi(\d+)ELi(\d+)ELi(\d+)ELi(\d+)ELi(\d+)")
MATH = re.compile(r"(\w+Math)")


def cuobjdump():
    return (os.environ.get("CUOBJDUMP") or shutil.which("cuobjdump")
            or "/usr/local/cuda/bin/cuobjdump")


def kernels(path, arch="sm_90a"):
    """{mangled name: tuple of instruction texts} of every function of `arch` in the binary."""
    funcs = sass_check.parse_sass(sass_check.dump_sass(cuobjdump(), path), arch, operands=True)
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
        if not ko or not kn:  # nothing to compare is not "the same"
            print(f"== {n}: no sm_90a function in {'old' if not ko else 'new'}")
            changed_any = True
            continue
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
