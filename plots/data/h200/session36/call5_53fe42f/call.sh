#!/usr/bin/env bash
# Session 36, call 5: binaries .gpu/c.txz (ch08_grouped_moe of 53fe42f, the code of 79ef248).
# Does the order of the experts change the grouped forward's time? The seeded skewed groups of
# issue 10's peers in four orders (plots/data/h200/session36/group_order.py says which), same
# total work (cases.txt). The 8192-token cases with the counter kernel (what the PyTorch op runs
# there) and its static twin; the 65536-token N 7168 K 2048 case with the contiguous default.
# Each set twice, the second time with cases and kernels in reverse order.
# Predictions, written before the run: a fluid model of the 8192-token N 4096 K 7168 case
# (132 CTAs, DRAM shared by the tiles still loading their B slice; not calibrated: it puts the
# case at 500-550 us where 465 us was measured) gives `mix` 0.96-1.00x `orig`'s time; so, with the
# counter kernel: mix 0.97-1.00x, desc 0.98-1.01x (largest first also balances the end of the
# schedule), asc 1.00-1.03x; at N 7168 K 2048 (less memory-bound) all within +-1.5 %; the static
# twin moves more with order (its fixed stride cannot even out the tiles' costs); the 65536-token
# case (compute-bound in the model) within +-0.5 %.
set -u
source scripts/gpu_call.sh .gpu/c.txz || exit 1
mkdir -p "$OUT/ab"
mapfile -t CASES < plots/data/h200/session36/call5/cases.txt
S=(); L65=(); for c in "${CASES[@]}"; do case "$c" in *t8192*) S+=("$c") ;; *) L65+=("$c") ;; esac; done
R=(); for ((i = ${#S[@]} - 1; i >= 0; i--)); do R+=("${S[$i]}"); done
DYN=128x256_s4_c1x1_promoted_tma_b1_dyn
STA=128x256_s4_c1x1_promoted_tma_b1
DEF=256x128_s3_c1x2_promoted_tma_b4
run() {  # run NAME KERNELS CASES...
  local name=$1 k=$2 left
  shift 2
  left=$(seconds_left 500)
  [ "$left" -lt 60 ] && { say "$name skipped: $left s left"; return; }
  say "$name ($k), $left s left"
  timeout $((left - 10)) stdbuf -oL "$B/ch08_grouped_moe" --gpu_delay_us=50 --timing=per_launch \
    --forward-only "$@" --only='_(orig|desc|asc|mix)$' --kernels="$k" --json="$OUT/ab/$name.json" \
    > "$OUT/ab/$name.log" 2>&1
  echo "rc=$?" >> "$L"
}
run order_t8192_1 "$DYN,$STA" "${S[@]}"
run order_t8192_2 "$STA,$DYN" "${R[@]}"
run order_t65536_1 "$DEF" "${L65[@]}"
run order_t65536_2 "$DEF" "${L65[1]}" "${L65[0]}"
python3 plots/data/h200/session36/group_order.py "$OUT"/ab/order_*.json >> "$L" 2>&1
cp "$OUT"/ab/order_*.json "$OUT/" 2>/dev/null
tar cJf "$OUT/logs.txz" -C "$OUT" ab 2>/dev/null; rm -rf "$OUT/ab"
say end
cat "$L"
