"""nn.utils.prune against torch.nn.utils.prune on twin modules (same weights): masks, pruned
values, the reparametrised names (state_dict, named_parameters / named_buffers), gradients
through a pruned module, successive pruning (PruningContainer), remove, global_unstructured,
custom_from_mask, and the error cases. Random methods are checked by counts and structure."""
import copy
import math

import numpy as np
import pytest
import torch
import torch.nn.utils.prune  # noqa: F401  (not imported by torch.nn.utils itself)

from harness import flow
from nn_util import arr, close, np_of, twins

fprune = flow.nn.utils.prune
tprune = torch.nn.utils.prune


def linear_twins(i=6, o=5):
    return twins(lambda L: L.nn.Linear(i, o))


def conv_twins():
    return twins(lambda L: L.nn.Conv2d(3, 4, 3))


def mlp_twins():
    return twins(lambda L: L.nn.Sequential(L.nn.Linear(4, 6), L.nn.ReLU(), L.nn.Linear(6, 3)))


def same_pruned_state(fm, tm, name="weight"):
    """Mask, pruned value, original and every name of the pruned form agree with torch."""
    close(getattr(fm, name + "_mask"), getattr(tm, name + "_mask"))
    close(getattr(fm, name), getattr(tm, name))
    close(getattr(fm, name + "_orig"), getattr(tm, name + "_orig"))
    assert list(fm.state_dict()) == list(tm.state_dict())
    assert [n for n, _ in fm.named_parameters()] == [n for n, _ in tm.named_parameters()]
    assert [n for n, _ in fm.named_buffers()] == [n for n, _ in tm.named_buffers()]


def pruning_hooks(m):
    return [h for h in m._forward_pre_hooks.values() if isinstance(h, fprune.BasePruningMethod)]


# ------------------------------------------------------------------------- deterministic methods

@pytest.mark.parametrize("amount", [0, 1, 7, 30, 0.0, 0.3, 0.5, 0.75, 1.0])
def test_l1_unstructured_matches_torch(amount):
    fm, tm = linear_twins()
    before = np_of(fm.weight).copy()
    assert fprune.l1_unstructured(fm, "weight", amount) is fm
    tprune.l1_unstructured(tm, "weight", amount)
    same_pruned_state(fm, tm)
    assert list(fm.state_dict()) == ["bias", "weight_orig", "weight_mask"]
    assert isinstance(fm.weight_orig, flow.nn.Parameter)
    assert not isinstance(fm.weight, flow.nn.Parameter) and "weight" in fm.__dict__
    np.testing.assert_array_equal(np_of(fm.weight_orig), before)
    assert fm.weight_mask.dtype == flow.float32 and not fm.weight_mask.requires_grad
    expected = amount if isinstance(amount, int) else round(amount * 30)
    assert int((fm.weight_mask == 0).sum()) == expected
    assert fprune.is_pruned(fm) and len(pruning_hooks(fm)) == 1


def test_l1_unstructured_on_bias_and_conv():
    fm, tm = conv_twins()
    fprune.l1_unstructured(fm, "bias", 2)
    tprune.l1_unstructured(tm, "bias", 2)
    fprune.l1_unstructured(fm, "weight", 0.4)
    tprune.l1_unstructured(tm, "weight", 0.4)
    same_pruned_state(fm, tm, "bias")
    same_pruned_state(fm, tm, "weight")
    assert sorted(h._tensor_name for h in pruning_hooks(fm)) == ["bias", "weight"]


@pytest.mark.parametrize("n", [1, 2, 3, math.inf, -math.inf])
@pytest.mark.parametrize("dim", [0, 1, -1])
def test_ln_structured_matches_torch(n, dim):
    fm, tm = conv_twins()
    fprune.ln_structured(fm, "weight", 0.5, n, dim)
    tprune.ln_structured(tm, "weight", 0.5, n, dim)
    same_pruned_state(fm, tm)
    # Whole channels along `dim`: each one all pruned or all kept.
    mask = np.moveaxis(np_of(fm.weight_mask), dim, 0).reshape(fm.weight_mask.shape[dim], -1)
    assert set(mask.min(1) == mask.max(1)) == {True}


