"""Training benchmarks: oneflow against PyTorch in the same process, same thread count.

    .venv/bin/python benchmarks/bench_train.py             # everything (a few minutes)
    .venv/bin/python benchmarks/bench_train.py --only optim --params 10000000

Rows (time per call; ratio = flow / torch, lower is better, 1.0 = parity):
  * step/cnn:    one training step (forward, loss, backward, AdamW step) of the example's CNN,
                 batch 64;
  * step/mlp:    the same for an MLP 784-512-256-10, batch 128;
  * epoch/fmnist: seconds per Fashion-MNIST epoch through each library's own DataLoader and
                 transforms (timed on --epoch-batches batches of 128 and scaled to 468, or a
                 whole epoch with --full-epoch);
  * optim/<name>: one optimizer step over --params parameters (ten equal tensors), against
                 torch.optim's fastest CPU variant (single-tensor, foreach or fused).
Each number is the median of several timed repeats after a warm-up.
"""
import argparse
import os
import statistics
import sys
import time

import numpy as np
import torch

import oneflow as flow

HERE = os.path.dirname(os.path.abspath(__file__))
DATA = "/usr/share/datasets/fashion-mnist"


def median_time(fn, repeats=5, number=None, target=0.5):
    fn()
    fn()
    if number is None:
        t0 = time.perf_counter()
        fn()
        number = max(1, int(target / max(time.perf_counter() - t0, 1e-6)))
    samples = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        for _ in range(number):
            fn()
        samples.append((time.perf_counter() - t0) / number)
    return statistics.median(samples)


def report(name, tf, tt, note=""):
    ratio = tf / tt if tf and tt else float("nan")
    print(f"{name:<22} {tf * 1e3:10.2f} ms {tt * 1e3:10.2f} ms {ratio:7.2f}x  {note}", flush=True)
    return ratio


# ---------------------------------------------------------------------------------------------
# Models (identical definitions for both libraries)


def cnn(lib):
    nn = lib.nn
    return nn.Sequential(
        nn.Conv2d(1, 32, 3, padding=1), nn.BatchNorm2d(32), nn.ReLU(), nn.MaxPool2d(2),
        nn.Conv2d(32, 64, 3, padding=1), nn.BatchNorm2d(64), nn.ReLU(), nn.MaxPool2d(2),
        nn.Flatten(), nn.Linear(64 * 7 * 7, 128), nn.ReLU(), nn.Dropout(0.3), nn.Linear(128, 10))


def mlp(lib):
    nn = lib.nn
    return nn.Sequential(nn.Flatten(), nn.Linear(784, 512), nn.ReLU(), nn.Linear(512, 256),
                         nn.ReLU(), nn.Linear(256, 10))


