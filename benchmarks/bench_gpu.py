"""GPU benchmarks of issue 13: oneflow against PyTorch on the same GPU, in one run.

    python benchmarks/bench_gpu.py                 # every case on cuda
    python benchmarks/bench_gpu.py add matmul      # cases whose name contains these
    python benchmarks/bench_gpu.py --device cpu --quick   # the script itself, on small shapes

Each case builds the same inputs/model with either library (`L` is oneflow or torch) and times
the statement with the device synchronised around it: warm-up calls, then the median of repeats.
The ratio is torch time / oneflow time (higher is better, 1.0 = parity). Pointwise rows also give
oneflow's bandwidth as a share of a device-to-device copy measured through PyTorch.
Prints a markdown table (benchmarks/RESULTS-GPU.md keeps the last one measured).
"""

import argparse
import statistics
import time

import numpy as np
import torch

import oneflow as flow

LIBS = {"oneflow": flow, "torch": torch}


def _sync(L, dev):
    if dev.startswith("cuda"):
        L.cuda.synchronize()


def _resnet18(L, classes=1000):
    nn = L.nn

    class Block(nn.Module):
        def __init__(self, cin, cout, stride):
            super().__init__()
            self.c1 = nn.Conv2d(cin, cout, 3, stride, 1, bias=False)
            self.b1 = nn.BatchNorm2d(cout)
            self.c2 = nn.Conv2d(cout, cout, 3, 1, 1, bias=False)
            self.b2 = nn.BatchNorm2d(cout)
            self.down = None
            if stride != 1 or cin != cout:
                self.down = nn.Sequential(nn.Conv2d(cin, cout, 1, stride, bias=False), nn.BatchNorm2d(cout))

        def forward(self, x):
            y = self.b2(self.c2(self.b1(self.c1(x)).relu()))
            return (y + (x if self.down is None else self.down(x))).relu()

    layers = [nn.Conv2d(3, 64, 7, 2, 3, bias=False), nn.BatchNorm2d(64), nn.ReLU(), nn.MaxPool2d(3, 2, 1)]
    cin = 64
    for cout, stride in ((64, 1), (128, 2), (256, 2), (512, 2)):
        layers += [Block(cin, cout, stride), Block(cout, cout, 1)]
        cin = cout
    layers += [nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(512, classes)]
    return nn.Sequential(*layers)


def _train_step(L, model, x, y):
    opt = L.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)

    def step():
        opt.zero_grad()
        L.nn.functional.cross_entropy(model(x), y).backward()
        opt.step()
    return step


