"""Gradient tests driven by the op table in opinfo.py.

* test_grad_vs_torch: every sample with a floating tensor input, of every
  differentiable op, in every dtype the op lists (float16/bfloat16 included),
  contiguous and non-contiguous: floating inputs become leaves requiring grad,
  each output's ``requires_grad`` must match torch's, and
  ``flow.autograd.grad`` with a random grad_output must match
  ``torch.autograd.grad``.
* test_non_differentiable: the `backward: none` ops give outputs
  that do not require grad even when a floating input does (as in torch).
* test_inplace_grad: ``y = x * 1; y.op_(...); y.backward(g)`` gives torch's
  x.grad (and the other operands' grads).
* test_gradcheck_float64: analytic derivatives against central finite
  differences (float64, small samples) -- independent of torch.
* test_second_order: grad of grad (create_graph=True) for a few ops.
* test_every_yaml_op_is_classified: every op of the table (src/ops/table) is
  either gradient-tested here or `backward: none` (NON_DIFFERENTIABLE).
"""

import os
import re
import sys
import zlib

import numpy as np
import pytest
import torch

from gradcheck import (
    assert_grad_close,
    call,
    dtype_of,
    flat_tensors,
    fmt_error,
    grad_values,
    gradcheck,
    materialize_leaves,
    materialize_with,
    report,
)
import grad_refs_index
import grad_refs_special
from grad_skips import DRAW_DEPENDENT_GRADIENT, GRADCHECK_SKIP_OPS, OFF_DOMAIN, REFUSED_AT_BACKWARD
from harness import COMPLEX, FLOATS, flow, from_np, invoke, oneflow_only, tol_for
from opinfo import OPS, Arr, arrs_in
from opinfo.linalg import torch_det_by_cofactors, torch_pinv_via_svd
from opinfo.normalization import group_norm_composite, layer_norm_composite
from opinfo.pool import unpool_scatter_ref

# ---------------------------------------------------------------------------
# Classification

import optable_path  # noqa: E402,F401  (tools/ on sys.path)
import optable  # noqa: E402  (the generator's own reader of src/ops/table)

# Ops whose outputs never require grad: the table's `backward: none` ops (torch
# agrees: test_non_differentiable runs every one of their samples through
# torch as well), plus table-only Tensor methods casting to integral/bool. Ops with `test: none`
# have no samples here (their own test files check them: nms has no torch counterpart).
NON_DIFFERENTIABLE = {e["name"] for e in optable.load() if e.get("backward") == "none" and e.get("test") != "none"} | {
    "long", "int", "bool",
}

# In-place updates of their inputs (the optimizer updates, src/ops/table/optim.yaml): with
# leaves that require grad both torch and flow refuse them (test_non_differentiable).
INPLACE_UPDATES = {e["name"] for e in optable.load() if e["family"] == "optim"}

# torch's forward of floor_divide marks the output as requiring grad, but its
# backward raises "derivative for aten::floor_divide is not implemented".
# The function is piecewise constant, so the reference used here is
# floor(a / b), whose gradient is zero; flow may give zeros/None or raise in
# backward like torch (the op name is in BACKWARD_MAY_RAISE).
GRAD_REF = {"floor_divide": lambda a, b: torch.floor(a / b)}
# scatter ops: torch's backward fails on valid input (see grad_refs_index.py).
GRAD_REF.update(grad_refs_index.GRAD_REFS)
BACKWARD_MAY_RAISE = {"floor_divide"}
# nextafter, heaviside: torch records a node whose backward raises "not implemented" (flow
# does the same); the references only give torch something to differentiate.
# cummaxmin_backward (cummax/cummin's gradient op): its own gradient, a gather along dim,
# is not implemented yet, so flow raises there too.
GRAD_REF.update({
    "nextafter": lambda a, b: torch.nextafter(a.detach(), b.detach()) + 0 * (a + b),
    "heaviside": lambda a, b: torch.heaviside(a.detach(), b.detach()) + 0 * (a + b),
    "cummaxmin_backward": lambda g, i, d: torch.zeros_like(g).scatter_add(d, i, g),
})
BACKWARD_MAY_RAISE |= {"nextafter", "heaviside", "cummaxmin_backward"}


def _low_precision(s):
    return any(a.dtype in ("float16", "bfloat16") for a in arrs_in(s.args))


def _promoting(f):
    """``f`` with bool/integral tensor operands cast to the result dtype first."""

    def g(a, b):
        if isinstance(a, torch.Tensor) and isinstance(b, torch.Tensor):
            dt = torch.result_type(a, b)
            a = a if a.is_floating_point() else a.to(dt)
            b = b if b.is_floating_point() else b.to(dt)
        return f(a, b)

    return g


