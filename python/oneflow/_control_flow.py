"""torch.cond and torch.while_loop, run eagerly: the predicate is read and the chosen branch (or
the loop body) called in Python. Tested against PyTorch in tests/test_compat_native.py.
"""
from ._oneflow_internal import Tensor
from ._export import export


@export("flow.cond")
def cond(pred, true_fn, false_fn, operands=()):
    """true_fn(*operands) if pred else false_fn(*operands) (torch.cond, run eagerly)."""
    if isinstance(pred, Tensor):
        if pred.numel() != 1:
            raise RuntimeError(f"Expected pred to be bool or single-element tensor, but got {pred}.")
        pred = bool(pred.item())
    elif not isinstance(pred, bool):
        raise RuntimeError(f"Expected pred to be bool or single-element tensor, but got {pred!r}.")
    if not isinstance(operands, (tuple, list)):
        raise RuntimeError(f"Expect operands to be a tuple of possibly nested dict/list/tuple, got {operands!r}")
    return true_fn(*operands) if pred else false_fn(*operands)


@export("flow.while_loop")
def while_loop(cond_fn, body_fn, carried_inputs):
    """carried_inputs = body_fn(*carried_inputs) while cond_fn(*carried_inputs) (torch.while_loop,
    run eagerly); the final carried values."""
    carried = tuple(carried_inputs)
    while True:
        c = cond_fn(*carried)
        if isinstance(c, Tensor):
            if c.numel() != 1:
                raise RuntimeError(f"cond_fn must return a boolean scalar tensor or a python bool, got {c}")
            c = bool(c.item())
        if not c:
            return carried
        out = body_fn(*carried)
        carried = tuple(out) if isinstance(out, (tuple, list)) else (out,)
        if len(carried) != len(carried_inputs):
            raise RuntimeError(f"body_fn should return as many values as carried_inputs ({len(carried_inputs)}), "
                               f"got {len(carried)}")
