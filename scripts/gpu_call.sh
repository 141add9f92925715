#!/usr/bin/env bash
# The common start of a one-off GPU call's script (the maintainers' calls on a lent GPU machine:
# one script per call, built binaries sent along, archived with the call's data under
# plots/data/h200/sessionNN/callN_<commit>/). Source it, do not run it:
#
#   source scripts/gpu_call.sh .gpu/bins.txz [.gpu/py.txz] || exit 1
#   say "chapter 7 twins"
#   timeout 80 "$B/ch07_block_scaling" --gpu_delay_us=50 ... --json="$OUT/ab/x.json"; echo "rc=$?" >> "$L"
#   LEFT=$(seconds_left 570)   # of a 570 s plan
#
# The binaries' archive (tar of build/bin/..., xz) is unpacked into /tmp/b, the staged PyTorch
# package's (chapters/10_production/python/stage.sh) into /tmp. Sets B (the binaries), C (their
# commit, bin/commit.txt), L ($OUT/call.log), T0 and LD_LIBRARY_PATH; logs the GPU, its clocks,
# power limit and driver, and the binaries' and package's commits; defines say (a line with the
# time and the seconds since the start, into the log and stdout), seconds_left, gpu_tests_step,
# packed_tests_step, torch_tests_step, f32_kernels_step, ncu_step, old_new_runs, deepgemm_build_step, peers_ch07_step,
# dispatch_sweep_step, examples_step, small_picks_step, the shape lists DS_M128 and DS_SH18, and for chapter 8's calls
# ch08_skewed_cases, ch08_cases_at, ch08_ab_runs, ch08_kernels_step, named_tests_step, ch09_float_d_step, h200_float_d_steps and
# peers_moe_step (below). $OUT is the folder
# whose files come back from the GPU machine.
[ -n "${OUT:-}" ] || { echo "gpu_call.sh: OUT is not set" >&2; return 1 2>/dev/null || exit 1; }
T0=$(date +%s)
L=$OUT/call.log
# GPU_CALL_ROOT: where the binaries' archive is unpacked (default /tmp/b; tools/check_gpu_loop_tests.sh
# points it at a scratch folder to run the test steps on a CPU).
B=${GPU_CALL_ROOT:-/tmp/b}/bin
mkdir -p "${B%/bin}"
tar xJf "$1" -C "${B%/bin}" || { echo "gpu_call.sh: cannot unpack $1" | tee -a "$L" >&2; return 1; }
[ -n "${2:-}" ] && { tar xJf "$2" -C /tmp || echo "gpu_call.sh: cannot unpack $2" | tee -a "$L" >&2; }
export LD_LIBRARY_PATH=$B:/usr/local/cuda/lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
C=$(cat "$B/commit.txt" 2>/dev/null || echo unknown)
say() { echo "== $(date +%T) +$(($(date +%s) - T0))s $*" | tee -a "$L"; }
seconds_left() { echo $(($1 - ($(date +%s) - T0))); }
# Issue 10's skewed cases as chapter 8's executable takes them (bench/peers_moe.py's seeded groups,
# its names): mapfile -t CASES < <(ch08_skewed_cases)
ch08_skewed_cases() { python3 bench/peers_moe.py --ch08-case-args; }
# Issue 10's peers in one process, interleaved, the way sessions 31-33 ran them (DeepGEMM built from
# .peer first; carry .peer): peers_moe_step SECONDS. Leaves $OUT/peers_ch08_$C.json and
# $OUT/moe_groups_$C.json, the summary's last lines and the peers' result lines in the log, the
# step's folder in $OUT/p.
peers_moe_step() {
  PYTHONPATH=/tmp/py BIN=$B STEPS=peers_moe PEER_TIMEOUT=$(($1 - 30)) TIMEOUT=$(($1 - 30)) \
    PEER_ARGS="--interleave --delay-us 150 --cupti-launches 0" \
    timeout $(($1 - 20)) bash scripts/gpu_loop.sh "$OUT/p" > /dev/null 2>&1; echo "peers rc=$?" >> "$L"
  tail -3 "$OUT/p/summary.txt" >> "$L" 2>/dev/null
  cp "$OUT/p/json/peers_ch08.json" "$OUT/peers_ch08_$C.json" 2>/dev/null
  cp "$OUT/p/json/moe_groups.json" "$OUT/moe_groups_$C.json" 2>/dev/null
  grep -E "^(deepgemm|fp8gemm|torch)" "$OUT/p/peers_moe.log" | tail -40 >> "$L" 2>/dev/null
}
# DeepGEMM 2.6.1 built from .peer (carry .peer) and put on PYTHONPATH with the staged package
# (/tmp/py): deepgemm_build_step SECONDS (68 s and more than 100 s on fresh machines in session 43).
deepgemm_build_step() {
  mkdir -p "$OUT/p"
  timeout "$1" bash .peer/build_deepgemm.sh > "$OUT/p/deepgemm_build.log" 2>&1
  echo "build rc=$?" >> "$L"
  eval "$(grep '^export PYTHONPATH=' "$OUT/p/deepgemm_build.log" | tail -n 1)"
  export PYTHONPATH=${PYTHONPATH:+$PYTHONPATH:}/tmp/py
}
# The PyTorch op against DeepGEMM (block-scaled) in one process, interleaved, 50 us GPU delay, the
# way sessions 27-43 ran it: peers_ch07_step TAG SECONDS SHAPES. Leaves $OUT/peers_TAG_<commit>.json,
# the log in $OUT/p/peers_TAG.log and the result lines in the call log.
peers_ch07_step() {
  mkdir -p "$OUT/p"
  # PEERS_MAX_SMS (optional): both libraries on that many SMs (bench/peers.py --max-sms).
  timeout "$2" python3 bench/peers.py --interleave --shapes "$3" --max-sms "${PEERS_MAX_SMS:-0}" \
    --impls fp8gemm_block_scaled,deepgemm --cupti-launches 0 --delay-us 50 --dg-jobs 8 \
    --time-limit $(($2 - 30)) --commit "$C" --out "$OUT/peers_${1}_${C:0:7}.json" \
    > "$OUT/p/peers_$1.log" 2>&1
  echo "peers $1 rc=$?" >> "$L"
  grep -E "^(fp8gemm|deepgemm)" "$OUT/p/peers_$1.log" >> "$L"
}
# Issue 10's seeded skewed groups at other shapes: ch08_cases_at TOTALS N:K... prints one --case
# per (total, shape), named skew_g32_t<T>_n<N>_k<K> (the groups of bench/peers_moe.py's N 4096,
# K 7168 case of that total): mapfile -t CASES < <(ch08_cases_at 32768,49152 4096:3072 7168:3072)
ch08_cases_at() {
  local totals=$1 c shape
  shift
  python3 bench/peers_moe.py --totals "$totals" --ch08-case-args | while read -r c; do
    case "$c" in *_n4096_k7168:*) ;; *) continue ;; esac
    for shape in "$@"; do
      echo "$c" | sed -e "s/_n4096_k7168:/_n${shape%%:*}_k${shape##*:}:/" -e "s/:4096:7168\$/:${shape}/"
    done
  done
}
# Two kernel lists timed by chapter 8's executable in one process per run, RUNS runs alternating
# which list goes first (forward only, per-launch timing, 50 us GPU delay), each run within what is
# left of a PLAN_S-second call plan (none started with less than MIN_S left):
#   ch08_ab_runs DIR RUNS PLAN_S MIN_S ONLY KERNELS_A KERNELS_B [--case=... ...]
# writes DIR/ab_<i>.json and .log, and logs each run's start and exit status.
ch08_ab_runs() {
  local dir=$1 runs=$2 plan=$3 min=$4 only=$5 ka=$6 kb=$7 i o left
  shift 7
  mkdir -p "$dir"
  for ((i = 1; i <= runs; i++)); do
    if ((i % 2)); then o="$ka,$kb"; else o="$kb,$ka"; fi
    left=$(seconds_left "$plan")
    [ "$left" -lt "$min" ] && { say "run $i skipped: $left s left"; break; }
    say "run $i ($o), $left s left"
    timeout $((left - 8)) stdbuf -oL "$B/ch08_grouped_moe" --gpu_delay_us=50 --timing=per_launch \
      --forward-only "$@" --only="$only" --kernels="$o" --json="$dir/ab_$i.json" > "$dir/ab_$i.log" 2>&1
    echo "rc=$?" >> "$L"
  done
}
# Test cases by Catch2 name, each "binary:name filter" (Catch2 reads a comma in a filter as "or":
# give the name up to its first comma, then *), each within SECONDS: named_tests_step SECONDS
# "test_chapter_07:ch07: FP32 output*" ... Logs each binary's exit status and summary line; the
# output in $OUT/t/acc_<binary>.log.
named_tests_step() {
  local secs=$1 t
  shift
  mkdir -p "$OUT/t"
  for t in "$@"; do
    timeout "$secs" "$B/${t%%:*}" "${t#*:}" >> "$OUT/t/acc_${t%%:*}.log" 2>&1
    echo "${t%%:*} rc=$?: $(grep -E 'test cases|assertions' "$OUT/t/acc_${t%%:*}.log" | tail -1)" >> "$L"
  done
}
# Chapter 8's executable on the balanced and masked cases, forward only, per launch, 50 us GPU
# delay, the kernels given, within SECONDS: ch08_kernels_step TAG SECONDS KERNELS [ARGS...]. Leaves
# $OUT/ch08_TAG_<commit>.json, the log in $OUT/t/ch08_TAG.log and its failures in the call log.
ch08_kernels_step() {
  local tag=$1 secs=$2 kernels=$3
  shift 3
  mkdir -p "$OUT/t"
  timeout "$secs" stdbuf -oL "$B/ch08_grouped_moe" --gpu_delay_us=50 --timing=per_launch \
    --forward-only --only='^(bal|masked)_' --kernels="$kernels" "$@" \
    --json="$OUT/ch08_${tag}_${C:0:7}.json" > "$OUT/t/ch08_$tag.log" 2>&1
  echo "ch08 $tag rc=$?" >> "$L"
  grep -E "FAIL|skipped|rror" "$OUT/t/ch08_$tag.log" | head -20 >> "$L"
}
# Chapter 9's executable with --float-d (the MXFP8 float D beside the bf16 D, session 66) at 8192^3
# and three M = 4096 DeepSeek-V3 shapes, within SECONDS, the FP32 kernels KERNELS (a --kernels
# list, optional) too: ch09_float_d_step SECONDS [KERNELS]. Leaves $OUT/ch09_float_d_<commit>.json,
# the log in $OUT/t/ch09_float_d.log, its failures and float_d_ratios.py's lines in the call log.
ch09_float_d_step() {
  mkdir -p "$OUT/t"
  timeout "$1" stdbuf -oL "$B/ch09_hopper_mxfp8" --float-d ${2:+--kernels=$2} \
    --shapes=8192x8192x8192,4096x7168x16384,4096x2112x7168,4096x24576x1536 \
    --json="$OUT/ch09_float_d_${C:0:7}.json" > "$OUT/t/ch09_float_d.log" 2>&1
  echo "ch09 rc=$?" >> "$L"
  grep -E "FAIL|rror|^GPU" "$OUT/t/ch09_float_d.log" | head -20 >> "$L"
  python3 plots/data/h200/session66/float_d_ratios.py "$OUT/ch09_float_d_${C:0:7}.json" >> "$L" 2>&1
}
# Chapter 7's executable with --float-d (session 67: the block-scaled float D beside the bf16 D)
# at SHAPES, within SECONDS, the FP32 kernels KERNELS (a --kernels list) too:
# ch07_float_d_step SECONDS KERNELS SHAPES. Leaves $OUT/ch07_float_d_<commit>.json, the log in
# $OUT/t/ch07_float_d.log, its failures and float_d_ratios.py's lines in the call log.
ch07_float_d_step() {
  mkdir -p "$OUT/t"
  timeout "$1" stdbuf -oL "$B/ch07_block_scaling" --float-d --kernels="$2" --shapes="$3" \
    --json="$OUT/ch07_float_d_${C:0:7}.json" > "$OUT/t/ch07_float_d.log" 2>&1
  echo "ch07 rc=$?" >> "$L"
  grep -E "FAIL|rror|skipped" "$OUT/t/ch07_float_d.log" | head -20 >> "$L"
  python3 plots/data/h200/session66/float_d_ratios.py "$OUT/ch07_float_d_${C:0:7}.json" >> "$L" 2>&1
}
# The end of a call: its logs in $OUT/t packed into t.txz, every .txz under $OUT into
# archives.tar (at most 8 files come back), then the call log printed: finish_call.
finish_call() {
  say end
  [ -d "$OUT/t" ] && tar cJf "$OUT/t.txz" -C "$OUT" t && rm -rf "$OUT/t"
  (cd "$OUT" && ls *.txz > /dev/null 2>&1 && tar cf archives.tar *.txz && rm -f *.txz)
  cat "$L"
}
# Session 66's H200-only steps, each while time is left of a PLAN-second call: the FP32 decode
# kernels by name at M = 128 (f32_kernels_step) and chapter 8's grouped float D beside two bf16
# kernels (ch08_kernels_step): h200_float_d_steps PLAN. On another GPU it says so and runs nothing.
h200_float_d_steps() {
  local gpu
  gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)
  if [[ "$gpu" != *H200* ]]; then say "not an H200 ($gpu): the H200 steps skipped"; return; fi
  [[ $(seconds_left "$1") -gt 60 ]] && { say "decode FP32 kernels by name at M = 128"
    F32_TOKENS=128 f32_kernels_step m128 45 2112x7168 'xx'; }
  if [[ $(seconds_left "$1") -gt 100 ]]; then
    say "chapter 8's executable: the grouped float D's kernels and two bf16 kernels"
    ch08_kernels_step f32 90 256x128_s3_c1x2_promoted_tma_b4,256x128_s4_c1x1_promoted_tma_b1,128x256_s4_c1x1_promoted_f32_tma_b1,128x256_s4_c1x1_promoted_f32
  fi
}
# Old against new executables of one chapter in the order old, new, new, old (the A/B of
# sessions 19-40), each run within what is left of a PLAN_S-second plan (none started with less
# than MIN_S left, each cut at TIMEOUT_S), "new" from $B, "old" from OLD_BIN, every run with a
# 50 us GPU delay; writes DIR/<TAG>_<run>_<old|new>.json and .log, which
# plots/data/h200/ch07/abcompare.py reads (TAG ch06, ch07 or ch08):
#   old_new_runs DIR PLAN_S MIN_S TIMEOUT_S OLD_BIN EXE TAG [ARGS...]
old_new_runs() {
  local dir=$1 plan=$2 min=$3 tmo=$4 old=$5 exe=$6 tag=$7 run=0 side x left
  shift 7
  mkdir -p "$dir"
  for side in old new new old; do
    run=$((run + 1))
    if [ "$side" = old ]; then x=$old; else x=$B; fi
    left=$(seconds_left "$plan")
    say "$tag run $run ($side), $left s left"
    [ "$left" -gt "$min" ] || { echo "$tag run $run skipped" >> "$L"; break; }
    timeout "$tmo" "$x/$exe" --gpu_delay_us=50 "$@" --json="$dir/${tag}_${run}_$side.json" \
      > "$dir/${tag}_${run}_$side.log" 2>&1
    echo "$tag rc=$?" >> "$L"
  done
}
# The issues' DeepSeek-V3 shapes as the executables take them: DS_M128 (M = 64 and 128, twelve),
# DS_SH18 (those and M = 4096, eighteen).
DS_M128="64x2112x7168,64x24576x1536,64x32768x512,64x7168x16384,64x4096x7168,64x7168x2048"
DS_M128="$DS_M128,128x2112x7168,128x24576x1536,128x32768x512,128x7168x16384,128x4096x7168,128x7168x2048"
DS_SH18="$DS_M128,4096x2112x7168,4096x24576x1536,4096x32768x512,4096x7168x16384,4096x4096x7168,4096x7168x2048"
# The block-scaled sweep at M <= 128 and its fastest kernel per shape against the library's table
# (plots/data/h200/session43/call4_18a7ac7/picks.py): small_picks_step SECONDS. Leaves
# $OUT/dispatch_sweep_small_<commit>.json and $OUT/picks.txt (the picks as the environment
# override's value); each shape's pick and the table's time over it go to the log.
small_picks_step() {
  dispatch_sweep_step small "$1" "$DS_M128" --families=block_scaled
  awk '$1 == "block_scaled" && $2 ~ /^(64|128)x/ {print $2, $3}' <("$B/fp8gemm_dispatch_picks") \
    > /tmp/table.txt 2>/dev/null || true
  python3 plots/data/h200/session43/call4_18a7ac7/picks.py "$OUT/dispatch_sweep_small_${C:0:7}.json" \
    /tmp/table.txt > "$OUT/picks.txt" 2>> "$L"
}
# The library's dispatch sweep (fp8gemm_dispatch_sweep) on SHAPES with ARGS (e.g. --families=...,
# --max_sms=N), cut at SECONDS: dispatch_sweep_step TAG SECONDS SHAPES [ARGS...]. Leaves
# $OUT/dispatch_sweep_TAG_<commit>.json (rewritten after every shape) and $OUT/sweep_TAG.log.xz,
# and puts its exit status in the log.
dispatch_sweep_step() {
  local tag=$1 secs=$2 shapes=$3
  shift 3
  timeout "$secs" "$B/fp8gemm_dispatch_sweep" --shapes="$shapes" "$@" \
    --json="$OUT/dispatch_sweep_${tag}_${C:0:7}.json" > "$OUT/sweep_$tag.log" 2>&1
  echo "sweep $tag rc=$?" >> "$L"
  xz -6 -f "$OUT/sweep_$tag.log"
}
# The installed-package examples' GPU halves (consumer_example, readme_example: built against
# `cmake --install` by their CPU tests, copied into build/bin by the pack scripts): examples_step.
# Leaves $OUT/<example>.log; each one's exit status and last lines go to the log.
examples_step() {
  local ex
  for ex in consumer_example readme_example; do
    say "$ex (the installed package's example, its GPU half)"
    timeout 20 "$B/$ex" > "$OUT/$ex.log" 2>&1; echo "$ex rc=$?" >> "$L"
    tail -6 "$OUT/$ex.log" >> "$L"
  done
}
# The staged PyTorch package's tests (unpacked in /tmp/py): torch_tests_step SECONDS. The result
# line and any failure lines into the log, the step's folder packed as $OUT/torch.txz.
torch_tests_step() {
  timeout "$1" bash chapters/10_production/python/gpu_run.sh /tmp/py "$OUT/torch" tests \
    > /dev/null 2>&1
  echo "torch tests rc=$?" >> "$L"
  tail -1 "$OUT/torch/tests.log" >> "$L" 2>/dev/null
  grep -E "FAIL|Error|assert" "$OUT/torch/tests.log" 2>/dev/null | head -30 >> "$L"
  tar cJf "$OUT/torch.txz" -C "$OUT" torch && rm -rf "$OUT/torch"
}
# The GPU test binaries whose names match REGEX (scripts/gpu_loop.sh's tests step), the whole step
# within SECONDS: gpu_tests_step 'REGEX' SECONDS. Leaves the loop's folder $OUT/gl and
# $OUT/gpu_tests_<commit>.txt, and puts the PASS / FAIL / SKIP lines and the count in the log.
gpu_tests_step() {
  BIN=$B STEPS=tests ONLY="$1" TIMEOUT=$(($2 - 20)) timeout "$2" bash scripts/gpu_loop.sh "$OUT/gl" \
    > /dev/null 2>&1
  echo "gpu_loop rc=$?" >> "$L"
  cp "$OUT/gl/summary.txt" "$OUT/gpu_tests_${C:0:7}.txt" 2>/dev/null
  grep -E "^(PASS|FAIL|SKIP)" "$OUT/gl/summary.txt" >> "$L" 2>/dev/null
  tail -1 "$OUT/gl/summary.txt" >> "$L" 2>/dev/null
}
# gpu_tests_step for a call that may be cut short: packed_tests_step NAME 'REGEX' SECONDS also puts
# the failures' lines (Catch2's FAILED blocks) in the log and packs the step's folder at once, as $OUT/gl_NAME.txz
# (with $OUT/gpu_tests_NAME_<commit>.txt), so that a later step cut by the call's limit loses
# only itself, and the files that come back stay few.
packed_tests_step() {
  gpu_tests_step "$2" "$3"
  # -B6: back to the test case's name (Catch's console reporter prints it 4-6 lines above).
  grep -h -B6 -A10 "FAILED" "$OUT"/gl/tests/*.log 2>/dev/null | head -40 >> "$L"
  mv "$OUT/gpu_tests_${C:0:7}.txt" "$OUT/gpu_tests_$1_${C:0:7}.txt" 2>/dev/null
  tar cJf "$OUT/gl_$1.txz" -C "$OUT" gl && rm -rf "$OUT/gl"
}
# The library's FP32-output kernels by name against torch's float32 D (bench_torch.py --only
# per_tensor_f32_kernels, 0.3 s a case) at the default shapes and the N x K list given, within
# SECONDS: f32_kernels_step TAG SECONDS 'NxK,...' [GREP] (M: F32_TOKENS, default 4096). Leaves
# $OUT/per_tensor_f32_kernels_TAG_<gpu>_<commit>.json (gpu: h100, h200, ... from nvidia-smi, so
# the file says which GPU timed it; only when the bench exits 0) and the step's folder packed as
# $OUT/pt_TAG.txz; the result lines matching GREP (an ERE, default: every mode) in the log.
f32_kernels_step() {
  local tag=$1 gpu rc
  gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1 | grep -oiE 'h[0-9]+' | head -1 |
        tr 'A-Z' 'a-z')
  rm -rf "$OUT/pt"
  BENCH_ARGS="--only per_tensor_f32_kernels --time-limit 0.3 --commit $C${3:+ --f32-shapes $3}${F32_TOKENS:+ --tokens $F32_TOKENS}" \
    timeout "$2" bash chapters/10_production/python/gpu_run.sh /tmp/py "$OUT/pt" bench \
    > /dev/null 2>&1
  rc=$?
  echo "f32 bench $tag rc=$rc" >> "$L"
  grep -E "^per_tensor_f32_kernels (${4:-.*})|Error|error" "$OUT/pt/bench_torch.log" 2>/dev/null |
    head -40 >> "$L"
  [[ $rc == 0 ]] && cp "$OUT/pt/bench_torch.json" \
    "$OUT/per_tensor_f32_kernels_${tag}_${gpu:-gpu}_${C:0:7}.json" 2>/dev/null
  [[ -d "$OUT/pt" ]] && tar cJf "$OUT/pt_$tag.txz" -C "$OUT" pt && rm -rf "$OUT/pt"
}
# One launch of the kernels matching KERNEL_REGEX (the third one launched: two warm-ups skipped)
# under ncu, clocks as the driver sets them, with the given sections, from EXE ARGS...; writes
# DIR/ncu_TAG_details.txt and puts the details' lines that match GREP (an ERE) in the log:
#   ncu_step DIR TAG KERNEL_REGEX 'SECTION...' GREP EXE [ARGS...]
# NCU_NAME_BASE=mangled (optional) matches KERNEL_REGEX against the mangled name, template
# arguments included (one engine's gemm_kernel from another's: GroupedBlockScaledMath).
ncu_step() {
  local dir=$1 tag=$2 kernel=$3 sections=$4 pattern=$5 ncu s args=()
  shift 5
  ncu=$(command -v ncu || ls /usr/local/cuda*/bin/ncu 2>/dev/null | head -1)
  for s in $sections; do args+=(--section "$s"); done
  mkdir -p "$dir"
  timeout 90 "$ncu" --clock-control none --launch-skip 2 --launch-count 1 \
    ${NCU_NAME_BASE:+--kernel-name-base "$NCU_NAME_BASE"} --kernel-name "regex:$kernel" "${args[@]}" -o "$dir/ncu_$tag" -f "$@" > "$dir/ncu_$tag.log" 2>&1
  echo "ncu $tag rc=$?" >> "$L"
  "$ncu" -i "$dir/ncu_$tag.ncu-rep" --page details > "$dir/ncu_${tag}_details.txt" 2>&1
  grep -E "$pattern" "$dir/ncu_${tag}_details.txt" >> "$L"
  rm -f "$dir/ncu_$tag.ncu-rep"
}
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,power.limit,driver_version --format=csv >> "$L" 2>&1
echo "bin: $C  package: $(cat /tmp/py/fp8gemm/commit.txt 2>/dev/null || echo none)" >> "$L"
