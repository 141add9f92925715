#!/usr/bin/env bash
# Session 63, one call for a scarce machine (carry .gpu/t60d.txz .gpu/py60d.txz, packed on the
# branch s63-f32-decode by session60_plan/pack.sh d): the branch's check first
# (session63_plan/decode_f32.sh, its predictions in its header), then with what is left of TOTAL
# seconds session 61's chapter 9 groups (session61_plan/ch09_groups.sh, its predictions in its
# header) from the same pack: the branch changes only the library's FP32-output choice at
# M <= 128, not chapter 9's executable nor the FP32 kernels that ch09_groups.sh times by name on
# an H200 at M = 4096. At most 8 files come back: the call log, the JSON and the tests' summary
# stay; the archives go into one tar.
set -u
T=$(date +%s)
TOTAL=${TOTAL:-570}
PLAN=${PLAN:-330} bash plots/data/h200/session63_plan/decode_f32.sh > /dev/null 2>&1
left=$((TOTAL - ($(date +%s) - T)))
if [[ $left -gt 100 ]]; then
  sed 's#\.gpu/t60c\.txz \.gpu/py60c\.txz#.gpu/t60d.txz .gpu/py60d.txz#' \
    plots/data/h200/session61_plan/ch09_groups.sh > /tmp/ch09_groups_d.sh
  PLAN=$((left - 15)) SHORT=${SHORT:-0} bash /tmp/ch09_groups_d.sh > /dev/null 2>&1
else
  echo "== ch09 groups skipped: $left s left of $TOTAL" >> "$OUT/call.log"
fi
(cd "$OUT" && ls *.txz > /dev/null 2>&1 && tar cf archives.tar *.txz && rm -f *.txz)
cat "$OUT/call.log"
