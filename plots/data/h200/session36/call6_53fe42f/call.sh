#!/usr/bin/env bash
# Session 36, call 6: the PyTorch package .gpu/py.txz (staged from the build of 53fe42f, the code
# of 79ef248; no grouped kernel changed since b8164d1), DeepGEMM 2.6.1 built from .peer/.
# Issue 10's peers in one process, interleaved, as session 35's call 7 ran them (one run then):
# a second run, to see whether its 11 of 20 holds. Predicted: every ratio within +-2 % of call 7's,
# masked_g1x1024_n7168_k2048 at 1.06-1.08x DeepGEMM (1.074x then), so 11 of 20 again.
set -u
source scripts/gpu_call.sh .gpu/c.txz .gpu/py.txz || exit 1
LEFT=$(seconds_left 480)
say "peers_moe (DeepGEMM built first), interleaved, $LEFT s left"
peers_moe_step "$LEFT"
tar cJf "$OUT/p.txz" -C "$OUT" p 2>/dev/null; rm -rf "$OUT/p"
say end
cat "$L"