def test_ln_structured_string_norms():
    # n as torch.norm's p: 'fro' over the one dim a Linear weight leaves, 'nuc' over the two a
    # 3-d weight leaves; 'fro' over a conv weight's three dims is refused by both libraries.
    fm, tm = linear_twins()
    fprune.ln_structured(fm, "weight", 2, "fro", 1)
    tprune.ln_structured(tm, "weight", 2, "fro", 1)
    same_pruned_state(fm, tm)
    a = arr(4, 3, 5)
    f = fprune.LnStructured(2, "nuc", 0).prune(flow.tensor(a))
    t = tprune.LnStructured(2, "nuc", 0).prune(torch.tensor(a))
    close(f, t)
    fm, tm = conv_twins()
    with pytest.raises(RuntimeError, match="dim must be a 2-tuple"):
        tprune.ln_structured(tm, "weight", 1, "fro", 0)
    with pytest.raises(RuntimeError, match="dim must be a 2-tuple"):
        fprune.ln_structured(fm, "weight", 1, "fro", 0)
    assert isinstance(fm.weight, flow.nn.Parameter) and not fprune.is_pruned(fm)


@pytest.mark.parametrize("amount", [0, 2, 4, 0.25])
def test_ln_structured_amounts(amount):
    fm, tm = linear_twins()
    fprune.ln_structured(fm, "weight", amount, 2, 0)
    tprune.ln_structured(tm, "weight", amount, 2, 0)
    same_pruned_state(fm, tm)
    assert int((fm.weight_mask.sum(1) == 0).sum()) == (amount if isinstance(amount, int)
                                                       else round(amount * 5))


def test_importance_scores():
    fm, tm = linear_twins()
    scores = arr(5, 6)
    fprune.l1_unstructured(fm, "weight", 9, importance_scores=flow.tensor(scores))
    tprune.l1_unstructured(tm, "weight", 9, importance_scores=torch.tensor(scores))
    same_pruned_state(fm, tm)
    # The scores chose, not the weights: the 9 smallest |scores| are the pruned entries.
    pruned = np_of(fm.weight_mask).reshape(-1) == 0
    assert set(np.argsort(np.abs(scores).reshape(-1))[:9]) == set(np.flatnonzero(pruned))
    fm, tm = conv_twins()
    scores = arr(4, 3, 3, 3)
    fprune.ln_structured(fm, "weight", 2, 1, 0, importance_scores=flow.tensor(scores))
    tprune.ln_structured(tm, "weight", 2, 1, 0, importance_scores=torch.tensor(scores))
    same_pruned_state(fm, tm)


def test_identity_and_custom_from_mask():
    fm, tm = linear_twins()
    fprune.identity(fm, "weight")
    tprune.identity(tm, "weight")
    same_pruned_state(fm, tm)
    assert bool((fm.weight_mask == 1).all())
    mask = (arr(5) > 0).astype(np.float32)
    fprune.custom_from_mask(fm, "bias", flow.tensor(mask))
    tprune.custom_from_mask(tm, "bias", torch.tensor(mask))
    same_pruned_state(fm, tm, "bias")
    np.testing.assert_array_equal(np_of(fm.bias_mask), mask)
    # A boolean mask is cast to the parameter's dtype.
    fm, tm = linear_twins()
    bmask = arr(5, 6) > 0.2
    fprune.custom_from_mask(fm, "weight", flow.tensor(bmask))
    tprune.custom_from_mask(tm, "weight", torch.tensor(bmask))
    same_pruned_state(fm, tm)
    assert fm.weight_mask.dtype == flow.float32


def test_prune_method_on_a_tensor():
    a = arr(4, 5)
    f = fprune.L1Unstructured(0.4).prune(flow.tensor(a))
    t = tprune.L1Unstructured(0.4).prune(torch.tensor(a))
    close(f, t)
    dm = (arr(4, 5) > -0.5).astype(np.float32)
    f = fprune.LnStructured(2, 2, 0).prune(flow.tensor(a), default_mask=flow.tensor(dm),
                                           importance_scores=flow.tensor(a[::-1].copy()))
    t = tprune.LnStructured(2, 2, 0).prune(torch.tensor(a), default_mask=torch.tensor(dm),
                                           importance_scores=torch.tensor(a[::-1].copy()))
    close(f, t)
    # prune() is differentiable in t, through the mask.
    x = flow.tensor(a, requires_grad=True)
    fprune.L1Unstructured(5).prune(x).sum().backward()
    assert int((x.grad == 0).sum()) == 5


# ------------------------------------------------------------------------- gradients and forward

