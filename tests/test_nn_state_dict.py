"""state_dict / load_state_dict against torch: keys and order, round trips through numpy,
strict and non-strict loading with their errors, assign, the per-module hooks and the
_save_to_state_dict / _load_from_state_dict extension points."""
from collections import OrderedDict

import pytest
import torch

from harness import flow
from nn_util import arr, close, make_mlp, make_net, to_flow_state, twins


def test_keys_and_order_match_torch():
    fm, tm = twins(make_net)
    assert list(fm.state_dict()) == list(tm.state_dict())
    assert "cache" not in fm.state_dict()  # non-persistent
    assert isinstance(fm.state_dict(), OrderedDict)


def test_values_are_detached_unless_keep_vars():
    m = make_net(flow)
    sd = m.state_dict()
    w = sd["block.fc.weight"]
    assert type(w) is flow.Tensor and not w.requires_grad
    assert w._shares_storage(m.block.fc.weight)  # a detached alias, like torch
    kept = m.state_dict(keep_vars=True)
    assert kept["block.fc.weight"] is m.block.fc.weight
    assert kept["stats"] is m.stats


def test_prefix_destination_and_metadata():
    fm, tm = twins(make_net)
    assert list(fm.state_dict(prefix="net.")) == list(tm.state_dict(prefix="net."))
    dest = OrderedDict(extra=1)
    assert fm.state_dict(destination=dest) is dest and "extra" in dest and "scale" in dest
    assert dict(fm.state_dict()._metadata) == dict(tm.state_dict()._metadata)


def test_round_trip_flow_torch_flow():
    fm, tm = twins(make_mlp)
    x = arr(6, 4)
    close(fm(flow.tensor(x)), tm(torch.tensor(x)))
    # Train the torch copy a little, then bring its weights back.
    with torch.no_grad():
        for p in tm.parameters():
            p.add_(torch.tensor(arr(*p.shape)))
    fresh = make_mlp(flow)
    result = fresh.load_state_dict(to_flow_state(tm))
    assert result.missing_keys == [] and result.unexpected_keys == []
    assert repr(result) == "<All keys matched successfully>"
    close(fresh(flow.tensor(x)), tm(torch.tensor(x)))


def test_load_copies_into_existing_parameters():
    m = make_mlp(flow)
    w = m[0].weight
    new = {k: flow.tensor(arr(*v.shape)) for k, v in m.state_dict().items()}
    m.load_state_dict(new)
    assert m[0].weight is w and w.requires_grad and type(w) is flow.nn.Parameter
    close(w, new["0.weight"].numpy())
    assert not w._shares_storage(new["0.weight"])


def test_load_numpy_values_as_oneflow():
    # OneFlow (unlike PyTorch) loads numpy arrays: upstream's autotest copies a torch module's
    # weights into the oneflow module as `{k: v.numpy()}`, buffers included.
    fm, tm = flow.nn.BatchNorm2d(3), torch.nn.BatchNorm2d(3)
    with torch.no_grad():
        tm.weight.copy_(torch.tensor(arr(3)))
        tm.running_var.copy_(torch.tensor(arr(3)).abs())
    tm.num_batches_tracked.fill_(7)
    w = fm.weight
    result = fm.load_state_dict({k: v.numpy() for k, v in tm.state_dict().items()})
    assert repr(result) == "<All keys matched successfully>"
    assert fm.weight is w and type(w) is flow.nn.Parameter and w.requires_grad
    for k, v in tm.state_dict().items():
        close(fm.state_dict()[k], v)
    assert fm.num_batches_tracked.dtype == flow.int64 and int(fm.num_batches_tracked) == 7
    x = arr(2, 3, 4, 4)
    close(fm.eval()(flow.tensor(x)), tm.eval()(torch.tensor(x)))
    with pytest.raises(RuntimeError, match="size mismatch for weight"):
        flow.nn.Linear(2, 3).load_state_dict({"weight": arr(4, 2), "bias": arr(3)})


def test_load_casts_to_the_parameter_dtype():
    m = flow.nn.Linear(2, 2)
    m.load_state_dict({"weight": flow.ones(2, 2, dtype=flow.float64), "bias": flow.zeros(2)})
    assert m.weight.dtype == flow.float32 and m.weight.tolist() == [[1.0, 1.0], [1.0, 1.0]]


def test_assign_takes_the_checkpoint_tensors():
    for lib in (flow, torch):
        m = lib.nn.Linear(2, 2)
        m.weight.requires_grad_(False)
        w = lib.ones(2, 2)
        m.load_state_dict({"weight": w, "bias": lib.zeros(2)}, assign=True)
        assert isinstance(m.weight, lib.nn.Parameter) and not m.weight.requires_grad
        assert m.bias.requires_grad
        assert m.weight._shares_storage(w) if lib is flow else m.weight.data_ptr() == w.data_ptr()


