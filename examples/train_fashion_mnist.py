"""Train a small CNN on Fashion-MNIST with oneflow, end to end.

    .venv/bin/python examples/train_fashion_mnist.py            # train (default 4 epochs)
    .venv/bin/python examples/train_fashion_mnist.py --resume   # continue from the checkpoint
    .venv/bin/python -m oneflow.distributed.launch --nproc_per_node 2 \
        examples/train_fashion_mnist.py                          # data parallel, 2 processes

Data: Debian's package `dataset-fashion-mnist` (/usr/share/datasets/fashion-mnist, installed by
scripts/setup.sh) or any folder holding the four IDX files (--data). Each epoch shows a tqdm bar
with the running loss, prints the test accuracy, saves a checkpoint (model, optimizer, scheduler,
epoch, history) atomically to OUT/checkpoint and redraws OUT/training.png (training loss and
test accuracy). --resume continues from OUT/checkpoint exactly where it stopped: every epoch's
randomness (shuffle order, dropout) is seeded from (seed, epoch), so a resumed run repeats the
numbers of an uninterrupted one. Under the launcher (WORLD_SIZE > 1) each process trains on its
share of every epoch (DistributedSampler) with --batch-size / WORLD_SIZE samples a step, the
gradients averaged by DistributedDataParallel, so the global batch and the schedule stay those of
one process; rank 0 shows the bar, evaluates, checkpoints and plots.
"""
import argparse
import json
import os
import time

import matplotlib

matplotlib.use("Agg")  # files only, no display
import matplotlib.pyplot as plt  # noqa: E402
from tqdm import tqdm  # noqa: E402

import oneflow as flow  # noqa: E402
from oneflow import nn  # noqa: E402
from oneflow.utils.data import DataLoader, DistributedSampler  # noqa: E402
from oneflow.utils.vision import datasets, transforms  # noqa: E402

DATA = "/usr/share/datasets/fashion-mnist"
MEAN, STD = 0.2860, 0.3530  # Fashion-MNIST's pixel statistics (training split)


class Net(nn.Module):
    """conv 32 -> pool -> conv 64 -> pool -> fc 128 -> fc 10, with batch norm and dropout."""

    def __init__(self):
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv2d(1, 32, 3, padding=1), nn.BatchNorm2d(32), nn.ReLU(), nn.MaxPool2d(2),
            nn.Conv2d(32, 64, 3, padding=1), nn.BatchNorm2d(64), nn.ReLU(), nn.MaxPool2d(2))
        self.classifier = nn.Sequential(
            nn.Flatten(), nn.Linear(64 * 7 * 7, 128), nn.ReLU(), nn.Dropout(0.3),
            nn.Linear(128, 10))

    def forward(self, x):
        return self.classifier(self.features(x))


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--epochs", type=int, default=4, help="total number of epochs (default 4)")
    p.add_argument("--batch-size", type=int, default=128)
    p.add_argument("--lr", type=float, default=2e-3, help="peak learning rate (one-cycle)")
    p.add_argument("--out", default="runs/fashion_mnist", help="checkpoint and plot folder")
    p.add_argument("--resume", action="store_true", help="continue from OUT/checkpoint")
    p.add_argument("--data", default=DATA, help="folder with the Fashion-MNIST IDX files")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--device", default="cpu", help="cpu, or cuda to train on the GPU")
    p.add_argument("--workers", type=int, default=0, help="DataLoader worker processes")
    p.add_argument("--limit", type=int, default=0,
                   help="only this many training (and test) batches per epoch (quick runs)")
    p.add_argument("--stop-after", type=int, default=0,
                   help="stop after this epoch, as if interrupted (then use --resume)")
    return p.parse_args(argv)


