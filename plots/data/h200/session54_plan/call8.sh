#!/usr/bin/env bash
# Session 54's eighth call (carry .gpu/t54.txz (a8ff964) .gpu/py54c.txz (staged after the review of
# the PyTorch re-quantising ops: special cases each in a group of their own and asserted, an
# empty operand, a ragged 3-block group)), any Hopper GPU: call7.sh with that package. Prediction:
# "124 passed, 2 skipped"; on an H200 call7.sh's bench steps too.
PKG=.gpu/py54c.txz exec bash "$(dirname "$0")/call7.sh"
