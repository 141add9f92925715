#!/usr/bin/env bash
# The GPU loop: runs every GPU test and every benchmark from binaries that were built elsewhere
# (e.g. on a CPU-only machine: build/bin travels with the repository), and writes logs and JSON
# to one folder.
#
#   bash scripts/gpu_loop.sh [OUTDIR]            (default OUTDIR: gpu_results)
#
# Environment:
#   STEPS="tests chapters baseline sanitize ncu sweep ablation accuracy sustained peers"
#                                         what to run (default: tests chapters baseline)
#     peers      the Python peers of chapter 7 (bench/peers.py: torch's block-scaled scaled_mm and,
#                when .peer/build_deepgemm.sh is there, DeepGEMM 2.6.1, built first) on the chapter-7
#                shapes (json/peers_ch07.json; log peers.log, DeepGEMM's build log peers_build.log).
#                Needs no build/bin: STEPS=peers (or ONLY=peers with STEPS unset) runs it alone.
#                Send .peer along (carry it) for DeepGEMM.
#     peers_moe  chapter 8's Python peers (bench/peers_moe.py; json/peers_ch08.json and the seeded
#                group sizes json/moe_groups.json); builds DeepGEMM like peers; times ours through
#                the PyTorch package (chapters/10_production/python/stage.sh), so without it on
#                PYTHONPATH the step fails at once, unless PEER_ARGS has --only (the peers alone)
#     ch07       chapter 7's table on its 19 shapes with --gpu_delay_us=50 (the peers' method;
#                json/ch07_block_scaling.json) and its accuracy study (json/ch07_accuracy.json)
#     ch08       chapter 8's forward pass (ch08_grouped_moe) with --gpu_delay_us=50 on the peers'
#                cases: balanced and masked built in, the skewed ones from bench/peers_moe.py's
#                seeded group sizes (its --ch08-case-args, no torch: json/moe_groups_ch08.json), each
#                contiguous case beside a loop of chapter-7 calls (json/ch08_grouped_moe.json);
#                CH08_ARGS="--kernels=all" adds arguments
#     ch09       chapter 9's Hopper MXFP8 GEMM (ch09_hopper_mxfp8 --kernels=all: the default kernel
#                and every kernel of every version) with --gpu_delay_us=50 on its default shapes
#                (8192^3 and the M = 4096 DeepSeek shapes) beside chapter 7 and cuBLASLt
#                block-scaled (json/ch09_hopper_mxfp8.json; copy it to
#                plots/data/h200/ch09_hopper_mxfp8.json; CH09_ARGS adds arguments), then its
#                accuracy study: the MXFP8 rows (floor_ocp, rceil) of chapter 7's accuracy table
#                on the same data, and the GPU quantiser checked byte for byte
#                (json/ch09_accuracy.json; copy it to plots/data/h200/ch09/accuracy.json)
#   PEER_SHAPES="MxNxK,..."               shapes for the peers step (default: bench/peers.py's set)
#   PEER_ARGS="--bf16 --no-delay"         extra arguments for bench/peers.py
#   PEER_TIMEOUT=540                      seconds for bench/peers.py (it stops starting shapes 60 s
#                                         before, so its JSON is complete for what ran);
#                                         PEER_BUILD_TIMEOUT=600 for DeepGEMM's build
#     sweep      ch06_sweep: every engine kernel on the standard shapes (json/ch06_sweep.json)
#     ablation   chapter 6's ablation steps at 8192^3 and 4096x7168x16384 (json/ch06_ablation.json)
#     accuracy   chapter 6's all-positive accuracy table (json/ch06_accuracy.json)
#     sustained  chapter 6 and cuBLASLt at 8192^3, SUSTAINED_SECONDS (default 6) each, back to
#                back, with the SM clock, power and throttle reasons sampled every 100 ms
#                (json/sustained_clocks.csv; the summary gives the median per implementation)
#   TIMEOUT=600                           seconds any one command may run (a hung kernel is
#                                         killed and counted as a failure)
#   SANITIZE_CHAPTERS="ch04_tma"          chapters to run under compute-sanitizer (default: all);
#                                         the step also runs test_reliability's [refused] and
#                                         [offsets] cases under memcheck
#   CHAPTER_ARGS="--sizes=4096,8192"      extra arguments for every chapter executable
#   ONLY=REGEX                            run only GPU tests / chapters whose name matches
#   NCU_CHAPTERS="ch05_wgmma"             chapters to profile with ncu at 8192^3 (step ncu);
#   NCU_KERNEL, NCU_SKIP, NCU_FILTER, NCU_TAG  kernel regex (default "chNN::"), launches to skip
#                                         (default 5: the validation), benchmark filter (default
#                                         the chapter), a suffix for the report's file name
#   BIN=build/bin                         where the executables are
#   PACK=1                                pack json/ tests/ ncu/ into results.tar.gz
# Writes OUTDIR/gpu_loop.log (everything), OUTDIR/summary.txt (the short version),
# OUTDIR/json/*.json (benchmarks), OUTDIR/tests/*.log (each GPU test's own output, Catch2's console
# reporter), OUTDIR/ncu/*.txt.
# The last line printed is "<passed> passed, <failed> failed, <skipped> skipped" over GPU tests
# and executables (skipped: exit 77, a test that cannot run on this machine or build).
set -uo pipefail
OUTDIR=${1:-gpu_results}
BIN=${BIN:-build/bin}
# ONLY=peers alone (no STEPS) means STEPS=peers: the peers step has no test or chapter to filter.
[ -z "${STEPS:-}" ] && [ "${ONLY:-}" = peers ] && STEPS=peers
STEPS=${STEPS:-tests chapters baseline}
ONLY=${ONLY:-.}
mkdir -p "$OUTDIR/json" "$OUTDIR/tests" "$OUTDIR/ncu"
LOG="$OUTDIR/gpu_loop.log"
SUMMARY="$OUTDIR/summary.txt"
: >"$LOG"
: >"$SUMMARY"
say() { echo "$*" | tee -a "$LOG" "$SUMMARY"; }