def test_forward_and_gradients_through_pruned_module():
    fm, tm = mlp_twins()
    for lib_prune, m in ((fprune, fm), (tprune, tm)):
        lib_prune.l1_unstructured(m[0], "weight", 0.5)
        lib_prune.ln_structured(m[2], "weight", 1, 2, 1)
        lib_prune.l1_unstructured(m[2], "bias", 1)
    x = arr(7, 4)
    out_f, out_t = fm(flow.tensor(x)), tm(torch.tensor(x))
    close(out_f, out_t, rtol=1e-5, atol=1e-6)
    w = arr(7, 3)
    (out_f * flow.tensor(w)).sum().backward()
    (out_t * torch.tensor(w)).sum().backward()
    named_t = dict(tm.named_parameters())
    names = [n for n, _ in fm.named_parameters()]
    assert names == ["0.bias", "0.weight_orig", "2.weight_orig", "2.bias_orig"]
    for name, p in fm.named_parameters():
        close(p.grad, named_t[name].grad, rtol=1e-5, atol=1e-6)
    # The pruned entries get no gradient; the mask buffers none at all.
    assert bool((fm[0].weight_orig.grad[fm[0].weight_mask == 0] == 0).all())
    assert fm[0].weight_mask.grad is None


def test_hook_recomputes_from_updated_orig():
    fm, tm = linear_twins()
    fprune.l1_unstructured(fm, "weight", 10)
    tprune.l1_unstructured(tm, "weight", 10)
    delta = arr(5, 6)
    with flow.no_grad():
        fm.weight_orig.add_(flow.tensor(delta))
    with torch.no_grad():
        tm.weight_orig.add_(torch.tensor(delta))
    x = arr(3, 6)
    close(fm(flow.tensor(x)), tm(torch.tensor(x)), rtol=1e-5, atol=1e-6)
    close(fm.weight, np_of(fm.weight_orig) * np_of(fm.weight_mask))
    same_pruned_state(fm, tm)


def test_training_step_keeps_pruned_entries_zero():
    fm, _ = linear_twins()
    fprune.l1_unstructured(fm, "weight", 0.5)
    opt = flow.optim.SGD(fm.parameters(), lr=0.1)
    for _ in range(3):
        opt.zero_grad()
        fm(flow.tensor(arr(4, 6))).pow(2).sum().backward()
        opt.step()
    fm(flow.tensor(arr(1, 6)))
    assert bool((fm.weight[fm.weight_mask == 0] == 0).all())
    assert int((fm.weight == 0).sum()) == 15


# ------------------------------------------------------------------------- successive pruning

def test_successive_pruning_builds_container():
    fm, tm = conv_twins()
    cmask = (arr(4, 3, 3, 3) > -0.6).astype(np.float32)
    steps = [
        lambda P, L, m: P.l1_unstructured(m, "weight", 0.3),
        lambda P, L, m: P.l1_unstructured(m, "weight", 10),
        lambda P, L, m: P.ln_structured(m, "weight", 1, 2, 0),
        lambda P, L, m: P.ln_structured(m, "weight", 0.5, 1, 0),  # of the 3 channels left
        lambda P, L, m: P.custom_from_mask(m, "weight", L.tensor(cmask)),
        lambda P, L, m: P.ln_structured(m, "weight", 1, math.inf, 1),
    ]
    for i, step in enumerate(steps):
        step(fprune, flow, fm)
        step(tprune, torch, tm)
        same_pruned_state(fm, tm)
        hooks = pruning_hooks(fm)
        assert len(hooks) == 1 and len(fm._forward_pre_hooks) == 1
        if i == 0:
            assert type(hooks[0]) is fprune.L1Unstructured
        else:
            assert isinstance(hooks[0], fprune.PruningContainer) and len(hooks[0]) == i + 1
    kinds = [type(m).__name__ for m in pruning_hooks(fm)[0]]
    assert kinds == ["L1Unstructured", "L1Unstructured", "LnStructured", "LnStructured",
                     "CustomFromMask", "LnStructured"]
    mask = np_of(fm.weight_mask)
    # 1 channel, then round(0.5 * 3) = 2 (half to even) of the 3 left.
    assert (mask.reshape(4, -1).sum(1) == 0).sum() == 3


def test_successive_fraction_is_of_what_remains():
    fm, _ = linear_twins(10, 10)
    fprune.l1_unstructured(fm, "weight", 0.5)
    fprune.random_unstructured(fm, "weight", 0.5)
    fprune.l1_unstructured(fm, "weight", 0.2)
    assert int((fm.weight_mask == 0).sum()) == 50 + 25 + 5


