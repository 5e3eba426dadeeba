"""The autograd engine's Python side: backward / grad calls counted per thread with the callbacks
queued for the end of the outermost one (Variable._execution_engine), and the handle hooks
return. Below autograd/__init__.py and graph.py, which both use them (no import circle)."""
import threading

from .. import _oneflow_internal as _C

_engine_state = threading.local()  # the backward calls running on this thread, and their final callbacks


def _run_engine(fn, *args):
    """Runs one backward / grad call of the engine; the callbacks queued during it
    (Variable._execution_engine.queue_callback) run after the outermost one has finished."""
    depth = getattr(_engine_state, "depth", 0)
    if depth == 0:
        _engine_state.callbacks = []
        # a backward() into .grad without create_graph: global tensors may finish their broadcast
        # parameters' gradients at its end (Note [Gradients of global tensors])
        _engine_state.into_grad = fn is _C._run_backward and not args[-1]
    _engine_state.depth = depth + 1
    try:
        out = fn(*args)
    except BaseException:
        if depth == 0:
            _engine_state.callbacks = []
        raise
    finally:
        _engine_state.depth = depth
    if depth == 0:
        callbacks, _engine_state.callbacks = _engine_state.callbacks, []
        for cb in callbacks:
            cb()
    return out


class _ExecutionEngine:
    """`Variable._execution_engine`: where DistributedDataParallel-style code queues work for the end
    of the running backward pass."""

    @staticmethod
    def queue_callback(callback):
        if getattr(_engine_state, "depth", 0) == 0:
            raise RuntimeError("Final callbacks can only be installed during backward pass.")
        _engine_state.callbacks.append(callback)


class Variable:
    """torch.autograd.Variable: deprecated; Variable(t) is t itself (every tensor is a variable)."""
    _execution_engine = _ExecutionEngine()

    def __new__(cls, data, requires_grad=False, volatile=False):
        if requires_grad:
            data.requires_grad_(True)
        return data


class _RemovableHandle:
    """Returned by Tensor.register_hook and grad_fn.register_(pre)hook: `.remove()` unregisters
    the hook (through its owner's _remove_hook)."""

    def __init__(self, tensor, hook_id):
        self._tensor, self._id = tensor, hook_id

    def remove(self):
        if self._tensor is not None:
            self._tensor._remove_hook(self._id)
            self._tensor = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.remove()
