"""The PyTorch example of chapters/10_production/README.md (section "PyTorch"), run as written."""

import os
import re

from _testlib import require_gpu

HERE = os.path.dirname(os.path.abspath(__file__))
# The chapter README in the source tree, or the copy stage.sh puts beside the staged tests.
_CANDIDATES = [os.path.join(HERE, "..", "..", "README.md"), os.path.join(HERE, "..", "README_ch10.md")]


def readme_example() -> str:
    """The ```python block between the pytorch-example markers of the chapter README."""
    for path in _CANDIDATES:
        if os.path.exists(path):
            text = open(path, encoding="utf-8").read()
            m = re.search(r"<!-- pytorch-example:begin -->\s*```python\n(.*?)```\s*"
                          r"<!-- pytorch-example:end -->", text, re.S)
            assert m, f"{path} has no pytorch-example block"
            return m.group(1)
    raise AssertionError(f"no chapter README among {_CANDIDATES}")


def test_readme_example_runs():
    require_gpu()
    import torch
    scope = {}
    exec(compile(readme_example(), "README.md (PyTorch example)", "exec"), scope)
    torch.cuda.synchronize()
    # The example prints the GEMM's error against the bf16 inputs' product; check it too.
    rel = float(scope["err"])
    assert rel < 0.1, rel
    assert scope["layer"].weight.grad is not None