def train_step(lib, model, opt, loss_fn, x, y):
    def step():
        loss = loss_fn(model(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
    return step


def bench_steps():
    rng = np.random.default_rng(0)
    for name, make, batch in (("step/cnn", cnn, 64), ("step/mlp", mlp, 128)):
        x = rng.standard_normal((batch, 1, 28, 28)).astype(np.float32)
        y = rng.integers(0, 10, batch)
        times = []
        for lib in (flow, torch):
            model = make(lib)
            opt = lib.optim.AdamW(model.parameters(), lr=1e-3)
            times.append(median_time(train_step(lib, model, opt, lib.nn.CrossEntropyLoss(),
                                                lib.tensor(x), lib.tensor(y))))
        report(name, *times, f"batch {batch}")


# ---------------------------------------------------------------------------------------------
# A Fashion-MNIST epoch through each library's own data pipeline


def _torch_loader(batch):
    import torch.utils.data as tud
    from oneflow.utils.vision.datasets import FashionMNIST

    raw = FashionMNIST(DATA, train=True)

    class DS(tud.Dataset):  # torchvision's ToTensor + Normalize, in torch ops
        def __len__(self):
            return len(raw)

        def __getitem__(self, i):
            img, target = raw[i]
            x = torch.from_numpy(img.astype(np.float32) / np.float32(255)).unsqueeze(0)
            return (x - 0.2860) / 0.3530, target

    return tud.DataLoader(DS(), batch_size=batch, shuffle=True, drop_last=True)


def _flow_loader(batch):
    from oneflow.utils.data import DataLoader
    from oneflow.utils.vision import datasets, transforms

    tf = transforms.Compose([transforms.ToTensor(), transforms.Normalize((0.2860,), (0.3530,))])
    return DataLoader(datasets.FashionMNIST(DATA, train=True, transform=tf), batch_size=batch,
                      shuffle=True, drop_last=True)


def bench_epoch(batches, full):
    if not os.path.isdir(DATA):
        print("epoch/fmnist: skipped (no dataset-fashion-mnist)")
        return
    per_epoch = 60000 // 128
    times = []
    for lib, make_loader in ((flow, _flow_loader), (torch, _torch_loader)):
        lib.manual_seed(0)
        model = cnn(lib)
        opt = lib.optim.AdamW(model.parameters(), lr=1e-3)
        loss_fn = lib.nn.CrossEntropyLoss()
        loader = make_loader(128)
        n = per_epoch if full else batches
        t0 = None
        for i, (x, y) in enumerate(loader):
            if i == 3:
                t0 = time.perf_counter()  # after warm-up
            if i == n + 3:
                break
            loss = loss_fn(model(x), y)
            opt.zero_grad()
            loss.backward()
            opt.step()
        times.append((time.perf_counter() - t0) / n * per_epoch)
    tf, tt = times
    print(f"{'epoch/fmnist':<22} {tf:10.1f} s  {tt:10.1f} s  {tf / tt:7.2f}x  "
          f"{'whole epoch' if full else f'{batches} batches scaled to {per_epoch}'}", flush=True)


# ---------------------------------------------------------------------------------------------
# Optimizer steps on a large model


OPTIMS = [("SGD", dict(lr=0.01, momentum=0.9)), ("Adam", dict(lr=1e-3)),
          ("AdamW", dict(lr=1e-3)), ("RMSprop", dict(lr=1e-3)), ("Adagrad", dict(lr=1e-2)),
          ("Adadelta", dict()), ("Adamax", dict()), ("NAdam", dict()), ("RAdam", dict())]


def bench_optim(nparams):
    shape = (10, nparams // 10)
    rng = np.random.default_rng(0)
    init = [rng.standard_normal(shape[1]).astype(np.float32) for _ in range(shape[0])]
    grads = [rng.standard_normal(shape[1]).astype(np.float32) for _ in range(shape[0])]
    for name, kw in OPTIMS:
        fp = [flow.tensor(a, requires_grad=True) for a in init]
        for p, g in zip(fp, grads):
            p.grad = flow.tensor(g)
        tf = median_time(getattr(flow.optim, name)(fp, **kw).step, repeats=3, number=5)
        best = None
        for variant in (dict(foreach=False), dict(foreach=True), dict(fused=True)):
            tp = [torch.tensor(a, requires_grad=True) for a in init]
            for p, g in zip(tp, grads):
                p.grad = torch.tensor(g)
            try:
                opt = getattr(torch.optim, name)(tp, **kw, **variant)
                t = median_time(opt.step, repeats=3, number=5)
            except (RuntimeError, TypeError, ValueError):
                continue  # this variant does not exist on the CPU
            label = next(iter(variant)) if list(variant.values())[0] else "single"
            if best is None or t < best[0]:
                best = (t, label)
        report(f"optim/{name}", tf, best[0], f"{nparams / 1e6:.0f}M params, torch {best[1]}")
    fp = [flow.tensor(a, requires_grad=True) for a in init]
    for p, g in zip(fp, grads):
        p.grad = flow.tensor(g)
    tf = median_time(flow.optim.LAMB(fp).step, repeats=3, number=5)
    print(f"{'optim/LAMB':<22} {tf * 1e3:10.2f} ms {'(no torch LAMB)':>13}", flush=True)


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--only", choices=["step", "epoch", "optim"])
    p.add_argument("--params", type=int, default=10_000_000)
    p.add_argument("--epoch-batches", type=int, default=60)
    p.add_argument("--full-epoch", action="store_true")
    args = p.parse_args(argv)
    torch.set_num_threads(flow.get_num_threads())
    print(f"oneflow vs torch {torch.__version__}, {flow.get_num_threads()} threads")
    print(f"{'row':<22} {'oneflow':>13} {'torch':>13} {'ratio':>8}")
    if args.only in (None, "step"):
        bench_steps()
    if args.only in (None, "epoch"):
        bench_epoch(args.epoch_batches, args.full_epoch)
    if args.only in (None, "optim"):
        bench_optim(args.params)


if __name__ == "__main__":
    sys.exit(main())