if [ ! -f "$BIN/gpu_tests.txt" ] && [ -n "$(echo " $STEPS " | sed 's/ peers_moe / /g; s/ peers / /g' | tr -d ' ')" ]; then
  echo "no $BIN/gpu_tests.txt: build first (cmake --preset default && cmake --build --preset default)" >&2
  exit 2
fi
# cuBLASLt: the toolkit's, or the one a Python CUDA wheel carries; Google Benchmark: next to the
# executables (copied there at configure time).
for d in /usr/local/cuda/lib64 /usr/local/cuda/targets/x86_64-linux/lib \
         $(python3 -c 'import nvidia, os; [print(os.path.join(p, q, "lib")) for p in nvidia.__path__ for q in os.listdir(p)]' 2>/dev/null); do
  [ -e "$d/libcublasLt.so.13" ] && CUBLAS_DIR=${CUBLAS_DIR:-$d}
done
export LD_LIBRARY_PATH="$BIN${CUBLAS_DIR:+:$CUBLAS_DIR}${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"

BUILT_FROM=$(cat "$BIN/commit.txt" 2>/dev/null || echo unknown)
say "fp8gemm GPU loop, $(date -u +%Y-%m-%dT%H:%M:%SZ), binaries built from commit $BUILT_FROM"
say "cuBLASLt from: ${CUBLAS_DIR:-system default}"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,clocks.mem,power.draw,temperature.gpu \
  --format=csv 2>&1 | tee -a "$LOG" "$SUMMARY"

# SM clock, power and temperature once a second while we run: whether the GPU held its clocks
# (or hit its power limit) is part of every number we report.
DMON_PID=""
if command -v nvidia-smi >/dev/null; then
  nvidia-smi dmon -s pc -d 1 -o T >"$OUTDIR/json/clocks_dmon.txt" 2>&1 &
  DMON_PID=$!
