"""Grad-mode switches: flow.no_grad / enable_grad / set_grad_enabled / inference_mode.

Each is a context manager and a decorator; the switch itself is a thread-local flag in C++
(src/autograd/grad_mode.h) read by every op entry.
"""
import functools
import inspect
import threading
import warnings

from . import _oneflow_internal as _C
from ._argcheck import check_bool
from ._export import export, export_value

is_grad_enabled = export_value(_C.is_grad_enabled, "flow.is_grad_enabled")


class _GradModeSwitch:
    """Sets grad mode to `_mode` (None: leave it) inside a block, restoring it afterwards."""

    _mode = False

    def __enter__(self):
        self._prev = _C.is_grad_enabled()
        if self._mode is not None:
            _C._set_grad_enabled(self._mode)
        return self

    def __exit__(self, *exc):
        _C._set_grad_enabled(self._prev)
        return False

    def __call__(self, fn):
        mode = self._mode

        def block():
            b = _GradModeSwitch()
            b._mode = mode
            return b

        return _decorate(fn, block)


def _decorate(fn, block):
    """fn wrapped so that each call (each step of a generator) runs inside `block()`.

    Like PyTorch, anything is wrapped (a non-callable fails when the wrapper is called) and a
    class is wrapped in a function with a FutureWarning (PyTorch's deprecation of decorating
    classes)."""
    if inspect.isclass(fn):
        warnings.warn(
            "Decorating classes is deprecated and will be disabled in future versions. You "
            "should only decorate functions or methods. To preserve the current behavior of "
            "class decoration, you can directly decorate the `__init__` method and nothing else.",
            FutureWarning,
            stacklevel=3,
        )
        cls = fn
        fn = lambda *args, **kwargs: cls(*args, **kwargs)  # noqa: E731

    if inspect.isgeneratorfunction(fn):
        @functools.wraps(fn)
        def gen(*args, **kwargs):
            with block():
                yield from fn(*args, **kwargs)
        return gen

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        with block():
            return fn(*args, **kwargs)
    return wrapper


class _NoParamSwitch(_GradModeSwitch):
    """no_grad / enable_grad: `@no_grad` without parentheses decorates as `@no_grad()` does.

    Note [Grad-mode switches given a function]: PyTorch's `no_grad(f)` / `enable_grad(f)` /
    `inference_mode(f)` (f anything but None, resp. a bool) return f decorated, not a context
    manager; code written for PyTorch uses the bare `@torch.no_grad` form, so ours does the same
    (`__new__` hands back the wrapper, and Python then skips `__init__`)."""

    def __new__(cls, orig_func=None):
        if orig_func is None:
            return super().__new__(cls)
        return cls()(orig_func)


@export("flow.no_grad")
class no_grad(_NoParamSwitch):
    """Context manager / decorator that disables gradient recording."""

    _mode = False

    def __init__(self):
        # PyTorch's no_grad has this __init__ (enable_grad has none): no_grad(None) is its
        # TypeError, enable_grad(None) a context manager
        pass


@export("flow.enable_grad")
class enable_grad(_NoParamSwitch):
    """Context manager / decorator that enables gradient recording."""

    _mode = True


@export("flow.set_grad_enabled")
class set_grad_enabled(_GradModeSwitch):
    """Sets grad mode on or off: at once when called, or just for a `with` block / decorated function."""

    def __init__(self, mode):
        self._mode = check_bool(mode, "set_grad_enabled", "mode")
        self._prev = _C.is_grad_enabled()
        _C._set_grad_enabled(self._mode)

    def __enter__(self):
        return self

    def __call__(self, fn):
        _C._set_grad_enabled(self._prev)  # used as a decorator: only the function changes the mode
        return super().__call__(fn)


_inference = threading.local()  # .depth: enclosing inference_mode(True) blocks (0: off)


@export("flow.is_inference_mode_enabled")
def is_inference_mode_enabled():
    return getattr(_inference, "depth", 0) > 0


@export("flow.inference_mode")
class inference_mode(_GradModeSwitch):
    """No graph is recorded inside (like no_grad) and is_inference_mode_enabled() is True;
    `inference_mode(False)` turns both back on inside (grad mode enabled, as PyTorch). Tensors
    made inside are ordinary tensors (Tensor.is_inference() is False: none of PyTorch's
    inference-tensor restrictions apply)."""

    def __new__(cls, mode=True):
        # a bool is the mode; anything else is decorated (Note [Grad-mode switches given a function])
        if isinstance(mode, bool):
            return super().__new__(cls)
        return cls()(mode)

    def __init__(self, mode=True):
        self._mode = not mode
        self._on = bool(mode)

    def __enter__(self):
        super().__enter__()
        self._prev_depth = getattr(_inference, "depth", 0)
        _inference.depth = self._prev_depth + 1 if self._on else 0
        return self

    def __exit__(self, *exc):
        _inference.depth = self._prev_depth
        return super().__exit__(*exc)

    def __call__(self, fn):
        on = self._on
        return _decorate(fn, lambda: inference_mode(on))
