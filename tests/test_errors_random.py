"""Bad arguments to the random ops raise the exception class torch raises (its builtin family),
with a message naming the op and what was wrong; the framework stays usable afterwards."""

import pytest
import torch

from harness import SHIM, builtin_exc_type, flow


def _z(lib, *shape, dtype="float32"):
    return lib.zeros(*shape, dtype=getattr(lib, dtype))


# (id, call, words the message must contain)
CASES = [
    ("rand-int-dtype", lambda lib: lib.rand(3, dtype=lib.int64), ["rand"]),
    ("randn-bool-dtype", lambda lib: lib.randn(3, dtype=lib.bool), ["randn"]),
    ("rand-negative-size", lambda lib: lib.rand(-1), ["rand"]),
    ("randint-low-ge-high", lambda lib: lib.randint(5, 2, (3,)), ["randint", "from=5", "to=2"]),
    (
        "randint-uint8-bound",
        lambda lib: lib.randint(0, 300, (3,), dtype=lib.uint8),
        ["randint", "unsigned char"],
    ),
    ("randint-requires-grad", lambda lib: lib.randint(0, 3, (2,), requires_grad=True), ["randint"]),
    ("randperm-negative", lambda lib: lib.randperm(-1), ["randperm"]),
    ("randperm-int8-overflow", lambda lib: lib.randperm(300, dtype=lib.int8), ["randperm", "int8"]),
    ("normal-negative-std", lambda lib: lib.normal(0.0, -1.0, (3,)), ["normal", "std"]),
    (
        "normal-negative-tensor-std",
        lambda lib: lib.normal(_z(lib, 3), -lib.ones(3)),
        ["normal", "std"],
    ),
    ("normal-no-size", lambda lib: lib.normal(0.0, 1.0), ["normal", "size"]),
    ("normal-shapes", lambda lib: lib.normal(_z(lib, 2, 3), lib.ones(4)), ["normal"]),
    ("normal-int-mean", lambda lib: lib.normal(_z(lib, 3, dtype="int64"), 1.0), ["normal"]),
    ("uniform-from-gt-to", lambda lib: _z(lib, 3).uniform_(2, 1), ["uniform_", "from=2", "to=1"]),
    ("uniform-int-tensor", lambda lib: _z(lib, 3, dtype="int64").uniform_(), ["uniform_"]),
    (
        "uniform-expanded",
        lambda lib: _z(lib, 1).expand(3).uniform_(),
        ["uniform_", "memory location"],
    ),
    ("normal_-negative-std", lambda lib: _z(lib, 3).normal_(0, -1), ["normal_", "std"]),
    ("exponential-lambda", lambda lib: _z(lib, 3).exponential_(-1), ["exponential_", "lambda"]),
    ("exponential-int", lambda lib: _z(lib, 3, dtype="int64").exponential_(), ["exponential_"]),
    ("geometric-p0", lambda lib: _z(lib, 3).geometric_(0), ["geometric_", "p=0"]),
    ("geometric-p1", lambda lib: _z(lib, 3).geometric_(1.5), ["geometric_"]),
    ("geometric-bool", lambda lib: _z(lib, 3, dtype="bool").geometric_(0.5), ["geometric_"]),
    ("log-normal-std", lambda lib: _z(lib, 3).log_normal_(0, -1), ["log_normal_", "std"]),
    ("cauchy-sigma", lambda lib: _z(lib, 3).cauchy_(0, -1), ["cauchy_", "sigma"]),
    ("cauchy-int", lambda lib: _z(lib, 3, dtype="int32").cauchy_(), ["cauchy_"]),
    ("random-from-ge-to", lambda lib: _z(lib, 3).random_(5, 2), ["random_"]),
    (
        "random-uint8-from",
        lambda lib: _z(lib, 3, dtype="uint8").random_(-1, 3),
        ["random_", "from"],
    ),
    ("random-bool-to", lambda lib: _z(lib, 3, dtype="bool").random_(0, 3), ["random_", "bool"]),
    ("bernoulli-p-range", lambda lib: _z(lib, 3).bernoulli_(1.5), ["bernoulli_", "p"]),
    (
        "bernoulli-tensor-p-range",
        lambda lib: _z(lib, 3).bernoulli_(lib.tensor([0.1, 2.0, 0.3])),
        ["bernoulli_"],
    ),
    (
        "bernoulli-tensor-p-shape",
        lambda lib: _z(lib, 3).bernoulli_(lib.ones(2, 3) * 0.5),
        ["bernoulli_"],
    ),
    ("bernoulli-probs-range", lambda lib: lib.bernoulli(lib.tensor([0.2, 1.5])), ["bernoulli"]),
    ("bernoulli-int-probs", lambda lib: lib.bernoulli(_z(lib, 3, dtype="int64")), ["bernoulli"]),
    ("multinomial-3d", lambda lib: lib.multinomial(lib.ones(2, 2, 2), 1), ["multinomial", "dim"]),
    (
        "multinomial-int",
        lambda lib: lib.multinomial(lib.ones(3, dtype=lib.int64), 1),
        ["multinomial"],
    ),
    (
        "multinomial-zero-samples",
        lambda lib: lib.multinomial(lib.ones(3), 0),
        ["multinomial", "n_sample"],
    ),
    (
        "multinomial-too-many",
        lambda lib: lib.multinomial(lib.ones(3), 4),
        ["multinomial", "replacement"],
    ),
    (
        "multinomial-negative",
        lambda lib: lib.multinomial(lib.tensor([1.0, -1.0]), 1),
        ["multinomial", "< 0"],
    ),
    (
        "multinomial-inf",
        lambda lib: lib.multinomial(lib.tensor([1.0, float("inf")]), 1),
        ["multinomial", "inf"],
    ),
    ("multinomial-zero-sum", lambda lib: lib.multinomial(lib.zeros(3), 1), ["multinomial", "sum"]),
    ("poisson-negative", lambda lib: lib.poisson(lib.tensor([-1.0])), ["poisson", "rate"]),
    ("poisson-int", lambda lib: lib.poisson(lib.tensor([1, 2])), ["poisson"]),
    ("generator-bad-type", lambda lib: lib.rand(2, generator=3), ["generator"]),
    (
        "uniform-leaf-requires-grad",
        lambda lib: lib.ones(2, requires_grad=True).uniform_(),
        ["leaf"],
    ),
]