fi

passed=0
failed=0
skipped=0
run() {  # run <label> <command...>: logs everything, counts the result (exit 77: skipped, the
         # code CTest's SKIP_RETURN_CODE gives a test that cannot run here, e.g. sm_100a code on
         # a Hopper GPU or in a build without it)
  local label=$1
  shift
  local start=$SECONDS
  echo "=== $label: $*" >>"$LOG"
  timeout "${TIMEOUT:-600}" "$@" >"$OUTDIR/current.log" 2>&1
  local rc=$?
  [ $rc -eq 124 ] && echo "TIMEOUT after ${TIMEOUT:-600} s" >>"$OUTDIR/current.log"
  cat "$OUTDIR/current.log" >>"$LOG"
  if [ $rc -eq 0 ]; then
    passed=$((passed + 1))
    say "PASS  $label ($((SECONDS - start)) s)"
  elif [ $rc -eq 77 ]; then
    skipped=$((skipped + 1))
    say "SKIP  $label ($((SECONDS - start)) s): $(grep -m1 -i 'skip' "$OUTDIR/current.log" || tail -n 1 "$OUTDIR/current.log")"
  else
    failed=$((failed + 1))
    say "FAIL  $label (exit $rc, $((SECONDS - start)) s); last lines:"
    tail -n 25 "$OUTDIR/current.log" | sed 's/^/      /' | tee -a "$SUMMARY" >/dev/null
  fi
  # The closing table of a chapter executable goes into the summary too.
  sed -n '/^implementation /,$p' "$OUTDIR/current.log" >>"$SUMMARY"
  # A binary built before its last commit carries another commit (or "-dirty") in its JSON than
  # commit.txt says: say so, the numbers must not be attributed to the wrong commit.
  local own
  own=$(sed -n 's/^commit: //p' "$OUTDIR/current.log" | head -n 1)
  if [ -n "$own" ] && [ "$own" != "$BUILT_FROM" ]; then
    say "WARN  $label: the binary says commit $own, $BIN/commit.txt says $BUILT_FROM (build after committing)"
  fi
  # KEEP_LOG=PATH run ...: keep this program's output there too (the tests step).
  [ -n "${KEEP_LOG:-}" ] && cp "$OUTDIR/current.log" "$KEEP_LOG"
  rm -f "$OUTDIR/current.log"
  return 0
}

if [[ " $STEPS " == *" tests "* ]]; then
  while read -r t; do
    [ -n "$t" ] || continue
    [[ "$t" =~ $ONLY ]] || continue
    # Catch2's console reporter, not JUnit: a JUnit reporter reports every passed assertion, so
    # Catch2 expands each one's operands into text, and the tests' bit-for-bit CHECK(a == b) over
    # device results of millions of elements spent most of their time there (session 69: 8M
    # uint16 compared three times, 0.02 s with the console reporter, 7.9 s and 400 MB with JUnit;
    # test_library_gpu took 11.8 s run directly against 74-135 s in this loop).
    KEEP_LOG="$OUTDIR/tests/$t.log" run "test $t" "$BIN/$t"
    # Catch's own summary line ("All tests passed (...)" or "test cases: ... failed") into the log.
    grep -E '^All tests passed|^test cases:' "$OUTDIR/tests/$t.log" 2>/dev/null | tail -1 |
      sed "s/^/      $t: /" | tee -a "$LOG" "$SUMMARY" >/dev/null
  done <"$BIN/gpu_tests.txt"
fi

if [[ " $STEPS " == *" chapters "* ]] && [ -f "$BIN/chapters.txt" ]; then
  while read -r c; do
    [ -n "$c" ] || continue
    [[ "$c" =~ $ONLY ]] || continue
    # shellcheck disable=SC2086
    run "chapter $c" "$BIN/$c" --json="$OUTDIR/json/$c.json" ${CHAPTER_ARGS:-}
  done <"$BIN/chapters.txt"
