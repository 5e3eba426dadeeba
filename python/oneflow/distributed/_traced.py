"""Collectives meeting lazy or meta tensors (Note [Collectives in graphs]).

Note [Collectives in graphs]: nn.Graph traces build() once and runs the recorded program on every
call (docs/graph.md), so a collective called while build() is traced -- by the user's code, by the
boxing of global tensors, by a loss's normaliser -- must happen on every run, not once at trace
time. While a tracer records, a tensor collective becomes a step of the program (`record_collective`)
that calls it on the real tensors, in place as the collective writes them; every rank traces the
same build(), so every rank's program meets the same collectives in the same order. A step the
tracer applies to meta tensors to learn its outputs' shapes (an autograd.Function such as
SyncBatchNorm's) calls collectives on meta tensors: they have no data, and the call only checks
nothing and returns. Point-to-point transfers that complete later (isend / irecv) are refused in
a graph: the program's steps run one after another."""
import functools
import inspect

from .. import _lazy_state, _oneflow_internal as _C


def _tensors(obj, out):
    if isinstance(obj, _C.Tensor):
        out.append(obj)
    elif isinstance(obj, (list, tuple)):
        for o in obj:
            _tensors(o, out)
    return out


def traceable(fn, done):
    """fn (a collective on tensors, async_op among its parameters or not) made to follow Note
    [Collectives in graphs]; `done(async_op)` is what it returns when it only records or checks."""
    sig = inspect.signature(fn)
    has_async = "async_op" in sig.parameters

    @functools.wraps(fn)
    def collective(*args, **kwargs):
        trace = _lazy_state.recording()
        if trace is None:
            found = _tensors(list(args) + list(kwargs.values()), [])
            if not found or not all(t.is_meta for t in found):
                return fn(*args, **kwargs)
            bound = sig.bind(*args, **kwargs)  # meta tensors: shape inference, nothing to move
            return done(bound.arguments.get("async_op", False))
        if not hasattr(trace, "record_collective"):
            raise NotImplementedError(f"distributed.{fn.__name__}: collectives in this kind of trace are not supported")
        bound = sig.bind(*args, **kwargs)
        async_op = bound.arguments.get("async_op", False)
        if has_async:
            bound.arguments["async_op"] = False  # (a program's steps complete in order)
        trace.record_collective(fn, bound.args, bound.kwargs)
        return done(async_op)
    return collective


def untraceable(fn):
    """A transfer that completes later (isend / irecv): refused while a graph traces."""
    @functools.wraps(fn)
    def transfer(*args, **kwargs):
        if _lazy_state.recording() is not None:
            raise NotImplementedError(f"distributed.{fn.__name__} in nn.Graph's build(): use send / recv, or a "
                                      "collective (a program's steps run one after another)")
        return fn(*args, **kwargs)
    return transfer
