"""Shared machinery of the table-driven error tests (tests/test_errors*.py): a Case is a call
that must raise; check_error_case runs it on torch (which must raise too) and on flow, which must
raise the same Python exception class (or the pinned one) with a message naming the given words."""
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