fi

if [[ " $STEPS " == *" baseline "* ]]; then
  run "baseline_cublaslt" "$BIN/baseline_cublaslt" --benchmark_out="$OUTDIR/json/baseline_cublaslt.json" \
    --benchmark_out_format=json
fi

if [[ " $STEPS " == *" sanitize "* ]] && command -v compute-sanitizer >/dev/null; then
  # Each chapter's validation (4 edge shapes + 256^3) under memcheck (out-of-bounds and misaligned
  # accesses) and racecheck (shared-memory hazards between threads).
  for c in ${SANITIZE_CHAPTERS:-$(cat "$BIN/chapters.txt")}; do
    for tool in memcheck racecheck synccheck; do
      run "$tool $c" compute-sanitizer --tool "$tool" --error-exitcode 1 "$BIN/$c" --no-bench --sizes=256
    done
  done
  # The reliability cases (docs/contract.md): calls every chapter must refuse (D one byte off,
  # host, pinned, short, overlapping or other-device memory) launch nothing, so memcheck must see
  # no access at all; and D at every even byte offset is written without a misaligned or
  # out-of-bounds store.
  if [ -x "$BIN/test_reliability" ]; then
    run "memcheck test_reliability [refused],[offsets]" compute-sanitizer --tool memcheck \
      --error-exitcode 1 "$BIN/test_reliability" "[refused],[offsets]"
  fi
fi

CH06="$BIN/ch06_warp_specialization"
if [[ " $STEPS " == *" sweep "* ]] && [ -x "$BIN/ch06_sweep" ]; then
  run "ch06 sweep" "$BIN/ch06_sweep" --json="$OUTDIR/json/ch06_sweep.json"
  grep '^BEST' "$OUTDIR/gpu_loop.log" | tee -a "$SUMMARY" >/dev/null
fi
if [[ " $STEPS " == *" ablation "* ]] && [ -x "$CH06" ]; then
  run "ch06 ablation" "$CH06" --ablation --json="$OUTDIR/json/ch06_ablation.json"
fi
if [[ " $STEPS " == *" accuracy "* ]] && [ -x "$CH06" ]; then
  run "ch06 accuracy" "$CH06" --no-bench --sizes=256 --accuracy="$OUTDIR/json/ch06_accuracy.json"
  sed -n '/^accuracy on all-positive/,/^ *65536/p' "$OUTDIR/gpu_loop.log" | tee -a "$SUMMARY" >/dev/null
fi
if [[ " $STEPS " == *" sustained "* ]] && [ -x "$CH06" ]; then
  CLOCKS="$OUTDIR/json/sustained_clocks.csv"
  SAMPLER=""
  if command -v nvidia-smi >/dev/null; then
    nvidia-smi --query-gpu=timestamp,clocks.sm,power.draw,clocks_event_reasons.active \
      --format=csv,nounits -lms 100 >"$CLOCKS" 2>&1 &
    SAMPLER=$!
  fi
  run "ch06 sustained" "$CH06" --no-bench --sizes=256 --sustained="${SUSTAINED_SECONDS:-6}"
  [ -n "$SAMPLER" ] && kill "$SAMPLER" 2>/dev/null && wait "$SAMPLER" 2>/dev/null
  # Median SM clock, power and the throttle reasons seen in each implementation's window.
  grep '^SUSTAINED' "$OUTDIR/gpu_loop.log" | python3 -c '
import csv, sys, statistics, datetime
rows = []
for r in csv.reader(open(sys.argv[1])):
    try:
        t = datetime.datetime.strptime(r[0].strip(), "%Y/%m/%d %H:%M:%S.%f").replace(tzinfo=datetime.timezone.utc)
        rows.append((t.timestamp() * 1000, float(r[1]), float(r[2]), r[3].strip()))
    except (ValueError, IndexError):
        pass
