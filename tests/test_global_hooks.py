"""Note [Global hooks] (python/oneflow/_global_hooks.py): the layers below the global one reach
global tensors through functions the global layer registers, never by importing it."""
import pytest

import oneflow as flow
from oneflow import _global_hooks
from oneflow._global import tensor as global_tensor


def test_the_global_layer_registered_every_name():
    assert set(_global_hooks._HOOKS) == set(_global_hooks.NAMES)
    assert _global_hooks.use("GlobalTensor") is global_tensor.GlobalTensor
    assert _global_hooks.use("from_logical") is global_tensor.from_logical


def test_is_global_is_the_kind_of_the_class():
    t = flow.ones(2)
    assert not _global_hooks.is_global(t)
    g = t.to_global(placement=flow.placement("cpu", [0]), sbp=flow.sbp.broadcast)
    assert _global_hooks.is_global(g) and global_tensor.is_global(g)
    # a lower layer's path through the hooks: a factory's placement= builds the global tensor
    f = flow.tensor([1.0, 2.0], placement=flow.placement("cpu", [0]), sbp=flow.sbp.broadcast)
    assert _global_hooks.is_global(f) and f.sbp == (flow.sbp.broadcast,)


def test_registering_twice_or_an_unknown_name_or_using_a_missing_one_raises(monkeypatch):
    with pytest.raises(RuntimeError, match="'run' is registered twice"):
        _global_hooks.provide(run=lambda *a: None)
    with pytest.raises(ValueError, match="'nope' is not one of"):
        _global_hooks.provide(nope=lambda: None)
    monkeypatch.delitem(_global_hooks._HOOKS, "run")
    with pytest.raises(RuntimeError, match="'run' is not registered"):
        _global_hooks.use("run")