@pytest.mark.parametrize("cid,fn,words", CASES, ids=[c[0] for c in CASES])
def test_random_error(cid, fn, words):
    try:
        fn(torch)
        t_err = None
    except Exception as e:  # noqa: BLE001
        t_err = e
    assert t_err is not None, f"harness: torch does not raise for {cid}"
    with pytest.raises(builtin_exc_type(t_err)) as info:
        fn(flow)
    msg = str(info.value)
    if not SHIM:
        for w in words:
            assert w.lower() in msg.lower(), f"message does not name {w!r}: {msg!r}"
    assert float(flow.rand(4).sum().item()) >= 0.0  # still usable


def test_failed_fill_leaves_tensor_unchanged():
    x = flow.ones(3)
    with pytest.raises(RuntimeError):
        x.bernoulli_(flow.tensor([0.5, 1.5, 0.2]))
    assert x.tolist() == [1.0, 1.0, 1.0]
    with pytest.raises(RuntimeError):
        x.uniform_(3, 2)
    assert x.tolist() == [1.0, 1.0, 1.0]


def test_fill_like_torch():
    for lib in (flow, torch):
        with pytest.raises(RuntimeError, match="0-dimension"):
            lib.zeros(3).fill_(lib.ones(3))
        assert lib.zeros(2).fill_(lib.tensor(2.5)).tolist() == [2.5, 2.5]
        v = lib.tensor(3.0, requires_grad=True)
        y = lib.ones(3) * 1
        y.fill_(v)
        y.sum().backward()
        assert v.grad.item() == 3.0
        with pytest.raises(RuntimeError, match="leaf"):
            lib.ones(2, requires_grad=True).zero_()
