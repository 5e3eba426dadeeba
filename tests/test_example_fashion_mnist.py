"""The main example (examples/train_fashion_mnist.py) on a few batches: it checkpoints and
plots each epoch, and a run interrupted after epoch 1 and resumed gives exactly the losses and
accuracies of an uninterrupted run."""
import importlib.util
import os

import pytest

ROOT = os.path.join(os.path.dirname(__file__), "..")
DATA = "/usr/share/datasets/fashion-mnist"
pytestmark = pytest.mark.skipif(not os.path.isdir(DATA), reason="dataset-fashion-mnist missing "
                                "(scripts/setup.sh installs it)")


def _example():
    spec = importlib.util.spec_from_file_location(
        "train_fashion_mnist", os.path.join(ROOT, "examples", "train_fashion_mnist.py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_resume_repeats_an_uninterrupted_run(tmp_path):
    ex = _example()
    common = ["--epochs", "2", "--limit", "8", "--batch-size", "32"]
    straight = ex.main(common + ["--out", str(tmp_path / "a")])
    first = ex.main(common + ["--out", str(tmp_path / "b"), "--stop-after", "1"])
    assert len(first["train_loss"]) == 1
    resumed = ex.main(common + ["--out", str(tmp_path / "b"), "--resume"])
    for key in ("train_loss", "test_loss", "test_acc", "train_curve"):
        assert resumed[key] == straight[key], key
    for name in ("checkpoint", "training.png", "history.json"):
        assert os.path.exists(tmp_path / "b" / name)
    with pytest.raises(SystemExit, match="--epochs 2"):
        ex.main(["--epochs", "3", "--limit", "8", "--out", str(tmp_path / "b"), "--resume"])


def test_data_parallel_under_the_launcher(tmp_path):
    """Two processes through oneflow.distributed.launch: rank 0 alone reports and checkpoints."""
    import socket
    import subprocess
    import sys

    import oneflow as flow
    if not flow.distributed.is_gloo_available():
        pytest.skip("built without Gloo")
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    out = tmp_path / "ddp"
    cmd = [sys.executable, "-m", "oneflow.distributed.launch", "--nproc_per_node", "2", "--master_port", str(port),
           os.path.join(ROOT, "examples", "train_fashion_mnist.py"), "--epochs", "2", "--limit", "6",
           "--batch-size", "64", "--out", str(out)]
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=300, env=dict(os.environ, OMP_NUM_THREADS="1"))
    assert r.returncode == 0, r.stdout + r.stderr
    assert r.stdout.count("epoch 2: train loss") == 1 and "final test accuracy" in r.stdout, r.stdout
    ckpt = flow.load(str(out / "checkpoint"))
    assert ckpt["epoch"] == 2 and not any(k.startswith("module.") for k in ckpt["model"])
    assert (out / "history.json").exists() and (out / "training.png").exists()


@pytest.mark.parametrize("mode", [[], ["--graph"]])
def test_global_tensor_example_trains(tmp_path, mode):
    """examples/global_fashion_mnist.py: the CNN made global, batches split over two processes
    (eagerly, and with --graph as nn.Graphs over the global tensors)."""
    import re
    import socket
    import subprocess
    import sys

    import oneflow as flow
    if not flow.distributed.is_gloo_available():
        pytest.skip("built without Gloo")
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    cmd = [sys.executable, "-m", "oneflow.distributed.launch", "--nproc_per_node", "2", "--master_port", str(port),
           os.path.join(ROOT, "examples", "global_fashion_mnist.py"), "--steps", "50", "--test-batches", "1"] + mode
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=300, env=dict(os.environ, OMP_NUM_THREADS="1"))
    assert r.returncode == 0, r.stdout + r.stderr
    m = re.search(r"test accuracy ([0-9.]+) on 1000 images", r.stdout)
    assert m and float(m.group(1)) > 0.6, r.stdout  # (about 0.8 after 50 steps of 128 images)
    assert r.stdout.count("test accuracy") == 1 and "step 50: training loss" in r.stdout
