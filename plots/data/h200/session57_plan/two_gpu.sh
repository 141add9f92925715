#!/usr/bin/env bash
# Session 57's plan item 3, on a machine with two GPUs (kind nvidia-h100-x2 or nvidia-h200-x2,
# when `status` lists one). Carry .gpu/t57.txz and .gpu/py57.txz, packed at the commit to run:
#   cmake --build build -j2 --target test_library_threads_gpu test_reliability fp8gemm_torch
#   (cd build && tar cf - bin/commit.txt bin/gpu_tests.txt bin/libbenchmark.so.1.7.1 \
#      bin/libbenchmark.so.1debian bin/test_library_threads_gpu bin/test_reliability \
#      | xz -9 -T2 > ../.gpu/t57.txz)
#   rm -rf /tmp/py10 && bash chapters/10_production/python/stage.sh build /tmp/py10/py
#   (cd /tmp/py10 && tar cf - py | xz -6 -T2 > "$OLDPWD/.gpu/py57.txz")
# About 120 s. scripts/gpu_loop.sh runs each test binary whole, so with two GPUs their
# [other-device] cases run (with one they print "only 1 GPU: nothing to check"):
#  - test_library_threads_gpu: every kind of plan built on device 0, run() and rebind() with
#    device 1 current refused ("this plan was built on device 0, but device 1 is current"),
#    nothing launched on device 1, then every plan run on device 0 (session 56, never run);
#  - test_reliability: chapters 1-6 refuse operands on another device;
#  - the PyTorch tests: test_misuse_messages' b on cuda:1 case.
# Predicted: pass, and the log shows no "only 1 GPU".
set -u
source scripts/gpu_call.sh .gpu/t57.txz .gpu/py57.txz || exit 1
nvidia-smi -L >> "$L"
say "test_library_threads_gpu, test_reliability (their [other-device] cases with two GPUs)"
gpu_tests_step '^(test_library_threads_gpu|test_reliability)$' 150
grep -h -A8 "<failure" "$OUT"/gl/tests/*.xml 2>/dev/null | head -40 >> "$L"
echo "lines saying only 1 GPU: $(grep -c 'only 1 GPU' "$OUT/gl/gpu_loop.log")" >> "$L"
tar cJf "$OUT/gl_a.txz" -C "$OUT" gl && rm -rf "$OUT/gl"
rm -f "$OUT"/gpu_tests_*.txt
say "PyTorch tests"
torch_tests_step 150
say end
cat "$L"