def _cases(dev, quick):
    q = quick
    n_add = 1 << 20 if q else 100_000_000
    mm = 256 if q else 4096
    sm = 512 if q else 8192
    bs, hw = (4, 32) if q else (128, 224)
    tb, tl, td = (2, 16, 64) if q else (32, 512, 1024)

    def rand(L, *shape, dtype=None):
        return L.randn(*shape, device=dev, dtype=dtype or L.float32)

    def matmul(L, dtype, tf32):
        a, b = rand(L, mm, mm, dtype=getattr(L, dtype)), rand(L, mm, mm, dtype=getattr(L, dtype))
        if dev.startswith("cuda"):
            L.backends.cuda.matmul.allow_tf32 = tf32
        return lambda: L.matmul(a, b)

    def conv(L, n, c, h, k, cout, stride):
        x = rand(L, n, c, h, h).requires_grad_()
        m = L.nn.Conv2d(c, cout, k, stride, k // 2, bias=False).to(dev)
        return lambda: m(x).sum().backward()

    def resnet(L):
        L.manual_seed(0)
        model = _resnet18(L).to(dev)
        return _train_step(L, model, rand(L, bs, 3, hw, hw), L.randint(0, 1000, (bs,), device=dev))

    def transformer(L):
        L.manual_seed(0)
        layer = L.nn.TransformerEncoderLayer(td, 16 if td >= 256 else 4, 4 * td, dropout=0.1, batch_first=True).to(dev)
        x = rand(L, tb, tl, td)
        opt = L.optim.AdamW(layer.parameters(), lr=1e-4)

        def step():
            opt.zero_grad()
            layer(x).float().pow(2).mean().backward()
            opt.step()
        return step

    # ResNet-18's pieces at its own shapes (batch bs): forward + backward with a preset output
    # gradient, so that a slow train step can be traced to a layer kind.
    def fwd_bwd(L, module, shape, input_grad=True):
        m = module(L).to(dev)
        x = rand(L, bs, *shape).requires_grad_(input_grad)
        g = L.ones_like(m(x))
        return lambda: m(x).backward(g)

    def add_relu(L):
        a, b = rand(L, bs, 64, hw // 4, hw // 4).requires_grad_(), rand(L, bs, 64, hw // 4, hw // 4).requires_grad_()
        g = L.ones_like(a)
        return lambda: (a + b).relu().backward(g)

    def head(L):
        nn = L.nn
        m = nn.Sequential(nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(512, 1000)).to(dev)
        x, y = rand(L, bs, 512, hw // 32, hw // 32).requires_grad_(), L.randint(0, 1000, (bs,), device=dev)
        return lambda: L.nn.functional.cross_entropy(m(x), y).backward()

    def sgd(L):
        L.manual_seed(0)
        params = list(_resnet18(L).to(dev).parameters())
        for q_ in params:
            q_.grad = L.randn_like(q_)
        return L.optim.SGD(params, lr=0.01, momentum=0.9).step

    def resnet_part(L, what):
        L.manual_seed(0)
        model = _resnet18(L).to(dev)
        x, y = rand(L, bs, 3, hw, hw), L.randint(0, 1000, (bs,), device=dev)
        if what == "forward":
            def fwd():
                with L.no_grad():
                    model(x)
            return fwd
        return lambda: L.nn.functional.cross_entropy(model(x), y).backward()

    h2, h4 = hw // 2, hw // 4
    parts = {
        f"rn18 part: conv 7x7/2 3->64 {hw}^2 (weight grad)":
            lambda L: fwd_bwd(L, lambda L: L.nn.Conv2d(3, 64, 7, 2, 3, bias=False), (3, hw, hw), False),
        f"rn18 part: batch_norm 64x{h2}^2": lambda L: fwd_bwd(L, lambda L: L.nn.BatchNorm2d(64), (64, h2, h2)),
        f"rn18 part: relu 64x{h2}^2": lambda L: fwd_bwd(L, lambda L: L.nn.ReLU(), (64, h2, h2)),
        f"rn18 part: max_pool 3x3/2 64x{h2}^2": lambda L: fwd_bwd(L, lambda L: L.nn.MaxPool2d(3, 2, 1), (64, h2, h2)),
        f"rn18 part: conv 3x3 64->64 {h4}^2":
            lambda L: fwd_bwd(L, lambda L: L.nn.Conv2d(64, 64, 3, 1, 1, bias=False), (64, h4, h4)),
        f"rn18 part: conv 3x3/2 64->128 {h4}^2":
            lambda L: fwd_bwd(L, lambda L: L.nn.Conv2d(64, 128, 3, 2, 1, bias=False), (64, h4, h4)),
        f"rn18 part: conv 1x1/2 64->128 {h4}^2":
            lambda L: fwd_bwd(L, lambda L: L.nn.Conv2d(64, 128, 1, 2, bias=False), (64, h4, h4)),
        f"rn18 part: batch_norm 256x{hw // 16}^2":
            lambda L: fwd_bwd(L, lambda L: L.nn.BatchNorm2d(256), (256, hw // 16, hw // 16)),
        f"rn18 part: add + relu 64x{h4}^2": add_relu,
        "rn18 part: avg_pool + linear + cross_entropy": head,
        "rn18 part: SGD momentum step (all parameters)": sgd,
        "rn18 part: forward (no_grad)": lambda L: resnet_part(L, "forward"),
        "rn18 part: forward + backward": lambda L: resnet_part(L, "backward"),
    }

    def tiny(L):
        x = rand(L, 1)
        return lambda: x + x

    def add(L):
        a, b = rand(L, n_add), rand(L, n_add)
        return lambda: a + b

    def permute_copy(L):  # attention's head split: (b, s, h, d) -> (b, h, s, d), made contiguous
        x = rand(L, tb, tl, 16, td // 16)
        return lambda: x.permute(0, 2, 1, 3).contiguous()

    def dropout(L):  # forward + backward, at the feed-forward hidden's shape
        x = rand(L, tb, tl, 4 * td).requires_grad_()
        g = L.ones_like(x)
        return lambda: L.nn.functional.dropout(x, 0.1, True).backward(g)

    def strided_add(L):
        a, b = rand(L, tb * tl, td), rand(L, td, tb * tl)
        return lambda: a + b.t()

    n_tok = tb * tl * td
    return {
        "tiny op x + x (launch-bound)": (tiny, None),
        f"permute copy {tb}x{tl}x16x{td // 16}": (permute_copy, 2 * 4 * n_tok),
        f"dropout fwd+bwd {tb}x{tl}x{4 * td}": (dropout, None),
        f"strided add {tb * tl}x{td} + ({td}x{tb * tl}).t()": (strided_add, 3 * 4 * n_tok),
        f"add {n_add:,} float32": (add, 3 * 4 * n_add),
        f"matmul {mm}^3 fp32": (lambda L: matmul(L, "float32", False), None),
        f"matmul {mm}^3 tf32": (lambda L: matmul(L, "float32", True), None),
        f"matmul {mm}^3 bf16": (lambda L: matmul(L, "bfloat16", False), None),
        f"softmax {sm}x{sm}": (lambda L: (lambda x: lambda: L.softmax(x, dim=-1))(rand(L, sm, sm)), None),
        f"layer_norm {sm}x{sm}": (lambda L: (lambda x: lambda: L.nn.functional.layer_norm(x, (sm,)))(rand(L, sm, sm)), None),
        "conv2d 3x3 64->64 56^2 fwd+bwd": (lambda L: conv(L, 4 if q else 32, 64, 14 if q else 56, 3, 64, 1), None),
        "conv2d 1x1 256->64 56^2 fwd+bwd": (lambda L: conv(L, 4 if q else 32, 256, 14 if q else 56, 1, 64, 1), None),
        "conv2d 3x3 128->128 28^2 fwd+bwd": (lambda L: conv(L, 4 if q else 32, 128, 7 if q else 28, 3, 128, 1), None),
        f"resnet18 train step b{bs} {hw}^2": (resnet, None),
        f"transformer encoder step b{tb} s{tl} d{td}": (transformer, None),
        **{k: (v, None) for k, v in parts.items()},
    }


def _time(make, L, dev, repeats, min_time=0.2):
    f = make(L)
    for _ in range(3):
        f()
    _sync(L, dev)
    times = []
    for _ in range(repeats):
        n, t0 = 0, time.perf_counter()
        while True:
            f()
            n += 1
            _sync(L, dev)
            el = time.perf_counter() - t0
            if el >= min_time / repeats or n >= 1000:
                break
        times.append(el / n)
    return statistics.median(times)


def _copy_bandwidth(dev, n):
    a = torch.randn(n, device=dev)
    b = torch.empty_like(a)
    t = _time(lambda L: (lambda: b.copy_(a)), torch, dev, 5)
    return 2 * 4 * n / t


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("filters", nargs="*")
    p.add_argument("--device", default="cuda")
    p.add_argument("--quick", action="store_true", help="small shapes (checks the script)")
    p.add_argument("--repeats", type=int, default=5)
    args = p.parse_args()
    dev = args.device
    cases = _cases(dev, args.quick)
    name = torch.cuda.get_device_name() if dev.startswith("cuda") else "cpu"
    print(f"device: {name}; oneflow vs torch {torch.__version__}; {time.strftime('%Y-%m-%d')}\n")
    print("| case | oneflow | torch | ratio (torch/oneflow) | note |")
    print("|---|---|---|---|---|")
    bws = {}  # copy bandwidth at each row's traffic (small copies do not reach the peak)
    for case, (make, nbytes) in cases.items():
        if args.filters and not any(f in case for f in args.filters):
            continue
        row = {}
        for lib, L in LIBS.items():
            try:
                row[lib] = _time(make, L, dev, args.repeats)
            except Exception as e:  # noqa: BLE001 - a missing kernel is a row, not a crash
                row[lib] = f"{type(e).__name__}: {str(e)[:60]}"
        note = ""
        if nbytes and isinstance(row["oneflow"], float):
            bw = bws[nbytes] = bws.get(nbytes) or _copy_bandwidth(dev, nbytes // 8)  # same bytes moved
            note = f"{nbytes / row['oneflow'] / 1e9:.0f} GB/s = {100 * nbytes / row['oneflow'] / bw:.0f}% of copy"
        fmt = lambda v: f"{v * 1e3:.3f} ms" if isinstance(v, float) else v  # noqa: E731
        ratio = (f"{row['torch'] / row['oneflow']:.2f}x"
                 if all(isinstance(row[k], float) for k in row) else "-")
        print(f"| {case} | {fmt(row['oneflow'])} | {fmt(row['torch'])} | {ratio} | {note} |", flush=True)


if __name__ == "__main__":
    main()
