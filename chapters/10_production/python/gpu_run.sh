#!/usr/bin/env bash
# Runs the PyTorch ops' GPU work on a machine with a Hopper GPU and torch (2.11.0+cu130, the build
# _C.so was compiled against), from a package staged by stage.sh:
#
#   bash chapters/10_production/python/gpu_run.sh STAGED OUT [tests|bench|train|all]...
#
# STAGED: the folder stage.sh wrote (STAGED/fp8gemm, STAGED/fp8gemm_tools); OUT: where the logs,
# the benchmark JSON and the training curves go. Steps (default: all, in this order):
#   tests  every test (pytest when importable, else tests/run_tests.py): OUT/tests.log (~3-5 min:
#          torch.compile's inductor compiles a few graphs)
#   bench  bench_torch.py: OUT/bench_torch.json, OUT/bench_torch.log (~1-2 min; BENCH_ARGS, e.g.
#          "--time-limit 0.4", are passed on to it)
#   train  train_example.py: OUT/ch10_torch_train.{json,png}, OUT/train.log (~1 min)
# Exit status: non-zero if any step failed (each step still runs).
set -uo pipefail
if [[ $# -lt 2 ]]; then
  echo "usage: $0 STAGED OUT [tests|bench|train|all]..." >&2
  exit 2
fi
staged=$(cd "$1" && pwd)
out=$2
shift 2
steps=("$@")
[[ ${#steps[@]} -eq 0 ]] && steps=(all)
mkdir -p "$out"
out=$(cd "$out" && pwd)
export PYTHONPATH="$staged${PYTHONPATH:+:$PYTHONPATH}"
tools="$staged/fp8gemm_tools"
py=${PYTHON:-python3}
status=0
want() { for s in "${steps[@]}"; do [[ $s == all || $s == "$1" ]] && return 0; done; return 1; }

{
  echo "== $(date -u +%FT%TZ) $(hostname)"
  nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,clocks.sm --format=csv,noheader || true
  "$py" -c "import sys, torch, fp8gemm; print(sys.version.split()[0], torch.__version__, \
torch.version.cuda, 'fp8gemm', fp8gemm.__version__, 'available', fp8gemm.available(), \
fp8gemm.unavailable_reason() or '', 'commit', open('$staged/fp8gemm/commit.txt').read().strip())"
} 2>&1 | tee "$out/env.log"

if want tests; then
  echo "== tests" | tee "$out/tests.log"
  if "$py" -c "import pytest" 2>/dev/null; then
    (cd "$tools/tests" && "$py" -m pytest -q -rs -p no:cacheprovider . 2>&1) | tee -a "$out/tests.log"
  else
    (cd "$tools/tests" && "$py" run_tests.py 2>&1) | tee -a "$out/tests.log"
  fi
  [[ ${PIPESTATUS[0]} -eq 0 ]] || status=1
fi
if want bench; then
  echo "== bench" | tee "$out/bench_torch.log"
  # shellcheck disable=SC2086  # BENCH_ARGS is a list of words
  "$py" "$tools/bench_torch.py" --out "$out/bench_torch.json" ${BENCH_ARGS:-} 2>&1 |
    tee -a "$out/bench_torch.log"
  [[ ${PIPESTATUS[0]} -eq 0 ]] || status=1
fi
if want train; then
  echo "== train" | tee "$out/train.log"
  "$py" "$tools/train_example.py" --out-json "$out/ch10_torch_train.json" \
    --out-png "$out/ch10_torch_train.png" 2>&1 | tee -a "$out/train.log"
  [[ ${PIPESTATUS[0]} -eq 0 ]] || status=1
fi
echo "gpu_run.sh: exit status $status"
exit $status