def test_container_api():
    a, b = fprune.L1Unstructured(0.2), fprune.RandomStructured(1, dim=0)
    a._tensor_name = b._tensor_name = "weight"
    c = fprune.PruningContainer(a, b)
    assert len(c) == 2 and c[0] is a and list(c) == [a, b] and c._tensor_name == "weight"
    c.add_pruning_method(None)
    assert len(c) == 2
    with pytest.raises(TypeError, match="is not a BasePruningMethod subclass"):
        c.add_pruning_method(3)
    other = fprune.Identity()
    other._tensor_name = "bias"
    with pytest.raises(ValueError, match="Can only add pruning methods acting on the parameter "
                                         "named 'weight'"):
        c.add_pruning_method(other)
    with pytest.raises(TypeError):  # abstract, as in torch
        fprune.BasePruningMethod()
    assert fprune.L1Unstructured.PRUNING_TYPE == "unstructured"
    assert fprune.LnStructured.PRUNING_TYPE == "structured"
    assert fprune.CustomFromMask.PRUNING_TYPE == "global"


# ------------------------------------------------------------------------- remove

def test_remove_makes_pruning_permanent():
    fm, tm = mlp_twins()
    for P, m in ((fprune, fm), (tprune, tm)):
        P.l1_unstructured(m[0], "weight", 0.5)
        P.l1_unstructured(m[0], "weight", 0.5)
        P.random_unstructured(m[2], "bias", 1)
    orig = fm[0].weight_orig
    assert fprune.remove(fm[0], "weight") is fm[0]
    tprune.remove(tm[0], "weight")
    assert fm[0].weight is orig and isinstance(fm[0].weight, flow.nn.Parameter)
    close(fm[0].weight, tm[0].weight)
    assert int((fm[0].weight == 0).sum()) == 18
    assert list(fm.state_dict()) == list(tm.state_dict())
    assert [n for n, _ in fm.named_parameters()] == [n for n, _ in tm.named_parameters()]
    assert [n for n, _ in fm.named_buffers()] == ["2.bias_mask"]
    assert not pruning_hooks(fm[0]) and fprune.is_pruned(fm)
    fprune.remove(fm[2], "bias")
    assert not fprune.is_pruned(fm) and not list(fm.buffers())
    assert "bias" not in fm[2].__dict__ and isinstance(fm[2].bias, flow.nn.Parameter)
    with pytest.raises(ValueError, match="has to be pruned before pruning can be removed"):
        fprune.remove(fm[0], "weight")
    # The permanent weight trains like any parameter.
    fm(flow.tensor(arr(2, 4))).sum().backward()
    assert fm[0].weight.grad is not None


# ------------------------------------------------------------------------- global pruning

@pytest.mark.parametrize("amount", [0, 12, 0.4, 1.0])
def test_global_unstructured_matches_torch(amount):
    fm, tm = mlp_twins()
    fprune.global_unstructured([(fm[0], "weight"), (fm[2], "weight"), (fm[2], "bias")],
                               fprune.L1Unstructured, amount=amount)
    tprune.global_unstructured([(tm[0], "weight"), (tm[2], "weight"), (tm[2], "bias")],
                               tprune.L1Unstructured, amount=amount)
    for i, name in ((0, "weight"), (2, "weight"), (2, "bias")):
        same_pruned_state(fm[i], tm[i], name)
        hook, = [h for h in pruning_hooks(fm[i]) if h._tensor_name == name]
        assert isinstance(hook, fprune.CustomFromMask)
    total = sum(int((m == 0).sum()) for m in fm.buffers())
    assert total == (amount if isinstance(amount, int) else round(amount * 45))


def test_global_unstructured_scores_generator_and_prepruned():
    fm, tm = mlp_twins()
    fprune.l1_unstructured(fm[0], "weight", 5)
    tprune.l1_unstructured(tm[0], "weight", 5)
    s0, s2 = arr(6, 4), arr(3, 6)
    f_scores = {(fm[0], "weight"): flow.tensor(s0), (fm[2], "weight"): flow.tensor(s2)}
    t_scores = {(tm[0], "weight"): torch.tensor(s0), (tm[2], "weight"): torch.tensor(s2)}
    # A generator of pairs is accepted (read once here, as torch would need a list).
    fprune.global_unstructured(((m, "weight") for m in (fm[0], fm[2])), fprune.L1Unstructured,
                               importance_scores=f_scores, amount=0.5)
    tprune.global_unstructured([(tm[0], "weight"), (tm[2], "weight")], tprune.L1Unstructured,
                               importance_scores=t_scores, amount=0.5)
    same_pruned_state(fm[0], tm[0])
    same_pruned_state(fm[2], tm[2])
    assert len(pruning_hooks(fm[0])[0]) == 2  # L1 then CustomFromMask, in a container
    # 5 already pruned; half of the 37 left (round(18.5) = 18, half to even) on top of them.
    assert sum(int((m == 0).sum()) for m in fm.buffers()) == 5 + 18