for line in sys.stdin:
    f = line.split()
    name, tf, t0, t1 = f[1], float(f[2]), float(f[4]), float(f[5])
    w = [x for x in rows if t0 <= x[0] <= t1]
    if w:
        print(f"SUSTAINED {name:20s} {tf:8.1f} TFLOPS, SM clock median {statistics.median(x[1] for x in w):.0f} MHz, "
              f"power median {statistics.median(x[2] for x in w):.0f} W, reasons {sorted(set(x[3] for x in w))}, {len(w)} samples")
    else:
        print(f"SUSTAINED {name:20s} {tf:8.1f} TFLOPS (no clock samples in its window)")
' "$CLOCKS" | tee -a "$LOG" "$SUMMARY"
fi

if [[ " $STEPS " == *" ncu "* ]] && command -v ncu >/dev/null; then
  for c in ${NCU_CHAPTERS:-}; do
    # One profiled launch of the chapter's kernel at 8192^3 (the benchmark filter picks it),
    # clocks left as they are.
    # The 5 validation launches come first (4 edge shapes + 8192^3), hence --launch-skip 5.
    run "ncu $c" ncu --clock-control none --launch-count 1 --section SpeedOfLight \
      --section MemoryWorkloadAnalysis --section ComputeWorkloadAnalysis --section Occupancy \
      --section WarpStateStats --kernel-name-base demangled --kernel-name "regex:${NCU_KERNEL:-${c%%_*}::}" \
      --launch-skip "${NCU_SKIP:-5}" --log-file "$OUTDIR/ncu/$c${NCU_TAG:-}.txt" "$BIN/$c" --sizes=8192 \
      --benchmark_filter="^${NCU_FILTER:-$c}/"
  done
fi

# DeepGEMM (optional, for the peers steps): build it once from .peer/ (prepare.sh's archive) and
# put it on PYTHONPATH.
DG_BUILT=0
build_deepgemm() {
  [ "$DG_BUILT" = 1 ] && return 0
  DG_BUILT=1
  # DeepGEMM (optional): build it from .peer/ (prepare.sh's archive) and put it on PYTHONPATH.
  if [ -f .peer/build_deepgemm.sh ]; then
    start=$SECONDS
    if timeout "${PEER_BUILD_TIMEOUT:-600}" bash .peer/build_deepgemm.sh >"$OUTDIR/peers_build.log" 2>&1; then
      export_line=$(grep '^export PYTHONPATH=' "$OUTDIR/peers_build.log" | tail -n 1)
      if [ -n "$export_line" ]; then
        eval "$export_line"
        passed=$((passed + 1))
        say "PASS  peers: DeepGEMM build ($((SECONDS - start)) s): $(grep '^deep_gemm ' "$OUTDIR/peers_build.log" | tail -n 1)"
      else
        failed=$((failed + 1))
        say "FAIL  peers: DeepGEMM build printed no export line (peers_build.log)"
      fi
    else
      failed=$((failed + 1))
      say "FAIL  peers: DeepGEMM build ($((SECONDS - start)) s); last lines of peers_build.log:"
      tail -n 25 "$OUTDIR/peers_build.log" | sed 's/^/      /' | tee -a "$SUMMARY" >/dev/null
    fi
    cat "$OUTDIR/peers_build.log" >>"$LOG"
  else
    say "peers: no .peer/build_deepgemm.sh (bash ../shared/peers/deepgemm/prepare.sh ... makes it): torch only"
  fi
}

# The commit the Python peers record: the binaries' (build/bin/commit.txt travels with them), not the
# checkout's HEAD, which on a machine that received a copy of the tree can be stale.
PEER_COMMIT=()
[ -s "$BIN/commit.txt" ] && PEER_COMMIT=(--commit "$(cat "$BIN/commit.txt")")