def _missing(lib):
    sd = lib.nn.Linear(2, 3).state_dict()
    del sd["bias"]
    return sd


def _unexpected(lib):
    sd = lib.nn.Linear(2, 3).state_dict()
    sd["extra"] = lib.ones(1)
    sd["sub.weight"] = lib.ones(1)
    return sd


def _both(lib):
    sd = _unexpected(lib)
    del sd["weight"]
    return sd


def _shape(lib):
    sd = lib.nn.Linear(2, 3).state_dict()
    sd["weight"] = lib.ones(4, 2)
    return sd


def _not_tensor(lib):
    sd = lib.nn.Linear(2, 3).state_dict()
    sd["bias"] = [1.0, 2.0, 3.0]
    return sd


def _nested_missing(lib):
    sd = make_net(lib).state_dict()
    del sd["head.0.bias"]
    sd["head.5.weight"] = lib.ones(1)
    return sd


LOAD_CASES = [
    ("missing", lambda lib: lib.nn.Linear(2, 3), _missing),
    ("unexpected", lambda lib: lib.nn.Linear(2, 3), _unexpected),
    ("missing-and-unexpected", lambda lib: lib.nn.Linear(2, 3), _both),
    ("size-mismatch", lambda lib: lib.nn.Linear(2, 3), _shape),
    ("not-a-tensor", lambda lib: lib.nn.Linear(2, 3), _not_tensor),
    ("nested", make_net, _nested_missing),
]


def _run_load(lib, make, state, strict):
    return make(lib).load_state_dict(state(lib), strict=strict)


@pytest.mark.parametrize("make,state", [c[1:] for c in LOAD_CASES], ids=[c[0] for c in LOAD_CASES])
def test_strict_load_errors_match_torch(make, state):
    with pytest.raises(RuntimeError) as te:
        _run_load(torch, make, state, True)
    with pytest.raises(RuntimeError) as fe:
        _run_load(flow, make, state, True)
    assert str(fe.value) == str(te.value).replace("torch.", "oneflow.")
    assert str(fe.value).startswith("Error(s) in loading state_dict for ")


@pytest.mark.parametrize("make,state", [c[1:] for c in LOAD_CASES if c[0] in (
    "missing", "unexpected", "missing-and-unexpected", "nested")],
    ids=["missing", "unexpected", "missing-and-unexpected", "nested"])
def test_non_strict_load_reports_keys_as_torch(make, state):
    r_t = _run_load(torch, make, state, False)
    r_f = _run_load(flow, make, state, False)
    assert r_f.missing_keys == r_t.missing_keys and r_f.unexpected_keys == r_t.unexpected_keys
    assert repr(r_f) == repr(r_t)
    assert type(r_f).__name__ == "_IncompatibleKeys" and r_f._fields == ("missing_keys",
                                                                          "unexpected_keys")


def test_non_strict_load_still_raises_on_size_mismatch():
    with pytest.raises(RuntimeError, match="size mismatch for weight: copying a param with shape "
                       r"oneflow.Size\(\[4, 2\]\) from checkpoint, the shape in current model is "
                       r"oneflow.Size\(\[3, 2\]\)."):
        flow.nn.Linear(2, 3).load_state_dict(_shape(flow), strict=False)


def test_load_non_mapping_is_a_type_error():
    with pytest.raises(TypeError, match="Expected state_dict to be dict-like"):
        flow.nn.Linear(1, 1).load_state_dict([("weight", flow.ones(1, 1))])


def test_load_one_element_into_zero_dim_parameter():
    m = flow.nn.Module()
    m.t = flow.nn.Parameter(flow.tensor(0.0))
    m.load_state_dict({"t": flow.tensor([5.0])})
    assert m.t.item() == 5.0 and tuple(m.t.shape) == ()


def test_non_persistent_buffer_is_neither_saved_nor_expected():
    m = make_net(flow)
    sd = m.state_dict()
    assert "cache" not in sd
    with pytest.raises(RuntimeError, match='Unexpected key\\(s\\) in state_dict: "cache"'):
        m.load_state_dict({**sd, "cache": flow.zeros(2)})


# ---------------------------------------------------------------------------
# Hooks and extension points


def _hook_log(lib):
    log = []
    m = lib.nn.Sequential(lib.nn.Linear(2, 2))
    m.register_state_dict_pre_hook(lambda mod, prefix, keep_vars: log.append(("pre", prefix)))
    m[0].register_state_dict_pre_hook(lambda mod, prefix, keep_vars: log.append(("pre0", prefix)))

    def post(mod, sd, prefix, meta):
        log.append(("post", prefix, list(sd)))
        sd[prefix + "added"] = lib.zeros(1)

    m[0].register_state_dict_post_hook(post)
    sd = m.state_dict()
    log.append(("keys", list(sd)))

    def load_pre(mod, sd, prefix, meta, strict, missing, unexpected, errors):
        log.append(("load_pre", type(mod).__name__, prefix, sorted(sd)))
        sd.pop(prefix + "added", None)

    def load_post(mod, keys):
        log.append(("load_post", type(mod).__name__, list(keys.missing_keys)))

    m[0].register_load_state_dict_pre_hook(load_pre)
    m.register_load_state_dict_post_hook(load_post)
    m.load_state_dict(sd)
    return log


