#!/usr/bin/env bash
# CPU check of scripts/gpu_loop.sh's step ch08 (tests/chapter_08.cmake runs it as
# ch08_cases_match_peers): the step turns bench/peers_moe.py's seeded skewed groups into --case
# arguments and runs ch08_grouped_moe. Here the executable is wrapped so that it only lists the
# cases it would run (--list-cases: no GPU needed), and those must be exactly the peers' forward
# cases (balanced, skewed, masked) by name, so that our JSON and the peers' line up by
# "<implementation>/<case>"; the skewed ones must also have the peers' total rows.
#
#   bash tools/check_ch08_step.sh <source dir> <path of ch08_grouped_moe> <scratch dir>
set -euo pipefail
src=$1
exe=$2
work=$3
rm -rf "$work"
mkdir -p "$work/bin"
: >"$work/bin/gpu_tests.txt"
printf '#!/usr/bin/env bash\nexec "%s" --list-cases "$@"\n' "$exe" >"$work/bin/ch08_grouped_moe"
chmod +x "$work/bin/ch08_grouped_moe"
cd "$src"
if ! STEPS=ch08 BIN="$work/bin" bash scripts/gpu_loop.sh "$work/out" >/dev/null 2>&1; then
  echo "scripts/gpu_loop.sh STEPS=ch08 failed:"
  cat "$work/out/summary.txt"
  exit 1
fi
# Ours: "<name> <layout> G=<G> rows=<rows> N=<N> K=<K>" lines of --list-cases in the step's log.
grep -E '^[a-z]+_[A-Za-z0-9_]+ (contiguous|masked) G=' "$work/out/gpu_loop.log" |
  awk '{ print $1 }' | sort >"$work/ours.txt"
grep -E '^skew_[A-Za-z0-9_]+ contiguous G=' "$work/out/gpu_loop.log" |
  awk '{ sub(/^rows=/, "", $4); print $1, $4 }' | sort >"$work/ours_skew_rows.txt"
# The peers': their dry run's case lines ("  <name> <kind> G ..."), the forward kinds only.
python3 bench/peers_moe.py --dry-run >"$work/peers_dry.txt"
awk '$2 == "balanced" || $2 == "skewed" || $2 == "masked" { print $1 }' "$work/peers_dry.txt" |
  sort >"$work/peers.txt"
python3 -c 'import json, sys
for w in json.load(open(sys.argv[1]))["skewed"]:
    for n, k in w["gemms_nk"]:
        print("%s_n%d_k%d %d" % (w["name"], n, k, w["total_rows"]))' "$work/out/json/moe_groups_ch08.json" |
  sort >"$work/peers_skew_rows.txt"
status=0
if [ ! -s "$work/peers.txt" ] || ! grep -q '^skew_' "$work/peers.txt"; then
  echo "bench/peers_moe.py --dry-run listed no skewed case: the check would be vacuous"
  status=1
fi
if ! diff -u "$work/peers.txt" "$work/ours.txt"; then
  echo "ch08_grouped_moe's cases (+) differ from bench/peers_moe.py's (-)"
  status=1
fi
if ! diff -u "$work/peers_skew_rows.txt" "$work/ours_skew_rows.txt"; then
  echo "the skewed cases' total rows differ (+ ours, - the peers' groups file)"
  status=1
fi
[ $status -eq 0 ] && echo "ch08 step: $(wc -l <"$work/ours.txt") cases, the same names as bench/peers_moe.py"
exit $status