# Samples whose gradient is well defined but torch's backward raises.  The
# reference then uses an equivalent formula, and the case is ``oneflow_only``
# (under the torch shim, flow *is* torch and would raise the same way).
# name: (which samples, reference)
TORCH_GRAD_GAPS = {
    # 7 % y: "derivative for aten::remainder is not implemented" (the
    # Scalar-Tensor overload); d/dy = -floor(7 / y), the quotient taken in
    # float64 so that 16-bit rounding cannot move it across an integer.
    "remainder": (
        lambda s: not isinstance(s.args[0], Arr),
        lambda a, b: a - b * torch.floor(a / b.double()).to(b.dtype),
    ),
    # atan2 with a bool operand: torch's formula negates the bool tensor.
    "atan2": (lambda s: any(a.dtype == "bool" for a in arrs_in(s.args)), _promoting(torch.atan2)),
    # gather(sparse_grad=True): torch returns a sparse gradient; ours is the same values dense.
    "gather": (lambda s: s.kwargs.get("sparse_grad", False),
               lambda x, dim, index, sparse_grad=False: torch.gather(x, dim, index)),
    # det at a singular matrix: torch's backward gives zeros, the derivative is the cofactor matrix.
    "det": (lambda s: "singular" in s.desc, torch_det_by_cofactors),
    # pinv with atol/rtol cutting nonzero singular values: torch's backward assumes they are zero.
    "linalg_pinv": (lambda s: "atol" in s.kwargs or "rtol" in s.kwargs, torch_pinv_via_svd),
    # i1, i1e in 16-bit types: torch's backward has no 16-bit kernel; the reference is the
    # float32 computation rounded to the input's dtype.
    "i1": (lambda s: _low_precision(s), lambda x: torch.special.i1(x.float()).to(x.dtype)),
    "i1e": (lambda s: _low_precision(s), lambda x: torch.special.i1e(x.float()).to(x.dtype)),
    # max_unpoolNd: torch's backward views its (non-contiguous) indices and raises; the
    # reference is the same op written as a scatter.
    **{f"max_unpool{k}d": (lambda s: True, unpool_scatter_ref(k)(torch)) for k in (1, 2, 3)},
    # torch.special's Bessel functions: no derivative in torch; ours are the closed forms.
    **{n: (lambda s: True, grad_refs_special.closed_form(n, d))
       for n, d in grad_refs_special.BESSEL_DERIVATIVES.items()},
    # layer_norm with a bias but no weight: torch's backward raises "expected scalar type Half
    # but found Float" for half inputs, its double backward "Expected a proper Tensor but got
    # None" for all; group_norm with a bias but no weight: "tensor does not have a device".
    # The references are the compositions.
    "layer_norm": (lambda s: s.args[2:3] == (None,) and len(s.args) > 3,
                   layer_norm_composite(torch)),
    "group_norm": (lambda s: s.args[2:3] == (None,) and len(s.args) > 3,
                   group_norm_composite(torch)),
}
def _bag_sum_via_embedding(idx, w, off, mode="sum", scale_grad_by_freq=False, **k):
    """embedding_bag(mode='sum') as embedding + per-bag sums (torch's embedding scales by the
    index frequency correctly; its embedding_bag backward scales rows by the wrong count)."""
    e = torch.nn.functional.embedding(idx.long(), w, scale_grad_by_freq=scale_grad_by_freq)
    b = off.tolist() + [idx.numel()]
    return torch.stack([e[lo:hi].sum(0) for lo, hi in zip(b[:-1], b[1:])])