def test_state_dict_hooks_order_and_effects_match_torch():
    assert _hook_log(flow) == _hook_log(torch)


def test_state_dict_post_hook_must_return_none():
    m = flow.nn.Linear(1, 1)
    m.register_state_dict_post_hook(lambda *a: {})
    with pytest.raises(RuntimeError, match="state_dict post-hook must return None"):
        m.state_dict()


def test_removed_state_dict_hook_does_not_run():
    calls = []
    m = flow.nn.Linear(1, 1)
    h = m.register_state_dict_pre_hook(lambda *a: calls.append(1))
    h.remove()
    m.state_dict()
    assert calls == []


def make_versioned(lib):
    """A module that renamed a parameter in version 2 and converts old checkpoints."""

    class Scaled(lib.nn.Module):
        _version = 2

        def __init__(self):
            super().__init__()
            self.gain = lib.nn.Parameter(lib.ones(2))

        def _load_from_state_dict(self, state_dict, prefix, local_metadata, strict, missing_keys,
                                  unexpected_keys, error_msgs):
            version = local_metadata.get("version", None)
            if (version is None or version < 2) and prefix + "scale" in state_dict:
                state_dict[prefix + "gain"] = state_dict.pop(prefix + "scale")
            super()._load_from_state_dict(state_dict, prefix, local_metadata, strict,
                                          missing_keys, unexpected_keys, error_msgs)

        def _save_to_state_dict(self, destination, prefix, keep_vars):
            super()._save_to_state_dict(destination, prefix, keep_vars)
            destination[prefix + "gain_sum"] = self.gain.detach().sum()

    return lib.nn.Sequential(Scaled())


def test_load_from_state_dict_override_sees_version_metadata():
    results = {}
    for lib in (flow, torch):
        m = make_versioned(lib)
        sd = m.state_dict()
        assert sd._metadata["0"]["version"] == 2 and "0.gain_sum" in sd
        old = OrderedDict([("0.scale", lib.tensor([3.0, 4.0]))])
        old._metadata = {"0": {"version": 1}}
        r = m.load_state_dict(old, strict=False)
        results[lib] = (m[0].gain.tolist(), r.missing_keys, r.unexpected_keys)
    assert results[flow] == results[torch] and results[flow][0] == [3.0, 4.0]


def make_extra_state(lib):
    class Counter(lib.nn.Module):
        def __init__(self):
            super().__init__()
            self.steps = 0

        def get_extra_state(self):
            return {"steps": self.steps}

        def set_extra_state(self, state):
            self.steps = state["steps"]

    return lib.nn.Sequential(Counter())


def test_extra_state_round_trip_and_missing_key():
    for lib in (flow, torch):
        m = make_extra_state(lib)
        m[0].steps = 7
        sd = m.state_dict()
        assert list(sd) == ["0._extra_state"] and sd["0._extra_state"] == {"steps": 7}
        fresh = make_extra_state(lib)
        fresh.load_state_dict(sd)
        assert fresh[0].steps == 7
    with pytest.raises(RuntimeError) as te:
        make_extra_state(torch).load_state_dict({})
    with pytest.raises(RuntimeError) as fe:
        make_extra_state(flow).load_state_dict({})
    assert str(fe.value) == str(te.value)
    # A module without set_extra_state rejects such a key.
    with pytest.raises(RuntimeError, match='Unexpected key\\(s\\) in state_dict: "_extra_state"'):
        flow.nn.Identity().load_state_dict({"_extra_state": 1})


def test_exception_while_copying_is_reported(monkeypatch):
    def failing_copy(self, src):
        raise RuntimeError("copy refused")

    m = flow.nn.Linear(1, 2)
    monkeypatch.setattr(flow.nn.Parameter, "copy_", failing_copy)
    with pytest.raises(RuntimeError) as e:
        m.load_state_dict({"weight": flow.ones(2, 1), "bias": flow.ones(2)})
    assert str(e.value) == (
        "Error(s) in loading state_dict for Linear:\n\t"
        'While copying the parameter named "weight", whose dimensions in the model are '
        "oneflow.Size([2, 1]) and whose dimensions in the checkpoint are oneflow.Size([2, 1]), "
        "an exception occurred : ('copy refused',).\n\t"
        'While copying the parameter named "bias", whose dimensions in the model are '
        "oneflow.Size([2]) and whose dimensions in the checkpoint are oneflow.Size([2]), "
        "an exception occurred : ('copy refused',).")
