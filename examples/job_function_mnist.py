"""Spec 003's job functions on real data: an MLP trained on Fashion-MNIST by a "train" job and
evaluated by a "predict" job that shares its variables, both traced once and compiled.

    .venv/bin/python examples/job_function_mnist.py [--epochs 1] [--limit N]

Data: /usr/share/datasets/fashion-mnist (Debian's dataset-fashion-mnist) or --data DIR with the
four IDX files. Prints the mean loss of each epoch and the test accuracy.
"""
import argparse
import gzip
import os

import numpy as np

import oneflow as flow
import oneflow.typing as tp

BATCH_SIZE = 100


def read_idx(path):
    with gzip.open(path, "rb") as f:
        data = f.read()
    dims = data[3]
    shape = tuple(int.from_bytes(data[4 + 4 * i:8 + 4 * i], "big") for i in range(dims))
    return np.frombuffer(data, np.uint8, offset=4 + 4 * dims).reshape(shape)


def load(folder, split):
    prefix = "train" if split == "train" else "t10k"
    images = read_idx(os.path.join(folder, f"{prefix}-images-idx3-ubyte.gz")).astype(np.float32) / 255.0
    labels = read_idx(os.path.join(folder, f"{prefix}-labels-idx1-ubyte.gz")).astype(np.int32)
    return ((images - 0.2860) / 0.3530).reshape(-1, 1, 28, 28), labels


def mlp(images):
    initializer = flow.truncated_normal(0.1)
    reshape = flow.reshape(images, [images.shape[0], -1])
    hidden = flow.layers.dense(reshape, 512, activation=flow.nn.relu, kernel_initializer=initializer,
                               name="dense1")
    return flow.layers.dense(hidden, 10, kernel_initializer=initializer, name="dense2")


def get_train_config():
    config = flow.function_config()
    config.default_data_type(flow.float)
    return config


@flow.global_function(type="train", function_config=get_train_config())
def train_job(images: tp.Numpy.Placeholder((BATCH_SIZE, 1, 28, 28), dtype=flow.float),
              labels: tp.Numpy.Placeholder((BATCH_SIZE,), dtype=flow.int32)) -> tp.Numpy:
    logits = mlp(images)
    loss = flow.nn.sparse_softmax_cross_entropy_with_logits(labels, logits, name="softmax_loss")
    lr_scheduler = flow.optimizer.PiecewiseConstantScheduler([], [0.1])
    flow.optimizer.SGD(lr_scheduler, momentum=0).minimize(loss)
    return loss


@flow.global_function(type="predict")
def eval_job(images: tp.Numpy.Placeholder((BATCH_SIZE, 1, 28, 28), dtype=flow.float)) -> tp.Numpy:
    return flow.math.argmax(mlp(images))


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--data", default="/usr/share/datasets/fashion-mnist")
    p.add_argument("--epochs", type=int, default=1)
    p.add_argument("--limit", type=int, default=0, help="use only the first N training images")
    args = p.parse_args(argv)
    x_train, y_train = load(args.data, "train")
    x_test, y_test = load(args.data, "test")
    if args.limit:
        x_train, y_train = x_train[:args.limit], y_train[:args.limit]
    rs = np.random.RandomState(0)
    for epoch in range(args.epochs):
        order = rs.permutation(len(x_train))
        losses = []
        for i in range(0, len(order) - BATCH_SIZE + 1, BATCH_SIZE):
            idx = order[i:i + BATCH_SIZE]
            losses.append(train_job(x_train[idx], y_train[idx]).mean())
        print(f"epoch {epoch}: mean loss {np.mean(losses):.4f}")
    correct = sum(int((eval_job(x_test[i:i + BATCH_SIZE]) == y_test[i:i + BATCH_SIZE]).sum())
                  for i in range(0, len(x_test) - BATCH_SIZE + 1, BATCH_SIZE))
    accuracy = correct / (len(x_test) // BATCH_SIZE * BATCH_SIZE)
    print(f"test accuracy {accuracy:.4f}")
    return accuracy


if __name__ == "__main__":
    main()