def _pixel_shuffle_composite(x, r):
    n, c, h, w = x.shape
    return x.reshape(n, c // (r * r), r, r, h, w).permute(0, 1, 4, 2, 5, 3).reshape(n, c // (r * r), h * r, w * r)


def _f32_then_round(f):
    def g(*a, **k):
        dt = next(t.dtype for t in a if isinstance(t, torch.Tensor) and t.is_floating_point())
        up = [t.float() if isinstance(t, torch.Tensor) and t.is_floating_point() else t for t in a]
        return f(*up, **k).to(dt)
    return g


_TF = torch.nn.functional
TORCH_GRAD_GAPS.update({
    # sparse=True: torch's gradient is a sparse tensor; ours the same values dense.
    "embedding": (lambda s: s.kwargs.get("sparse", False),
                  lambda i, w, *a, sparse=False, **k: _TF.embedding(i.long(), w, *a, **k)),
    # scale_grad_by_freq: torch's embedding_bag backward scales a row by another row's count.
    "embedding_bag": (lambda s: s.kwargs.get("scale_grad_by_freq", False), _bag_sum_via_embedding),
    # 4-d input, non-contiguous: torch's nll_loss2d backward raises "grad_input must be contiguous".
    "nll_loss": (lambda s: s.desc == "4-d input",
                 lambda x, t, *a, **k: _TF.nll_loss(x.contiguous(), t.long(), *a, **k)),
    # concatenated (1-D) targets that are a strided view: torch's CPU kernel reads them as if
    # contiguous (another loss than for the same values contiguous).
    "ctc_loss": (lambda s: s.desc == "concatenated targets",
                 lambda lp, t, il, tl, *a, **k: _TF.ctc_loss(lp, t.long().contiguous(), il.long(), tl.long(), *a, **k)),
    # an empty batch: torch's PixelShuffleBackward0 returns a gradient of the output's shape.
    "pixel_shuffle": (lambda s: s.desc == "zero batch", _pixel_shuffle_composite),
    # 16-bit var clamped to eps: torch's half backward overflows an intermediate to -inf (the
    # gradients are a few thousand); the reference is the float32 computation rounded once.
    "gaussian_nll_loss": (lambda s: s.desc == "var clamped" and _low_precision(s),
                          _f32_then_round(_TF.gaussian_nll_loss)),
})


# Samples whose gradient neither torch nor flow defines (both raise when it is needed), left
# out of the gradient comparisons; the raising itself is pinned in tests/test_errors_math.py.
# zeta(s, q): no derivative with respect to the order s, so only samples with a number order.
# var/std with correction >= N: the gradient divides by dof = 0; the infinities' signs are
# artefacts of how each library orders the product.
GRAD_UNDEFINED = {"zeta": lambda s: isinstance(s.args[0], Arr)}
# linalg_lu_factor: the gradient of a non-square factorization is not implemented (PyTorch has one).
GRAD_UNDEFINED["linalg_lu_factor"] = lambda s: s.desc in ("tall", "wide")
# igamma / igammac(a, x): no derivative with respect to a either (their OpInfo turns a number a
# into a constant tensor, so those samples test the x gradient).
GRAD_UNDEFINED["igamma"] = GRAD_UNDEFINED["igammac"] = lambda s: isinstance(s.args[0], Arr)
# An integer base meeting a complex exponent includes 0 ** e with Re(e) < 0: a pole, where the
# inf/nan of the gradient depends on the complex-multiplication convention (std::complex
# follows C99 Annex G, PyTorch's c10::complex does not; docs/oneflow_differences.md).
GRAD_UNDEFINED["pow"] = lambda s: s.desc == "mixed int8 x complex128"
for _n in ("var", "std", "var_mean", "std_mean"):
    GRAD_UNDEFINED[_n] = lambda s: s.desc == "correction > N (inf)"
# scatter(..., reduce=) of complex tensors: torch refuses complex autograd there ("does not support
# automatic differentiation for outputs with complex dtype"); flow differentiates the sum / product
# as for real tensors (the forward is compared in test_ops_generic).
GRAD_UNDEFINED["scatter"] = lambda s: "reduce" in s.desc and any(a.dtype in COMPLEX for a in arrs_in(s.args))
# masked_fill of a complex tensor with a real 0-d tensor value: torch's backward asserts on the
# value's gradient dtype (a real value's gradient of a complex fill); flow gives it the real part.
GRAD_UNDEFINED["masked_fill"] = lambda s: s.desc.startswith("float64 0-d value") and any(
    a.dtype in COMPLEX for a in arrs_in(s.args))


def _grad_defined(op, s):
    pred = GRAD_UNDEFINED.get(op.name)
    return pred is None or not pred(s)


# Samples where the gradient is undefined and torch's backward raises by design (flow raises the
# same error: tests/test_shape_ops.py); they stay out of every gradient test.
BACKWARD_UNDEFINED = {
    ("linalg_qr", "mode r"): "R alone: the derivative needs Q",
    ("linalg_qr", "complete, tall"): "complete Q of a tall matrix is not unique",
    # torch's backward of an empty view_as_real (view_as_complex of the empty gradient) raises
    # "must have a last dimension with stride 1"; flow's works (tests/test_complex.py).
    ("view_as_real", "shape(0, 3)"): "torch's backward refuses the empty gradient's strides",
}
# In-place variants without a derivative in torch ("the derivative for
# 'inplace version of asinh' is not implemented"); the reference is the
# out-of-place op, which must give the same gradient.
# leaky_relu_, elu_: torch refuses the in-place backward for a negative slope / alpha.
# sinc_: the reference is the OpInfo's (16-bit inputs computed in float32, see opinfo/math.py).
TORCH_INPLACE_GRAD_GAPS = {"asinh", "acosh", "atanh", "leaky_relu", "elu", "sinc"}


def _torch_gap(op, s):
    gap = TORCH_GRAD_GAPS.get(op.name)
    return gap is not None and gap[0](s)


def _torch_ref(op, s):
    """The torch callable replacing the OpInfo reference, if any."""
    if _torch_gap(op, s):
        return TORCH_GRAD_GAPS[op.name][1]
    return GRAD_REF.get(op.name)


# Gradient tolerances (rtol, atol).  Backward formulas are compositions of
# table ops, so a 16-bit gradient is rounded after every step while torch's
# fused backward kernels round once: allow several ulps there.  The OpInfo
# (forward) tolerance is used where it is looser.
GRAD_TOL = {
    "float16": (1e-2, 2e-3),
    "bfloat16": (6e-2, 2e-2),
    "float32": (2e-5, 1e-5),
    "float64": (1e-7, 1e-9),
    "complex64": (2e-5, 1e-5),
    "complex128": (1e-7, 1e-9),
}


def grad_tol(op, dtypes):
    """The loosest tolerance over ``dtypes``: a float32 gradient of an op with
    a bfloat16 operand (pow(bf16, f32)) carries bfloat16 rounding in torch."""
    r, a = 0.0, 0.0
    for dt in dtypes:
        r0, a0 = GRAD_TOL[dt]
        r1, a1 = tol_for(dt, op.tol)
        r, a = max(r, r0, r1), max(a, a0, a1)
    return r, a


def _sample_float_dtypes(s):
    return {a.dtype for a in _float_arrs(s)}


def _float_arrs(s):
    """The differentiable tensor arguments: floating and complex (complex ones are leaves too)."""
    return [a for a in arrs_in(s.args) + arrs_in(s.kwargs) if a.dtype in FLOATS or a.dtype in COMPLEX]


def _has_complex(s):
    return any(a.dtype in COMPLEX for a in arrs_in(s.args) + arrs_in(s.kwargs))


def _slug(text):
    return re.sub(r"[^\w.,=+-]+", "_", text).strip("_")


def _sample_cases(pred_op, dtypes=None, pred_sample=lambda op, s: True):
    """pytest params (op, dtype, sample) with ids op-sample-dtype; the
    TORCH_GRAD_GAPS samples are marked oneflow_only."""
    out = []
    for op in OPS:
        if not pred_op(op):
            continue
        for dt in op.dtypes if dtypes is None else [d for d in op.dtypes if d in dtypes]:
            seen = set()
            for i, s in enumerate(op.sample_list(dt)):
                if not _float_arrs(s) or not pred_sample(op, s) or (op.name, s.desc) in BACKWARD_UNDEFINED:
                    continue
                slug = _slug(s.desc) or f"sample{i}"
                if slug in seen:
                    slug = f"{slug}#{i}"
                seen.add(slug)
                marks = [oneflow_only] if _torch_gap(op, s) else []
                out.append(pytest.param(op, dt, s, id=f"{op.name}-{slug}-{dt}", marks=marks))
    return out


def _forms(op, s):
    return [f for f in ("fn", "method", "op") if op.has_form(f, s)]


def _torch_form(op, s, layout="contiguous"):
    """The first call form torch accepts for the sample (TypeError from its
    argument parser means the form does not exist), and torch's error if the
    forward fails without autograd involved."""
    for form in _forms(op, s):
        args, kwargs = materialize_leaves(s.args, torch, layout, grad=False), \
            materialize_leaves(s.kwargs, torch, layout, grad=False)
        _, err = call(invoke, op, form, torch, args, kwargs, _torch_ref(op, s))
        if not isinstance(err, TypeError):
            return form, err
    return None, None


def _run(op, form, lib, s, layout):
    """Forward with floating inputs as leaves: (leaves, outputs, error)."""
    leaves = []
    args = materialize_leaves(s.args, lib, layout, leaves)
    kwargs = materialize_leaves(s.kwargs, lib, layout, leaves)
    res, err = call(invoke, op, form, lib, args, kwargs, _torch_ref(op, s))
    return leaves, flat_tensors(res), err


# ---------------------------------------------------------------------------
# first-order gradients vs torch

GRAD_CASES = _sample_cases(lambda op: op.name not in NON_DIFFERENTIABLE and op.name not in DRAW_DEPENDENT_GRADIENT,
                           pred_sample=_grad_defined)


def _check_requires_grad(f_outs, t_outs, what):
    assert len(f_outs) == len(t_outs), f"{what}: {len(f_outs)} output tensors, torch has {len(t_outs)}"
    for i, (fo, to) in enumerate(zip(f_outs, t_outs)):
        assert bool(fo.requires_grad) == bool(to.requires_grad), (
            f"{what}: output {i} ({fo.dtype}) requires_grad={fo.requires_grad}, torch: {to.requires_grad}"
        )


def _grad_vs_torch_one(op, s, layout, rng):
    """One layout of one sample.  Returns "skip" when torch has nothing to
    differentiate (no call form, or the forward itself fails)."""
    form, fwd_err = _torch_form(op, s, layout)
    if form is None or fwd_err is not None:
        # No such call form, or a forward error (zero-size max, view of a
        # non-contiguous tensor): test_ops_generic checks those.
        return "skip"
    what = f"[{form}, {layout}]"
    t_leaves, t_outs, t_err = _run(op, form, torch, s, layout)
    f_leaves, f_outs, f_err = _run(op, form, flow, s, layout)
    if t_err is not None:
        if op.name in REFUSED_AT_BACKWARD and f_err is None:
            # torch refuses complex autograd of an op without a derivative in the forward;
            # flow records the node, which raises when the backward reaches it.
            sel = [o for o in f_outs if o.requires_grad]
            _, b_err = call(flow.autograd.grad, sel, f_leaves, [flow.ones_like(o) for o in sel], allow_unused=True)
            assert isinstance(b_err, NotImplementedError), f"{what}: flow's backward did not refuse"
            return None
        # torch refuses only because an input requires grad (sum(x, dtype=int64)
        # "Autograd not support dtype"): flow may refuse too, or give a result
        # that does not require grad.
        assert f_err is not None or not any(o.requires_grad for o in f_outs), (
            f"{what}: torch raises with grad-requiring inputs ({fmt_error(t_err)[:100]}); "
            "flow's output requires grad"
        )
        return None
    assert f_err is None, f"{what}: flow forward raised {type(f_err).__name__}: {fmt_error(f_err)}"
    _check_requires_grad(f_outs, t_outs, what)
    sel = [i for i, o in enumerate(t_outs) if o.requires_grad]
    if not sel:
        return None  # e.g. a cast to an integer dtype: nothing to differentiate
    gvals = [grad_values(rng, tuple(t_outs[i].shape), dtype_of(t_outs[i])) for i in sel]
    t_gos = [from_np(torch, v, dtype_of(t_outs[i])) for v, i in zip(gvals, sel)]
    f_gos = [from_np(flow, v, dtype_of(t_outs[i])) for v, i in zip(gvals, sel)]
    t_grads, t_berr = call(torch.autograd.grad, [t_outs[i] for i in sel], t_leaves, t_gos, allow_unused=True)
    f_grads, b_err = call(
        flow.autograd.grad, [f_outs[i] for i in sel], f_leaves, f_gos, allow_unused=True
    )
    if t_berr is not None:
        # torch has no derivative here (unique, bincount's weights): flow's backward must
        # refuse as well, rather than return something torch cannot confirm.
        assert "not implemented" in str(t_berr), f"{what}: torch's backward raised {fmt_error(t_berr)}"
        assert b_err is not None, f"{what}: torch's backward raises ({fmt_error(t_berr)[:80]}); flow's does not"
        return None
    if b_err is not None and op.name in BACKWARD_MAY_RAISE:
        return None
    assert b_err is None, f"{what}: flow.autograd.grad raised {type(b_err).__name__}: {fmt_error(b_err)}"
    assert len(f_grads) == len(f_leaves), f"{what}: {len(f_grads)} grads for {len(f_leaves)} inputs"
    tol = grad_tol(op, _sample_float_dtypes(s) | {dtype_of(t_outs[i]) for i in sel})
    for k, (fg, tg, leaf) in enumerate(zip(f_grads, t_grads, f_leaves)):
        assert_grad_close(fg, tg, leaf, tol, f"{what} grad of input {k}")
        # autograd.grad returns the gradients; it must not accumulate .grad.
        assert leaf.grad is None, f"{what}: autograd.grad wrote input {k}'s .grad"
    return None


def _layouts(s):
    # The non-contiguous layout only differs for inputs with ndim >= 1.
    nd = any(a.value.ndim >= 1 for a in arrs_in(s.args) + arrs_in(s.kwargs))
    return ["contiguous", "noncontig"] if nd else ["contiguous"]


@pytest.mark.parametrize("op,dtype,sample", GRAD_CASES)
def test_grad_vs_torch(op, dtype, sample, request):
    rng = np.random.default_rng(zlib.crc32(request.node.name.encode()))
    failures, outcomes = [], []
    for layout in _layouts(sample):
        try:
            outcomes.append(_grad_vs_torch_one(op, sample, layout, rng))
        except AssertionError as e:
            failures.append(fmt_error(e))
    report(failures, f"{op.name} [{dtype}] {sample.desc}")
    if all(o == "skip" for o in outcomes):
        pytest.skip("torch has no call form for these arguments, or its forward raises")


# ---------------------------------------------------------------------------
# non-differentiable ops


@pytest.mark.parametrize("op", [op for op in OPS if op.name in NON_DIFFERENTIABLE], ids=lambda o: o.name)
def test_non_differentiable(op):
    """No output requires grad, whatever requires grad among the inputs, in
    torch (confirming the classification) and in flow."""
    failures = []
    for dtype in op.dtypes:
        for s in op.sample_list(dtype):
            form, fwd_err = _torch_form(op, s)
            if form is None or fwd_err is not None:
                continue
            what = f"{s.desc} [{dtype}, {form}]"
            try:
                _, t_outs, t_err = _run(op, form, torch, s, "contiguous")
                if op.name in INPLACE_UPDATES:
                    _, _, f_err = _run(op, form, flow, s, "contiguous")
                    assert t_err is not None and isinstance(f_err, type(t_err)), what
                    continue
                assert t_err is None, f"{what}: torch raised {fmt_error(t_err)}"
                assert not any(o.requires_grad for o in t_outs), f"{what}: torch says differentiable"
                _, f_outs, f_err = _run(op, form, flow, s, "contiguous")
                assert f_err is None, f"{what}: flow raised {type(f_err).__name__}: {fmt_error(f_err)}"
                _check_requires_grad(f_outs, t_outs, what)
            except AssertionError as e:
                failures.append(fmt_error(e))
    report(failures, op.name)


# ---------------------------------------------------------------------------
# in-place variants


def _inplace_cases():
    out = []
    for op in OPS:
        if op.inplace and op.name not in NON_DIFFERENTIABLE:
            marks = [oneflow_only] if op.name in TORCH_INPLACE_GRAD_GAPS else []
            for dt in op.dtypes:
                if dt in FLOATS:
                    out.append(pytest.param(op, dt, id=f"{op.name}_-{dt}", marks=marks))
    return out


def _inplace_forward(op, lib, s):
    """y = x * 1; y.op_(...) -> (leaves, y, returned object, error).  The
    torch side runs the out-of-place op (cast back to y's dtype) where torch
    has no in-place derivative, or where GRAD_REF replaces its reference."""
    leaves = []
    x = materialize_leaves(s.args[0], lib, leaves=leaves)
    rest = materialize_leaves(s.args[1:], lib, leaves=leaves)
    kwargs = materialize_leaves(s.kwargs, lib, leaves=leaves)
    y = x * 1
    if lib is torch and (op.name in TORCH_INPLACE_GRAD_GAPS or op.name in GRAD_REF):
        ref = GRAD_REF.get(op.name) or op.ref(torch)
        out, err = call(lambda: ref(y, *rest, **kwargs).to(y.dtype))
        # Shapes that the in-place form refuses (it cannot grow self).
        if err is None and tuple(out.shape) != tuple(y.shape):
            err = RuntimeError("in-place result would need a broadcast of self")
        return leaves, out, out, err
    out, err = call(lambda: op.call_inplace(lib, y, *rest, **kwargs))
    return leaves, y, out, err


@pytest.mark.parametrize("op,dtype", _inplace_cases())
def test_inplace_grad(op, dtype):
    """y = x * 1 (a non-leaf); y.op_(...); y.backward(g): x.grad and the
    other operands' .grad equal torch's."""
    name_ = op.method + "_"
    rng = np.random.default_rng(zlib.crc32(f"{op.name}/{dtype}/inplace".encode()))
    failures, tested, raised = [], 0, 0
    for s in op.sample_list(dtype):
        if not s.args or not isinstance(s.args[0], Arr) or s.args[0].dtype not in FLOATS:
            continue
        if not _grad_defined(op, s):  # no derivative with respect to self (igamma_'s a)
            continue
        what = f"{s.desc} [{name_}]"
        try:
            t_leaves, ty, _, t_err = _inplace_forward(op, torch, s)
            f_leaves, fy, f_out, f_err = _inplace_forward(op, flow, s)
            if t_err is not None:
                # e.g. a broadcast that would grow self: test_inplace checks it.
                assert f_err is not None, f"{what}: torch raises {fmt_error(t_err)[:100]}, flow does not"
                continue
            assert f_err is None, f"{what}: flow raised {type(f_err).__name__}: {fmt_error(f_err)}"
            assert f_out is fy, f"{what}: did not return self"
            assert fy.requires_grad, f"{what}: result does not require grad"
            g = grad_values(rng, tuple(ty.shape), dtype_of(ty))
            ty.backward(from_np(torch, g, dtype_of(ty)))
            _, b_err = call(fy.backward, from_np(flow, g, dtype_of(ty)))
            if b_err is not None and op.name in BACKWARD_MAY_RAISE:
                raised += 1
                continue
            assert b_err is None, f"{what}: backward raised {type(b_err).__name__}: {fmt_error(b_err)}"
            tol = grad_tol(op, _sample_float_dtypes(s))
            for k, (fl, tl) in enumerate(zip(f_leaves, t_leaves)):
                assert_grad_close(fl.grad, tl.grad, fl, tol, f"{what} .grad of input {k}")
            tested += 1
        except AssertionError as e:
            failures.append(fmt_error(e))
    report(failures, f"{name_} [{dtype}]")
    if not tested:
        pytest.skip(f"backward raised (accepted for {op.name})" if raised
                    else "no sample with a floating self that torch accepts in place")


# ---------------------------------------------------------------------------
# finite differences (float64)

GRADCHECK_MAX_NUMEL = 64


def _on_domain(op, s):
    return (op.name, s.desc) not in OFF_DOMAIN and s.desc != "specials"


def _gradcheck_sample_ok(op, s):
    # Complex inputs: finite differences over real and imaginary parts in tests/test_complex.py.
    if op.name in GRADCHECK_SKIP_OPS or not _on_domain(op, s) or not _grad_defined(op, s) or _has_complex(s):
        return False
    f64 = [a for a in _float_arrs(s) if a.dtype == "float64"]
    return bool(f64) and all(
        a.value.size <= GRADCHECK_MAX_NUMEL and np.all(np.isfinite(a.value)) for a in f64
    )


GRADCHECK_CASES = _sample_cases(
    lambda op: op.name not in NON_DIFFERENTIABLE, ("float64",), _gradcheck_sample_ok
)


@pytest.mark.parametrize("op,dtype,sample", GRADCHECK_CASES)
def test_gradcheck_float64(op, dtype, sample):
    s = sample
    form, fwd_err = _torch_form(op, s)
    if form is None or fwd_err is not None:
        pytest.skip("torch has no call form for these arguments, or its forward raises")
    arrs = [a for a in _float_arrs(s) if a.dtype == "float64"]
    # Which outputs are differentiable (from a run with grad).
    _, t_outs, t_err = _run(op, form, torch, s, "contiguous")
    if t_err is not None:
        pytest.skip(f"torch refuses grad-requiring inputs here: {fmt_error(t_err)[:80]}")
    _, outs, err = _run(op, form, flow, s, "contiguous")
    assert err is None, f"flow forward raised {type(err).__name__}: {fmt_error(err)}"
    _check_requires_grad(outs, t_outs, "forward")
    sel = [i for i, o in enumerate(t_outs) if o.requires_grad]
    if not sel:
        pytest.skip("no differentiable output (e.g. a cast to an integer dtype)")
    if any(dtype_of(outs[i]) != "float64" for i in sel):
        pytest.skip("an output is not float64 (a cast): finite differences need float64")

    def fn(tensors):
        given = {id(a): t for a, t in zip(arrs, tensors)}
        args, kwargs = materialize_with(s.args, flow, given), materialize_with(s.kwargs, flow, given)
        res = flat_tensors(invoke(op, form, flow, args, kwargs))
        return [res[i] for i in sel]

    gradcheck(fn, [a.value for a in arrs])


# ---------------------------------------------------------------------------
# second order

SECOND_ORDER_OPS = [
    "exp", "log", "sin", "tanh", "sigmoid", "gelu", "silu", "mul", "div", "pow",
    "matmul", "sum", "mean", "reshape", "transpose", "where", "clamp", "max", "amax",
    # math family: the softmax backward ops, scans, statistics, norms, special functions
    "softmax", "log_softmax", "softmin", "softmax_backward", "log_softmax_backward", "logsumexp",
    "cumsum", "cumprod", "logcumsumexp", "var", "std", "var_mean", "linalg_vector_norm", "erfinv",
    "lgamma", "digamma", "xlogy", "addcdiv", "clamp_min", "logit", "i1",
    # nn: conv/pool/norm backward formulas are table ops (norms: a composition under create_graph)
    "conv1d", "conv2d", "conv_transpose2d", "conv_weight_grad", "max_pool2d", "avg_pool2d",
    "adaptive_avg_pool2d", "adaptive_max_pool2d", "max_unpool2d", "lp_pool2d", "batch_norm",
    "layer_norm", "group_norm", "instance_norm",
]


def _second_order_ok(op, s):
    return _on_domain(op, s) and not _has_complex(s) and all(a.value.size <= 64 for a in _float_arrs(s))


SECOND_ORDER_CASES = _sample_cases(lambda op: op.name in SECOND_ORDER_OPS, ("float64",), _second_order_ok)


def _first_order(op, form, lib, s, gvals):
    """Leaves, grad_outputs (themselves requiring grad) and the first-order
    grads built with create_graph=True."""
    leaves, outs, err = _run(op, form, lib, s, "contiguous")
    assert err is None, f"forward raised {type(err).__name__}: {fmt_error(err)}"
    outs = [o for o in outs if o.requires_grad]
    assert len(outs) == len(gvals), f"{len(outs)} differentiable outputs, torch has {len(gvals)}"
    gos = [from_np(lib, v, "float64").requires_grad_(True) for v in gvals]
    g1 = lib.autograd.grad(outs, leaves, gos, create_graph=True, allow_unused=True)
    return leaves, gos, g1


@pytest.mark.parametrize("op,dtype,sample", SECOND_ORDER_CASES)
def test_second_order(op, dtype, sample, request):
    """d/d(inputs, grad_outputs) of sum_k <g1_k, v_k>, where g1 = the
    first-order grads: checks that backward formulas are differentiable
    themselves (double backward), including with respect to grad_output."""
    s = sample
    form, fwd_err = _torch_form(op, s)
    if form is None or fwd_err is not None:
        pytest.skip("torch has no call form for these arguments, or its forward raises")
    rng = np.random.default_rng(zlib.crc32(request.node.name.encode()))
    _, t_outs, t_err = _run(op, form, torch, s, "contiguous")
    if t_err is not None:
        pytest.skip(f"torch refuses grad-requiring inputs here: {fmt_error(t_err)[:80]}")
    gvals = [grad_values(rng, tuple(o.shape), "float64") for o in t_outs if o.requires_grad]
    t_leaves, t_gos, t_g1 = _first_order(op, form, torch, s, gvals)
    f_leaves, f_gos, f_g1 = _first_order(op, form, flow, s, gvals)
    tol = GRAD_TOL["float64"]
    for k, (fg, tg, leaf) in enumerate(zip(f_g1, t_g1, f_leaves)):
        assert_grad_close(fg, tg, leaf, tol, f"first-order grad of input {k}")
    # Only the first-order grads that torch can differentiate enter the sum.
    use = [k for k, g in enumerate(t_g1) if g is not None and g.requires_grad]
    if not use:
        pytest.skip("torch's first-order gradients are constant")
    for k in use:
        assert f_g1[k] is not None and f_g1[k].requires_grad, (
            f"first-order grad of input {k} is not differentiable (create_graph=True)"
        )
    vvals = [grad_values(rng, tuple(t_leaves[k].shape), "float64") for k in use]

    def inner(lib, g1):
        total = None
        for k, v in zip(use, vvals):
            term = (g1[k] * from_np(lib, v, "float64")).sum()
            total = term if total is None else total + term
        return total

    t_wrt, f_wrt = t_leaves + t_gos, f_leaves + f_gos
    t_g2 = torch.autograd.grad(inner(torch, t_g1), t_wrt, allow_unused=True)
    f_g2 = flow.autograd.grad(inner(flow, f_g1), f_wrt, allow_unused=True)
    failures = []
    for k, (fg, tg, x) in enumerate(zip(f_g2, t_g2, f_wrt)):
        name = f"input {k}" if k < len(f_leaves) else f"grad_output {k - len(f_leaves)}"
        try:
            assert_grad_close(fg, tg, x, tol, f"second-order grad wrt {name}")
        except AssertionError as e:
            failures.append(fmt_error(e))
    report(failures, f"{op.name} {s.desc}")


# ---------------------------------------------------------------------------
# every op of the table is classified


def test_every_yaml_op_is_classified():
    """A differentiable op of the table needs samples in opinfo that reach
    test_grad_vs_torch; `backward: none` ops are NON_DIFFERENTIABLE."""
    yaml_names = {e["name"] for e in optable.load() if e.get("test") != "none"}
    assert yaml_names, "no ops in the table"
    covered = {c.values[0].name for c in GRAD_CASES} | set(DRAW_DEPENDENT_GRADIENT)
    missing = yaml_names - covered - NON_DIFFERENTIABLE
    assert not missing, f"differentiable ops without gradient tests: {sorted(missing)}"
    unknown = NON_DIFFERENTIABLE - yaml_names - {op.name for op in OPS}
    assert not unknown, f"NON_DIFFERENTIABLE names that are not ops: {sorted(unknown)}"
    # Table-only names (clip, the Tensor.float()-style casts, tensor) aside,
    # the two sets partition the table's ops.
    table_only = {op.name for op in OPS} - yaml_names
    assert (covered | NON_DIFFERENTIABLE) - table_only == yaml_names


def test_differentiable_ops_confirmed_by_torch():
    """Every op tested as differentiable has a sample whose output requires
    grad in torch (so NON_DIFFERENTIABLE is not missing an entry)."""
    by_op = {}
    for c in GRAD_CASES:
        op, dtype, s = c.values
        if dtype in ("float32", "float64", "complex64", "complex128"):
            by_op.setdefault(op.name, []).append((op, s))
    not_diff = []
    for name, cases in by_op.items():
        for op, s in cases:
            form, err = _torch_form(op, s)
            if form is None or err is not None:
                continue
            _, outs, err = _run(op, form, torch, s, "contiguous")
            if err is None and any(o.requires_grad for o in outs):
                break
        else:
            not_diff.append(name)
    assert not not_diff, f"torch differentiates none of these ops' samples: {not_diff}"
    assert set(by_op) == {c.values[0].name for c in GRAD_CASES}
