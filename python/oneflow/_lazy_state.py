"""The nn.Graph trace in progress on this thread, if any (python/oneflow/nn/graph/graph.py):
autograd.backward() inside build() records a backward step instead of running the engine."""
import threading

_tls = threading.local()


def current():
    return getattr(_tls, "trace", None)


def set_current(trace):
    _tls.trace = trace