def test_global_random_unstructured_count():
    fm, _ = mlp_twins()
    fprune.global_unstructured([(fm[0], "weight"), (fm[2], "weight")],
                               fprune.RandomUnstructured, amount=20)
    assert int((fm[0].weight_mask == 0).sum()) + int((fm[2].weight_mask == 0).sum()) == 20


# ------------------------------------------------------------------------- random methods

@pytest.mark.parametrize("amount", [0, 5, 0.6, 1.0])
def test_random_unstructured_counts(amount):
    flow.manual_seed(1)
    fm, _ = linear_twins()
    before = np_of(fm.weight).copy()
    fprune.random_unstructured(fm, "weight", amount)
    mask = np_of(fm.weight_mask)
    assert set(np.unique(mask)) <= {0.0, 1.0}
    assert (mask == 0).sum() == (amount if isinstance(amount, int) else round(amount * 30))
    np.testing.assert_array_equal(np_of(fm.weight), before * mask)
    np.testing.assert_array_equal(np_of(fm.weight_orig), before)


def test_random_unstructured_follows_the_seed():
    masks = []
    for _ in range(2):
        flow.manual_seed(7)
        fm, _ = linear_twins()
        fprune.random_unstructured(fm, "weight", 0.5)
        masks.append(np_of(fm.weight_mask))
    np.testing.assert_array_equal(masks[0], masks[1])


@pytest.mark.parametrize("dim", [0, 1, -1, 3])
def test_random_structured_channels(dim):
    fm, _ = conv_twins()
    size = fm.weight.shape[dim]
    fprune.random_structured(fm, "weight", 1, dim)
    per_channel = np.moveaxis(np_of(fm.weight_mask), dim, 0).reshape(size, -1)
    assert (per_channel.min(1) == per_channel.max(1)).all()  # whole channels
    assert (per_channel.max(1) == 0).sum() == 1
    # Again on the same dim: another channel among those left.
    fprune.random_structured(fm, "weight", 0.5, dim)
    per_channel = np.moveaxis(np_of(fm.weight_mask), dim, 0).reshape(size, -1)
    assert (per_channel.max(1) == 0).sum() == 1 + round(0.5 * (size - 1))
    assert isinstance(pruning_hooks(fm)[0], fprune.PruningContainer)


def test_random_structured_after_unstructured_keeps_earlier_zeros():
    fm, _ = linear_twins()
    fprune.l1_unstructured(fm, "weight", 4)
    first = np_of(fm.weight_mask).copy()
    fprune.random_structured(fm, "weight", 2, 0)
    mask = np_of(fm.weight_mask)
    assert (mask[first == 0] == 0).all()
    assert (mask.sum(1) == 0).sum() >= 2


# ------------------------------------------------------------------------- state and copies

def test_state_dict_interchange_with_torch():
    fm, tm = linear_twins()
    fprune.l1_unstructured(fm, "weight", 0.5)
    tprune.random_unstructured(tm, "weight", 0.5)  # a different mask, loaded from torch
    state = {k: flow.tensor(v.detach().numpy()) for k, v in tm.state_dict().items()}
    fm.load_state_dict(state)
    close(fm.weight_mask, tm.weight_mask)
    x = arr(2, 6)
    close(fm(flow.tensor(x)), tm(torch.tensor(x)), rtol=1e-5, atol=1e-6)
    # torch refuses to deep-copy the computed (non-leaf) weight attribute; ours copies it as
    # upstream OneFlow does (Tensor.__deepcopy__), and the copy's hook recomputes it on its next
    # call. After remove the module copies like any other.
    with pytest.raises(RuntimeError, match="graph leaves"):
        copy.deepcopy(tm)
    pruned = copy.deepcopy(fm)
    assert fprune.is_pruned(pruned) and pruned.weight_orig is not fm.weight_orig
    close(pruned(flow.tensor(x)), tm(torch.tensor(x)), rtol=1e-5, atol=1e-6)
    tprune.remove(tm, "weight")
    fprune.remove(fm, "weight")
    dup = copy.deepcopy(fm)
    assert not fprune.is_pruned(dup) and dup.weight is not fm.weight
    close(dup(flow.tensor(x)), tm(torch.tensor(x)), rtol=1e-5, atol=1e-6)


