"""Data-parallel training with global tensors (docs/global_tensors.md): the CNN of
examples/train_fashion_mnist.py made global (its parameters broadcast over the job's processes),
each batch split over them along the batch dim; the ops keep the batch split, batch norm uses the
whole batch's statistics, and the broadcast parameters' gradients are summed over the processes,
so every process holds the same model after each step. Run it with the launcher:

    .venv/bin/python -m oneflow.distributed.launch --nproc_per_node 2 examples/global_fashion_mnist.py

Every process reads the same shuffled batches (one seed) and keeps its own rows. Rank 0 prints the
training loss and, at the end, the test accuracy (computed by all of them on split test batches).
With --graph the training and evaluation steps are nn.Graphs traced over the global tensors (their
boxing and collectives steps of the traced program).
"""
import argparse
import os
import sys
import time

import oneflow as flow
from oneflow.utils.data import DataLoader
from oneflow.utils.vision import datasets, transforms

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from train_fashion_mnist import DATA, MEAN, STD, Net  # noqa: E402


def split_rows(t, placement):
    """This process's rows of a batch every process holds, as a split(0) global tensor."""
    rank, world = flow.distributed.get_rank(), flow.distributed.get_world_size()
    base, extra = divmod(t.shape[0], world)
    lo = rank * base + min(rank, extra)
    return t[lo:lo + base + (rank < extra)].to_global(placement, flow.sbp.split(0))


class TrainGraph(flow.nn.Graph):
    def __init__(self, model, optimizer, loss_fn):
        super().__init__()
        self.model, self.loss_fn = model, loss_fn
        self.add_optimizer(optimizer)

    def build(self, x, y):
        loss = self.loss_fn(self.model(x), y)
        loss.backward()
        return loss


class EvalGraph(flow.nn.Graph):
    def __init__(self, model):
        super().__init__()
        self.model = model

    def build(self, x):
        return self.model(x)


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--steps", type=int, default=300, help="training steps (default 300)")
    p.add_argument("--batch-size", type=int, default=128, help="the global batch")
    p.add_argument("--lr", type=float, default=2e-3)
    p.add_argument("--test-batches", type=int, default=10, help="test batches of 1000 to evaluate")
    p.add_argument("--data", default=DATA)
    p.add_argument("--graph", action="store_true", help="run the steps as nn.Graphs")
    args = p.parse_args(argv)
    flow.env.init()
    placement = flow.placement("cpu", ranks=list(range(flow.distributed.get_world_size())))
    rank = flow.distributed.get_rank()

    tf = transforms.Compose([transforms.ToTensor(), transforms.Normalize((MEAN,), (STD,))])
    flow.manual_seed(0)  # the same model and batch order in every process
    train = DataLoader(datasets.FashionMNIST(args.data, train=True, transform=tf), batch_size=args.batch_size,
                       shuffle=True, drop_last=True)
    model = Net().to_global(placement, flow.sbp.broadcast)
    optimizer = flow.optim.AdamW(model.parameters(), lr=args.lr, weight_decay=1e-4)
    loss_fn = flow.nn.CrossEntropyLoss()
    train_step = TrainGraph(model, optimizer, loss_fn) if args.graph else None
    t0, running, step = time.time(), 0.0, 0
    while step < args.steps:
        for x, y in train:
            if train_step is not None:
                loss = train_step(split_rows(x, placement), split_rows(y, placement))
            else:
                loss = loss_fn(model(split_rows(x, placement)), split_rows(y, placement))
                optimizer.zero_grad()
                loss.backward()
                optimizer.step()
            running += loss.item()
            step += 1
            if rank == 0 and step % 50 == 0:
                print(f"step {step}: training loss {running / 50:.4f} ({time.time() - t0:.1f} s)", flush=True)
                running = 0.0
            if step == args.steps:
                break

    model.eval()
    predict = EvalGraph(model) if args.graph else model
    test = DataLoader(datasets.FashionMNIST(args.data, train=False, transform=tf), batch_size=1000)
    correct = total = 0
    with flow.no_grad():
        for i, (x, y) in enumerate(test):
            if i == args.test_batches:
                break
            pred = predict(split_rows(x, placement)).argmax(1)
            correct += int((pred == split_rows(y, placement)).sum().item())
            total += y.shape[0]
    if rank == 0:
        print(f"test accuracy {correct / total:.4f} on {total} images after {args.steps} steps", flush=True)
    return correct / total


if __name__ == "__main__":
    main()
