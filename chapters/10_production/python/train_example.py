#!/usr/bin/env python3
"""Training with fp8gemm.nn.Fp8Linear against bf16 torch.nn.Linear: the same MLP, the same seed,
the same data, the same optimizer; only the linear layers differ.

Task (synthetic regression): a fixed random "teacher" MLP (1024 -> 1024 -> 1024, tanh) maps
x ~ N(0, 1) to targets; the student MLP (1024 -> 4096 -> 4096 -> 1024, GELU) learns it with MSE
loss, AdamW (lr 1e-3, 20 warm-up steps, cosine decay), batches of 2048 fresh samples per step,
float32 master weights. The bf16 student runs its linear layers under torch.autocast(bfloat16);
the FP8 student's Fp8Linear layers quantise inside (1 x 128 activations, 128 x 128 weights, FP8
forward, dgrad and wgrad, FP32 promotion) and return bf16, like autocast's layers. Both evaluate
on one held-out batch every --eval-every steps.

Writes the two loss curves with the GPU, versions and commit to JSON, and plots them (PNG):

    PYTHONPATH=<staged dir> python3 train_example.py --out-json ch10_torch_train.json \\
        --out-png ch10_torch_train.png
"""

from __future__ import annotations

import argparse
import datetime
import json
import math
import os
import platform
import subprocess
import sys
import time

import torch

import fp8gemm
from fp8gemm.nn import Fp8Linear

D_IN, HIDDEN, D_OUT, TEACHER_HIDDEN = 1024, 4096, 1024, 1024


def make_student(fp8: bool, seed: int) -> torch.nn.Sequential:
    torch.manual_seed(seed)
    dims = [(D_IN, HIDDEN), (HIDDEN, HIDDEN), (HIDDEN, D_OUT)]
    layers = []
    for i, (k, n) in enumerate(dims):
        lin = torch.nn.Linear(k, n, device="cuda", dtype=torch.float32)  # the same init for both
        layers.append(Fp8Linear.from_linear(lin) if fp8 else lin)
        if i < len(dims) - 1:
            layers.append(torch.nn.GELU())
    return torch.nn.Sequential(*layers)


class Teacher:
    def __init__(self, seed: int):
        g = torch.Generator(device="cuda").manual_seed(seed)
        self.w1 = torch.randn(TEACHER_HIDDEN, D_IN, generator=g, device="cuda") / math.sqrt(D_IN)
        self.w2 = torch.randn(D_OUT, TEACHER_HIDDEN, generator=g, device="cuda") / math.sqrt(
            TEACHER_HIDDEN)

    def __call__(self, x):
        return torch.tanh(x @ self.w1.t()) @ self.w2.t()


def lr_at(step: int, steps: int, base: float, warmup: int) -> float:
    if step < warmup:
        return base * (step + 1) / warmup
    p = (step - warmup) / max(1, steps - warmup)
    return base * 0.5 * (1 + math.cos(math.pi * p))


def train(fp8: bool, args) -> dict:
    model = make_student(fp8, args.seed)
    teacher = Teacher(args.seed + 1)
    opt = torch.optim.AdamW(model.parameters(), lr=args.lr, weight_decay=0.0)
    data = torch.Generator(device="cuda").manual_seed(args.seed + 2)  # the same stream for both
    x_eval = torch.randn(args.batch, D_IN, generator=torch.Generator(device="cuda").manual_seed(
        args.seed + 3), device="cuda")
    y_eval = teacher(x_eval)
    losses = torch.empty(args.steps, device="cuda")
    evals = []

    def forward(x):
        if fp8:
            return model(x)
        with torch.autocast("cuda", dtype=torch.bfloat16):
            return model(x)

    torch.cuda.synchronize()
    t0 = time.time()
    for step in range(args.steps):
        for group in opt.param_groups:
            group["lr"] = lr_at(step, args.steps, args.lr, args.warmup)
        x = torch.randn(args.batch, D_IN, generator=data, device="cuda")
        loss = torch.nn.functional.mse_loss(forward(x).float(), teacher(x))
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        losses[step] = loss.detach()
        if step % args.eval_every == 0 or step == args.steps - 1:
            with torch.no_grad():
                e = torch.nn.functional.mse_loss(forward(x_eval).float(), y_eval)
            evals.append((step, e))
    torch.cuda.synchronize()
    wall = time.time() - t0
    train_loss = losses.tolist()
    eval_loss = [(s, float(e)) for s, e in evals]
    assert all(math.isfinite(v) for v in train_loss), "a non-finite loss"
    return {"train_loss": train_loss, "eval_steps": [s for s, _ in eval_loss],
            "eval_loss": [v for _, v in eval_loss], "wall_s": wall,
            "ms_per_step": wall / args.steps * 1e3}