if [[ " $STEPS " == *" peers "* ]]; then
  build_deepgemm
  PEER_TIMEOUT=${PEER_TIMEOUT:-540}
  # shellcheck disable=SC2086
  TIMEOUT=$PEER_TIMEOUT run "peers (bench/peers.py)" bash -c 'log=$1; shift; python3 "$@" 2>&1 | tee "$log"; exit "${PIPESTATUS[0]}"' \
    _ "$OUTDIR/peers.log" bench/peers.py --out "$OUTDIR/json/peers_ch07.json" \
    --time-limit "$((PEER_TIMEOUT > 120 ? PEER_TIMEOUT - 60 : PEER_TIMEOUT / 2))" \
    ${PEER_SHAPES:+--shapes "$PEER_SHAPES"} "${PEER_COMMIT[@]}" ${PEER_ARGS:-}
fi

# Succeeds when this repository's PyTorch package imports with its compiled ops (peers_moe times ours
# through it); otherwise fails and prints why not.
fp8gemm_package_check() {
  python3 -c 'import sys
try:
    import fp8gemm
except Exception as e:
    sys.exit(f"fp8gemm not importable ({type(e).__name__}: {e})")
if not fp8gemm.available():
    sys.exit(f"fp8gemm has no compiled ops: {fp8gemm.unavailable_reason()}")' 2>&1 >/dev/null
}

if [[ " $STEPS " == *" peers_moe "* ]]; then
  # Chapter 8's peers (bench/peers_moe.py): DeepGEMM grouped / masked / k-grouped, torch grouped,
  # and ours through the PyTorch package. Without the package (and without --only in PEER_ARGS to
  # time the others alone) the step is refused at once, before DeepGEMM's build and minutes of
  # timing whose every entry of ours would be an error.
  if [[ " ${PEER_ARGS:-} " != *" --only"* ]] && ! why=$(fp8gemm_package_check); then
    failed=$((failed + 1))
    say "FAIL  peers_moe: not run: ${why:-the PyTorch package is missing}. Stage it with" \
      "bash chapters/10_production/python/stage.sh build DEST and put DEST on PYTHONPATH" \
      "(or PEER_ARGS=\"--only=deepgemm*,torch*\" for the peers alone)"
  else
    build_deepgemm
    PEER_TIMEOUT=${PEER_TIMEOUT:-540}
    # shellcheck disable=SC2086
    TIMEOUT=$PEER_TIMEOUT run "peers_moe (bench/peers_moe.py)" bash -c 'log=$1; shift; python3 "$@" 2>&1 | tee "$log"; exit "${PIPESTATUS[0]}"' \
      _ "$OUTDIR/peers_moe.log" bench/peers_moe.py --out "$OUTDIR/json/peers_ch08.json" \
      --groups-out "$OUTDIR/json/moe_groups.json" --dg-jobs 8 \
      --time-limit "$((PEER_TIMEOUT > 120 ? PEER_TIMEOUT - 60 : PEER_TIMEOUT / 2))" "${PEER_COMMIT[@]}" ${PEER_ARGS:-}
  fi
fi

if [[ " $STEPS " == *" ch07 "* ]]; then
  # Chapter 7's committed numbers: the table's kernels and cuBLASLt block-scaled on the 19 shapes
  # with the peers' method (L2 flush + 50 us GPU delay, one benchmark after the other: the Python
  # peers cannot be interleaved with ours, bench/peers.py times them per launch), then the
  # accuracy study.
  CH07_SHAPES=8192x8192x8192,4096x2112x7168,4096x24576x1536,4096x32768x512,4096x7168x16384,4096x4096x7168,4096x7168x2048,64x2112x7168,64x24576x1536,64x32768x512,64x7168x16384,64x4096x7168,64x7168x2048,128x2112x7168,128x24576x1536,128x32768x512,128x7168x16384,128x4096x7168,128x7168x2048
  run "ch07 table (delay 50 us)" "$BIN/ch07_block_scaling" --gpu_delay_us=50 --timing=per_launch --shapes="${CH07_SHAPES_OVERRIDE:-$CH07_SHAPES}" \
    --json="$OUTDIR/json/ch07_block_scaling.json"
  run "ch07 accuracy" "$BIN/ch07_block_scaling" --no-bench --accuracy="$OUTDIR/json/ch07_accuracy.json" --shapes=256x256x256
