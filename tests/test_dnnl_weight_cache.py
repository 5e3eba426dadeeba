"""oneDNN's reordered-weight cache (Note [Weight cache], src/kernels/dnnl/dnnl_common.h): LSTM,
GRU and convolution results against torch when the same weights run many times and then change
(in place, through an optimizer step, by load_state_dict), in eager and in nn.Graph training; and
what the cache keeps: copies only for weights that stay put, none in training, none of dead
weights, never more bytes than its limit."""
import gc

import numpy as np
import pytest
import torch

from harness import flow
from nn_util import arr, close, twins

TOL = dict(rtol=1e-5, atol=1e-5)
_C = flow._oneflow_internal


def stats():
    return _C._dnnl_weight_cache_stats()


@pytest.fixture(autouse=True)
def fresh_cache():
    _C._dnnl_weight_cache_clear()
    yield
    _C._dnnl_weight_cache_clear()


def _build(kind):
    if kind == "LSTM":
        return lambda lib: lib.nn.LSTM(6, 8, num_layers=2)
    if kind == "GRU":
        return lambda lib: lib.nn.GRU(6, 8, bidirectional=True)
    return lambda lib: lib.nn.Conv2d(8, 16, 3, padding=1)


def _input(kind):
    return arr(7, 3, 6) if kind in ("LSTM", "GRU") else arr(2, 8, 9, 9)


def _first(r):
    return r[0] if isinstance(r, tuple) else r


def _compare(fm, tm, x, times=3):
    """Runs both modules `times` times under no-grad (the cache keeps a copy from the second
    call on and serves the third) and compares every result with torch's."""
    for _ in range(times):
        with flow.no_grad():
            of = _first(fm(flow.tensor(x)))
        with torch.no_grad():
            ot = _first(tm(torch.tensor(x)))
        close(of, ot, **TOL)


@pytest.mark.parametrize("kind", ["LSTM", "GRU", "Conv2d"])
def test_repeated_inference_is_served_from_the_cache(kind):
    fm, tm = twins(_build(kind))
    _compare(fm, tm, _input(kind), times=4)
    s = stats()
    assert s["copies"] > 0 and s["bytes"] > 0 and s["hits"] > 0


@pytest.mark.parametrize("kind", ["LSTM", "GRU", "Conv2d"])
def test_in_place_update_is_seen(kind):
    fm, tm = twins(_build(kind))
    x = _input(kind)
    _compare(fm, tm, x)
    for lib, m in ((flow, fm), (torch, tm)):
        with lib.no_grad():
            for p in m.parameters():
                p.mul_(0.5).add_(0.125)
    _compare(fm, tm, x)
    new = {k: v.detach().numpy() * -1.5 for k, v in tm.state_dict().items()}
    fm.load_state_dict({k: flow.tensor(v) for k, v in new.items()})
    tm.load_state_dict({k: torch.tensor(v) for k, v in new.items()})
    _compare(fm, tm, x)


@pytest.mark.parametrize("kind", ["LSTM", "GRU", "Conv2d"])
def test_optimizer_steps_between_inference(kind):
    fm, tm = twins(_build(kind))
    x = _input(kind)
    of_opt = flow.optim.SGD(fm.parameters(), lr=0.01, momentum=0.9)
    t_opt = torch.optim.SGD(tm.parameters(), lr=0.01, momentum=0.9)
    for _ in range(3):
        _compare(fm, tm, x)
        for lib, m, opt in ((flow, fm, of_opt), (torch, tm, t_opt)):
            opt.zero_grad()
            _first(m(lib.tensor(x))).sum().backward()
            opt.step()
        for a, b in zip(fm.parameters(), tm.parameters()):
            close(a, b, rtol=1e-4, atol=1e-5)
    _compare(fm, tm, x)


@pytest.mark.parametrize("kind", ["LSTM", "GRU", "Conv2d"])
def test_training_keeps_no_copies(kind):
    fm, _ = twins(_build(kind))
    x = flow.tensor(_input(kind))
    opt = flow.optim.SGD(fm.parameters(), lr=0.01)
    for _ in range(4):
        opt.zero_grad()
        _first(fm(x)).sum().backward()
        opt.step()
    assert stats()["copies"] == 0


@pytest.mark.parametrize("kind", ["LSTM", "Conv2d"])
def test_graph_training_keeps_no_copies_and_matches_torch(kind):
    fm, tm = twins(_build(kind))
    x = _input(kind)
    of_opt = flow.optim.SGD(fm.parameters(), lr=0.01)
    t_opt = torch.optim.SGD(tm.parameters(), lr=0.01)

    class Train(flow.nn.Graph):
        def __init__(self):
            super().__init__()
            self.m = fm
            self.add_optimizer(of_opt)

        def build(self, inp):
            loss = _first(self.m(inp)).sum()
            loss.backward()
            return loss

    g = Train()
    for _ in range(4):
        lf = g(flow.tensor(x))
        t_opt.zero_grad()
        lt = _first(tm(torch.tensor(x))).sum()
        lt.backward()
        t_opt.step()
        close(lf, lt, rtol=1e-4, atol=1e-4)
    for a, b in zip(fm.parameters(), tm.parameters()):
        close(a, b, rtol=1e-4, atol=1e-5)
    assert stats()["copies"] == 0
    _compare(fm, tm, x)  # and inference after graph training sees the trained weights


def test_copies_of_dead_weights_are_dropped():
    fm, tm = twins(_build("LSTM"))
    _compare(fm, tm, _input("LSTM"))
    assert stats()["copies"] > 0
    del fm
    gc.collect()
    assert stats()["copies"] == 0 and stats()["bytes"] == 0


def test_cache_is_bounded_by_bytes():
    old = _C._dnnl_weight_cache_limit(64 * 1024)
    try:
        models = [flow.nn.LSTM(32, 32) for _ in range(8)]  # ~33 KB of reordered weights each
        x = flow.tensor(arr(4, 2, 32))
        with flow.no_grad():
            for _ in range(3):
                for m in models:
                    m(x)
        s = stats()
        assert 0 < s["bytes"] <= 64 * 1024 and s["copies"] < 8
        # still right with copies coming and going
        tm = torch.nn.LSTM(32, 32)
        tm.load_state_dict({k: torch.tensor(v.numpy()) for k, v in models[0].state_dict().items()})
        with flow.no_grad():
            of = models[0](x)[0]
        with torch.no_grad():
            ot = tm(torch.tensor(x.numpy()))[0]
        close(of, ot, **TOL)
        _C._dnnl_weight_cache_limit(0)
        assert stats()["bytes"] == 0
    finally:
        _C._dnnl_weight_cache_limit(old)


def test_parameter_replaced_by_a_new_one_at_the_same_version():
    # A fresh parameter starts at version 0 as the old did, maybe at the old one's address: the
    # cache must tell them apart.
    fm, tm = twins(_build("Conv2d"))
    x = _input("Conv2d")
    _compare(fm, tm, x)
    for _ in range(3):
        new = arr(*tuple(tm.weight.shape))
        fm.weight = flow.nn.Parameter(flow.tensor(new))
        tm.weight = torch.nn.Parameter(torch.tensor(new))
        gc.collect()
        _compare(fm, tm, x)
    assert np.isfinite(stats()["bytes"])