def _commit() -> str:
    staged = os.path.join(os.path.dirname(fp8gemm.__file__), "commit.txt")
    if os.path.exists(staged):
        return open(staged).read().strip()
    here = os.path.dirname(os.path.abspath(__file__))
    r = subprocess.run(["git", "-C", here, "rev-parse", "HEAD"], capture_output=True, text=True)
    return r.stdout.strip() or "unknown"


def plot(result: dict, path: str) -> None:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, ax = plt.subplots(figsize=(8, 4.8))
    colors = {"bf16": "#1f77b4", "fp8": "#d62728"}
    labels = {"bf16": "bf16 torch.nn.Linear (autocast)", "fp8": "fp8gemm.nn.Fp8Linear (FP8 e4m3)"}
    for k in ("bf16", "fp8"):
        r = result[k]
        ax.plot(range(len(r["train_loss"])), r["train_loss"], color=colors[k], alpha=0.35, lw=0.8)
        ax.plot(r["eval_steps"], r["eval_loss"], "o-", color=colors[k], ms=3,
                label=f"{labels[k]}: held-out {r['eval_loss'][-1]:.4f}")
    ax.set_yscale("log")
    ax.set_xlabel("step")
    ax.set_ylabel("MSE loss (thin: training batch, dots: held-out batch)")
    c = result["context"]
    ax.set_title(f"MLP {D_IN}-{HIDDEN}-{HIDDEN}-{D_OUT}, batch {c['batch']}, same seed and data\n"
                 f"{c['gpu']}, torch {c['torch_version']}, fp8gemm {c['git_commit'][:10]}",
                 fontsize=9)
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=120)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--steps", type=int, default=300)
    ap.add_argument("--batch", type=int, default=2048)
    ap.add_argument("--lr", type=float, default=1e-3)
    ap.add_argument("--warmup", type=int, default=20)
    ap.add_argument("--eval-every", type=int, default=10)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out-json", default="ch10_torch_train.json")
    ap.add_argument("--out-png", default="ch10_torch_train.png")
    args = ap.parse_args()
    if not fp8gemm.available():
        print(f"train_example: {fp8gemm.unavailable_reason()}", file=sys.stderr)
        return 2
    if not torch.cuda.is_available():
        print("train_example: no CUDA GPU", file=sys.stderr)
        return 2
    p = torch.cuda.get_device_properties(0)
    result = {"context": {
        "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "executable": "chapters/10_production/python/train_example.py",
        "command_line": " ".join(sys.argv[1:]), "host_name": platform.node(),
        "gpu": p.name, "gpu_sm_count": p.multi_processor_count,
        "torch_version": torch.__version__, "torch_cuda_version": torch.version.cuda,
        "fp8gemm_library_version": fp8gemm.ops.library_version(), "git_commit": _commit(),
        "model": f"MLP {D_IN}-{HIDDEN}-{HIDDEN}-{D_OUT} GELU, float32 master weights",
        "task": f"regression on a fixed random tanh teacher {D_IN}-{TEACHER_HIDDEN}-{D_OUT}",
        "optimizer": f"AdamW lr {args.lr}, {args.warmup} warm-up steps, cosine decay",
        "steps": args.steps, "batch": args.batch, "seed": args.seed}}
    for k in ("bf16", "fp8"):
        result[k] = train(k == "fp8", args)
        r = result[k]
        print(f"{k}: final train loss {r['train_loss'][-1]:.5f}, held-out {r['eval_loss'][-1]:.5f}, "
              f"{r['ms_per_step']:.2f} ms/step", flush=True)
    b, f = result["bf16"]["eval_loss"][-1], result["fp8"]["eval_loss"][-1]
    result["final"] = {"bf16_eval_loss": b, "fp8_eval_loss": f, "fp8_over_bf16": f / b}
    with open(args.out_json, "w") as fh:
        json.dump(result, fh, indent=1)
    plot(result, args.out_png)
    print(f"fp8 / bf16 held-out loss: {f / b:.3f}; wrote {args.out_json}, {args.out_png}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
