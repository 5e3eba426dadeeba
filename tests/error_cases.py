"""Shared machinery of the table-driven error tests (tests/test_errors*.py): a Case is a call
that must raise; check_error_case runs it on torch (which must raise too) and on flow, which must
raise the same Python exception class (or the pinned one) with a message naming the given words.
raises_like_torch is the one helper of the other test files for "raises as torch does"."""
import re

import pytest
import torch

from harness import SHIM, builtin_exc_type, flow


class Case:
    def __init__(self, id, fn, words=(), exc=None):
        self.id = id
        self.fn = fn  # lib -> raises
        self.words = words  # substrings the flow message must contain (case-insensitive)
        self.exc = exc  # pinned exception class(es); None: the class torch raises


def torch_outcome(case):
    try:
        case.fn(torch)
    except Exception as e:  # noqa: BLE001
        return e
    return None


def check_error_case(case, still_works=None):
    """Both libraries raise; flow's exception has torch's class and names case.words. Then
    still_works() checks the framework is usable after the error."""
    t_err = torch_outcome(case)
    assert t_err is not None, f"harness: torch does not raise for {case.id}"
    want = case.exc or builtin_exc_type(t_err)
    with pytest.raises(want) as info:
        case.fn(flow)
    msg = str(info.value)
    assert msg.strip(), "empty error message"
    if not SHIM:
        for w in case.words:
            assert w.lower() in msg.lower(), f"message does not name {w!r}: {msg!r}"
    if still_works is not None:
        still_works()


def raises_like_torch(fn, exc=Exception, *, flow_fn=None, message=True, translate=None):
    """fn(lib) raises in torch (an `exc`) and in oneflow (flow_fn(flow) when the calls differ):
    the same exception class -- torch's own subclasses (LinAlgError, OutOfMemoryError) read as
    their builtin family -- and, with `message`, the same text, torch's `torch.` read as
    `oneflow.` (after `translate`, for a message naming something oneflow doesn't have).
    Returns (oneflow's exception, torch's)."""
    with pytest.raises(exc) as te:
        fn(torch)
    t_err = te.value
    want = type(t_err) if type(t_err).__module__ == "builtins" else builtin_exc_type(t_err)
    with pytest.raises(want) as fe:
        (flow_fn or fn)(flow)
    if message:
        text = str(t_err) if translate is None else translate(str(t_err))
        # Note [Upstream's words] (src/autograd/meta.cpp): upstream OneFlow's text may follow in brackets.
        ours = re.sub(r" \[OneFlow:.*\]$", "", str(fe.value), flags=re.S)
        assert ours == text.replace("torch.", "oneflow."), f"\n flow: {fe.value}\ntorch: {t_err}"
    return fe.value, t_err
