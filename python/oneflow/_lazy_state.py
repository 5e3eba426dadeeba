"""The nn.Graph trace in progress on this thread, if any (python/oneflow/nn/graph/graph.py):
autograd.backward() inside build() records a backward step instead of running the engine, and
collectives called while it records become steps of the program (distributed/_collectives.py)."""
import contextlib
import threading

_tls = threading.local()


def current():
    return getattr(_tls, "trace", None)


def set_current(trace):
    _tls.trace = trace


def recording():
    """The trace whose tracer records this thread's ops now (None outside build(), and while a
    trace applies a Python step to meta tensors to learn its outputs)."""
    trace = current()
    if trace is None:
        return None
    from . import _oneflow_internal as _C
    return trace if _C._graph_tracing() else None


def device_type(t):
    """The type of the device t's values are on: a meta tensor that a graph's trace records on
    this thread stands for one on the graph's device. Code choosing a kernel by device asks this,
    so that a traced program runs eager's kernels (the same numbers bit for bit)."""
    if t.is_meta:
        device = getattr(recording(), "device", None)
        if device is not None:
            return device.type
    return t.device.type


@contextlib.contextmanager
def paused():
    """Ops and collectives run now, once, on real tensors, not recorded into the program being
    traced (work that fixes what is traced: sizes exchanged between ranks)."""
    trace = recording()
    if trace is None:
        yield
        return
    trace.tracer.end()
    try:
        yield
    finally:
        trace.tracer.begin()