fi

if [[ " $STEPS " == *" ch08 "* ]]; then
  # Chapter 8 on the cases of bench/peers_moe.py, by the same names, so that the JSON files line up
  # by "<implementation>/<case>": the skewed groups become --case=NAME:COUNTS:N:K, one per GEMM of
  # the expert layer (gemms_nk).
  CH08_GROUPS="$OUTDIR/json/moe_groups_ch08.json"
  if python3 bench/peers_moe.py --ch08-case-args --groups-out "$CH08_GROUPS" > "$OUTDIR/ch08_cases.txt" 2>>"$LOG"; then
    mapfile -t CH08_CASES < "$OUTDIR/ch08_cases.txt"
    # shellcheck disable=SC2086
    run "ch08 grouped (delay 50 us)" "$BIN/ch08_grouped_moe" --json="$OUTDIR/json/ch08_grouped_moe.json" \
      --gpu_delay_us=50 --timing=per_launch "${CH08_CASES[@]}" ${CH08_ARGS:-}
  else
    failed=$((failed + 1))
    say "FAIL  ch08: bench/peers_moe.py --ch08-case-args --groups-out failed (gpu_loop.log)"
  fi
fi

if [[ " $STEPS " == *" ch09 "* ]]; then
  # Chapter 9's Hopper half: the table with the peers' method (L2 flush + 50 us GPU delay), every
  # kernel (--kernels=all: the versions plot.py compares in chapter 9's hopper block), then the
  # MXFP8 rows of chapter 7's accuracy study (exit 1 if a GEMM misses its validation tolerance or
  # the GPU quantiser's bytes differ from the CPU one's).
  # shellcheck disable=SC2086
  run "ch09 Hopper MXFP8 table, all kernels (delay 50 us)" "$BIN/ch09_hopper_mxfp8" \
    --gpu_delay_us=50 --kernels=all --json="$OUTDIR/json/ch09_hopper_mxfp8.json" ${CH09_ARGS:-}
  run "ch09 accuracy" "$BIN/ch09_hopper_mxfp8" --no-bench --accuracy="$OUTDIR/json/ch09_accuracy.json"
  sed -n '/^MXFP8 accuracy study (chapter/,/^MXFP8 ACCURACY STUDY FAILED\|^MXFP8 accuracy study: every/p' \
    "$OUTDIR/gpu_loop.log" | tee -a "$SUMMARY" >/dev/null
fi

if [ -n "$DMON_PID" ]; then
  kill "$DMON_PID" 2>/dev/null
  wait "$DMON_PID" 2>/dev/null
  # min / median / max SM clock over the run: the 'pclk' column of dmon (header: # Time gpu pwr ...)
  awk '/^#/ && col == 0 { sub(/^# */, ""); for (i = 1; i <= NF; i++) if ($i == "pclk") col = i; next }
       !/^#/ && col > 0 && $col ~ /^[0-9]+$/ { print $col }' "$OUTDIR/json/clocks_dmon.txt" | sort -n | awk '
    { v[NR] = $1 } END { if (NR) printf "SM clock during the run: min %s, median %s, max %s MHz (%d samples)\n", v[1], v[int((NR+1)/2)], v[NR], NR }' |
    tee -a "$LOG" "$SUMMARY"
fi

if [ "${PACK:-0}" = 1 ]; then  # few files back (the device tool returns at most 8)
  tar czf "$OUTDIR/results.tar.gz" -C "$OUTDIR" json tests ncu 2>>"$LOG"
  rm -rf "$OUTDIR/json" "$OUTDIR/tests" "$OUTDIR/ncu"
fi
say "$passed passed, $failed failed, $skipped skipped"
[ $failed -eq 0 ]