# ------------------------------------------------------------------------- errors

@pytest.mark.parametrize("amount", [-1, 1.5, -0.1, "a", None, [0.5]])
def test_bad_amount_errors_as_torch(amount):
    for cls in ("L1Unstructured", "RandomUnstructured", "RandomStructured"):
        with pytest.raises(Exception) as tinfo:
            getattr(tprune, cls)(amount)
        with pytest.raises(type(tinfo.value)) as finfo:
            getattr(fprune, cls)(amount)
        assert str(finfo.value) == str(tinfo.value)
    with pytest.raises(type(tinfo.value)):
        fprune.ln_structured(flow.nn.Linear(2, 2), "weight", amount, 2, 0)


def test_amount_too_large_restores_the_module():
    fm, tm = linear_twins()
    with pytest.raises(ValueError) as tinfo:
        tprune.l1_unstructured(tm, "weight", 31)
    with pytest.raises(ValueError) as finfo:
        fprune.l1_unstructured(fm, "weight", 31)
    assert str(finfo.value) == str(tinfo.value) == ("amount=31 should be smaller than the number "
                                                    "of parameters to prune=30")
    assert isinstance(fm.weight, flow.nn.Parameter) and not fprune.is_pruned(fm)
    assert list(fm.state_dict()) == list(tm.state_dict()) and not list(fm.buffers())
    with pytest.raises(ValueError, match="amount=6 should be smaller than the number of "
                                         "parameters to prune=5"):
        fprune.ln_structured(fm, "weight", 6, 2, 0)
    with pytest.raises(ValueError, match="prune=5"):
        fprune.random_structured(fm, "weight", 6, 0)
    assert "weight" in fm._parameters and "weight_orig" not in fm._parameters


def test_failed_second_pruning_keeps_the_first():
    # Behaviour of ours only: PyTorch drops the first pruning's hook here.
    fm, _ = linear_twins()
    fprune.l1_unstructured(fm, "weight", 10)
    with pytest.raises(ValueError, match="prune=20"):
        fprune.l1_unstructured(fm, "weight", 21)  # 20 left
    hooks = pruning_hooks(fm)
    assert len(hooks) == 1 and type(hooks[0]) is fprune.L1Unstructured
    fprune.l1_unstructured(fm, "weight", 5)
    with pytest.raises(ValueError):
        fprune.l1_unstructured(fm, "weight", 16)
    assert len(pruning_hooks(fm)[0]) == 2 and int((fm.weight_mask == 0).sum()) == 15


def test_other_errors_as_torch():
    fm, tm = linear_twins()
    cases = [
        lambda P, L, m: P.l1_unstructured(m, "foo", 1),
        lambda P, L, m: P.random_structured(m, "bias", 1, 0),
        lambda P, L, m: P.ln_structured(m, "bias", 1, 2, 0),
        lambda P, L, m: P.remove(m, "weight"),
        lambda P, L, m: P.global_unstructured([(m, "weight")], P.RandomStructured, amount=1),
        lambda P, L, m: P.global_unstructured(3, P.L1Unstructured, amount=1),
        lambda P, L, m: P.global_unstructured([(m, "weight")], P.L1Unstructured,
                                              importance_scores=[1], amount=1),
        lambda P, L, m: P.l1_unstructured(m, "weight", 1, importance_scores=L.ones(6)),
    ]
    for case in cases:
        with pytest.raises(Exception) as tinfo:
            case(tprune, torch, tm)
        with pytest.raises(type(tinfo.value)) as finfo:
            case(fprune, flow, fm)
        first_line = str(tinfo.value).replace("torch.", "oneflow.").split(",")[0]
        assert str(finfo.value).startswith(first_line), (str(finfo.value), str(tinfo.value))
        assert not fprune.is_pruned(fm) and isinstance(fm.weight, flow.nn.Parameter)


def test_pruning_a_buffer_is_refused():
    fm = flow.nn.BatchNorm1d(3)
    with pytest.raises(TypeError, match="cannot assign"):
        fprune.l1_unstructured(fm, "running_mean", 1)
    assert "running_mean" in fm._buffers and not fprune.is_pruned(fm)