def make_loaders(args, world=1):
    tf = transforms.Compose([transforms.ToTensor(), transforms.Normalize((MEAN,), (STD,))])
    train = datasets.FashionMNIST(args.data, train=True, transform=tf)
    test = datasets.FashionMNIST(args.data, train=False, transform=tf)
    if world > 1:  # this process's share of each epoch, a share of each global batch
        sampler = DistributedSampler(train, shuffle=True, seed=args.seed, drop_last=True)
        loader = DataLoader(train, batch_size=max(1, args.batch_size // world), sampler=sampler, drop_last=True,
                            num_workers=args.workers)
    else:
        loader = DataLoader(train, batch_size=args.batch_size, shuffle=True, drop_last=True, num_workers=args.workers)
    return loader, DataLoader(test, batch_size=1000, num_workers=args.workers)


def evaluate(model, loader, limit=0, device="cpu"):
    """(mean loss, accuracy) over the loader (its first `limit` batches when limit > 0)."""
    model.eval()
    loss_fn = nn.CrossEntropyLoss(reduction="sum")
    total, correct, loss = 0, 0, 0.0
    with flow.no_grad():
        for i, (x, y) in enumerate(loader):
            if limit and i == limit:
                break
            x, y = x.to(device), y.to(device)
            out = model(x)
            loss += float(loss_fn(out, y))
            correct += int((out.argmax(1) == y).sum())
            total += y.shape[0]
    return loss / total, correct / total


def plot(history, path):
    fig, ax1 = plt.subplots(figsize=(7, 4))
    steps = [s for s, _ in history["train_curve"]]
    ax1.plot(steps, [v for _, v in history["train_curve"]], color="tab:blue", lw=1)
    ax1.set_xlabel("training step")
    ax1.set_ylabel("training loss (running mean)", color="tab:blue")
    ax2 = ax1.twinx()
    ax2.plot(history["epoch_end_step"], history["test_acc"], "o-", color="tab:red")
    ax2.set_ylabel("test accuracy", color="tab:red")
    ax1.set_title("Fashion-MNIST, oneflow")
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


def main(argv=None):
    args = parse_args(argv)
    world = int(os.environ.get("WORLD_SIZE", 1))
    if world > 1 and not flow.distributed.is_initialized():
        flow.distributed.init_process_group("gloo")
    rank = flow.distributed.get_rank() if world > 1 else 0
    os.makedirs(args.out, exist_ok=True)
    ckpt_path = os.path.join(args.out, "checkpoint")
    train_loader, test_loader = make_loaders(args, world)
    steps_per_epoch = len(train_loader) if not args.limit else min(args.limit, len(train_loader))

    flow.manual_seed(args.seed)
    net = Net().to(args.device)  # (the weights to save; `model` is what trains)
    model = nn.parallel.DistributedDataParallel(net) if world > 1 else net
    loss_fn = nn.CrossEntropyLoss()
    optimizer = flow.optim.AdamW(model.parameters(), lr=args.lr, weight_decay=1e-4)
    scheduler = flow.optim.lr_scheduler.OneCycleLR(
        optimizer, max_lr=args.lr, total_steps=args.epochs * steps_per_epoch)
    history = {"train_loss": [], "test_loss": [], "test_acc": [], "epoch_time": [],
               "train_curve": [], "epoch_end_step": []}
    start_epoch = 0
    if args.resume:
        if not os.path.exists(ckpt_path):
            raise SystemExit(f"--resume: no checkpoint at {ckpt_path}")
        ckpt = flow.load(ckpt_path, map_location=args.device)
        if ckpt["args"]["epochs"] != args.epochs:
            raise SystemExit(f"--resume: the checkpoint's learning-rate schedule is for "
                             f"--epochs {ckpt['args']['epochs']}, not {args.epochs}")
        net.load_state_dict(ckpt["model"])
        optimizer.load_state_dict(ckpt["optimizer"])
        scheduler.load_state_dict(ckpt["scheduler"])
        history, start_epoch = ckpt["history"], ckpt["epoch"]
        if rank == 0:
            print(f"resumed from {ckpt_path} after epoch {start_epoch}")

    step = start_epoch * steps_per_epoch
    for epoch in range(start_epoch, args.epochs):
        # Every epoch's randomness comes from (seed, epoch): resuming repeats it exactly.
        flow.manual_seed(args.seed * 1000 + epoch + 100003 * rank)
        if world > 1:
            train_loader.sampler.set_epoch(epoch)
        model.train()
        t0 = time.time()
        running, seen = 0.0, 0
        bar = tqdm(train_loader, total=steps_per_epoch, desc=f"epoch {epoch + 1}/{args.epochs}",
                   unit="batch", leave=True, disable=rank != 0)
        for i, (x, y) in enumerate(bar):
            if i == steps_per_epoch:
                break
            x, y = x.to(args.device), y.to(args.device)
            loss = loss_fn(model(x), y)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            scheduler.step()
            step += 1
            running += float(loss)
            seen += 1
            if seen % 20 == 0 or seen == steps_per_epoch:
                bar.set_postfix(loss=f"{running / seen:.4f}")
                history["train_curve"].append((step, running / seen))
        bar.close()
        elapsed = time.time() - t0
        if rank != 0:
            if args.stop_after and epoch + 1 == args.stop_after:
                break
            continue
        test_loss, test_acc = evaluate(net, test_loader, args.limit, args.device)
        history["train_loss"].append(running / max(seen, 1))
        history["test_loss"].append(test_loss)
        history["test_acc"].append(test_acc)
        history["epoch_time"].append(elapsed)
        history["epoch_end_step"].append(step)
        print(f"epoch {epoch + 1}: train loss {running / max(seen, 1):.4f}, test loss "
              f"{test_loss:.4f}, test accuracy {test_acc:.4f} ({elapsed:.1f} s training)",
              flush=True)
        flow.save({"model": net.state_dict(), "optimizer": optimizer.state_dict(),
                   "scheduler": scheduler.state_dict(), "epoch": epoch + 1, "history": history,
                   "args": vars(args)}, ckpt_path)
        plot(history, os.path.join(args.out, "training.png"))
        if args.stop_after and epoch + 1 == args.stop_after:
            break
    if world > 1:
        flow.distributed.barrier()  # (rank 0 may still be evaluating)
        if rank != 0:
            return history
    with open(os.path.join(args.out, "history.json"), "w") as f:
        json.dump(history, f, indent=1)
    if history["test_acc"]:
        print(f"final test accuracy {history['test_acc'][-1]:.4f}; checkpoint {ckpt_path}, "
              f"plot {os.path.join(args.out, 'training.png')}")
    return history


if __name__ == "__main__":
    main()
