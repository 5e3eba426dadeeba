"""Op-level rows: eager overhead, memory-bound and compute-bound kernels, autograd, and the rows
below parity in earlier notes (LSTM over 32 steps, long single-head attention, sum over 10M)."""
import numpy as np

from measure import Case

N = 10_000_000


def _rand(shape, seed):
    return np.random.default_rng(seed).standard_normal(shape, dtype=np.float32)


def _first(lib, t):
    return t.detach().reshape(-1)[:4].tolist() if t.numel() > 1 else [t.item()]


def _tensors(lib, *arrays):
    return [lib.tensor(a) for a in arrays]


def add_one(lib, mode):
    a, b = lib.ones(1), lib.ones(1)
    return lambda: a + b


def add_large(lib, mode):
    a, b = _tensors(lib, _rand(N, 0), _rand(N, 1))
    return lambda: a + b


def sum_large(lib, mode):
    (a,) = _tensors(lib, np.random.default_rng(2).random(N, dtype=np.float32))
    return lambda: a.sum()


def matmul(n):
    def make(lib, mode):
        a, b = _tensors(lib, _rand((n, n), 3), _rand((n, n), 4))
        return lambda: a @ b
    return make


def conv3x3(lib, mode):
    x, w = _tensors(lib, _rand((8, 64, 56, 56), 5), _rand((64, 64, 3, 3), 6) * 0.05)
    return lambda: lib.nn.functional.conv2d(x, w, padding=1)


def softmax(lib, mode):
    (x,) = _tensors(lib, _rand((1024, 1024), 7))
    return lambda: lib.softmax(x, -1)


def layer_norm(lib, mode):
    (x,) = _tensors(lib, _rand((4096, 1024), 8))
    return lambda: lib.nn.functional.layer_norm(x, (1024,))


def autograd_mul(lib, mode):
    a, b = lib.ones(1, requires_grad=True), lib.ones(1, requires_grad=True)
    return lambda: a * b


def chain(lib, mode):
    x = lib.ones(1000, requires_grad=True)

    def step():
        y = x
        for i in range(50):
            y = y * 1.001 if i % 3 == 0 else (y + 0.5 if i % 3 == 1 else y.sin())
        y.sum().backward()
        grad = x.grad
        x.grad = None
        return grad
    return step


def lstm(lib, mode):
    lib.manual_seed(0)
    rnn = lib.nn.LSTM(256, 256, batch_first=True)
    (x,) = _tensors(lib, _rand((32, 32, 256), 9))

    def step():
        out, _ = rnn(x)
        out.sum().backward()
        return out
    return step


def sdpa(lib, mode):
    q, k, v = _tensors(lib, _rand((1, 1, 1024, 64), 10), _rand((1, 1, 1024, 64), 11), _rand((1, 1, 1024, 64), 12))
    return lambda: lib.nn.functional.scaled_dot_product_attention(q, k, v)


def cases():
    gb, gf = "GB/s", "GFLOP/s"
    return [
        Case("core", "c = a + b, 1 element (eager overhead)", add_one, quick=True),
        Case("core", "c = a * b, requires_grad, 1 element", autograd_mul, quick=True),
        Case("core", "50-op chain forward+backward, 1000 float32", chain, check=_first, quick=True),
        Case("core", "add, 10M float32", add_large, "rate", 12 * N, gb, "bandwidth", _first, quick=True),
        Case("core", "sum, 10M float32", sum_large, "rate", 4 * N, gb, "bandwidth", _first, quick=True),
        Case("core", "matmul 256x256x256 float32", matmul(256), "rate", 2 * 256 ** 3, gf, "flops", _first),
        Case("core", "matmul 1024x1024x1024 float32", matmul(1024), "rate", 2 * 1024 ** 3, gf, "flops", _first,
             quick=True),
        Case("core", "conv2d 3x3, 8x64x56x56 -> 64", conv3x3, "rate", 2 * 8 * 64 * 56 * 56 * 64 * 9, gf, "flops",
             _first, quick=True),
        Case("core", "softmax 1024x1024 float32, dim=-1", softmax, "rate", 8 * 1024 * 1024, gb, "bandwidth",
             _first),
        Case("core", "layer_norm 4096x1024 float32", layer_norm, "rate", 8 * 4096 * 1024, gb, "bandwidth", _first),
        Case("core", "LSTM 256->256, batch 32, 32 steps, forward+backward", lstm),
        Case("core", "sdpa 1 head, L=S=1024, d=64", sdpa, "rate", 4 * 1024 * 1024 * 64, gf, "flops", _first),
    ]
