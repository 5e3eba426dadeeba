"""ResNet-50's convolutions per float32 implementation (ONEFLOW_CONV_IMPL, docs/env.md), against
PyTorch, in one process: which implementation the conv policy of src/kernels/conv.cpp should pick
for which geometry (docs/decisions.md).

    .venv/bin/python benchmarks/conv_impls.py                      # forward, batch 8, 2 threads
    .venv/bin/python benchmarks/conv_impls.py --pass backward --impls dnnl,gemm --threads 1

The model's torch twin records the input shape of every convolution with forward hooks; each
distinct geometry is then timed in torch and in oneflow under each implementation (the variable
is read on every call), in alternating loops (a load spike hits every variant alike), `F.conv2d`
on the same weights; last, the whole inference forward per implementation. The table gives each
variant's median time over torch's, and how often the model calls that geometry. With --threads 1
the times are process CPU time (a busy machine's waits left out), else wall time.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)


CLOCK = {"now": time.perf_counter}


def _loop_time(fn, n):
    t = CLOCK["now"]()
    for _ in range(n):
        fn()
    return (CLOCK["now"]() - t) / n


def _impl(name, fn):
    def run():
        os.environ["ONEFLOW_CONV_IMPL"] = name
        try:
            fn()
        finally:
            os.environ["ONEFLOW_CONV_IMPL"] = "auto"
    return run


def _compare(variants, reps, target):
    """{name: median seconds per call}, the variants timed in alternating loops of ~target s."""
    counts = {}
    for name, fn in variants.items():
        fn()
        counts[name] = max(1, int(target / max(_loop_time(fn, 1), 1e-6)))
    times = {name: [] for name in variants}
    for _ in range(reps):
        for name, fn in variants.items():
            times[name].append(_loop_time(fn, counts[name]))
    return {name: statistics.median(ts) for name, ts in times.items()}


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--impls", default="dnnl,dnnl_plain,gemm")
    p.add_argument("--pass", dest="pass_", choices=("forward", "backward"), default="forward")
    p.add_argument("--reps", type=int, default=3, help="alternating loops per variant")
    p.add_argument("--target", type=float, default=0.1, help="seconds per loop")
    p.add_argument("--batch", type=int, default=8)
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--no-model", action="store_true", help="skip the whole-model row")
    p.add_argument("--model-only", action="store_true", help="only the whole-model row (forward)")
    args = p.parse_args()

    import numpy as np
    import oneflow as flow
    import torch

    from models import MODELS

    flow.set_num_threads(args.threads)
    torch.set_num_threads(args.threads)
    if args.threads == 1:
        CLOCK["now"] = time.process_time
    impls = args.impls.split(",")
    module = MODELS["resnet50"]
    cfg = dict(module.SIZES["full"], batch=args.batch)
    torch.manual_seed(0)
    model = module.build(torch, cfg).eval()
    seen = {}

    def hook(conv, inputs, _):
        key = (tuple(inputs[0].shape), tuple(conv.weight.shape), conv.stride, conv.padding)
        seen[key] = seen.get(key, 0) + 1

    handles = [m.register_forward_hook(hook) for m in model.modules() if isinstance(m, torch.nn.Conv2d)]
    x = torch.randn(cfg["batch"], 3, cfg["hw"], cfg["hw"])
    with torch.no_grad():
        model(x)
    for h in handles:
        h.remove()
    rng = np.random.default_rng(0)
    backward = args.pass_ == "backward"
    print(f"ResNet-50 convolutions, {args.pass_}, batch {args.batch}, {args.threads} threads, "
          f"{args.reps} alternating loops: time / torch's time")
    print("| geometry | calls | torch ms | " + " | ".join(impls) + " |")
    print("|---|---|---|" + "---|" * len(impls))
    total = {name: 0.0 for name in ["torch"] + impls}
    for (xs, ws, stride, pad), count in ({} if args.model_only else seen).items():
        xn = rng.standard_normal(xs).astype(np.float32)
        wn = (rng.standard_normal(ws) / np.sqrt(np.prod(ws[1:]))).astype(np.float32)
        tx, tw = torch.from_numpy(xn).requires_grad_(backward), torch.from_numpy(wn).requires_grad_(backward)
        fx, fw = flow.tensor(xn, requires_grad=backward), flow.tensor(wn, requires_grad=backward)
        tconv = lambda: torch.nn.functional.conv2d(tx, tw, stride=stride, padding=pad)  # noqa: E731
        fconv = lambda: flow.nn.functional.conv2d(fx, fw, stride=stride, padding=pad)  # noqa: E731
        if backward:
            tg, fg = torch.ones_like(tconv()), flow.ones_like(fconv())
            f_torch = lambda: torch.autograd.grad(tconv(), (tx, tw), tg)  # noqa: E731
            f_flow = lambda: flow.autograd.grad(fconv(), (fx, fw), fg)  # noqa: E731
        else:
            def f_torch():
                with torch.no_grad():
                    tconv()

            def f_flow():
                with flow.no_grad():
                    fconv()
        variants = {"torch": f_torch}
        variants.update({i: _impl(i, f_flow) for i in impls})
        t = _compare(variants, args.reps, args.target)
        for name in total:
            total[name] += count * t[name]
        cells = [f"{t[i] / t['torch']:.2f}x" for i in impls]
        print(f"| x{list(xs)} w{list(ws)} s{stride[0]} p{pad[0]} | {count} | {t['torch'] * 1e3:.2f} | "
              + " | ".join(cells) + " |", flush=True)
    if not args.model_only:
        cells = [f"{total[i] / total['torch']:.2f}x" for i in impls]
        print(f"| all convolutions (sum of calls x time) | | {total['torch'] * 1e3:.1f} | " + " | ".join(cells) + " |")
    if backward or args.no_model:
        return
    fmodel = module.build(flow, cfg).eval()
    fmodel.load_state_dict({k: v.detach().numpy() for k, v in model.state_dict().items()})
    fx = flow.tensor(x.numpy())

    def m_torch():
        with torch.no_grad():
            model(x)

    def m_flow():
        with flow.no_grad():
            fmodel(fx)
    variants = {"torch": m_torch}
    variants.update({i: _impl(i, m_flow) for i in impls + ["auto"]})
    t = _compare(variants, args.reps, 5 * args.target)
    print("whole inference forward, time / torch's: torch " + f"{t['torch'] * 1e3:.1f} ms; "
          + ", ".join(f"{i} {t[i] / t['torch']:.2f}x" for i in impls + ["auto"]))


if __name__ == "__main__":
    main()
