#!/usr/bin/env bash
# Session 55's seventh call (carry .gpu/ctl55.txz): can the new tests fail? The two GPU test
# binaries built from this session's test code but with the kernels' headers of 63f1a9d
# (common/engine/mx_scaled.cuh and common/engine/grouped.cuh checked out from 63f1a9d, built,
# copied, restored; binaries' commit 271b69a-dirty), running only the new cases. Predicted:
#  - "ch09 Hopper: the scale padding is never read as data\\, every kernel and path": FAILS (the
#    promoting kernels give NaN where the padding holds 0xFF, or 0xFE pairs);
#  - "ch08: a tile counter that is not zero: refused in checking mode\\, never written past": FAILS
#    (no refusal in checking mode; rows written before D from a negative counter).
# Any Hopper GPU, about 60 s.
#   pack: (cd /tmp/ctl && tar cf - bin | xz -6 -T2 > .gpu/ctl55.txz), bin/ holding the two tests
set -u
L=$OUT/call.log
mkdir -p /tmp/ctl && tar xJf .gpu/ctl55.txz -C /tmp/ctl
nvidia-smi --query-gpu=name,driver_version --format=csv >> "$L" 2>&1
echo "== ch09 control" >> "$L"
timeout 120 /tmp/ctl/bin/test_chapter_09_hopper \
  "ch09 Hopper: the scale padding is never read as data\\, every kernel and path" > "$OUT/ctl_ch09.log" 2>&1
echo "rc=$?" >> "$L"; tail -4 "$OUT/ctl_ch09.log" >> "$L"; grep -c "FAILED" "$OUT/ctl_ch09.log" >> "$L"
echo "== ch08 control" >> "$L"
timeout 120 /tmp/ctl/bin/test_chapter_08 \
  "ch08: a tile counter that is not zero: refused in checking mode\\, never written past" > "$OUT/ctl_ch08.log" 2>&1
echo "rc=$?" >> "$L"; tail -4 "$OUT/ctl_ch08.log" >> "$L"
xz -6 -f "$OUT/ctl_ch09.log" "$OUT/ctl_ch08.log"
cat "$L"
