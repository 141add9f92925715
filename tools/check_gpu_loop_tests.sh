#!/usr/bin/env bash
# CPU check of the GPU test steps (tests/gpu_loop.cmake runs it): scripts/gpu_loop.sh's tests step
# and scripts/gpu_call.sh's packed_tests_step, on three stand-ins for GPU tests built from
# tests/gpu_loop_fixture.cpp (a real Catch2 program, so its output is Catch's console reporter's):
# one that passes, one that fails a CHECK, one that exits 77 (skipped). Each step's PASS / FAIL /
# SKIP line, Catch's summary line, the count, the kept per-test log and the FAILED block in the
# call's log must be what a GPU call reads from them: a device call must not be spent finding out
# that a step misreports.
#
#   bash tools/check_gpu_loop_tests.sh <source dir> <path of gpu_loop_fixture> <scratch dir> [--break]
#
# --break: the failing stand-in runs the passing case instead; then every check of the failure
# (marked F below) must miss and every other check must hold, else the script fails: so the
# checks of a failure can fail, and not because the stand-ins did not run.
set -uo pipefail
src=$1
fixture=$2
work=$3
broken=${4:-}
rm -rf "$work"
mkdir -p "$work/bin" "$work/out"
commit=0123456789abcdef0123456789abcdef01234567
echo "$commit" >"$work/bin/commit.txt"
printf 'loop_pass\nloop_fail\nloop_skip\n' >"$work/bin/gpu_tests.txt"
printf '#!/usr/bin/env bash\nexec "%s"\n' "$fixture" >"$work/bin/loop_pass"
if [ "$broken" = --break ]; then
  printf '#!/usr/bin/env bash\nexec "%s"\n' "$fixture" >"$work/bin/loop_fail"
else
  printf '#!/usr/bin/env bash\nexec "%s" "[fails]"\n' "$fixture" >"$work/bin/loop_fail"
fi
printf '#!/usr/bin/env bash\necho "no GPU here: skipped"\nexit 77\n' >"$work/bin/loop_skip"
chmod +x "$work/bin/loop_pass" "$work/bin/loop_fail" "$work/bin/loop_skip"
cd "$src" || exit 1

status=0
misses=()
# check F|P 'what' COMMAND...: COMMAND must succeed. F: a check of the failing stand-in's report,
# which must miss with --break; P: must hold either way.
check() {
  local kind=$1 what=$2
  shift 2
  local ok=1
  "$@" >/dev/null 2>&1 || ok=0
  if [ "$broken" = --break ] && [ "$kind" = F ]; then
    [ $ok -eq 0 ] && misses+=("$what") || { echo "HELD with --break: $what"; status=1; }
  elif [ $ok -eq 0 ]; then
    echo "MISSING: $what"
    status=1
  fi
}
has() { grep -qE "$2" "$1"; }   # has FILE 'ERE'
nonzero() { [ "$1" -ne 0 ]; }

# 1. The loop's tests step, as gpu_tests_step runs it.
BIN="$work/bin" STEPS=tests TIMEOUT=60 bash scripts/gpu_loop.sh "$work/out/loop" >/dev/null 2>&1
rc=$?
S=$work/out/loop/summary.txt
if [ "$broken" = --break ]; then count="2 passed, 0 failed, 1 skipped"; else count="1 passed, 1 failed, 1 skipped"; fi
check F "gpu_loop.sh's exit status is not 0" nonzero "$rc"
check P 'the PASS line' has "$S" '^PASS  test loop_pass \('
check F 'the FAIL line, with its exit status' has "$S" '^FAIL  test loop_fail \(exit [1-9]'
check P 'the SKIP line, with its reason' has "$S" '^SKIP  test loop_skip .*no GPU here: skipped'
check P "Catch's line of the passing test" has "$S" '^ +loop_pass: All tests passed \(1 assertion in 1 test case\)'
check F "Catch's line of the failing test" has "$S" '^ +loop_fail: test cases: 1 \| 1 failed'
check P "the count '$count' last in summary.txt" test "$(tail -n 1 "$S")" = "$count"
check P 'tests/loop_pass.log kept' test -s "$work/out/loop/tests/loop_pass.log"
check F 'the failing CHECK in tests/loop_fail.log' has "$work/out/loop/tests/loop_fail.log" 'CHECK\( two == 3 \)'

# 2. gpu_call.sh's packed_tests_step, on the same stand-ins packed as a call's binaries.
tar cJf "$work/bins.txz" -C "$work" bin
mkdir -p "$work/call"
(
  export OUT=$work/call GPU_CALL_ROOT=$work/unpacked
  # shellcheck disable=SC1091
  source scripts/gpu_call.sh "$work/bins.txz" >/dev/null 2>&1 || exit 1
  packed_tests_step demo 'loop_' 90
)
check P 'scripts/gpu_call.sh sourced, packed_tests_step run' test $? -eq 0
CL=$work/call/call.log
check F "the loop's non-zero exit status in call.log" has "$CL" '^gpu_loop rc=[1-9]'
check P 'the PASS line in call.log' has "$CL" '^PASS  test loop_pass'
check F 'the FAIL line in call.log' has "$CL" '^FAIL  test loop_fail'
check P 'the SKIP line in call.log' has "$CL" '^SKIP  test loop_skip'
check P "the count '$count' in call.log" has "$CL" "^$count\$"
check F "Catch's FAILED block in call.log" has "$CL" 'FAILED:'
check F 'the failing CHECK, in the FAILED block' has "$CL" 'CHECK\( two == 3 \)'
check F "the failing test case's name, with the FAILED block" has "$CL" '^gpu loop fixture: fails$'
check P 'gl_demo.txz' test -s "$work/call/gl_demo.txz"
check P "gpu_tests_demo_${commit:0:7}.txt" test -s "$work/call/gpu_tests_demo_${commit:0:7}.txt"
check P "the step's folder gl packed away" test ! -e "$work/call/gl"

if [ $status -eq 0 ] && [ "$broken" = --break ]; then
  echo "check_gpu_loop_tests --break: the ${#misses[@]} checks of the failure missed, the others held"
elif [ $status -eq 0 ]; then
  echo "check_gpu_loop_tests: the tests step and packed_tests_step report pass, fail and skip"
else
  echo "--- summary.txt"; cat "$S"; echo "--- call.log"; cat "$CL" 2>/dev/null
fi
exit $status
